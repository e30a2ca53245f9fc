import Foundation

/// The JSON object enqueue answers with (docs/queueit-protocol.md §2.1; PascalCase keys). A value of the wrong
/// type is ignored (treated as absent), as iOS does.
package struct QueueItEnqueueResponse: Sendable, Hashable, Codable {
    package var queueId: String?
    package var queueUrl: String?
    package var eventTargetUrl: String?
    package var queueitToken: String?
    package var queueUrlTTLInMinutes: Int?

    /// Bodies larger than this are not parsed (1 MiB).
    package static let maxBodyBytes = 1 << 20

    package init(
        queueId: String? = nil, queueUrl: String? = nil, eventTargetUrl: String? = nil,
        queueitToken: String? = nil, queueUrlTTLInMinutes: Int? = nil
    ) {
        self.queueId = queueId
        self.queueUrl = queueUrl
        self.eventTargetUrl = eventTargetUrl
        self.queueitToken = queueitToken
        self.queueUrlTTLInMinutes = queueUrlTTLInMinutes
    }

    enum CodingKeys: String, CodingKey {
        case queueId = "QueueId"
        case queueUrl = "QueueUrl"
        case eventTargetUrl = "EventTargetUrl"
        case queueitToken = "QueueitToken"
        case queueUrlTTLInMinutes = "QueueUrlTTLInMinutes"
    }

    /// The token, or nil when absent or empty (an empty token is "no token": the Android rule).
    package var token: String? { queueitToken.flatMap { $0.isEmpty ? nil : $0 } }
    /// Whether the visitor can go straight through (`isPassedThrough`: a non-empty token).
    package var isPassedThrough: Bool { token != nil }
    /// The redirect type (docs/queueit-protocol.md §2.2): no token ⇒ `.queue`.
    package var redirectType: QueueItRedirectType { QueueItRedirectType(token: token) }

    /// JSON bytes of this answer (what the emulator sends; nil values are written as `null`).
    package func encoded() -> [UInt8] {
        // Plain text values (the emulator's own) are written on bytes, in the order
        // `JSONSerialization`'s sorted keys give; anything else goes through Foundation.
        let texts = [queueId, queueUrl, eventTargetUrl, queueitToken]
        if texts.allSatisfy({ $0.map(QueueItFlatJSON.isPlain) ?? true }) {
            var out: [UInt8] = []
            out.reserveCapacity(texts.reduce(128) { $0 + ($1?.utf8.count ?? 0) })
            out.append(UInt8(ascii: "{"))
            QueueItFlatJSON.append("EventTargetUrl", eventTargetUrl, to: &out)
            out.append(UInt8(ascii: ","))
            QueueItFlatJSON.append("QueueId", queueId, to: &out)
            out.append(UInt8(ascii: ","))
            QueueItFlatJSON.append("QueueitToken", queueitToken, to: &out)
            out.append(UInt8(ascii: ","))
            QueueItFlatJSON.append("QueueUrl", queueUrl, to: &out)
            out.append(contentsOf: ",\"QueueUrlTTLInMinutes\":".utf8)
            out.append(contentsOf: (queueUrlTTLInMinutes.map { String($0) } ?? "null").utf8)
            out.append(UInt8(ascii: "}"))
            return out
        }
        return foundationEncoded()
    }

    /// ``encoded()`` through `JSONSerialization` (any text).
    func foundationEncoded() -> [UInt8] {
        func s(_ v: String?) -> Any { v.map { $0 as Any } ?? NSNull() }
        let obj: [String: Any] = [
            "QueueId": s(queueId), "QueueUrl": s(queueUrl), "EventTargetUrl": s(eventTargetUrl),
            "QueueitToken": s(queueitToken),
            "QueueUrlTTLInMinutes": queueUrlTTLInMinutes.map { $0 as Any } ?? NSNull()
        ]
        let data = try? JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys, .withoutEscapingSlashes])
        return data.map { Array($0) } ?? Array("{}".utf8)
    }

    /// Parses a 200 body. Nil when it is not a JSON object (which the SDK retries).
    package static func parse(_ body: [UInt8]) -> QueueItEnqueueResponse? {
        guard body.count <= maxBodyBytes,
            let any = try? JSONSerialization.jsonObject(with: Data(body), options: []),
            let obj = any as? [String: Any]
        else { return nil }
        func str(_ k: String) -> String? { obj[k] as? String }
        var ttl: Int?
        if let d = QueueItJSON.number(obj["QueueUrlTTLInMinutes"]), d.isFinite, d >= Double(Int32.min), d <= Double(Int32.max) {
            ttl = Int(d)
        }
        return QueueItEnqueueResponse(
            queueId: str("QueueId"), queueUrl: str("QueueUrl"),
            eventTargetUrl: str("EventTargetUrl"), queueitToken: str("QueueitToken"),
            queueUrlTTLInMinutes: ttl)
    }
}

/// How one enqueue HTTP exchange ends (docs/queueit-protocol.md §3.1): pure decision from status and body.
package enum QueueItEnqueueResult: Sendable, Hashable {
    /// HTTP 200 with a JSON object.
    case success(QueueItEnqueueResponse)
    /// HTTP 4xx: terminal, not retried. `code` is the HTTP status; `message` is the body text.
    case rejected(code: Int, message: String)
    /// Anything else (5xx, 3xx, 201, 200 with a non-object body): retried.
    case retryable(message: String)

    /// Classifies an HTTP answer to enqueue.
    package static func classify(status: Int, body: [UInt8]) -> QueueItEnqueueResult {
        if status == 200 {
            if let r = QueueItEnqueueResponse.parse(body) { return .success(r) }
            return .retryable(message: "Enqueue answered 200 without a JSON object")
        }
        if QueueItErrorCode.isClientError(status) {
            return .rejected(code: status, message: bodyText(body, fallback: "HTTP \(status)"))
        }
        if body.count <= QueueItEnqueueResponse.maxBodyBytes,
            let any = try? JSONSerialization.jsonObject(with: Data(body), options: []),
            let obj = any as? [String: Any], let e = obj["error"] as? String, !e.isEmpty
        {
            return .retryable(message: String(e.prefix(512)))
        }
        return .retryable(message: "Unexpected response code: \(status)")
    }

    /// The body as text for a message: up to the first NUL, at most 512 characters.
    static func bodyText(_ body: [UInt8], fallback: String) -> String {
        let cut = body.prefix(4096).prefix(while: { $0 != 0 })
        let s = String(decoding: cut, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return s.isEmpty ? fallback : String(s.prefix(512))
    }
}

/// Helpers for values from `JSONSerialization` (on Linux every number also casts to `Bool`).
package enum QueueItJSON {
    /// True only for JSON `true`/`false`.
    package static func isBool(_ v: Any) -> Bool {
        guard let n = v as? NSNumber else { return false }
        return String(cString: n.objCType) == "c"
    }

    /// The number, or nil for non-numbers and booleans.
    package static func number(_ v: Any?) -> Double? {
        guard let v, !isBool(v), let n = v as? NSNumber else { return nil }
        return n.doubleValue
    }

    /// The boolean, or nil for anything but JSON `true`/`false`.
    package static func bool(_ v: Any?) -> Bool? {
        guard let v, isBool(v), let n = v as? NSNumber else { return nil }
        return n.boolValue
    }

    /// A whole number in `Int` range, or nil.
    package static func int(_ v: Any?) -> Int? {
        guard let d = number(v), d.isFinite, d == d.rounded(), abs(d) < 9e15 else { return nil }
        return Int(d)
    }
}
