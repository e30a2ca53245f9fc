import Crypto
import Foundation

/// A parsed `queueittoken` (docs/queueit-protocol.md §7.3): `key_value` pairs joined by `~`.
///
/// Parsing never fails: a piece that does not split on `_` into exactly two parts is skipped (as
/// the KnownUser connectors do), and a repeated key keeps its **last** value (KU-JS assigns each
/// piece in order). Use ``QueueItTokenValidator`` to decide whether a token is acceptable; the hash
/// covers the whole text, so only the holder of the secret key can produce repeated fields.
package struct QueueItToken: Sendable, Hashable {
    /// The token text exactly as received.
    package let raw: String
    /// Every well-formed `key_value` piece in order of appearance (repeats included).
    package var fields: [(key: String, value: String)] {
        withBytes { b in
            var out: [(key: String, value: String)] = []
            QueueItTokenBytes.forEachField(b) { k, v in
                out.append(
                    (
                        String(decoding: UnsafeBufferPointer(rebasing: b[k]), as: UTF8.self),
                        String(decoding: UnsafeBufferPointer(rebasing: b[v]), as: UTF8.self)
                    ))
            }
            return out
        }
    }

    /// `e`: the event (waiting room) id.
    package var eventId: String? { value("e") }
    /// `q`: the queue id.
    package var queueId: String? { value("q") }
    /// `ts`: expiry in epoch seconds, when it is a plain non-negative integer.
    package var expiresAtEpoch: Int64? { value("ts").flatMap(Self.parseEpoch) }
    /// `ts` as a date.
    package var expiresAt: Date? { expiresAtEpoch.map { Date(timeIntervalSince1970: TimeInterval($0)) } }
    /// `ce`: extendable cookie (`true`/`false`, case-insensitive); nil when absent or other text.
    package var extendableCookie: Bool? {
        switch value("ce")?.lowercased() {
        case "true": return true
        case "false": return false
        default: return nil
        }
    }
    /// `cv`: fixed cookie validity in minutes.
    package var cookieValidityMinutes: Int? { value("cv").flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil } }
    /// `rt`: the redirect type as written in the token (parsed field, not the SDK's `~rt_` match).
    package var redirectTypeField: String? { value("rt") }
    /// `hip`: HMAC of the client IP.
    package var hashedIP: String? { value("hip") }
    /// `h`: the hash.
    package var hash: String? { value("h") }
    /// `c`: customer id (seen in fixtures; the connectors do not use it).
    package var customerId: String? { value("c") }

    /// The redirect type the mobile SDKs read from this token (`~rt_…~` match, docs/queueit-protocol.md §2.2).
    package var redirectType: QueueItRedirectType { QueueItRedirectType(token: raw) }

    /// The last value of `key`, or nil.
    package func value(_ key: String) -> String? {
        var key = key
        return key.withUTF8 { k in
            withBytes { b in
                var found: Range<Int>?
                QueueItTokenBytes.forEachField(b) { name, value in
                    if QueueItTokenBytes.sameText(b, name, k) { found = value }
                }
                return found.map { String(decoding: UnsafeBufferPointer(rebasing: b[$0]), as: UTF8.self) }
            }
        }
    }

    /// Runs `body` on the token's UTF-8 bytes (no copy for a native string).
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var raw = raw
        return raw.withUTF8(body)
    }

    /// Whether some key appears more than once (reported, never trusted without the hash).
    package var hasRepeatedKeys: Bool {
        var seen = Set<String>()
        for f in fields where !seen.insert(f.key).inserted { return true }
        return false
    }

    /// Parses a token. Never fails; see the type's documentation for the rules.
    /// The fields are read from the text when asked for (on its bytes, no copy kept).
    package init(_ raw: String) {
        self.raw = raw
    }

    /// The text the hash covers: the token with the first literal `~h_{hash}` removed (KU-JS
    /// `String.replace` semantics). Nil when the token has no `h` field.
    package var hashedText: String? {
        withBytes { b in
            guard let h = QueueItTokenBytes.lastValue(b, "h") else { return nil }
            guard let at = QueueItTokenBytes.hashMarker(b, hash: h) else { return raw }
            let markerLength = 3 + h.count
            return String(decoding: Array(b[..<at]) + Array(b[(at + markerLength)...]), as: UTF8.self)
        }
    }

    static func parseEpoch(_ s: String) -> Int64? {
        guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(s)
    }

    package static func == (a: QueueItToken, b: QueueItToken) -> Bool { a.raw == b.raw }
    package func hash(into hasher: inout Hasher) { hasher.combine(raw) }
}

