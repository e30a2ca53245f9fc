import Foundation

/// A parsed `queueittoken` (reference §7.3): `key_value` pairs joined by `~`.
///
/// Parsing never fails: a piece that does not split on `_` into exactly two parts is skipped (as
/// the KnownUser connectors do), and a repeated key keeps its **last** value (KU-JS assigns each
/// piece in order). Use ``QueueItTokenValidator`` to decide whether a token is acceptable; the hash
/// covers the whole text, so only the holder of the secret key can produce repeated fields.
public struct QueueItToken: Sendable, Hashable {
    /// The token text exactly as received.
    public let raw: String
    /// Every well-formed `key_value` piece in order of appearance (repeats included).
    public let fields: [(key: String, value: String)]

    /// `e`: the event (waiting room) id.
    public var eventId: String? { value("e") }
    /// `q`: the queue id.
    public var queueId: String? { value("q") }
    /// `ts`: expiry in epoch seconds, when it is a plain non-negative integer.
    public var expiresAtEpoch: Int64? { value("ts").flatMap(Self.parseEpoch) }
    /// `ts` as a date.
    public var expiresAt: Date? { expiresAtEpoch.map { Date(timeIntervalSince1970: TimeInterval($0)) } }
    /// `ce`: extendable cookie (`true`/`false`, case-insensitive); nil when absent or other text.
    public var extendableCookie: Bool? {
        switch value("ce")?.lowercased() {
        case "true": return true
        case "false": return false
        default: return nil
        }
    }
    /// `cv`: fixed cookie validity in minutes.
    public var cookieValidityMinutes: Int? { value("cv").flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil } }
    /// `rt`: the redirect type as written in the token (parsed field, not the SDK's `~rt_` match).
    public var redirectTypeField: String? { value("rt") }
    /// `hip`: HMAC of the client IP.
    public var hashedIP: String? { value("hip") }
    /// `h`: the hash.
    public var hash: String? { value("h") }
    /// `c`: customer id (seen in fixtures; the connectors do not use it).
    public var customerId: String? { value("c") }

    /// The redirect type the mobile SDKs read from this token (`~rt_…~` match, reference §2.2).
    public var redirectType: QueueItRedirectType { QueueItRedirectType(token: raw) }

    /// The last value of `key`, or nil.
    public func value(_ key: String) -> String? {
        fields.last(where: { $0.key == key })?.value
    }

    /// Whether some key appears more than once (reported, never trusted without the hash).
    public var hasRepeatedKeys: Bool {
        var seen = Set<String>()
        for f in fields where !seen.insert(f.key).inserted { return true }
        return false
    }

    /// Parses a token. Never fails; see the type's documentation for the rules.
    public init(_ raw: String) {
        self.raw = raw
        var out: [(key: String, value: String)] = []
        for piece in raw.utf8.split(separator: UInt8(ascii: "~"), omittingEmptySubsequences: false) {
            guard let us = piece.firstIndex(of: UInt8(ascii: "_")) else { continue }
            let rest = piece[piece.index(after: us)...]
            guard !rest.contains(UInt8(ascii: "_")) else { continue }
            out.append((String(decoding: piece[..<us], as: UTF8.self), String(decoding: rest, as: UTF8.self)))
        }
        self.fields = out
    }

    /// The text the hash covers: the token with the first literal `~h_{hash}` removed (KU-JS
    /// `String.replace` semantics). Nil when the token has no `h` field.
    public var hashedText: String? {
        guard let h = hash else { return nil }
        let bytes = Array(raw.utf8)
        guard let at = QueueItBytes.find(Array(("~h_" + h).utf8), in: bytes) else { return raw }
        let markerLength = 3 + h.utf8.count
        return String(decoding: bytes[..<at] + bytes[(at + markerLength)...], as: UTF8.self)
    }

    static func parseEpoch(_ s: String) -> Int64? {
        guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(s)
    }

    public static func == (a: QueueItToken, b: QueueItToken) -> Bool { a.raw == b.raw }
    public func hash(into hasher: inout Hasher) { hasher.combine(raw) }
}

