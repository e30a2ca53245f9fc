import Crypto
import Foundation
import WaitingRoom

/// Local (hybrid) validation of a promotion, without an API call: the signature is the SHA-256
/// (hex) of `sha256hex(privateKey) + slug + queueActivatesOn + token + requested`, and it is
/// accepted for the room's `timeout` minutes after `requested` (`yyyy-MM-ddTHH:mm:ssZ`, UTC).
package struct CrowdHandlerSignature: Sendable {
    /// What a validation found.
    package enum Verdict: String, Sendable, Hashable {
        /// The signature matches and is within the room's timeout.
        case valid
        /// The signature matches but is older than the room's timeout.
        case expired
        /// The signature does not match (tampered, wrong key, wrong room or token).
        case invalid
        /// `requested` is not a timestamp of the documented form.
        case malformed
    }

    /// `sha256hex(privateKey)`: the only form of the key that takes part in a signature.
    package let hashedPrivateKey: String

    package init(privateKey: String) {
        hashedPrivateKey = Self.sha256Hex(privateKey)
    }

    /// Lower-case hex SHA-256 of the UTF-8 bytes of `text`.
    package static func sha256Hex(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The signature of a promotion.
    package func sign(slug: String, queueActivatesOn: String, token: String, requested: String) -> String {
        Self.sha256Hex(hashedPrivateKey + slug + queueActivatesOn + token + requested)
    }

    /// Parses `yyyy-MM-ddTHH:mm:ssZ` (UTC, whole seconds: the form the API emits); anything
    /// else is nil. Done by hand: no formatter is built per validation.
    package static func parseRequested(_ text: String) -> Date? {
        let b = Array(text.utf8)
        guard b.count == 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var n = 0
            for i in from..<(from + count) {
                guard b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") else { return nil }
                n = n * 10 + Int(b[i] - UInt8(ascii: "0"))
            }
            return n
        }
        guard let y = number(0, 4), let m = number(5, 2), let d = number(8, 2), let hh = number(11, 2), let mm = number(14, 2),
            let ss = number(17, 2), (1...12).contains(m), (1...31).contains(d), hh < 24, mm < 60, ss < 61
        else { return nil }
        // days since 1970-01-01 from the civil date (proleptic Gregorian; eras of 400 years)
        let yy = m <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hh * 3600 + mm * 60 + ss))
    }

    /// Formats a date as `yyyy-MM-ddTHH:mm:ssZ` (UTC, whole seconds).
    package static func formatRequested(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: date)
    }

    /// Checks `signature` for a promotion in `room` at `now`.
    package func validate(signature: String, token: String, requested: String, room: CrowdHandlerRoom, now: Date) -> Verdict {
        guard let at = Self.parseRequested(requested) else { return .malformed }
        let expected = sign(slug: room.slug, queueActivatesOn: room.queueActivatesOn ?? "", token: token, requested: requested)
        guard Self.constantTimeEqual(expected, signature.lowercased()) else { return .invalid }
        let minutes = Double(room.timeout ?? 0)
        return now.timeIntervalSince(at) < minutes * 60 ? .valid : .expired
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in x.indices { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}