/// Mints `queueittoken`s the way a Queue-it server would (docs/queueit-protocol.md §7.3, minting recipe):
/// `e_{e}~q_{q}~ts_{expiry}~ce_{ce}[~cv_{m}]~rt_{type}[~hip_{hmac(ip)}]~h_{hmac}`.
/// `rt_` is never first or last, `h_` is always last.
package struct QueueItTokenMinter: Sendable {
    /// Why a token cannot be minted.
    package enum MintError: Error, Sendable, Equatable, CustomStringConvertible {
        /// A value is empty or contains `~` or `_` (the parser would drop or split it).
        case invalidValue(field: String, value: String)

        package var description: String {
            switch self {
            case .invalidValue(let field, let value):
                return "cannot mint a queueittoken: field '\(field)' = '\(value)' must be non-empty and contain neither '~' nor '_'"
            }
        }
    }

    /// The customer's secret key.
    package let secretKey: String

    package init(secretKey: String) { self.secretKey = secretKey }

    /// Mints a token. `expiresAt` is epoch seconds (`ts_`), `clientIP` adds `hip_`.
    package func mint(
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
    package func sign(body: String) -> String {
        body + "~h_" + QueueItHash.hmacHex(secretKey: secretKey, message: body)
    }

    static func check(_ field: String, _ value: String) throws(MintError) {
        if value.isEmpty || value.contains("~") || value.contains("_") {
            throw .invalidValue(field: field, value: value)
        }
    }
}

/// Validates a `queueittoken` in the KnownUser connector's order: hash → event → expiry → ip
/// (docs/queueit-protocol.md §7.3, KU-JS `validateToken`). Hash and event id compare case-sensitively (KU-JS).
///
/// Works on the token's bytes (no field strings) and keys HMAC-SHA256 once, at `init`: keep a
/// validator per secret key and event to validate many tokens.
package struct QueueItTokenValidator: Sendable {
    /// The customer's secret key.
    package let secretKey: String
    /// The waiting room (event) id the token must be for.
    package let eventId: String
    /// HMAC-SHA256 keyed with ``secretKey``, before any message: copied per hash, so the key
    /// schedule (padding, inner and outer pads) is computed once.
    let keyed: HMAC<SHA256>

    package init(secretKey: String, eventId: String) {
        self.secretKey = secretKey
        self.eventId = eventId
        self.keyed = HMAC<SHA256>(key: SymmetricKey(data: Array(secretKey.utf8)))
    }

    /// Validates `token`; returns the parsed token or throws the first failed check.
    /// - Parameters:
    ///   - now: the current time (epoch seconds are compared: valid while `ts >= now`).
    ///   - clientIP: checked against `hip_` only when both are present.
    @discardableResult
    package func validate(_ token: String, now: Date, clientIP: String? = nil) throws(QueueItValidationError) -> QueueItToken {
        var text = token
        if let failure = text.withUTF8({ check($0, now: now, clientIP: clientIP) }) { throw failure }
        return QueueItToken(token)
    }

    /// The first failed check of the token `b`, or nil when it is valid.
    func check(_ b: UnsafeBufferPointer<UInt8>, now: Date, clientIP: String?) -> QueueItValidationError? {
        let fields = QueueItTokenBytes.Checked(b)
        guard let h = fields.hash else { return .hash }
        var mac = keyed
        if let at = QueueItTokenBytes.hashMarker(b, hash: h) {
            mac.update(data: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[..<at])))
            mac.update(data: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[(at + 3 + h.count)...])))
        } else {
            mac.update(data: UnsafeRawBufferPointer(b))
        }
        guard QueueItTokenBytes.hexEquals(mac.finalize(), b, h) else { return .hash }
        var event = eventId
        guard let e = fields.event, event.withUTF8({ QueueItTokenBytes.sameText(b, e, $0) }) else { return .eventId }
        guard let expiry = fields.expiry, let ts = QueueItTokenBytes.epoch(b, expiry),
            ts >= Int64(now.timeIntervalSince1970.rounded(.down))
        else { return .timestamp }
        if let hip = fields.hashedIP, var ip = clientIP, !ip.isEmpty {
            var ipMac = keyed
            ip.withUTF8 { ipMac.update(data: UnsafeRawBufferPointer($0)) }
            guard QueueItTokenBytes.hexEquals(ipMac.finalize(), b, hip) else { return .ip }
        }
        return nil
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
