import Foundation
import Testing
import WaitingRoom

@testable import QueueIt

/// Issue 15 item 7: the Swift-server validator's redirects as the KnownUser connector builds them
/// (`enqueuetoken`, `t` omitted for the event-target logic, `icr`, diagnostics, cancel).
struct KnownUserFidelityTests {
    let secret = "validator-secret"
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func validator(_ logic: QueueItRedirectLogic = .targetURL, enqueueTokenValidity: Duration? = nil, secret: String? = nil)
        -> QueueItRequestValidator
    {
        QueueItRequestValidator(
            settings: QueueItKnownUserSettings(
                customerId: "acme", secretKey: secret ?? self.secret, eventId: "sale",
                redirectLogic: logic, enqueueTokenValidity: enqueueTokenValidity))
    }

    func query(_ url: String?) -> [String: String] {
        guard let url, let q = url.split(separator: "?", maxSplits: 1).last else { return [:] }
        var out: [String: String] = [:]
        for item in QueueItPercent.queryItems(q) { out[item.name] = item.value }
        return out
    }

    @Test func queueRedirectCarriesAnEnqueueTokenAndOmitsTForTheEventTarget() throws {
        let d = validator(enqueueTokenValidity: .seconds(300)).validate(
            url: "https://shop.acme.com/cart", headers: [], clientIP: "10.1.2.3", now: now)
        let q = query(d.redirectURL)
        #expect(q["t"] == "https://shop.acme.com/cart")
        let token = try #require(q["enqueuetoken"])
        let parsed = try QueueItEnqueueTokenValidator(secretKey: secret, customerId: "acme", eventId: "sale").validate(token, now: now)
        #expect(parsed.header.ipAddress == "10.1.2.3" && parsed.header.expiresMillis == 1_700_000_300_000)
        // Without the setting: no enqueuetoken (as before).
        #expect(
            query(validator().validate(url: "https://shop.acme.com/cart", headers: [], clientIP: nil, now: now).redirectURL)["enqueuetoken"]
                == nil)
        // Event-target redirect logic: no t.
        let e = validator(.eventTargetURL).validate(url: "https://shop.acme.com/cart", headers: [], clientIP: nil, now: now)
        #expect(e.redirectURL == "https://acme.queue-it.net/?c=acme&e=sale&ver=v3-swift-1.0.0&cver=1&man=Queue")
    }

    /// `icr` never names a refused cookie on a token error (KU-JS `UserInQueueService.validateToken`
    /// sets it only for the token's IP binding); a cookie bound to another address, with no token,
    /// goes to `error/connector/sessionstate/` with `icr=ip,cip:{hex},hip:{Hip},st:{ms}` (KU-JS
    /// `validateQueueRequest`, `SessionValidationResult.setIpBindingValidationDetails`).
    @Test func errorRedirectsReportOnlyIPBindings() throws {
        let v = validator()
        let cookie = QueueItAcceptedCookie(
            eventId: "sale", queueId: "q-1", fixedValidityMinutes: nil, redirectType: "queue",
            issueTime: 1_600_000_000, hashedIP: nil, secretKey: secret)
        let headers = [("Cookie", "QueueITAccepted-SDFrts345E-V3_sale=\(cookie.value)")]
        let d = v.validate(url: "https://shop.acme.com/cart?queueittoken=garbage", headers: headers, clientIP: nil, now: now)
        #expect(d.rejection == .hash)
        #expect(query(d.redirectURL)["icr"] == nil, "\(d.redirectURL ?? "nil")")
        #expect(
            d.redirectURL?.contains("/error/hash/?") == true && d.redirectURL?.contains("&queueittoken=garbage&ts=1700000000&t=") == true)
        // A token bound to another address: icr=ip,cip:{hex of the client IP},hip:{token hip}.
        let bound = try QueueItTokenMinter(secretKey: secret).mint(
            eventId: "sale", queueId: "q-2", expiresAt: 1_700_000_300,
            redirectType: .queue, clientIP: "10.0.0.1")
        let other = v.validate(url: "https://shop.acme.com/cart?queueittoken=\(bound)", headers: [], clientIP: "10.0.0.2", now: now)
        #expect(other.rejection == .ip)
        let hip = try #require(QueueItToken(bound).hashedIP)
        #expect(query(other.redirectURL)["icr"] == "ip,cip:31302e302e302e32,hip:\(hip)")
        // A cookie bound to another address and no token: the session-state page, the cookie cleared.
        let boundCookie = QueueItAcceptedCookie(
            eventId: "sale", queueId: "q-3", fixedValidityMinutes: nil, redirectType: "queue",
            issueTime: 1_700_000_000 - 30, hashedIP: QueueItHash.hmacHex(secretKey: secret, message: "10.0.0.1"),
            secretKey: secret)
        let moved = v.validate(
            url: "https://shop.acme.com/cart", headers: [("Cookie", "QueueITAccepted-SDFrts345E-V3_sale=\(boundCookie.value)")],
            clientIP: "10.0.0.2", now: now)
        #expect(
            moved.redirectURL?.hasPrefix("https://acme.queue-it.net/error/connector/sessionstate/?c=acme&e=sale&") == true,
            "\(moved.redirectURL ?? "nil")")
        #expect(query(moved.redirectURL)["icr"] == "ip,cip:31302e302e302e32,hip:\(boundCookie.hashedIP ?? ""),st:1700000000000")
        #expect(query(moved.redirectURL)["ts"] == "1700000000")
        #expect(moved.setCookies.contains { $0.hasPrefix("QueueITAccepted-SDFrts345E-V3_sale=;") })
        // No cookie: no icr.
        #expect(
            query(v.validate(url: "https://shop.acme.com/cart?queueittoken=garbage", headers: [], clientIP: nil, now: now).redirectURL)[
                "icr"] == nil)
    }

    /// `cv_0` in a token is no fixed validity (KU-JS `UserInQueueService.getValidTokenResult`): the
    /// cookie has no `FixedValidityMins` and is extended like any other.
    @Test func cvZeroIsNoFixedValidity() throws {
        let token = try QueueItTokenMinter(secretKey: secret).mint(
            eventId: "sale", queueId: "q-4", expiresAt: 1_700_000_300,
            redirectType: .queue, cookieValidityMinutes: 0)
        #expect(token.contains("~cv_0~"))
        let d = validator().validate(url: "https://shop.acme.com/?queueittoken=\(token)", headers: [], clientIP: nil, now: now)
        #expect(d.isPassed)
        let cookie = try #require(d.setCookies.first { $0.hasPrefix("QueueITAccepted-SDFrts345E-V3_sale=") })
        #expect(!cookie.contains("FixedValidityMins"), "\(cookie)")
    }

    @Test func debugTokensUseTheDiagnosticsPagesAndCookie() throws {
        let m = QueueItTokenMinter(secretKey: secret)
        let good = try m.mint(eventId: "sale", queueId: "q-9", expiresAt: 1_700_000_300, redirectType: .debug)
        let ok = validator().validate(url: "https://shop.acme.com/?queueittoken=\(good)", headers: [], clientIP: nil, now: now)
        #expect(ok.isPassed)
        let debug = try #require(ok.setCookies.first { $0.hasPrefix("queueitdebug=") })
        #expect(debug.contains("Max-Age=1200"))
        #expect(ok.setCookies.contains { $0.hasPrefix("QueueITAccepted-SDFrts345E-V3_sale=") })
        let expired = try m.mint(eventId: "sale", queueId: "q-9", expiresAt: 1_699_999_000, redirectType: .debug)
        #expect(
            validator().validate(url: "https://shop.acme.com/?queueittoken=\(expired)", headers: [], clientIP: nil, now: now).redirectURL
                == "https://acme.api2.queue-it.net/acme/diagnostics/connector/error/?code=timestamp")
        let tampered = good.replacingOccurrences(of: "q_q-9", with: "q_q-8")
        #expect(
            validator().validate(url: "https://shop.acme.com/?queueittoken=\(tampered)", headers: [], clientIP: nil, now: now).redirectURL
                == "https://acme.api2.queue-it.net/acme/diagnostics/connector/error/?code=hash")
        #expect(
            validator(secret: "").validate(url: "https://shop.acme.com/?queueittoken=\(good)", headers: [], clientIP: nil, now: now)
                .redirectURL
                == "https://api2.queue-it.net/diagnostics/connector/error/?code=setup")
    }

    @Test func cancelActionRedirectsToTheCancelPage() {
        let v = validator()
        let cookie = QueueItAcceptedCookie(
            eventId: "sale", queueId: "q-1", fixedValidityMinutes: nil, redirectType: "queue",
            issueTime: 1_600_000_000, hashedIP: nil, secretKey: secret)
        let d = v.cancel(
            url: "https://shop.acme.com/logout", headers: [("Cookie", "QueueITAccepted-SDFrts345E-V3_sale=\(cookie.value)")],
            clientIP: nil, now: now)
        #expect(!d.isPassed)
        #expect(
            d.redirectURL
                == "https://acme.queue-it.net/cancel/acme/sale/q-1?c=acme&e=sale&ver=v3-swift-1.0.0&cver=1&man=Queue&r=https%3A%2F%2Fshop.acme.com%2Flogout"
        )
        #expect(d.setCookies == ["QueueITAccepted-SDFrts345E-V3_sale=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"])
        let none = v.cancel(url: "https://shop.acme.com/logout", headers: [], clientIP: nil, now: now)
        #expect(none.isPassed && none.redirectURL == nil && none.setCookies.isEmpty)
    }
}
