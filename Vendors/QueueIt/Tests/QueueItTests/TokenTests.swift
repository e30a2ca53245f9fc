import Foundation
import Testing

@testable import QueueIt

@Suite struct TokenTests {
    let secret = "4e1deweb-d62c-4a5f-9a48-e2d0b2c8bd50"
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func hmacMatchesKnownVector() {
        // RFC 4231 test case 2: key "Jefe".
        #expect(
            QueueItHash.hmacHex(secretKey: "Jefe", message: "what do ya want for nothing?")
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func mintedTokenHasReferenceShape() throws {
        let t = try QueueItTokenMinter(secretKey: secret).mint(
            eventId: "sale", queueId: "q1", expiresAt: 1_700_000_600, redirectType: .queue, cookieValidityMinutes: 10)
        let body = "e_sale~q_q1~ts_1700000600~ce_false~cv_10~rt_queue"
        #expect(t == body + "~h_" + QueueItHash.hmacHex(secretKey: secret, message: body))
        #expect(!t.hasPrefix("rt_"))
        #expect(QueueItRedirectType(token: t) == .queue)
        let p = QueueItToken(t)
        #expect(p.eventId == "sale" && p.queueId == "q1" && p.expiresAtEpoch == 1_700_000_600)
        #expect(p.cookieValidityMinutes == 10 && p.extendableCookie == false && p.redirectTypeField == "queue")
        #expect(p.hashedText == body)
    }

    @Test func validatesKUJSFixtureOrder() throws {
        // Field order of the KU-JS fixture: ts, cv, ce, q, c, e, rt, h — any order hashes as written.
        let body = "ts_1700000600~cv_10~ce_false~q_944c1f44-60dd-4e37-aabc-f3e4bb1c8895~c_customerid~e_eventid~rt_disabled"
        let token = QueueItTokenMinter(secretKey: secret).sign(body: body)
        let v = QueueItTokenValidator(secretKey: secret, eventId: "eventid")
        let parsed = try v.validate(token, now: now)
        #expect(parsed.customerId == "customerid")
        #expect(parsed.redirectType == .disabled)
    }

    @Test func validationOrderIsHashEventExpiryIP() throws {
        let m = QueueItTokenMinter(secretKey: secret)
        let v = QueueItTokenValidator(secretKey: secret, eventId: "sale")
        let good = try m.mint(eventId: "sale", queueId: "q", expiresAt: 1_700_000_100, redirectType: .queue, clientIP: "10.0.0.1")
        #expect(throws: Never.self) { try v.validate(good, now: now, clientIP: "10.0.0.1") }
        // tampered (also expired and wrong event): hash first
        let tampered = good.replacingOccurrences(of: "q_q", with: "q_x")
        #expect(throws: QueueItValidationError.hash) { try v.validate(tampered, now: now.addingTimeInterval(1e6)) }
        // wrong secret
        #expect(throws: QueueItValidationError.hash) {
            try QueueItTokenValidator(secretKey: "other", eventId: "sale").validate(good, now: now)
        }
        // wrong event even when expired
        let other = try m.mint(eventId: "Sale", queueId: "q", expiresAt: 1, redirectType: .queue)
        #expect(throws: QueueItValidationError.eventId) { try v.validate(other, now: now) }
        // expired: ts < now
        let expired = try m.mint(eventId: "sale", queueId: "q", expiresAt: 1_699_999_999, redirectType: .queue, clientIP: "1.1.1.1")
        #expect(throws: QueueItValidationError.timestamp) { try v.validate(expired, now: now, clientIP: "9.9.9.9") }
        // ts == now still valid
        let edge = try m.mint(eventId: "sale", queueId: "q", expiresAt: 1_700_000_000, redirectType: .queue)
        #expect(throws: Never.self) { try v.validate(edge, now: now) }
        // ip
        #expect(throws: QueueItValidationError.ip) { try v.validate(good, now: now, clientIP: "10.0.0.2") }
        // no client ip: hip not checked
        #expect(throws: Never.self) { try v.validate(good, now: now, clientIP: nil) }
        // missing hash, missing ts, empty token
        #expect(throws: QueueItValidationError.hash) { try v.validate("e_sale~q_q~ts_1800000000~rt_queue", now: now) }
        #expect(throws: QueueItValidationError.timestamp) { try v.validate(m.sign(body: "e_sale~q_q~rt_queue~x_1"), now: now) }
        #expect(throws: QueueItValidationError.hash) { try v.validate("", now: now) }
    }

