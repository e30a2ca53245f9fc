import Foundation
import QueueIt
import Testing
import WaitingRoomGate
import WaitingRoomGateTestSupport

/// The engine alone (no server): redirect logics, the AJAX form of an error, and the decision's
/// shape that adapters rely on.
@Suite struct QueueItGateEngineTests {
    static func gate(redirectLogic: String, forced: String = "", queueDomain: String = "demo.queue-it.net") throws -> QueueItGate {
        let json = """
        {"Version": 3, "Integrations": [{"Name": "all", "ActionType": "Queue", "EventId": "sale", "QueueDomain": "\(queueDomain)",
          "RedirectLogic": "\(redirectLogic)", "ForcedTargetUrl": "\(forced)", "Culture": "da-DK", "LayoutName": "Big Sale",
          "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
            {"ValidatorType": "UrlValidator", "UrlPart": "PageUrl", "Operator": "Contains", "ValueToCompare": "*"}]}]}]}
        """
        return try QueueItGate(customerId: "demo", secretKey: QueueItGateFixture.secret, configuration: try QueueItIntegrationConfig(json: json))
    }

    @Test func redirectLogics() throws {
        let request = GateRequest(url: "https://shop.example/p?id=1")
        let allow = try Self.gate(redirectLogic: "AllowTParameter").decideNow(request)
        #expect(allow.response?.header("Location") == "https://demo.queue-it.net/?c=demo&e=sale&ver=v3-swift-1.0.0&cver=3&man=all&cid=da-DK&l=Big%20Sale&t=https%3A%2F%2Fshop.example%2Fp%3Fid%3D1&kupver=swift-hummingbird-2")
        let event = try Self.gate(redirectLogic: "EventTargetUrl").decideNow(request)
        #expect(event.response?.header("Location")?.contains("&t=") == false)
        let forced = try Self.gate(redirectLogic: "ForcedTargetUrl", forced: "https://shop.example/landing").decideNow(request)
        #expect(forced.response?.header("Location")?.contains("&t=https%3A%2F%2Fshop.example%2Flanding") == true)
    }

    @Test func ajaxErrorRedirectAndTheDecisionShape() throws {
        let expired = try QueueItTokenMinter(secretKey: QueueItGateFixture.secret).mint(
            eventId: "sale", queueId: "q1", expiresAt: Int64(Date().timeIntervalSince1970) - 5, redirectType: .queue)
        let request = GateRequest(url: "https://api.example/cart?queueittoken=\(QueueItPercent.encodeComponent(expired))",
                                  headers: [GateHeader("x-queueit-ajaxpageurl", QueueItPercent.encodeComponent("https://shop.example/cart"))])
        let d = try Self.gate(redirectLogic: "AllowTParameter").decideNow(request)
        #expect(d.verdict == .queue && !d.reachesHandler && d.reason == "token: timestamp")
        #expect(d.response?.status == 200)
        let url = QueueItPercent.decode(d.response?.header("x-queueit-redirect") ?? "")
        #expect(url.hasPrefix("https://demo.queue-it.net/error/timestamp/?c=demo&e=sale"))
        #expect(url.hasSuffix("&t=https%3A%2F%2Fshop.example%2Fcart"))
        #expect(d.response?.header("Location") == nil)
    }

    @Test func aValidTokenOnAnAjaxCallPassesWithTheCookie() throws {
        let token = try QueueItTokenMinter(secretKey: QueueItGateFixture.secret).mint(
            eventId: "sale", queueId: "q2", expiresAt: Int64(Date().timeIntervalSince1970) + 60, redirectType: .queue)
        let request = GateRequest(url: "https://api.example/cart?queueittoken=\(token)",
                                  headers: [GateHeader("x-queueit-ajaxpageurl", "https%3A%2F%2Fshop.example%2F")])
        let gate = try Self.gate(redirectLogic: "AllowTParameter")
        let d = gate.decideNow(request)
        #expect(d.verdict == .pass && d.reachesHandler && d.sessionID == "q2")
        #expect(d.passHeaders.contains { $0.name == "Set-Cookie" && $0.value.hasPrefix(QueueItGateFixture.cookieName + "=EventId=sale&QueueId=q2") })
        #expect(gate.decideNow(request).verdict == .queue, "the same token a second time, without the cookie")
    }

    /// `Contains "*"` holds for any non-empty value before `IsNegative` (every connector's
    /// `ComparisonOperatorHelper.contains` returns early: KU-JS
    /// `src/IntegrationConfig/IntegrationConfigHelpers.ts`, KU-Java `ComparisonOperatorHelper.contains`).
    @Test func containsStarHoldsBeforeNegation() throws {
        let negated = QueueItTriggerPart(validatorType: "CookieValidator", comparison: "Contains", valueToCompare: "*", isNegative: true,
                                         cookieName: "member_session")
        #expect(negated.matches(GateRequest(url: "https://shop.example/", headers: [GateHeader("Cookie", "member_session=abc")]), url: "https://shop.example/"))
        #expect(negated.matches(GateRequest(url: "https://shop.example/"), url: "https://shop.example/"), "no cookie: \"\" does not contain *")
        let plain = QueueItTriggerPart(validatorType: "CookieValidator", comparison: "Contains", valueToCompare: "*", cookieName: "member_session")
        #expect(!plain.matches(GateRequest(url: "https://shop.example/"), url: "https://shop.example/"))
    }

    /// The cancel URL has no `/` before `?`, and a cookie bound to another address is not
    /// cancelled (KU-JS `validateCancelRequest`, `UserInQueueStateCookieRepository.getState` with the client IP).
    @Test func cancelChecksTheAddressAndHasNoSlashBeforeTheQuery() throws {
        let json = """
        {"Version": 3, "Integrations": [{"Name": "logout", "ActionType": "Cancel", "EventId": "sale", "QueueDomain": "demo.queue-it.net",
          "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
            {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Equals", "ValueToCompare": "/logout"}]}]}]}
        """
        let gate = try QueueItGate(customerId: "demo", secretKey: QueueItGateFixture.secret, configuration: try QueueItIntegrationConfig(json: json))
        let issued = Int64(Date().timeIntervalSince1970) - 30
        let bound = QueueItAcceptedCookie(eventId: "sale", queueId: "q-9", fixedValidityMinutes: nil, redirectType: "queue", issueTime: issued,
                                          hashedIP: QueueItHash.hmacHex(secretKey: QueueItGateFixture.secret, message: "192.0.2.1"),
                                          secretKey: QueueItGateFixture.secret)
        let cookie = GateHeader("Cookie", "\(QueueItGateFixture.cookieName)=\(bound.value)")
        let mine = gate.decideNow(GateRequest(url: "https://shop.example/logout", headers: [cookie], clientIP: "192.0.2.1"))
        #expect(mine.verdict == .cancel && mine.response?.status == 302)
        #expect(mine.response?.header("Location")?.hasPrefix("https://demo.queue-it.net/cancel/demo/sale/q-9?c=demo&e=sale&") == true)
        let other = gate.decideNow(GateRequest(url: "https://shop.example/logout", headers: [cookie], clientIP: "198.51.100.7"))
        #expect(other.reachesHandler && other.passHeaders.isEmpty, "a cookie bound to another address is left alone")
    }
}
