import Foundation
import Testing
import WaitingRoom
@testable import QueueIt

/// Issue 15 item 7: the Swift-server validator's redirects as the KnownUser connector builds them
/// (`enqueuetoken`, `t` omitted for the event-target logic, `icr`, diagnostics, cancel).
struct KnownUserFidelityTests {
    let secret = "validator-secret"
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func validator(_ logic: QueueItRedirectLogic = .targetURL, enqueueTokenValidity: Duration? = nil, secret: String? = nil) -> QueueItRequestValidator {
        QueueItRequestValidator(settings: QueueItKnownUserSettings(customerId: "acme", secretKey: secret ?? self.secret, eventId: "sale",
                                                                   redirectLogic: logic, enqueueTokenValidity: enqueueTokenValidity))
    }

    func query(_ url: String?) -> [String: String] {
        guard let url, let q = url.split(separator: "?", maxSplits: 1).last else { return [:] }
        var out: [String: String] = [:]
        for item in QueueItPercent.queryItems(q) { out[item.name] = item.value }
        return out
    }

    @Test func queueRedirectCarriesAnEnqueueTokenAndOmitsTForTheEventTarget() throws {
        let d = validator(enqueueTokenValidity: .seconds(300)).validate(url: "https://shop.acme.com/cart", headers: [], clientIP: "10.1.2.3", now: now)
        let q = query(d.redirectURL)
        #expect(q["t"] == "https://shop.acme.com/cart")
        let token = try #require(q["enqueuetoken"])
        let parsed = try QueueItEnqueueTokenValidator(secretKey: secret, customerId: "acme", eventId: "sale").validate(token, now: now)
        #expect(parsed.header.ipAddress == "10.1.2.3" && parsed.header.expiresMillis == 1_700_000_300_000)
        // Without the setting: no enqueuetoken (as before).
        #expect(query(validator().validate(url: "https://shop.acme.com/cart", headers: [], clientIP: nil, now: now).redirectURL)["enqueuetoken"] == nil)
        // Event-target redirect logic: no t.
        let e = validator(.eventTargetURL).validate(url: "https://shop.acme.com/cart", headers: [], clientIP: nil, now: now)
        #expect(e.redirectURL == "https://acme.queue-it.net/?c=acme&e=sale&ver=v3-swift-1.0.0&cver=1&man=Queue")
    }

    @Test func errorRedirectNamesTheRefusedCookie() throws {
        let v = validator()
        let cookie = QueueItAcceptedCookie(eventId: "sale", queueId: "q-1", fixedValidityMinutes: nil, redirectType: "queue",
                                           issueTime: 1_600_000_000, hashedIP: nil, secretKey: secret)
        let headers = [("Cookie", "QueueITAccepted-SDFrts345E-V3_sale=\(cookie.value)")]
        let d = v.validate(url: "https://shop.acme.com/cart?queueittoken=garbage", headers: headers, clientIP: nil, now: now)
        #expect(d.rejection == .hash)
        #expect(d.redirectURL?.contains("&icr=timestamp&queueittoken=garbage&ts=1700000000&t=") == true, "\(d.redirectURL ?? "nil")")
        // An unreadable cookie: connector/sessionstate.
        let junk = v.validate(url: "https://shop.acme.com/cart?queueittoken=garbage", headers: [("Cookie", "QueueITAccepted-SDFrts345E-V3_sale=x")],
                              clientIP: nil, now: now)
        #expect(query(junk.redirectURL)["icr"] == "connector/sessionstate")
        // No cookie: no icr.
        #expect(query(v.validate(url: "https://shop.acme.com/cart?queueittoken=garbage", headers: [], clientIP: nil, now: now).redirectURL)["icr"] == nil)
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
        #expect(validator().validate(url: "https://shop.acme.com/?queueittoken=\(expired)", headers: [], clientIP: nil, now: now).redirectURL
            == "https://acme.api2.queue-it.net/acme/diagnostics/connector/error/?code=timestamp")
        let tampered = good.replacingOccurrences(of: "q_q-9", with: "q_q-8")
        #expect(validator().validate(url: "https://shop.acme.com/?queueittoken=\(tampered)", headers: [], clientIP: nil, now: now).redirectURL
            == "https://acme.api2.queue-it.net/acme/diagnostics/connector/error/?code=hash")
        #expect(validator(secret: "").validate(url: "https://shop.acme.com/?queueittoken=\(good)", headers: [], clientIP: nil, now: now).redirectURL
            == "https://api2.queue-it.net/diagnostics/connector/error/?code=setup")
    }

    @Test func cancelActionRedirectsToTheCancelPage() {
        let v = validator()
        let cookie = QueueItAcceptedCookie(eventId: "sale", queueId: "q-1", fixedValidityMinutes: nil, redirectType: "queue",
                                           issueTime: 1_600_000_000, hashedIP: nil, secretKey: secret)
        let d = v.cancel(url: "https://shop.acme.com/logout", headers: [("Cookie", "QueueITAccepted-SDFrts345E-V3_sale=\(cookie.value)")],
                         clientIP: nil, now: now)
        #expect(!d.isPassed)
        #expect(d.redirectURL == "https://acme.queue-it.net/cancel/acme/sale/q-1?c=acme&e=sale&ver=v3-swift-1.0.0&cver=1&man=Queue&r=https%3A%2F%2Fshop.acme.com%2Flogout")
        #expect(d.setCookies == ["QueueITAccepted-SDFrts345E-V3_sale=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"])
        let none = v.cancel(url: "https://shop.acme.com/logout", headers: [], clientIP: nil, now: now)
        #expect(none.isPassed && none.redirectURL == nil && none.setCookies.isEmpty)
    }
}
