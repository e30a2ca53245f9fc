import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import QueueIt
@testable import QueueItEmulator

/// Issue 25 §1 and §4: the default page mode never hangs a library user; many sessions of one
/// provider each wait on their own page; page signals reach the core events.
@Suite("Queue-it host pages")
struct HostPageTests {
    /// A provider for the room `flash` of the customer `demo` on `h`'s emulator whose queue
    /// page the host app shows (`queuePage: .host`), and its host driver.
    static func hostDrivenProvider(_ h: Harness) throws -> (QueueItProvider, QueueItHostDrivenPageDriver) {
        let c = try QueueItConfiguration(
            customerId: "demo", waitingRoomId: "flash", waitingRoomDomain: h.server.waitingRoomDomain,
            queuePage: .host)
        let p = QueueItProvider(configuration: c, environment: h.environment)
        return (p, try #require(p.hostDriver))
    }

    static func collect(_ session: WaitingSession) -> Task<[WaitingRoomEvent], Never> {
        let stream = session.events
        return Task {
            var out: [WaitingRoomEvent] = []
            for await e in stream { out.append(e) }
            return out
        }
    }

    @Test("On the default settings a library user passes the emulator's queue (no host, no hang)")
    func defaultSettingsPassTheEmulatorQueue() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        // Nothing but the customer, room and domain: the README's library example for Queue-it.
        let p = try VendorRegistry.queueItOnly.makeProvider(
            vendor: "queueit",
            configuration: .object([
                "customerId": .string("demo"), "waitingRoomDomain": .string(h.server.waitingRoomDomain)
            ]), environment: h.environment)
        let session = try p.enqueue(Entry(room: RoomKey(scope: "demo", room: "sale"), userId: "library-user"))
        let events = Self.collect(session)
        let outcome = await session.outcome()
        #expect(outcome.name == "passed", "\(outcome)")
        // Queue-it's queue-URL-changed signal reaches the core events (the first load of the page).
        let seen = await events.value
        #expect(seen.contains { $0.name == .queuePageChanged }, "\(seen.map(\.name))")
    }