    @Test func hashIsCaseSensitive() throws {
        let m = QueueItTokenMinter(secretKey: secret)
        let t = try m.mint(eventId: "sale", queueId: "q", expiresAt: 1_800_000_000, redirectType: .queue)
        let h = QueueItToken(t).hash ?? ""
        let upper = t.replacingOccurrences(of: h, with: h.uppercased())
        #expect(throws: QueueItValidationError.hash) {
            try QueueItTokenValidator(secretKey: secret, eventId: "sale").validate(upper, now: now)
        }
    }

    @Test func parserSkipsMalformedPiecesAndKeepsLastRepeat() {
        let p = QueueItToken("e_a~bad~x_y_z~~e_b~_~ts_12")
        #expect(p.eventId == "b")
        #expect(p.hasRepeatedKeys)
        #expect(p.fields.count == 4)
        #expect(QueueItToken("ts_12a").expiresAtEpoch == nil)
        #expect(QueueItToken("ts_-5").expiresAtEpoch == nil)
        #expect(QueueItToken("ts_99999999999999999999999").expiresAtEpoch == nil)
    }

    @Test func minterRefusesValuesTheParserWouldMangle() {
        let m = QueueItTokenMinter(secretKey: secret)
        #expect(throws: QueueItTokenMinter.MintError.invalidValue(field: "e", value: "a_b")) {
            try m.mint(eventId: "a_b", queueId: "q", expiresAt: 1, redirectType: .queue)
        }
        #expect(throws: QueueItTokenMinter.MintError.self) {
            try m.mint(eventId: "e", queueId: "q~", expiresAt: 1, redirectType: .queue)
        }
        #expect(throws: QueueItTokenMinter.MintError.self) {
            try m.mint(eventId: "", queueId: "q", expiresAt: 1, redirectType: .queue)
        }
    }

    @Test func acceptedCookieRoundTripAndChecks() throws {
        let hip = QueueItHash.hmacHex(secretKey: secret, message: "10.0.0.1")
        let c = QueueItAcceptedCookie(
            eventId: "Sale", queueId: "q1", fixedValidityMinutes: 5, redirectType: "Queue",
            issueTime: 1_700_000_000, hashedIP: hip, secretKey: secret)
        #expect(QueueItAcceptedCookie.name(forEvent: "Sale") == "QueueITAccepted-SDFrts345E-V3_Sale")
        #expect(c.value == "EventId=Sale&QueueId=q1&FixedValidityMins=5&RedirectType=queue&IssueTime=1700000000&Hip=\(hip)&Hash=\(c.hash)")
        #expect(c.hash == QueueItHash.hmacHex(secretKey: secret, message: "saleq15queue1700000000" + hip))
        let parsed = try #require(QueueItAcceptedCookie.parse(c.value))
        #expect(parsed == c)
        // Capitalised event ids validate (the KU-JS verify bug is fixed).
        try parsed.validate(
            secretKey: secret, eventId: "sale", now: now.addingTimeInterval(300), cookieValidityMinutes: 20, clientIP: "10.0.0.1")
        #expect(throws: QueueItValidationError.timestamp) {
            try parsed.validate(
                secretKey: secret, eventId: "sale", now: now.addingTimeInterval(301), cookieValidityMinutes: 20, clientIP: nil)
        }
        #expect(throws: QueueItValidationError.eventId) {
            try parsed.validate(secretKey: secret, eventId: "other", now: now, cookieValidityMinutes: 20, clientIP: nil)
        }
        #expect(throws: QueueItValidationError.ip) {
            try parsed.validate(secretKey: secret, eventId: "sale", now: now, cookieValidityMinutes: 20, clientIP: "10.0.0.9")
        }
        var tampered = parsed
        tampered.queueId = "q2"
        #expect(throws: QueueItValidationError.hash) {
            try tampered.validate(secretKey: secret, eventId: "sale", now: now, cookieValidityMinutes: 20, clientIP: nil)
        }
        // No fixed validity: the configured minutes apply.
        let d = QueueItAcceptedCookie(
            eventId: "sale", queueId: "q", fixedValidityMinutes: nil, redirectType: "queue",
            issueTime: 1_700_000_000, hashedIP: nil, secretKey: secret)
        #expect(!d.value.contains("FixedValidityMins") && !d.value.contains("Hip"))
        try d.validate(
            secretKey: secret, eventId: "sale", now: now.addingTimeInterval(1200), cookieValidityMinutes: 20, clientIP: "1.2.3.4")
        #expect(QueueItAcceptedCookie.parse("EventId=a&QueueId=b") == nil)
        #expect(QueueItAcceptedCookie.parse("garbage") == nil)
    }

    /// The byte-level readers of the cookie value and of a `Cookie` header, on their edge cases.
    @Test func cookieValueAndHeaderReadersOnEdgeCases() throws {
        let base = "EventId=sale&QueueId=q&RedirectType=queue&IssueTime=1700000000&Hash=ab"
        let plain = try #require(QueueItAcceptedCookie.parse(base))
        #expect(
            plain.eventId == "sale" && plain.queueId == "q" && plain.redirectType == "queue" && plain.issueTime == 1_700_000_000
                && plain.hash == "ab")
        #expect(plain.fixedValidityMinutes == nil && plain.hashedIP == nil)
        // empty pieces and pieces without `=` are skipped; the last repeat wins; unknown keys are ignored
        let messy = try #require(QueueItAcceptedCookie.parse("&&junk&" + base + "&QueueId=q2&Other=x&&"))
        #expect(messy.queueId == "q2")
        // percent-encoded as a whole (`%26`, `%3D`), and a value with `=` in it
        let encoded = try #require(
            QueueItAcceptedCookie.parse(base.replacingOccurrences(of: "&", with: "%26").replacingOccurrences(of: "=", with: "%3D")))
        #expect(encoded == plain)
        #expect(try #require(QueueItAcceptedCookie.parse(base + "&Hip=a=b")).hashedIP == "a=b")
        #expect(try #require(QueueItAcceptedCookie.parse(base + "&FixedValidityMins=7")).fixedValidityMinutes == 7)
        #expect(try #require(QueueItAcceptedCookie.parse("EventId=é&QueueId=ü&RedirectType=queue&IssueTime=1&Hash=ab")).queueId == "ü")
        for bad in [
            "", "%", "%2", base.replacingOccurrences(of: "Hash=ab", with: "Hash="),
            base.replacingOccurrences(of: "EventId=sale", with: "EventId="),
            base + "&FixedValidityMins=-1", base + "&FixedValidityMins=x", base.replacingOccurrences(of: "1700000000", with: "soon"),
            String(repeating: "x", count: 4097)
        ] {
            #expect(QueueItAcceptedCookie.parse(bad) == nil, "\(bad.prefix(60))")
        }

        let name = "QueueITAccepted-SDFrts345E-V3_sale"
        let cookie = { (header: String) in QueueItRequestValidator.cookie(named: name, inHeaderValue: header) }
        #expect(cookie("\(name)=v") == "v")
        #expect(cookie("a=1; \t \(name)=v w \t ;b=2") == "v w")
        #expect(cookie("a=1;\(name)=") == "")
        #expect(cookie("\(name)=first; \(name)=second") == "first")
        #expect(cookie("x\(name)=v; \(name)x=v; \(name)") == nil)
        #expect(cookie("\(name) =v") == nil)
        #expect(cookie("") == nil && cookie(";;;") == nil)
        #expect(cookie("\(name)=a=b") == "a=b")
        #expect(cookie("k=é; \(name)=ü") == "ü")
        #expect(QueueItRequestValidator.cookie(named: "a=b", inHeaderValue: "a=b=c") == nil)
        #expect(QueueItRequestValidator.cookie(named: "k", in: [("Accept", "k=0"), ("COOKIE", "j=1; k=2")]) == "2")
    }
}
