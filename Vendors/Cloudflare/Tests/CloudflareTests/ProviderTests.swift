import Cloudflare
import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

/// The provider against the emulator over loopback; waiting runs on a virtual clock.
@Suite("Cloudflare provider")
struct CloudflareProviderTests {
    static func harness(_ configuration: CloudflareEmulatorConfiguration = .testRooms, clock: VirtualClock) async throws -> EmulatorHarness
    {
        try await EmulatorHarness.start(CloudflareEmulator(configuration: configuration, now: { clock.now() }))
    }

    @Test func openRoomPassesWithTheOriginsResponseAndTheCookie() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(clock: clock)
        defer { Task { await h.stop() } }
        let p = h.provider(try h.configuration(), clock: clock)
        let r = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "open"), userId: "u1"))
        #expect(r.disposition == .passed)
        #expect(r.status.code == CloudflareCode.origin.rawValue)
        let pass = try #require(r.pass)
        #expect(pass.credential.hasPrefix("__cfwaitingroom="))
        #expect(pass.details["httpStatus"] == "200")
        #expect(pass.details["body"]?.contains("cloudflare-emulator") == true)
        #expect(pass.expiresAt == clock.now().addingTimeInterval(300))
        #expect(h.emulator.active()["open"] == 1)
    }

    @Test func waitsWithTheSameCookieThenPasses() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let h = try await Self.harness(clock: clock)
        defer { Task { await h.stop() } }
        let p = h.provider(try h.configuration(), clock: clock)
        let session = try p.enqueue(Entry(room: RoomKey(scope: "site", room: "line"), userId: "u1"))
        let events = Events(session)
        #expect(await eventually { events.all.filter { $0.name == .progress }.count >= 3 })
        #expect(h.emulator.counters.visitorsCreated == 1, "every refresh carried the cookie: one visitor")
        #expect(h.emulator.waiting()["line"] == 1)
        let progress = events.all.first { $0.name == .progress }
        #expect(progress?.status.code == CloudflareCode.queued.rawValue)
        #expect(progress?.status.message.contains("HTTP 202") == true)
        #expect(progress?.status.message.contains("\"refreshIntervalSeconds\":1") == true)
        #expect(events.all.contains { if case .queueOpened = $0 { return true } else { return false } })
        h.emulator.admit(room: "line", count: 1)
        let outcome = await session.outcome()
        guard case .passed(let pass, let status) = outcome else {
            Issue.record("expected passed, got \(outcome)")
            return
        }
        #expect(status.code == CloudflareCode.origin.rawValue)
        #expect(!pass.credential.isEmpty)
        // one refresh per second of virtual time: the reply's refreshIntervalSeconds was honoured
        #expect(clock.sleepLog.allSatisfy { $0 == .seconds(1) })
    }

    @Test func rejectBlocksAndSuspendedIsDisabled() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(clock: clock)
        defer { Task { await h.stop() } }
        let p = h.provider(try h.configuration(), clock: clock)
        let rejected = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "reject")))
        #expect(rejected.disposition == .blocked && rejected.status.code == CloudflareCode.rejected.rawValue)
        let suspended = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "suspended")))
        #expect(suspended.disposition == .disabled && suspended.status.code == CloudflareCode.suspended.rawValue)
        // a path no room covers: the origin, no cookie: disabled too
        let uncovered = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "elsewhere")))
        #expect(uncovered.disposition == .disabled)
    }

    @Test func randomQueueingReportsPercentiles() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(clock: clock)
        defer { Task { await h.stop() } }
        var room = try #require(h.emulator.room(named: "random"))
        room.newUsersPerMinute = 1
        h.emulator.update(room: "random", room)
        let p = h.provider(try h.configuration(), clock: clock)
        var last: TryPassResult?
        for user in 0..<6 {
            last = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "random"), userId: "r\(user)"))
        }
        let r = try #require(last)
        #expect(r.disposition == .queue)
        #expect(r.status.message.contains("HTTP 429"))
        #expect(r.status.message.contains("waitTime25Percentile"))
        #expect(r.progress?.eta != nil && r.progress?.etaText?.hasSuffix("minutes") == true)
    }

    @Test func originRevokesTheSession() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(clock: clock)
        defer { Task { await h.stop() } }
        let p = h.provider(try h.configuration(), clock: clock)
        let entry = Entry(
            room: RoomKey(scope: "site", room: "open"), userId: "u1", attributes: ["url": h.siteURL + "/open/checkout?revoke=1"])
        let r = try await p.tryPass(entry)
        #expect(r.disposition == .passed && r.status.code == CloudflareCode.revoked.rawValue)
        #expect(r.pass?.details["revoked"] == "true")
        #expect(h.emulator.counters.revoked == 1)
        #expect(h.emulator.active()["open"] == 0)
    }

    @Test func sessionDurationWithAndWithoutRenewal() async throws {
        let clock = VirtualClock()
        var rooms = CloudflareEmulatorConfiguration.testRooms
        rooms.rooms["fixed"] = .init(newUsersPerMinute: 1000, totalActiveUsers: 1000, sessionDuration: 5, disableSessionRenewal: true)
        let h = try await Self.harness(rooms, clock: clock)
        defer { Task { await h.stop() } }
        var configuration = try h.configuration()
        configuration.reuseStoredPass = false
        let p = h.provider(configuration, clock: clock)
        for room in ["open", "fixed"] {
            let entry = Entry(room: RoomKey(scope: "site", room: room), userId: "u")
            #expect(try await p.tryPass(entry).disposition == .passed)
            clock.advance(by: .seconds(240))
            #expect(try await p.tryPass(entry).disposition == .passed)
            clock.advance(by: .seconds(120))
            #expect(try await p.tryPass(entry).disposition == .passed)
        }
        // the renewed session lived on; the one without renewal ran out after 5 minutes
        #expect(h.emulator.counters.sessionsExpired == 1)
        #expect(h.emulator.counters.visitorsCreated == 2)
    }

    @Test func queueIsFullBlocks() async throws {
        let clock = VirtualClock()
        var rooms = CloudflareEmulatorConfiguration.testRooms
        rooms.rooms["full"] = .init(newUsersPerMinute: 1, totalActiveUsers: 1_000_000)
        let h = try await Self.harness(rooms, clock: clock)
        defer { Task { await h.stop() } }
        var configuration = try h.configuration()
        configuration.reuseStoredPass = false  // every visitor asks (the first one passes and would be stored for the room)
        let p = h.provider(configuration, clock: clock)
        // 1 new user per minute: the 1,442nd waiting visitor's wait is over 24 h
        try await withThrowingTaskGroup(of: Void.self) { group in
            for start in stride(from: 0, to: 1442, by: 206) {
                group.addTask {
                    for n in start..<min(start + 206, 1442) {
                        _ = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "full"), userId: "f\(n)"))
                    }
                }
            }
            try await group.waitForAll()
        }
        let r = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "full"), userId: "late"))
        #expect(r.disposition == .blocked && r.status.code == CloudflareCode.queueIsFull.rawValue)
        #expect(r.status.message.contains("\"queueIsFull\":true"))
        let status = try #require(h.emulator.status(room: "full"))
        #expect(status["result"]?["status"] == .string("queueing"))
        #expect(status["result"]?["max_estimated_time_minutes"] == .number(1440), "the line stops where the wait reaches 24 h")
    }

    @Test func eventPrequeueHoldsEarlyArrivalsUntilTheStart() async throws {
        let clock = VirtualClock()
        let start = clock.now().addingTimeInterval(600)
        var rooms = CloudflareEmulatorConfiguration.testRooms
        rooms.rooms["sale"] = .init(
            newUsersPerMinute: 1000, totalActiveUsers: 1000,
            events: [
                .init(
                    name: "drop", eventStartTime: start, eventEndTime: start.addingTimeInterval(3600),
                    prequeueStartTime: clock.now().addingTimeInterval(-60), shuffleAtEventStart: true)
            ])
        let h = try await Self.harness(rooms, clock: clock)
        defer { Task { await h.stop() } }
        let p = h.provider(try h.configuration(), clock: clock)
        for n in 0..<10 {
            let r = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "sale"), userId: "early\(n)"))
            #expect(r.disposition == .queue)
            // the countdown to the event's start, under the pre-queue's own code
            #expect(r.progress?.eta == .seconds(600), "the time until the event starts")
            #expect(r.progress?.etaText == "10 minutes")
            #expect(r.status.code == CloudflareCode.eventPrequeue.rawValue)
        }
        #expect(h.emulator.status(room: "sale")?["result"]?["status"] == .string("event_prequeueing"))
        #expect(h.emulator.status(room: "sale")?["result"]?["event_id"] == .string("drop"))
        clock.advance(by: .seconds(601))
        for n in 0..<10 {
            let r = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "sale"), userId: "early\(n)"))
            #expect(r.disposition == .passed)
        }
        #expect(h.emulator.counters.visitorsCreated == 10)
        #expect(h.emulator.status(room: "sale")?["result"]?["status"] == .string("not_queueing"))
    }

    @Test func statusRouteAndHTMLPageOverHTTP() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(clock: clock)
        defer { Task { await h.stop() } }
        let transport = AsyncHTTPTransport.shared
        let status = try await transport.send(HTTPRequest(url: h.baseURL + "/client/v4/zones/z/waiting_rooms/line/status"))
        let json = try JSONValue.parse(Data(status.body))
        #expect(json["success"] == .bool(true))
        #expect(json["result"]?["status"] == .string("not_queueing"))
        #expect(json["result"]?["estimated_queued_users"] == .number(0))
        let page = try await transport.send(HTTPRequest(url: h.siteURL + "/line", headers: [("Accept", "text/html,application/json")]))
        #expect(page.status == 202)
        #expect(page.headers.value(for: "Content-Type")?.hasPrefix("text/html") == true)
        #expect(page.headers.value(for: "Refresh") == "1")
        #expect(page.text.contains("You are in line"))
        let missing = try await transport.send(HTTPRequest(url: h.baseURL + "/client/v4/zones/z/waiting_rooms/nope/status"))
        #expect(missing.status == 404)
    }

    @Test func configurationReadsItsJSONAndNamesBadFields() throws {
        let c = try CloudflareConfiguration(
            json: .object([
                "siteURL": .string("https://shop.example.com/"), "retries": .number(2),
                "pollInterval": .number(30000)
            ]))
        #expect(c.siteURL == "https://shop.example.com" && c.retries == 2)
        #expect(c.refreshInterval(after: CloudflareWaitingRoomReply(refreshIntervalSeconds: 5)) == .seconds(30))
        let d = try CloudflareConfiguration(siteURL: "https://a.example")
        #expect(d.refreshInterval(after: CloudflareWaitingRoomReply(refreshIntervalSeconds: nil)) == .seconds(20))
        #expect(d.refreshInterval(after: CloudflareWaitingRoomReply(refreshIntervalSeconds: 0)) == .seconds(1))
        #expect(d.refreshInterval(after: CloudflareWaitingRoomReply(refreshIntervalSeconds: 9999)) == .seconds(120))
        #expect(d.targetURL(for: RoomKey(scope: "site", room: "/shop")) == "https://a.example/shop")
        #expect(d.targetURL(for: RoomKey(scope: "https://b.example/", room: "x")) == "https://b.example/x")
        do {
            _ = try CloudflareConfiguration(json: .object(["siteURL": .string("https://a.example"), "retrys": .number(1)]))
            Issue.record("a typo was accepted")
        } catch let e as WaitingRoomError {
            #expect(e.field == "retrys")
        }
        #expect(throws: WaitingRoomError.self) { try CloudflareConfiguration(json: .object(["siteURL": .string("ftp://x")])) }
        // rooms are paths under the site URL: a query or fragment there is refused, naming the field
        for bad in ["https://a.example/shop?x=1", "https://a.example/#top", "https://a.example?"] {
            do {
                _ = try CloudflareConfiguration(json: .object(["siteURL": .string(bad)]))
                Issue.record("\(bad) was accepted")
            } catch let e as WaitingRoomError {
                #expect(e.field == "siteURL", "\(bad)")
            }
        }
        #expect(
            try CloudflareConfiguration(json: .object(["siteURL": .string("https://a.example/shop/")])).siteURL == "https://a.example/shop")
        #expect(throws: WaitingRoomError.self) {
            try CloudflareEmulatorConfiguration(json: .object(["rooms": .object(["r": .object(["queueing_status_code": .number(201)])])]))
        }
    }
}
