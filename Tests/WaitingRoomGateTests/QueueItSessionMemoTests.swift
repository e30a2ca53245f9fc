import Foundation
import Testing
import WaitingRoom
import WaitingRoomGate
import WaitingRoomGateTestSupport
import WaitingRoomTesting

@testable import QueueIt
@testable import QueueItGateEngine

/// `QueueItGate.Options.sessionMemoCapacity`: a valid cookie's decision reused for the rest of its
/// second gives exactly the answers a gate without it gives, at the expiry boundary, for an
/// IP-bound cookie from another address, for AJAX calls and for bad cookies.
@Suite struct QueueItSessionMemoTests {
    static let secret = QueueItGateFixture.secret
    static let event = "sale"

    static func gate(clock: VirtualClock, memo: Int = 10_000, validityMinutes: Int = 1) throws -> QueueItGate {
        let json = """
            {"Version": 3, "Integrations": [{"Name": "all", "ActionType": "Queue", "EventId": "\(event)", "QueueDomain": "demo.queue-it.net",
              "RedirectLogic": "AllowTParameter", "CookieValidityMinute": \(validityMinutes), "ExtendCookieValidity": true,
              "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
                {"ValidatorType": "UrlValidator", "UrlPart": "PageUrl", "Operator": "Contains", "ValueToCompare": "/shop/"}]}]}]}
            """
        return try QueueItGate(
            customerId: "demo", secretKey: secret, configuration: try QueueItIntegrationConfig(json: json),
            options: QueueItGate.Options(ledger: nil, clock: clock, sessionMemoCapacity: memo))
    }

    static func cookie(
        issuedAt issueTime: Int64, queueId: String = "00000000-0000-4000-8000-0000000000aa", boundTo ip: String? = nil, fixed: Int? = nil
    ) -> String {
        QueueItAcceptedCookie(
            eventId: event, queueId: queueId, fixedValidityMinutes: fixed, redirectType: "queue", issueTime: issueTime,
            hashedIP: ip.map { QueueItHash.hmacHex(secretKey: secret, message: $0) }, secretKey: secret
        ).value
    }

    static func request(_ cookie: String?, path: String = "/shop/cart", ip: String = "198.51.100.7", ajax: Bool = false) -> GateRequest {
        var headers = [GateHeader("Host", "shop.example")]
        if let cookie { headers.append(GateHeader("Cookie", "theme=dark; \(QueueItAcceptedCookie.name(forEvent: event))=\(cookie)")) }
        if ajax { headers.append(GateHeader("x-queueit-ajaxpageurl", QueueItPercent.encodeComponent("https://shop.example/shop/"))) }
        return GateRequest(url: "https://shop.example" + path, headers: headers, clientIP: ip)
    }

