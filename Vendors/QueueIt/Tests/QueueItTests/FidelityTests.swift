import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import QueueIt
@testable import QueueItEmulator

final class EventLog: Sendable {
    let m = Mutex<[QueuePageEvent]>([])
    func add(_ e: QueuePageEvent) { m.withLock { $0.append(e) } }
    var all: [QueuePageEvent] { m.withLock { $0 } }
}

func html(_ body: String, status: Int = 200, url: String = "") -> HTTPResponse {
    HTTPResponse(status: status, headers: [("Content-Type", "text/html")], body: Array(body.utf8), url: url)
}

/// Issue 15: the queue page (items 1, 3, 8).
struct FidelityTests {
    static let page = QueueItQueuePage(
        queueURL: URL(string: "https://acme.queue-it.net/?c=acme&e=sale&q=q1")!,
        targetURL: URL(string: "https://shop.example/sale")!)

    static func context(_ t: any HTTPTransport, _ clock: VirtualClock, events: EventLog? = nil) -> QueuePageContext {
        QueuePageContext(
            transport: t, clock: clock, logger: .init(label: "test"), userAgent: "ua",
            emit: { e in events?.add(e) })
    }

    // MARK: item 1 — the default queue page is the host's

    @Test func defaultQueuePageIsHandedToAnAttachedHost() async throws {
        // Issue 25 §1: the default is `auto`: the host's when one is attached, else followed.
        #expect(try QueueItConfiguration(customerId: "demo").queuePage == .auto)
        #expect(try QueueItConfiguration(json: .object(["customerId": .string("demo")])).queuePage == .auto)
        let h = try await Harness.start(autoAdvance: false)
        defer { Task { await h.stop() } }
        // The configuration chooses no driver: the provider hands the page to the attached host.
        let c = try QueueItConfiguration(customerId: "demo", waitingRoomId: "flash", waitingRoomDomain: h.server.waitingRoomDomain)
        let p = QueueItProvider(configuration: c, environment: h.environment)
        let host = try #require(p.hostDriver)
        host.attach()
        let session = try p.enqueue(h.entry("flash"))
        try await waitFor { host.currentPage != nil }
        let page = try #require(host.currentPage)
        #expect(page.queueURL.absoluteString.hasPrefix(h.server.baseURL + "/queueit/queue/demo/flash"))
        let token = try QueueItTokenMinter(secretKey: Harness.secret).mint(
            eventId: "flash", queueId: "q", expiresAt: 1_900_000_000, redirectType: .queue)
        #expect(host.navigate(to: page.targetURL.absoluteString + "?queueittoken=" + token) == .passed(token: token))
        #expect(await session.outcome().pass?.credential == token)
        // The SDK-shaped engine and the hybrid client hand the page to the host too.
        #expect(try QueueITEngine(customerId: "demo", eventOrAliasId: "sale").hostDriver != nil)
        #expect(QueueItHybridClient().hostDriver != nil)
    }

    @Test func followDriverGivesUpOnAPageThatNeverLeadsToTheTarget() async throws {
        // A script-driven page: it refreshes itself but never redirects to the target.
        let t = StubTransport { _ in
            html(#"<html><head><meta http-equiv="refresh" content="5"></head><body><div id="app"></div></body></html>"#)
        }
        let clock = VirtualClock(autoAdvance: true)
        let start = clock.now()
        let driver = QueueItHTTPFollowDriver(pollInterval: .seconds(5), maxWait: .seconds(60))
        let result = await driver.wait(on: Self.page, context: Self.context(t, clock))
        guard case .failed(let e) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(e.vendorCode == QueueItErrorCode.queuePageTimeout.rawValue && e.vendorCode == -206)
        #expect(e.message.contains("did not lead to the target within 60 s") && e.message.contains("host"))
        #expect(clock.now().timeIntervalSince(start) <= 60)
        #expect(t.requests.count >= 10)
        // The bound is a configuration key; out of range is refused.
        let c = try QueueItConfiguration(
            json: .object([
                "customerId": .string("demo"), "queuePage": .string("follow"),
                "followMaxWaitSeconds": .number(120)
            ]))
        #expect(c.followMaxWait == .seconds(120))
        #expect((QueueItProvider(configuration: c).driver as? QueueItHTTPFollowDriver)?.maxWait == .seconds(120))
        #expect(throws: WaitingRoomError.self) {
            try QueueItConfiguration(json: .object(["customerId": .string("demo"), "followMaxWaitSeconds": .number(0)]))
        }
    }

    // MARK: item 3 — no QueueId for disabled, idle, afterevent

    @Test func onlySafetynetAnswersCarryAQueueId() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        for (room, hasQueueId) in [("open", true), ("closed", false), ("early", false), ("over", false)] {
            let r = try await AsyncHTTPTransport.shared.send(
                HTTPRequest(
                    method: "POST", url: h.server.baseURL + "/api/mobileapp/queue/demo/\(room)/enqueue",
                    headers: [("Content-Type", "application/json")],
                    body: QueueItEnqueueBody(userId: "u", userAgent: "ua").encoded()))
            let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any])
            #expect((obj["QueueId"] as? String != nil) == hasQueueId, "\(room): \(obj)")
            #expect(obj["QueueUrl"] == nil || obj["QueueUrl"] is NSNull, "\(room)")
            #expect(obj["QueueitToken"] is String, "\(room)")
        }
    }

    // MARK: item 8 — cancelled navigations do not end the wait

    @Test func followDriverOnlyCancelsBlockedExternalAndErrorNavigations() async throws {
        let target = "https://shop.example/sale?queueittoken=tok"
        let loads = Mutex(0)
        let t = StubTransport { r in
            let n = loads.withLock {
                $0 += 1
                return $0
            }
            switch n {
            case 1: return HTTPResponse(status: 302, headers: [("Location", "/what-is-this.html")], url: r.url)
            case 2: return HTTPResponse(status: 302, headers: [("Location", "itms-apps://apps.example/app")], url: r.url)
            case 3: return html("<html><body>Not found</body></html>", status: 404, url: r.url)
            case 4:
                return html(
                    #"<html><head><meta http-equiv="refresh" content="1;url=mailto:help@shop.example"></head><body></body></html>"#,
                    url: r.url)
            default: return HTTPResponse(status: 302, headers: [("Location", target)], url: r.url)
            }
        }
        let clock = VirtualClock(autoAdvance: true)
        let events = EventLog()
        let result = await QueueItHTTPFollowDriver(pollInterval: .seconds(2)).wait(
            on: Self.page, context: Self.context(t, clock, events: events))
        #expect(result == .passed(token: "tok"))
        // Every load was the queue page itself: the cancelled navigations were never loaded.
        #expect(t.requests.map(\.url) == Array(repeating: Self.page.queueURL.absoluteString, count: 5))
        #expect(events.all.contains(.externalLink(URL(string: "itms-apps://apps.example/app")!)))
        #expect(events.all.contains(.externalLink(URL(string: "mailto:help@shop.example")!)))
    }
}