/// Mints `queueittoken`s the way a Queue-it server would (reference §7.3, minting recipe):
/// `e_{e}~q_{q}~ts_{expiry}~ce_{ce}[~cv_{m}]~rt_{type}[~hip_{hmac(ip)}]~h_{hmac}`.
/// `rt_` is never first or last, `h_` is always last.
public struct QueueItTokenMinter: Sendable {
    /// Why a token cannot be minted.
    public enum MintError: Error, Sendable, Equatable, CustomStringConvertible {
        /// A value is empty or contains `~` or `_` (the parser would drop or split it).
        case invalidValue(field: String, value: String)

        public var description: String {
            switch self {
            case .invalidValue(let field, let value):
                return "cannot mint a queueittoken: field '\(field)' = '\(value)' must be non-empty and contain neither '~' nor '_'"
            }
        }
    }

    /// The customer's secret key.
    public let secretKey: String

    public init(secretKey: String) { self.secretKey = secretKey }

    /// Mints a token. `expiresAt` is epoch seconds (`ts_`), `clientIP` adds `hip_`.
    public func mint(
        eventId: String, queueId: String, expiresAt: Int64, redirectType: QueueItRedirectType,
        extendableCookie: Bool = false, cookieValidityMinutes: Int? = nil, clientIP: String? = nil
    ) throws(MintError) -> String {
        try Self.check("e", eventId)
        try Self.check("q", queueId)
        try Self.check("rt", redirectType.rawValue)
        var body = "e_\(eventId)~q_\(queueId)~ts_\(expiresAt)~ce_\(extendableCookie ? "true" : "false")"
        if let cv = cookieValidityMinutes { body += "~cv_\(max(0, cv))" }
        body += "~rt_\(redirectType.rawValue)"
        if let ip = clientIP, !ip.isEmpty { body += "~hip_" + QueueItHash.hmacHex(secretKey: secretKey, message: ip) }
        return body + "~h_" + QueueItHash.hmacHex(secretKey: secretKey, message: body)
    }

    /// Signs an arbitrary token body (fields already joined by `~`, without `h_`): `body~h_{hmac}`.
    public func sign(body: String) -> String {
        body + "~h_" + QueueItHash.hmacHex(secretKey: secretKey, message: body)
    }

    static func check(_ field: String, _ value: String) throws(MintError) {
        if value.isEmpty || value.contains("~") || value.contains("_") {
            throw .invalidValue(field: field, value: value)
        }
    }
}

/// Validates a `queueittoken` in the KnownUser connector's order: hash → event → expiry → ip
/// (reference §7.3, KU-JS `validateToken`). Hash and event id compare case-sensitively (KU-JS).
public struct QueueItTokenValidator: Sendable {
    /// The customer's secret key.
    public let secretKey: String
    /// The waiting room (event) id the token must be for.
    public let eventId: String

    public init(secretKey: String, eventId: String) {
        self.secretKey = secretKey
        self.eventId = eventId
    }

    /// Validates `token`; returns the parsed token or throws the first failed check.
    /// - Parameters:
    ///   - now: the current time (epoch seconds are compared: valid while `ts >= now`).
    ///   - clientIP: checked against `hip_` only when both are present.
    @discardableResult
    public func validate(_ token: String, now: Date, clientIP: String? = nil) throws(QueueItValidationError) -> QueueItToken {
        let parsed = QueueItToken(token)
        guard let text = parsed.hashedText, let h = parsed.hash else { throw .hash }
        let expected = QueueItHash.hmacHex(secretKey: secretKey, message: text)
        guard QueueItHash.constantTimeEquals(expected, h) else { throw .hash }
        guard parsed.eventId == eventId else { throw .eventId }
        guard let ts = parsed.expiresAtEpoch, ts >= Int64(now.timeIntervalSince1970.rounded(.down)) else { throw .timestamp }
        if let hip = parsed.hashedIP, let ip = clientIP, !ip.isEmpty {
            let expectedIP = QueueItHash.hmacHex(secretKey: secretKey, message: ip)
            guard QueueItHash.constantTimeEquals(expectedIP, hip) else { throw .ip }
        }
        return parsed
    }
}

/// Byte-level helpers (Foundation's `range(of:)` is slow on Linux).
enum QueueItBytes {
    /// Index of the first occurrence of `needle` in `haystack`.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        let first = needle[0]
        var i = start
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < needle.count && haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }
}
