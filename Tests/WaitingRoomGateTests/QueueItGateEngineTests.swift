import Foundation
import QueueIt
import QueueItGateEngine
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
        return try QueueItGate(
            customerId: "demo", secretKey: QueueItGateFixture.secret, configuration: try QueueItIntegrationConfig(json: json))
    }

    @Test func redirectLogics() throws {
        let request = GateRequest(url: "https://shop.example/p?id=1")
        let allow = try Self.gate(redirectLogic: "AllowTParameter").decideNow(request)
        #expect(
            allow.response?.header("Location")
                == "https://demo.queue-it.net/?c=demo&e=sale&ver=v3-swift-1.0.0&cver=3&man=all&cid=da-DK&l=Big%20Sale&t=https%3A%2F%2Fshop.example%2Fp%3Fid%3D1&kupver=swift-hummingbird-2"
        )
        let event = try Self.gate(redirectLogic: "EventTargetUrl").decideNow(request)
        #expect(event.response?.header("Location")?.contains("&t=") == false)
        let forced = try Self.gate(redirectLogic: "ForcedTargetUrl", forced: "https://shop.example/landing").decideNow(request)
        #expect(forced.response?.header("Location")?.contains("&t=https%3A%2F%2Fshop.example%2Flanding") == true)
    }

    @Test func ajaxErrorRedirectAndTheDecisionShape() throws {
        let expired = try QueueItTokenMinter(secretKey: QueueItGateFixture.secret).mint(
            eventId: "sale", queueId: "q1", expiresAt: Int64(Date().timeIntervalSince1970) - 5, redirectType: .queue)
        let request = GateRequest(
            url: "https://api.example/cart?queueittoken=\(QueueItPercent.encodeComponent(expired))",
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
        let request = GateRequest(
            url: "https://api.example/cart?queueittoken=\(token)",
            headers: [GateHeader("x-queueit-ajaxpageurl", "https%3A%2F%2Fshop.example%2F")])
        let gate = try Self.gate(redirectLogic: "AllowTParameter")
        let d = gate.decideNow(request)
        #expect(d.verdict == .pass && d.reachesHandler && d.sessionID == "q2")
        #expect(
            d.passHeaders.contains {
                $0.name == "Set-Cookie" && $0.value.hasPrefix(QueueItGateFixture.cookieName + "=EventId=sale&QueueId=q2")
            })
        #expect(gate.decideNow(request).verdict == .queue, "the same token a second time, without the cookie")
    }

    /// `Contains "*"` holds for any non-empty value before `IsNegative` (every connector's
    /// `ComparisonOperatorHelper.contains` returns early: KU-JS
    /// `src/IntegrationConfig/IntegrationConfigHelpers.ts`, KU-Java `ComparisonOperatorHelper.contains`).
    @Test func containsStarHoldsBeforeNegation() throws {
        let negated = QueueItTriggerPart(
            validatorType: "CookieValidator", comparison: "Contains", valueToCompare: "*", isNegative: true,
            cookieName: "member_session")
        #expect(
            negated.matches(
                GateRequest(url: "https://shop.example/", headers: [GateHeader("Cookie", "member_session=abc")]),
                url: "https://shop.example/"))
        #expect(
            negated.matches(GateRequest(url: "https://shop.example/"), url: "https://shop.example/"), "no cookie: \"\" does not contain *")
        let plain = QueueItTriggerPart(
            validatorType: "CookieValidator", comparison: "Contains", valueToCompare: "*", cookieName: "member_session")
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
        let gate = try QueueItGate(
            customerId: "demo", secretKey: QueueItGateFixture.secret, configuration: try QueueItIntegrationConfig(json: json))
        let issued = Int64(Date().timeIntervalSince1970) - 30
        let bound = QueueItAcceptedCookie(
            eventId: "sale", queueId: "00000000-0000-4000-8000-000000000009", fixedValidityMinutes: nil, redirectType: "queue",
            issueTime: issued,
            hashedIP: QueueItHash.hmacHex(secretKey: QueueItGateFixture.secret, message: "192.0.2.1"),
            secretKey: QueueItGateFixture.secret)
        let cookie = GateHeader("Cookie", "\(QueueItGateFixture.cookieName)=\(bound.value)")
        let mine = gate.decideNow(GateRequest(url: "https://shop.example/logout", headers: [cookie], clientIP: "192.0.2.1"))
        #expect(mine.verdict == .cancel && mine.response?.status == 302)
        #expect(
            mine.response?.header("Location")?.hasPrefix(
                "https://demo.queue-it.net/cancel/demo/sale/00000000-0000-4000-8000-000000000009?c=demo&e=sale&") == true)
        let other = gate.decideNow(GateRequest(url: "https://shop.example/logout", headers: [cookie], clientIP: "198.51.100.7"))
        #expect(other.reachesHandler && other.passHeaders.isEmpty, "a cookie bound to another address is left alone")
    }

    /// A configuration with an Ignore on /static/, a Queue on /shop/ and an integration whose
    /// `ActionType` is none Queue-it knows.
    static func parityGate(options: QueueItGate.Options = QueueItGate.Options()) throws -> QueueItGate {
        let json = """
            {"Version": 4, "Integrations": [
              {"Name": "static", "ActionType": "Ignore", "EventId": "", "QueueDomain": "",
               "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
                 {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/static/"}]}]},
              {"Name": "future", "ActionType": "Redirect", "EventId": "sale", "QueueDomain": "demo.queue-it.net",
               "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
                 {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/future/"}]}]},
              {"Name": "shop", "ActionType": "Queue", "EventId": "sale", "QueueDomain": "demo.queue-it.net",
               "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
                 {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/shop/"}]}]}]}
            """
        return try QueueItGate(
            customerId: "demo", secretKey: QueueItGateFixture.secret, configuration: try QueueItIntegrationConfig(json: json),
            options: options)
    }

    static func token(_ type: QueueItRedirectType = .queue, expiresIn: Int64 = 60, queueId: String = "00000000-0000-4000-8000-00000000000f")
        throws -> String
    {
        try QueueItTokenMinter(secretKey: QueueItGateFixture.secret).mint(
            eventId: "sale", queueId: queueId,
            expiresAt: Int64(Date().timeIntervalSince1970) + expiresIn, redirectType: type)
    }

    /// The edge connectors' `x-queueittoken` header stands in for a missing query token; `OPTIONS`
    /// is not gated by default (KU-JS sample, Queue-it's edge connectors); the gate's answers name
    /// the connector (`x-queueit-connector`, KU-JS sample); SameSite is an option.
    @Test func tokenHeaderOptionsAndConnectorHeader() throws {
        let gate = try Self.parityGate(options: .init(cookieSameSite: "Lax"))
        let viaHeader = gate.decideNow(
            GateRequest(url: "https://shop.example/shop/cart", headers: [GateHeader("x-queueittoken", try Self.token())]))
        #expect(viaHeader.verdict == .pass && viaHeader.reachesHandler, "\(viaHeader.reason)")
        let cookie = try #require(viaHeader.passHeaders.first { $0.value.hasPrefix(QueueItGateFixture.cookieName + "=") })
        #expect(cookie.value.hasSuffix("; SameSite=Lax"))
        let queued = gate.decideNow(GateRequest(url: "https://shop.example/shop/cart"))
        #expect(queued.response?.header("x-queueit-connector") == "swift")
        #expect(gate.decideNow(GateRequest(method: "OPTIONS", url: "https://shop.example/shop/cart")).reachesHandler)
        let strict = try Self.parityGate(options: .init(ignoresOptionsRequests: false))
        #expect(strict.decideNow(GateRequest(method: "OPTIONS", url: "https://shop.example/shop/cart")).verdict == .queue)
    }

    /// A debug token is verified before the triggers, on any request (KU-JS
    /// `KnownUser.validateRequestByIntegrationConfig`, `ConnectorDiagnostics.verify`): a bad one goes
    /// to the diagnostics page and never touches the session cookie; a good one writes
    /// `queueitdebug` whatever the decision (Ignore, no trigger, a valid cookie).
    @Test func debugTokensComeFirstAndTheirCookieAlways() throws {
        let gate = try Self.parityGate()
        let session = QueueItGateFixture.cookie(age: 30)
        let expired = try Self.token(.debug, expiresIn: -10)
        for path in ["/static/a.js", "/nothing", "/shop/cart"] {
            let bad = gate.decideNow(
                GateRequest(url: "https://shop.example\(path)?queueittoken=\(expired)", headers: [GateHeader("Cookie", session)]))
            #expect(
                bad.response?.header("Location")?.contains("diagnostics/connector/error/?code=timestamp") == true, "\(path): \(bad.reason)")
            #expect(!(bad.response?.headers.contains { $0.name == "Set-Cookie" } ?? true), "\(path): the session cookie is left alone")
        }
        let good = try Self.token(.debug)
        for path in ["/static/a.js", "/nothing"] {
            let d = gate.decideNow(GateRequest(url: "https://shop.example\(path)?queueittoken=\(good)"))
            #expect(d.reachesHandler && d.passHeaders.filter { $0.value.hasPrefix("queueitdebug=") }.count == 1, "\(path): \(d)")
        }
        let withCookie = gate.decideNow(
            GateRequest(url: "https://shop.example/shop/cart?queueittoken=\(good)", headers: [GateHeader("Cookie", session)]))
        // (a page load with a token is sent on to the URL without it: the cookie comes with that answer)
        let answered = (withCookie.response?.headers ?? []) + withCookie.passHeaders
        #expect(withCookie.verdict == .pass && answered.filter { $0.value.hasPrefix("queueitdebug=") }.count == 1, "\(withCookie)")
    }

    /// An unknown `ActionType` acts as Ignore (KU-JS `default:`), and is logged and counted.
    @Test func anUnknownActionTypeIsCounted() throws {
        let gate = try Self.parityGate()
        #expect(gate.configuration.integrations[1].unknownActionType == "Redirect")
        let d = gate.decideNow(GateRequest(url: "https://shop.example/future/x"))
        #expect(d.verdict == .ignore && d.reachesHandler && d.reason.contains("unknown action type"))
        #expect(gate.unknownActionCount == 1)
    }

    /// A Queue action with no queue domain (a configuration built in code: the published JSON is
    /// refused without one when it is read) cannot send anyone anywhere: the request passes with
    /// `x-queueit-failed: true` and is counted (the KU-JS sample fails open so), or gets 503.
    @Test func aRequestTheGateCannotDecideFailsOpenOrClosed() throws {
        let configuration = QueueItIntegrationConfig(
            version: 1,
            integrations: [
                QueueItIntegration(
                    name: "broken", eventId: "sale", queueDomain: "", actionType: .queue,
                    triggers: [
                        QueueItTrigger(parts: [QueueItTriggerPart(comparison: "Contains", valueToCompare: "/", urlPart: "PagePath")])
                    ])
            ])
        let open = try QueueItGate(customerId: "demo", secretKey: QueueItGateFixture.secret, configuration: configuration)
        let passed = open.decideNow(GateRequest(url: "https://shop.example/cart"))
        #expect(passed.reachesHandler && passed.passHeaders.contains(QueueItGate.failedHeader) && passed.reason.hasPrefix("failed open"))
        #expect(open.failureCount == 1)
        let closed = try QueueItGate(
            customerId: "demo", secretKey: QueueItGateFixture.secret, configuration: configuration,
            options: .init(failsOpen: false))
        let refused = closed.decideNow(GateRequest(url: "https://shop.example/cart"))
        #expect(refused.response?.status == 503 && refused.response?.header("x-queueit-failed") == "true")
    }

    /// The cookie hash joins its fields without separators (every connector's `generateHash`), so
    /// digits can move from one field to the next under the same hash: a longer validity, another
    /// event. The gate refuses a cookie whose queue id is not in an issued form (README G15);
    /// without that check the re-split cookies pass, which is the attack.
    @Test func aCookieReSplitUnderItsHashIsRefused() throws {
        let secret = QueueItGateFixture.secret
        let issued = Int64(Date().timeIntervalSince1970) - 20 * 60
        let guid = "4e5a1d5b-f98b-4f7c-9a6b-2d1a2a3c3678"
        let original = QueueItAcceptedCookie(
            eventId: "sale", queueId: guid, fixedValidityMinutes: nil, redirectType: "queue",
            issueTime: issued, hashedIP: nil, secretKey: secret)
        // `…3678` moved out of the queue id into FixedValidityMins: the same hashed text
        let longer =
            "EventId=sale&QueueId=\(guid.dropLast(4))&FixedValidityMins=3678&RedirectType=queue&IssueTime=\(issued)&Hash=\(original.hash)"
        // `4` moved from the queue id onto the event id: a pass for event `sale4`
        let other = QueueItAcceptedCookie(
            eventId: "sale", queueId: guid, fixedValidityMinutes: nil, redirectType: "queue",
            issueTime: Int64(Date().timeIntervalSince1970) - 30, hashedIP: nil, secretKey: secret)
        let crossEvent = "EventId=sale4&QueueId=\(guid.dropFirst())&RedirectType=queue&IssueTime=\(other.issueTime)&Hash=\(other.hash)"
        func gate(event: String, checking: Bool) throws -> QueueItGate {
            let json = """
                {"Version": 1, "Integrations": [{"Name": "q", "ActionType": "Queue", "EventId": "\(event)", "QueueDomain": "demo.queue-it.net",
                  "CookieValidityMinute": 10, "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
                    {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/"}]}]}]}
                """
            return try QueueItGate(
                customerId: "demo", secretKey: secret, configuration: try QueueItIntegrationConfig(json: json),
                options: .init(ledger: nil, requiresIssuedCookieForm: checking))
        }
        func request(_ event: String, _ value: String) -> GateRequest {
            GateRequest(
                url: "https://shop.example/cart", headers: [GateHeader("Cookie", "\(QueueItAcceptedCookie.name(forEvent: event))=\(value)")]
            )
        }
        // the attack, as the connectors would take it
        #expect(try gate(event: "sale", checking: false).decideNow(request("sale", longer)).reachesHandler, "the re-split hash holds")
        #expect(try gate(event: "sale4", checking: false).decideNow(request("sale4", crossEvent)).reachesHandler, "the re-split hash holds")
        // the gate
        #expect(try gate(event: "sale", checking: true).decideNow(request("sale", longer)).verdict == .queue)
        #expect(try gate(event: "sale4", checking: true).decideNow(request("sale4", crossEvent)).verdict == .queue)
        // the original still passes (its 10 minutes are up: 20 minutes old, so it is queued; a fresh one passes)
        #expect(try gate(event: "sale", checking: true).decideNow(request("sale", other.value)).reachesHandler)
    }
}
