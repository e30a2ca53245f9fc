import Foundation

/// The KnownUser session cookie `QueueITAccepted-SDFrts345E-V3_{eventId}` (docs/queueit-protocol.md §7.4).
///
/// Value: `EventId={e}&QueueId={q}[&FixedValidityMins={cv}]&RedirectType={rt}&IssueTime={s}[&Hip={hip}]&Hash={hex}`,
/// hash = HMAC-SHA256(secret, `lower(eventId) + queueId + (cv or "") + lower(rt) + issueTime + (hip or "")`).
/// Deliberate difference from KU-JS: we hash the lower-cased event id when verifying too, so event
/// ids with capitals validate (KU-JS writes lower-case but verifies the original case).
public struct QueueItAcceptedCookie: Sendable, Hashable {
    /// The cookie name prefix; the event id follows.
    public static let namePrefix = "QueueITAccepted-SDFrts345E-V3_"

    public var eventId: String
    public var queueId: String
    public var fixedValidityMinutes: Int?
    public var redirectType: String
    public var issueTime: Int64
    public var hashedIP: String?
    public var hash: String

    /// The cookie name for `eventId`.
    public static func name(forEvent eventId: String) -> String { namePrefix + eventId }

    /// Builds and signs a cookie.
    public init(eventId: String, queueId: String, fixedValidityMinutes: Int?, redirectType: String,
                issueTime: Int64, hashedIP: String?, secretKey: String) {
        self.eventId = eventId
        self.queueId = queueId
        self.fixedValidityMinutes = fixedValidityMinutes
        self.redirectType = redirectType.lowercased()
        self.issueTime = issueTime
        self.hashedIP = hashedIP
        self.hash = ""
        self.hash = computeHash(secretKey: secretKey)
    }

    init(eventId: String, queueId: String, fixedValidityMinutes: Int?, redirectType: String,
         issueTime: Int64, hashedIP: String?, hash: String) {
        self.eventId = eventId
        self.queueId = queueId
        self.fixedValidityMinutes = fixedValidityMinutes
        self.redirectType = redirectType
        self.issueTime = issueTime
        self.hashedIP = hashedIP
        self.hash = hash
    }

    /// The hashed text's HMAC.
    public func computeHash(secretKey: String) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(eventId.utf8.count + queueId.utf8.count + redirectType.utf8.count + (hashedIP?.utf8.count ?? 0) + 32)
        text.append(contentsOf: Self.lowercase(eventId).utf8)
        text.append(contentsOf: queueId.utf8)
        if let cv = fixedValidityMinutes { text.append(contentsOf: String(cv).utf8) }
        text.append(contentsOf: Self.lowercase(redirectType).utf8)
        text.append(contentsOf: String(issueTime).utf8)
        if let hashedIP { text.append(contentsOf: hashedIP.utf8) }
        return QueueItHash.hmacHex(secretKey: secretKey, bytes: text)
    }

    /// `text.lowercased()`, without a copy when it has nothing to lower (ASCII without capitals).
    static func lowercase(_ text: String) -> String {
        text.utf8.allSatisfy({ $0 < 0x80 && !(0x41...0x5A).contains($0) }) ? text : text.lowercased()
    }

    /// The cookie value.
    public var value: String {
        var parts = ["EventId=\(eventId)", "QueueId=\(queueId)"]
        if let cv = fixedValidityMinutes { parts.append("FixedValidityMins=\(cv)") }
        parts.append("RedirectType=\(redirectType)")
        parts.append("IssueTime=\(issueTime)")
        if let hip = hashedIP { parts.append("Hip=\(hip)") }
        parts.append("Hash=\(hash)")
        return parts.joined(separator: "&")
    }

    /// Parses a cookie value (percent-decoded first if it looks encoded). Nil when a required
    /// part (`EventId`, `QueueId`, `RedirectType`, `IssueTime`, `Hash`) is missing or malformed.
    public static func parse(_ raw: String) -> QueueItAcceptedCookie? {
        guard raw.utf8.count <= 4096 else { return nil }
        let text = looksEncoded(raw) ? QueueItPercent.decode(raw) : raw
        // split on the UTF-8 bytes: `&` and `=` are ASCII, so every piece is whole characters
        typealias Piece = Substring.UTF8View
        var e: Piece?, q: Piece?, cvText: Piece?, rt: Piece?, itText: Piece?, hip: Piece?, h: Piece?
        let bytes = Substring(text).utf8
        for pair in bytes.split(separator: UInt8(ascii: "&")) {
            guard let eq = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = pair[..<eq]
            let value = pair[pair.index(after: eq)...]
            // the last occurrence of a key wins
            if key.elementsEqual("EventId".utf8) { e = value }
            else if key.elementsEqual("QueueId".utf8) { q = value }
            else if key.elementsEqual("FixedValidityMins".utf8) { cvText = value }
            else if key.elementsEqual("RedirectType".utf8) { rt = value }
            else if key.elementsEqual("IssueTime".utf8) { itText = value }
            else if key.elementsEqual("Hip".utf8) { hip = value }
            else if key.elementsEqual("Hash".utf8) { h = value }
        }
        func string(_ piece: Piece) -> String { String(Substring(piece)) }
        guard let e, !e.isEmpty, let q, let rt, let it = itText.flatMap({ QueueItToken.parseEpoch(string($0)) }), let h, !h.isEmpty else { return nil }
        var cv: Int?
        if let s = cvText, !s.isEmpty {
            guard let n = Int(string(s)), n >= 0, n < 10_000_000 else { return nil }
            cv = n
        }
        return QueueItAcceptedCookie(eventId: string(e), queueId: string(q), fixedValidityMinutes: cv, redirectType: string(rt),
                                     issueTime: it, hashedIP: hip.map(string), hash: string(h))
    }

    /// Whether `raw` holds `%26` or `%3D` (an encoded `&` or `=`).
    static func looksEncoded(_ raw: String) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in raw.utf8 {
            if previous.0 == UInt8(ascii: "%") {
                if (previous.1 == UInt8(ascii: "2") && byte == UInt8(ascii: "6"))
                    || (previous.1 == UInt8(ascii: "3") && byte == UInt8(ascii: "D")) { return true }
            }
            previous = (previous.1, byte)
        }
        return false
    }

    /// Validates in the connector's order: hash → EventId (case-insensitive) → time → IP.
    /// - Parameters:
    ///   - cookieValidityMinutes: used when the cookie has no `FixedValidityMins`.
    public func validate(secretKey: String, eventId expected: String, now: Date,
                         cookieValidityMinutes: Int, clientIP: String?) throws(QueueItValidationError) {
        guard QueueItHash.constantTimeEquals(computeHash(secretKey: secretKey), hash) else { throw .hash }
        guard eventId.lowercased() == expected.lowercased() else { throw .eventId }
        let minutes = Int64(fixedValidityMinutes ?? cookieValidityMinutes)
        let (validity, o1) = minutes.multipliedReportingOverflow(by: 60)
        let (until, o2) = issueTime.addingReportingOverflow(validity)
        guard !o1, !o2, until >= Int64(now.timeIntervalSince1970.rounded(.down)) else { throw .timestamp }
        if let hip = hashedIP, let ip = clientIP, !ip.isEmpty {
            guard QueueItHash.constantTimeEquals(QueueItHash.hmacHex(secretKey: secretKey, message: ip), hip) else { throw .ip }
        }
    }
}