    /// Every request twice through the remembering gate and once through one that checks every
    /// time, at three points of the same second: the decisions are equal, and the re-issued
    /// cookie carries this second.
    @Test func rememberedDecisionsAreTheCheckedOnes() throws {
        let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_800_000_000.05))
        let remembering = try Self.gate(clock: clock)
        let checking = try Self.gate(clock: clock, memo: 0)
        let now: Int64 = 1_800_000_000
        let good = Self.cookie(issuedAt: now - 30)
        let tampered = good.replacingOccurrences(of: "0000000000aa", with: "0000000000bb")
        let requests = [
            Self.request(good), Self.request(good, path: "/shop/other?x=1"), Self.request(good, ajax: true),
            Self.request(good, ip: "203.0.113.1"), Self.request(Self.cookie(issuedAt: now - 30, boundTo: "198.51.100.7")),
            Self.request(Self.cookie(issuedAt: now - 30, boundTo: "198.51.100.7"), ip: "203.0.113.1"),
            Self.request(Self.cookie(issuedAt: now - 61)), Self.request(tampered), Self.request("garbage"), Self.request(nil),
            Self.request(Self.cookie(issuedAt: now - 600, fixed: 20))
        ]
        for step in 0..<3 {
            if step > 0 { clock.advance(by: .milliseconds(400)) }
            for (index, request) in requests.enumerated() {
                let first = remembering.decideNow(request)
                let again = remembering.decideNow(request)
                let checked = checking.decideNow(request)
                #expect(first == checked, "request \(index), step \(step)")
                #expect(again == checked, "request \(index), step \(step), remembered")
            }
        }
        let pass = remembering.decideNow(Self.request(good))
        #expect(pass.verdict == .pass && pass.passHeaders.contains { $0.value.contains("IssueTime=\(now)&") })
        #expect(remembering.decideNow(Self.request(tampered)).verdict == .queue)
        #expect(
            remembering.decideNow(Self.request(Self.cookie(issuedAt: now - 30, boundTo: "198.51.100.7"), ip: "203.0.113.1")).verdict
                == .queue)
    }

    /// A cookie valid until this second passes for all of it (remembered), and the next second
    /// goes to the queue: the memo never outlives the second its decision was made in.
    @Test func theExpiryBoundaryIsExact() throws {
        let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let gate = try Self.gate(clock: clock)
        let lastValidSecond: Int64 = 1_800_000_000
        let request = Self.request(Self.cookie(issuedAt: lastValidSecond - 60))  // 1 minute's validity
        #expect(gate.decideNow(request).verdict == .pass)
        clock.advance(by: .milliseconds(999))
        #expect(gate.decideNow(request).verdict == .pass)
        clock.advance(by: .milliseconds(1))
        let late = gate.decideNow(request)
        #expect(late.verdict == .queue && late.reason == "cookie refused", "\(late.reason)")
    }

    /// The memo itself: only passes are kept, only for their second, at most `capacity` of them,
    /// and a decision from a second already past is not kept.
    @Test func theMemoKeepsOnlyThisSecondsPasses() throws {
        let memo = QueueItSessionMemo(capacity: 2)
        let pass = QueueItKnownUserDecision(
            isPassed: true, redirectURL: nil, isAjax: false, rejection: nil, queueId: "q",
            redirectType: "queue", setCookies: ["c"])
        var refused = pass
        refused.isPassed = false
        let key = { (cookie: String) in QueueItSessionMemo.Key(cookie: cookie, clientIP: "198.51.100.7", isAjax: false) }
        memo.remember(refused, for: key("bad"), second: 10)
        #expect(memo.count == 0 && memo.decision(for: key("bad"), second: 10) == nil)
        memo.remember(pass, for: key("a"), second: 10)
        memo.remember(pass, for: key("b"), second: 10)
        memo.remember(pass, for: key("c"), second: 10)
        #expect(memo.count == 2 && memo.decision(for: key("c"), second: 10) == nil)
        #expect(memo.decision(for: key("a"), second: 10) == pass)
        #expect(memo.decision(for: key("a"), second: 11) == nil)
        #expect(memo.decision(for: QueueItSessionMemo.Key(cookie: "a", clientIP: "203.0.113.1", isAjax: false), second: 10) == nil)
        memo.remember(pass, for: key("d"), second: 11)
        #expect(memo.count == 1 && memo.decision(for: key("a"), second: 10) == nil)
        memo.remember(pass, for: key("e"), second: 10)  // late: that second is over
        #expect(memo.count == 1 && memo.decision(for: key("e"), second: 10) == nil)
        let off = QueueItSessionMemo(capacity: 0)
        off.remember(pass, for: key("a"), second: 10)
        #expect(off.count == 0)
    }

    /// Many threads asking at once about the same and different cookies get the checked answers.
    @Test func concurrentCallersGetTheCheckedAnswers() async throws {
        let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_800_000_000.5))
        let gate = try Self.gate(clock: clock, validityMinutes: 20)
        let requests = (0..<64).map {
            Self.request(
                Self.cookie(issuedAt: 1_800_000_000 - 60, queueId: "00000000-0000-4000-8000-0000000000" + String($0 % 16 + 16, radix: 16)))
        }
        let verdicts = await withTaskGroup(of: [GateVerdict].self) { group in
            for worker in 0..<8 {
                group.addTask { (0..<400).map { gate.decideNow(requests[($0 + worker) % requests.count]).verdict } }
            }
            return await group.reduce(into: [GateVerdict]()) { $0 += $1 }
        }
        #expect(verdicts.count == 3200 && verdicts.allSatisfy { $0 == .pass })
    }
}