    @Test("A host-driven page the host never reports on ends with -207 and says what to do")
    func silentHostEndsWithTypedError() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        let c = try QueueItConfiguration(
            customerId: "demo", waitingRoomId: "flash", waitingRoomDomain: h.server.waitingRoomDomain,
            userId: "u", queuePage: .host, hostReportTimeout: .seconds(30))
        let p = QueueItProvider(configuration: c, environment: h.environment)
        let session = try p.enqueue(Entry(room: RoomKey(scope: "demo", room: "flash"), userId: "u"))
        guard case .failed(let error) = await session.outcome() else {
            Issue.record("expected failed")
            return
        }
        #expect(error.vendorCode == QueueItErrorCode.hostDidNotReport.rawValue && error.vendorCode == -207)
        #expect(error.kind == .invalidUse)
        #expect(error.message.contains("\"follow\"") && error.message.contains("\"browser\"") && error.message.contains("navigate"))
        #expect(throws: WaitingRoomError.self) {
            try QueueItConfiguration(json: .object(["customerId": .string("demo"), "hostReportTimeoutSeconds": .number(0)]))
        }
    }

    @Test("Two sessions of one provider each wait on their own host page (no -203 for the first)")
    func manyPagesAtOnce() async throws {
        let h = try await Harness.start(autoAdvance: false)
        defer { Task { await h.stop() } }
        let (p, host) = try Self.hostDrivenProvider(h)
        let first = try p.enqueue(Entry(room: RoomKey(scope: "demo", room: "flash"), userId: "first"))
        let second = try p.enqueue(Entry(room: RoomKey(scope: "demo", room: "flash"), userId: "second"))
        let deadline = ContinuousClock.now + .seconds(20)
        while host.pages.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        let pages = host.pages
        try #require(pages.count == 2)
        #expect(pages[0].queueURL != pages[1].queueURL)
        #expect(first.state == .waiting && second.state == .waiting)
        let minter = QueueItTokenMinter(secretKey: Harness.secret)
        for (index, page) in pages.enumerated() {
            _ = host.navigate(to: page.queueURL.absoluteString, on: page)
            let token = try minter.mint(eventId: "flash", queueId: "q\(index)", expiresAt: 1_900_000_000, redirectType: .queue)
            #expect(host.navigate(to: page.targetURL.absoluteString + "?queueittoken=" + token, on: page) == .passed(token: token))
        }
        let outcomes = [await first.outcome(), await second.outcome()]
        #expect(outcomes.allSatisfy { $0.name == "passed" }, "\(outcomes)")
        #expect(Set(outcomes.compactMap { $0.pass?.credential }).count == 2)
    }

    @Test("Host reports of user exit and queue URL changes become core events")
    func hostSignalsBecomeEvents() async throws {
        let h = try await Harness.start(autoAdvance: false)
        defer { Task { await h.stop() } }
        let (p, host) = try Self.hostDrivenProvider(h)
        let session = try p.enqueue(Entry(room: RoomKey(scope: "demo", room: "flash"), userId: "u"))
        let events = Self.collect(session)
        let deadline = ContinuousClock.now + .seconds(20)
        while host.currentPage == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        let page = try #require(host.currentPage)
        let moved = page.queueURL.absoluteString + "&step=2"
        _ = host.navigate(to: moved, on: page)
        host.userExited(on: page)
        session.cancel()
        let seen = await events.value
        let changed = seen.compactMap { e -> String? in if case .queuePageChanged(let p, _) = e { return p.queueURL } else { return nil } }
        #expect(changed.contains(moved), "\(seen.map(\.name))")
        #expect(seen.contains { $0.name == .userExited })
    }

    @Test("Offline (no route to the host) is -100 at once, and the session reports the offline state")
    func offlineFromTheMonitor() async throws {
        struct Offline: ConnectivityMonitor { func isOffline(host: String?) -> Bool { true } }
        // A port nothing listens on: the connection is refused; the monitor says there is no route.
        let c = try QueueItConfiguration(
            customerId: "demo", waitingRoomId: "flash", waitingRoomDomain: "127.0.0.1:9",
            queuePage: .follow)
        let environment = ProviderEnvironment(transport: AsyncHTTPTransport.shared, connectivity: Offline())
        let p = QueueItProvider(configuration: c, environment: environment)
        let session = try p.enqueue(Entry(room: RoomKey(scope: "demo", room: "flash"), userId: "u"))
        let events = Self.collect(session)
        let started = ContinuousClock.now
        guard case .failed(let error) = await session.outcome() else {
            Issue.record("expected failed")
            return
        }
        #expect(error.vendorCode == -100 && error.kind == .networkOffline)
        // The retry ladder would take 1 + 2 + 4 + 8 = 15 s at the least; a loaded CI machine took
        // 12.6 s for the one refused connection, so the bound sits just under the ladder.
        #expect(ContinuousClock.now - started < .milliseconds(14_900), "no 1-2-4-8 s retries when offline")
        let seen = await events.value
        #expect(seen.contains { if case .connection(.offline, _) = $0 { return true } else { return false } }, "\(seen.map(\.name))")
    }

    @Test("A failing enqueue reports reconnecting with the attempt and the wait before it")
    func reconnectingDuringRetries() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let answers = StubTransport { _ in HTTPResponse(status: 503, headers: [], body: [], url: "") }
        let c = try QueueItConfiguration(customerId: "demo", waitingRoomId: "flash", waitingRoomDomain: "queue.example", queuePage: .follow)
        let p = QueueItProvider(
            configuration: c, environment: ProviderEnvironment(transport: answers, clock: clock, connectivity: AssumeOnline()))
        let session = try p.enqueue(Entry(room: RoomKey(scope: "demo", room: "flash"), userId: "u"))
        let events = Self.collect(session)
        guard case .failed(let error) = await session.outcome() else {
            Issue.record("expected failed")
            return
        }
        #expect(error.vendorCode == 3)
        let states = await events.value.compactMap { e -> ConnectionState? in
            if case .connection(let s, _) = e { return s } else { return nil }
        }
        #expect(states == [1, 2, 3, 4].map { .reconnecting(attempt: $0, nextRetryIn: .seconds(1 << ($0 - 1))) }, "\(states)")
    }
}

extension VendorRegistry {
    static var queueItOnly: VendorRegistry {
        let r = VendorRegistry()
        r.register(QueueItConfiguration.self)
        return r
    }
}
