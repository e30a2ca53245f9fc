import Foundation

/// The KnownUser session cookie `QueueITAccepted-SDFrts345E-V3_{eventId}` (docs/queueit-protocol.md §7.4).
///
/// Value: `EventId={e}&QueueId={q}[&FixedValidityMins={cv}]&RedirectType={rt}&IssueTime={s}[&Hip={hip}]&Hash={hex}`,
/// hash = HMAC-SHA256(secret, `lower(eventId) + queueId + (cv or "") + lower(rt) + issueTime + (hip or "")`).
/// Deliberate difference from KU-JS: we hash the lower-cased event id when verifying too, so event
/// ids with capitals validate (KU-JS writes lower-case but verifies the original case).
package struct QueueItAcceptedCookie: Sendable, Hashable {
    /// The cookie name prefix; the event id follows.
    package static let namePrefix = "QueueITAccepted-SDFrts345E-V3_"

    package var eventId: String
    package var queueId: String
    package var fixedValidityMinutes: Int?
    package var redirectType: String
    package var issueTime: Int64
    package var hashedIP: String?
    package var hash: String

    /// The cookie name for `eventId`.
    package static func name(forEvent eventId: String) -> String { namePrefix + eventId }

    /// Builds and signs a cookie.
    package init(
        eventId: String, queueId: String, fixedValidityMinutes: Int?, redirectType: String,
        issueTime: Int64, hashedIP: String?, secretKey: String
    ) {
        self.eventId = eventId
        self.queueId = queueId
        self.fixedValidityMinutes = fixedValidityMinutes
        self.redirectType = redirectType.lowercased()
        self.issueTime = issueTime
        self.hashedIP = hashedIP
        self.hash = ""
        self.hash = computeHash(secretKey: secretKey)
    }

    init(
        eventId: String, queueId: String, fixedValidityMinutes: Int?, redirectType: String,
        issueTime: Int64, hashedIP: String?, hash: String
    ) {
        self.eventId = eventId
        self.queueId = queueId
        self.fixedValidityMinutes = fixedValidityMinutes
        self.redirectType = redirectType
        self.issueTime = issueTime
        self.hashedIP = hashedIP
        self.hash = hash
    }

    /// Whether the fields that border each other in the hashed text have the forms Queue-it issues:
    /// the queue id a GUID (`8-4-4-4-12` hex digits, as in KU-JS's test fixtures' `q_{guid}`) or
    /// this package's emulator's `8-4-12` form, and `Hip`, when present, 64 hex digits. Any digit
    /// moved across a field boundary breaks one of these lengths.
    package var hasIssuedForm: Bool {
        Self.isIssuedQueueId(queueId) && (hashedIP.map { $0.utf8.count == 64 && $0.utf8.allSatisfy(Self.isHexDigit) } ?? true)
    }

    /// `8-4-4-4-12` or `8-4-12` hex digits (one pass over the bytes, nothing allocated: it is
    /// asked on every checked cookie).
    package static func isIssuedQueueId(_ id: String) -> Bool {
        let count = id.utf8.count
        let dashes: (Int, Int, Int, Int)
        switch count {
        case 36: dashes = (8, 13, 18, 23)
        case 26: dashes = (8, 13, -1, -1)
        default: return false
        }
        var index = 0
        for byte in id.utf8 {
            if index == dashes.0 || index == dashes.1 || index == dashes.2 || index == dashes.3 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else if !isHexDigit(byte) {
                return false
            }
            index += 1
        }
        return true
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }

    /// The hashed text's HMAC.
    package func computeHash(secretKey: String) -> String {
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
    package var value: String {
        var text = ""
        text.reserveCapacity(
            eventId.utf8.count + queueId.utf8.count + redirectType.utf8.count + (hashedIP?.utf8.count ?? 0)
                + hash.utf8.count + 96)
        text += "EventId="
        text += eventId
        text += "&QueueId="
        text += queueId
        if let cv = fixedValidityMinutes {
            text += "&FixedValidityMins="
            text += String(cv)
        }
        text += "&RedirectType="
        text += redirectType
        text += "&IssueTime="
        text += String(issueTime)
        if let hip = hashedIP {
            text += "&Hip="
            text += hip
        }
        text += "&Hash="
        text += hash
        return text
    }

    /// Parses a cookie value (percent-decoded first if it looks encoded). Nil when a required
    /// part (`EventId`, `QueueId`, `RedirectType`, `IssueTime`, `Hash`) is missing or malformed.
    package static func parse(_ raw: String) -> QueueItAcceptedCookie? {
        guard raw.utf8.count <= 4096 else { return nil }
        var text = looksEncoded(raw) ? QueueItPercent.decode(raw) : raw
        // read on the UTF-8 bytes: `&` and `=` are ASCII, so every piece is whole characters
        return text.withUTF8 { b -> QueueItAcceptedCookie? in
            var e: Range<Int>?
            var q: Range<Int>?
            var cvText: Range<Int>?
            var rt: Range<Int>?
            var itText: Range<Int>?
            var hip: Range<Int>?
            var h: Range<Int>?
            func isKey(_ key: Range<Int>, _ word: StaticString) -> Bool {
                key.count == word.utf8CodeUnitCount && memcmp(b.baseAddress! + key.lowerBound, word.utf8Start, key.count) == 0
            }
            var i = 0
            while i < b.count {
                let start = i
                while i < b.count, b[i] != UInt8(ascii: "&") { i += 1 }
                let end = i
                i += 1
                var eq = start
                while eq < end, b[eq] != UInt8(ascii: "=") { eq += 1 }
                guard eq < end else { continue }
                let key = start..<eq
                let value = (eq + 1)..<end
                // the last occurrence of a key wins
                if isKey(key, "EventId") {
                    e = value
                } else if isKey(key, "QueueId") {
                    q = value
                } else if isKey(key, "FixedValidityMins") {
                    cvText = value
                } else if isKey(key, "RedirectType") {
                    rt = value
                } else if isKey(key, "IssueTime") {
                    itText = value
                } else if isKey(key, "Hip") {
                    hip = value
                } else if isKey(key, "Hash") {
                    h = value
                }
            }
            func string(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self) }
            guard let e, !e.isEmpty, let q, let rt, let it = itText.flatMap({ QueueItToken.parseEpoch(string($0)) }), let h, !h.isEmpty
            else { return nil }
            var cv: Int?
            if let s = cvText, !s.isEmpty {
                guard let n = Int(string(s)), n >= 0, n < 10_000_000 else { return nil }
                cv = n
            }
            return QueueItAcceptedCookie(
                eventId: string(e), queueId: string(q), fixedValidityMinutes: cv, redirectType: string(rt),
                issueTime: it, hashedIP: hip.map(string), hash: string(h))
        }
    }

    /// Whether `raw` holds `%26` or `%3D` (an encoded `&` or `=`).
    static func looksEncoded(_ raw: String) -> Bool {
        var raw = raw
        return raw.withUTF8 { b in
            guard b.count >= 3 else { return false }
            for i in 0..<(b.count - 2) where b[i] == UInt8(ascii: "%") {
                if (b[i + 1] == UInt8(ascii: "2") && b[i + 2] == UInt8(ascii: "6"))
                    || (b[i + 1] == UInt8(ascii: "3") && b[i + 2] == UInt8(ascii: "D"))
                {
                    return true
                }
            }
            return false
        }
    }

    /// `a.lowercased() == b.lowercased()`, without the copies when both are ASCII.
    static func equalIgnoringCase(_ a: String, _ b: String) -> Bool {
        var ascii = true
        let equal = a.utf8.elementsEqual(b.utf8) { x, y in
            if x >= 0x80 || y >= 0x80 { ascii = false }
            return x == y || ((x | 0x20) == (y | 0x20) && (0x61...0x7A).contains(x | 0x20))
        }
        return ascii ? equal : a.lowercased() == b.lowercased()
    }

    /// Validates in the connector's order: hash → EventId (case-insensitive) → time → IP.
    /// - Parameters:
    ///   - cookieValidityMinutes: used when the cookie has no `FixedValidityMins`.
    ///   - requiringIssuedForm: also refuse (`connector/sessionstate`) a cookie whose fields are not
    ///     in the forms Queue-it issues them in (``hasIssuedForm``): the hash joins the fields
    ///     without separators, so without this check a cookie's digits can be moved from one field
    ///     to the next (`QueueId=…fe1d` → `QueueId=…&FixedValidityMins=…`, `EventId=sale` →
    ///     `EventId=sale0`) and keep a valid hash. The connectors do not check (proposal).
    package func validate(
        secretKey: String, eventId expected: String, now: Date,
        cookieValidityMinutes: Int, clientIP: String?, requiringIssuedForm: Bool = false
    ) throws(QueueItValidationError) {
        guard QueueItHash.constantTimeEquals(computeHash(secretKey: secretKey), hash) else { throw .hash }
        if requiringIssuedForm, !hasIssuedForm { throw .sessionState }
        guard Self.equalIgnoringCase(eventId, expected) else { throw .eventId }
        let minutes = Int64(fixedValidityMinutes ?? cookieValidityMinutes)
        let (validity, o1) = minutes.multipliedReportingOverflow(by: 60)
        let (until, o2) = issueTime.addingReportingOverflow(validity)
        guard !o1, !o2, until >= Int64(now.timeIntervalSince1970.rounded(.down)) else { throw .timestamp }
        if let hip = hashedIP, let ip = clientIP, !ip.isEmpty {
            guard QueueItHash.constantTimeEquals(QueueItHash.hmacHex(secretKey: secretKey, message: ip), hip) else { throw .ip }
        }
    }
}
