import Foundation
import WaitingRoom

/// The JSON-mode client: one request to a protected URL with `Accept: application/json`
/// (exactly that value: Cloudflare answers JSON only then) and the visitor's waiting-room
/// cookies, classified as queued (a `cfWaitingRoom` reply) or the origin's response.
package struct CloudflareClient: Sendable {
    package let configuration: CloudflareConfiguration
    package let transport: any HTTPTransport

    package init(configuration: CloudflareConfiguration, transport: any HTTPTransport) {
        self.configuration = configuration
        self.transport = transport
    }

    var vendor: String { CloudflareConfiguration.vendorID }

    /// The request for `url` carrying `jar`'s cookies.
    package func request(url: String, jar: CloudflareCookieJar, timeout: Duration? = nil) -> HTTPRequest {
        var headers: HTTPHeaderList = [("Accept", "application/json"), ("User-Agent", configuration.userAgent)]
        if let cookie = jar.header { headers.add("Cookie", cookie) }
        return HTTPRequest(
            method: configuration.method, url: url, headers: headers, timeout: timeout ?? configuration.timeout,
            label: VendorRequestLabel(vendor: vendor, kind: "page"))
    }

    /// One request, no retry: the answer, with `jar` updated from the response's `Set-Cookie`.
    ///
    /// - Throws: the transport's failure (vendor and code ``CloudflareCode/unreachable`` added);
    ///   `.server` for 5xx and for 429 without a reply; `.rejected` for another 4xx without a
    ///   reply (the HTTP status as vendor code); `.invalidResponse` for a broken reply.
    package func fetch(url: String, jar: inout CloudflareCookieJar, timeout: Duration? = nil) async throws(WaitingRoomError)
        -> CloudflareAnswer
    {
        let response = try await transport.send(
            request(url: url, jar: jar, timeout: timeout), vendor: vendor,
            failureCode: CloudflareCode.unreachable.rawValue, cancelledCode: CloudflareCode.cancelled.rawValue)
        return try Self.classify(response, jar: &jar)
    }

    /// Classifies a response (a pure function: the emulator's tests and the fuzz test call it).
    package static func classify(_ response: HTTPResponse, jar: inout CloudflareCookieJar) throws(WaitingRoomError) -> CloudflareAnswer {
        let vendor = CloudflareConfiguration.vendorID
        jar.store(response.headers)
        if CloudflareWaitingRoomReply.isReply(response.body) {
            return .queued(try CloudflareWaitingRoomReply.decode(response.body), httpStatus: response.status)
        }
        let revoked = response.headers.values(for: "Cf-Waiting-Room-Command").contains { $0.lowercased().contains("revoke") }
        switch response.status {
        case 200..<400:
            return .origin(
                .init(
                    status: response.status, headers: response.headers, body: response.body,
                    cookieHeld: !jar.isEmpty, revoked: revoked))
        case 429, 500...:
            throw WaitingRoomError(
                .server, vendor: vendor, vendorCode: response.status,
                message: "HTTP \(response.status): \(Self.snippet(response.body))", details: ["httpStatus": String(response.status)])
        default:
            throw WaitingRoomError(
                .rejected, vendor: vendor, vendorCode: response.status,
                message: "HTTP \(response.status): \(Self.snippet(response.body))", details: ["httpStatus": String(response.status)])
        }
    }

    static func snippet(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "(empty body)" : text
    }
}
