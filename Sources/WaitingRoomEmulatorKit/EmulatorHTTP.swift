import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import WaitingRoom

/// The response helpers, limits and escapes every emulator uses (one copy).
package enum EmulatorHTTP {
    /// The largest admin request body (fault lists, room settings) an emulator reads.
    package static let adminBodyLimit = 1 << 20

    /// The error a dropped connection's body throws: the server closes the connection before
    /// the announced length was sent.
    package struct DroppedConnection: Error {}

    /// A response with `body`, `contentType` and `Cache-Control: no-store`.
    package static func response(_ status: Int, _ body: [UInt8], contentType: String) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = contentType
        fields[.cacheControl] = "no-store"
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// A text response.
    package static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> Response {
        response(status, Array(text.utf8), contentType: contentType)
    }

    /// A JSON response.
    package static func json(_ value: JSONValue, status: Int = 200) -> Response {
        response(status, Array(value.jsonText.utf8), contentType: "application/json")
    }

    /// A JSON error naming the field at fault (`{"error": …, "field": …}`), status 400.
    package static func badRequest(_ error: WaitingRoomError) -> Response {
        var object: [String: JSONValue] = ["error": .string(error.message)]
        if let field = error.field { object["field"] = .string(field) }
        return json(.object(object), status: 400)
    }

    /// A 200 that announces 4096 bytes and closes the connection before sending them.
    package static func dropped() -> Response {
        Response(
            status: .ok, headers: [.contentLength: "4096"],
            body: ResponseBody(contentLength: 4096) { _ in
                throw DroppedConnection()
            })
    }

    /// Reads a request's body, at most `limit` bytes. A `Content-Length` over the bound is refused
    /// at once: reading would wait for bytes a client may never send.
    /// - Throws: Hummingbird's `HTTPError` 413 (Content Too Large) when the declared or the sent
    ///   body is longer than `limit` (a route that lets it through answers 413).
    package static func body(_ request: Request, upTo limit: Int) async throws -> ByteBuffer {
        if let declared = request.headers[.contentLength], Int(declared).map({ $0 > limit }) ?? true {
            throw HTTPError(.contentTooLarge, message: "the body is larger than \(limit) bytes")
        }
        return try await request.body.collect(upTo: limit)
    }

    /// The path parameter `name`, percent-decoded (`a%2Fb` is `a/b`, as a client's percent-encoded
    /// room id was meant); "" when absent, and as it came when its escapes are malformed.
    package static func pathParameter(_ parameters: Parameters, _ name: String) -> String {
        guard let raw = parameters.get(name) else { return "" }
        return raw.removingPercentEncoding ?? String(raw)
    }

    /// Reads an admin request's JSON body (at most ``adminBodyLimit`` bytes).
    /// - Throws: `.invalidConfiguration` (field `body`) when it is too large or not JSON.
    package static func jsonBody(_ request: Request) async throws -> JSONValue {
        let buffer: ByteBuffer
        do { buffer = try await body(request, upTo: adminBodyLimit) } catch {
            throw WaitingRoomError.invalidConfiguration(field: "body", "larger than \(adminBodyLimit) bytes")
        }
        do { return try JSONValue.parse(String(buffer: buffer)) } catch {
            throw WaitingRoomError.invalidConfiguration(field: "body", "not JSON")
        }
    }

    /// What `fault` does to a request, for the four shared actions: the response to send
    /// instead, or nil to answer normally (after a `delay`, which sleeps here; and for a vendor's
    /// own action, which the vendor carries out).
    ///
    /// - Parameters:
    ///   - errorPage: the body and content type of a `status` answer without a body of its own.
    ///   - garbage: the body and content type of a `garbage` answer without a body of its own.
    package static func apply(
        _ fault: EmulatorFault, errorPage: (Int) -> (body: String, contentType: String),
        garbage: () -> (body: String, contentType: String)
    ) async -> Response? {
        switch fault.action {
        case .delay(let delay):
            try? await Task.sleep(for: delay)
            return nil
        case .drop:
            return dropped()
        case .status(let status):
            let page = fault.body.map { (body: $0, contentType: errorPage(status).contentType) } ?? errorPage(status)
            return text(page.body, status: status, contentType: page.contentType)
        case .garbage:
            let page = fault.body.map { (body: $0, contentType: garbage().contentType) } ?? garbage()
            return text(page.body, status: 200, contentType: page.contentType)
        case .vendor:
            return nil
        }
    }

    /// `text` escaped for HTML text and attribute values (the core's ``HTMLText/escape(_:)``).
    package static func escapeHTML(_ text: String) -> String { HTMLText.escape(text) }

    /// `text` as a JSON string literal (quotes included), safe inside a `<script>` too (`<`, `>`,
    /// `&` and the line separators are escaped).
    package static func jsonQuoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<", ">", "&", "\u{2028}", "\u{2029}":
                out += unicodeEscape(scalar.value)
            default:
                if scalar.value < 0x20 { out += unicodeEscape(scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }

    private static func unicodeEscape(_ value: UInt32) -> String {
        let hex = String(value, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
