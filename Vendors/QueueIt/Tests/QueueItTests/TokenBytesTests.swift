import Foundation
import Testing

@testable import QueueIt

/// The byte-level token reader (`QueueItTokenBytes`) and the validator built on it, checked
/// against the text-level rules they replace (docs/queueit-protocol.md §7.3): every field read, every verdict.
@Suite struct TokenBytesTests {
    let secret = "4e1deweb-d62c-4a5f-9a48-e2d0b2c8bd50"
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// The text-level reading: split on `~` (empty pieces kept), each piece on its only `_`.
    static func referenceFields(_ raw: String) -> [(String, String)] {
        var out: [(String, String)] = []
        for piece in raw.split(separator: "~", omittingEmptySubsequences: false) {
            let parts = piece.split(separator: "_", omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            out.append((String(parts[0]), String(parts[1])))
        }
        return out
    }

    /// The text-level validator: Strings, a fresh HMAC key per hash.
    static func referenceVerdict(_ token: String, secret: String, eventId: String, now: Date, clientIP: String?) -> QueueItValidationError?
    {
        let fields = referenceFields(token)
        func last(_ key: String) -> String? { fields.last(where: { $0.0 == key })?.1 }
        guard let h = last("h") else { return .hash }
        // the first literal `~h_{h}`, found on bytes (as the connectors' `String.replace`)
        let bytes = Array(token.utf8)
        let marker = Array(("~h_" + h).utf8)
        var text = token
        if bytes.count >= marker.count,
            let at = (0...(bytes.count - marker.count)).first(where: { Array(bytes[$0..<($0 + marker.count)]) == marker })
        {
            text = String(decoding: Array(bytes[..<at]) + Array(bytes[(at + marker.count)...]), as: UTF8.self)
        }
        guard QueueItHash.constantTimeEquals(QueueItHash.hmacHex(secretKey: secret, message: text), h) else { return .hash }
        guard last("e") == eventId else { return .eventId }
        guard let ts = last("ts").flatMap(QueueItToken.parseEpoch), ts >= Int64(now.timeIntervalSince1970.rounded(.down)) else {
            return .timestamp
        }
        if let hip = last("hip"), let ip = clientIP, !ip.isEmpty,
            !QueueItHash.constantTimeEquals(QueueItHash.hmacHex(secretKey: secret, message: ip), hip)
        {
            return .ip
        }
        return nil
    }

    func verdict(_ token: String, eventId: String = "sale", clientIP: String? = nil) -> QueueItValidationError? {
        do throws(QueueItValidationError) {
            try QueueItTokenValidator(secretKey: secret, eventId: eventId).validate(token, now: now, clientIP: clientIP)
            return nil
        } catch {
            return error
        }
    }

    @Test func fieldsMatchTheTextRules() {
        let samples = [
            "", "~", "~~", "_", "__", "a_", "_b", "a_b", "a_b_c", "a_b~", "~a_b", "e_a~bad~x_y_z~~e_b~_~ts_12",
            "e_x~e_y~e_z", "h_~h_", "é_ü~ç_ñ", "e_\u{0065}\u{0301}", "ts_00017~ts_", "a_b~~~c_d~_e~f_"
        ]
        for raw in samples {
            let token = QueueItToken(raw)
            let reference = Self.referenceFields(raw)
            #expect(token.fields.map(\.key) == reference.map(\.0), "\(raw)")
            #expect(token.fields.map(\.value) == reference.map(\.1), "\(raw)")
            for key in ["e", "h", "ts", "a", "x", "é", ""] {
                #expect(token.value(key) == reference.last(where: { $0.0 == key })?.1, "\(raw) \(key)")
            }
        }
    }

    @Test func valueComparesKeysAsText() {
        // "é" precomposed and decomposed are the same String: the byte reader agrees.
        let token = QueueItToken("\u{0065}\u{0301}_decomposed")
        #expect(token.value("\u{00E9}") == "decomposed")
        #expect(token.value("e") == nil)
    }

    @Test func epochReadsOnlyPlainDigits() throws {
        for (text, expected) in [("0", Int64(0)), ("1700000000", 1_700_000_000), ("000000000000000012", 12)] as [(String, Int64?)] {
            #expect(QueueItToken("ts_" + text).expiresAtEpoch == expected)
        }
        for bad in ["", "-1", "+1", "1.5", " 1", "1 ", "١٢", "9999999999999999999", "0x10"] {
            #expect(QueueItToken("ts_" + bad).expiresAtEpoch == nil, "\(bad)")
        }
    }

    @Test func hashedTextRemovesTheFirstMarker() {
        #expect(QueueItToken("e_a~h_abc").hashedText == "e_a")
        #expect(QueueItToken("h_abc~e_a").hashedText == "h_abc~e_a")  // no `~h_abc`: the whole text
        #expect(QueueItToken("e_a~h_ab~x_~h_ab").hashedText == "e_a~x_~h_ab")
        #expect(QueueItToken("e_a~h_").hashedText == "e_a")
        #expect(QueueItToken("e_a").hashedText == nil)
        #expect(QueueItToken("").hashedText == nil)
    }

    @Test func hexComparisonNeedsTheWholeLowerCaseDigest() throws {
        let mac = Array(repeating: UInt8(0xAB), count: 32)
        let good = String(repeating: "ab", count: 32)
        for (text, expected) in [
            (good, true), (good.uppercased(), false), (String(good.dropLast()), false), (good + "a", false), ("", false)
        ] {
            var bytes = Array(text.utf8)
            let equal = bytes.withUnsafeMutableBufferPointer { b in
                QueueItTokenBytes.hexEquals(mac, UnsafeBufferPointer(b), 0..<b.count)
            }
            #expect(equal == expected, "\(text)")
        }
    }

    @Test func verdictsMatchTheTextValidator() throws {
        let minter = QueueItTokenMinter(secretKey: secret)
        let good = try minter.mint(
            eventId: "sale", queueId: "q-1", expiresAt: 1_700_000_600, redirectType: .queue,
            cookieValidityMinutes: 20, clientIP: "10.0.0.1")
        var tokens = [
            good, "", "~", "h_", "e_sale~h_", good + "~", "~" + good, good.uppercased(), String(good.dropLast()),
            good.replacingOccurrences(of: "e_sale", with: "e_Sale"), good.replacingOccurrences(of: "~h_", with: "~H_"),
            minter.sign(body: "e_sale~ts_1700000600~h_x"), minter.sign(body: "e_sale~e_other~ts_1800000000"),
            minter.sign(body: "e_other~e_sale~ts_1800000000"), minter.sign(body: "e_sale~ts_1699999999"),
            minter.sign(body: "e_sale~ts_1700000000"), minter.sign(body: "e_sale~ts_17000000000000000000"),
            minter.sign(body: "e_sale~ts_ 1800000000"), minter.sign(body: "e_sale~ts_1800000000~hip_00"),
            minter.sign(body: "e_s\u{00E9}le~ts_1800000000"), minter.sign(body: "e_sa_le~ts_1800000000"),
            minter.sign(body: "h_first~e_sale~ts_1800000000"), "e_sale~ts_1800000000~h_" + String(repeating: "0", count: 64)
        ]
        // every prefix and a few byte flips of the good token
        for n in stride(from: 0, through: good.utf8.count, by: 7) {
            tokens.append(String(decoding: Array(good.utf8).prefix(n), as: UTF8.self))
        }
        for i in stride(from: 0, to: good.utf8.count, by: 5) {
            var bytes = Array(good.utf8)
            bytes[i] = bytes[i] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
            tokens.append(String(decoding: bytes, as: UTF8.self))
        }
        for token in tokens {
            for ip in [nil, "", "10.0.0.1", "10.0.0.2"] as [String?] {
                for event in ["sale", "s\u{0065}\u{0301}le", "Sale"] {
                    let expected = Self.referenceVerdict(token, secret: secret, eventId: event, now: now, clientIP: ip)
                    #expect(verdict(token, eventId: event, clientIP: ip) == expected, "\(token) \(String(describing: ip)) \(event)")
                }
            }
        }
        #expect(verdict(good, clientIP: "10.0.0.1") == nil)
        #expect(verdict(good, clientIP: "10.0.0.2") == .ip)
    }

    @Test func validatorReturnsTheParsedToken() throws {
        let token = try QueueItTokenMinter(secretKey: secret).mint(
            eventId: "sale", queueId: "q-9", expiresAt: 1_700_000_600, redirectType: .safetynet, cookieValidityMinutes: 5)
        let parsed = try QueueItTokenValidator(secretKey: secret, eventId: "sale").validate(token, now: now)
        #expect(parsed.raw == token)
        #expect(parsed.queueId == "q-9" && parsed.cookieValidityMinutes == 5 && parsed.redirectTypeField == "safetynet")
    }

    @Test func oneValidatorServesManyTokens() throws {
        // the keyed HMAC is copied per hash: earlier tokens leave nothing behind
        let minter = QueueItTokenMinter(secretKey: secret)
        let validator = QueueItTokenValidator(secretKey: secret, eventId: "sale")
        for i in 0..<50 {
            let token = try minter.mint(
                eventId: "sale", queueId: "q\(i)", expiresAt: 1_700_000_600, redirectType: .queue, clientIP: "10.0.0.\(i)")
            #expect(throws: Never.self) { try validator.validate(token, now: now, clientIP: "10.0.0.\(i)") }
            #expect(throws: QueueItValidationError.ip) { try validator.validate(token, now: now, clientIP: "10.0.1.\(i)") }
        }
    }
}
