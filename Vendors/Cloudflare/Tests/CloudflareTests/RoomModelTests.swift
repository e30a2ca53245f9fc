import Cloudflare
import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomEmulatorKit
import WaitingRoomTesting

/// The room model as Cloudflare documents it (issue 50 §2), over loopback on a virtual clock.
@Suite("Cloudflare room model")
struct CloudflareRoomModelTests: CloudflareRoomSuite {
    @Test func aRequestSoonerThanTheRefreshIntervalIsIgnored() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(["r": Room(newUsersPerMinute: 0, totalActiveUsers: 10, refreshIntervalSeconds: 20)], clock: clock)
        defer { Task { await h.stop() } }
        var v = JSONModeVisitor(h)
        let first = try await v.get("/r").1
        let stamp = try #require(first?["lastUpdated"])
        h.emulator.admit(room: "r", count: 1)
        clock.advance(by: .seconds(19))
        let early = try await v.get("/r")
        #expect(early.1?["lastUpdated"] == stamp, "ignored: lastUpdated does not change")
        #expect(early.1?["inWaitingRoom"] == .bool(true), "ignored: the visitor is not moved on")
        #expect(h.emulator.counters.replies["ignored"] == 1)
        clock.advance(by: .seconds(1))
        let onTime = try await v.get("/r")
        #expect(onTime.1 == nil && onTime.0.text.contains("cloudflare-emulator"), "20 s after the last counted attempt: let through")
    }

    @Test func anIgnoredRequestDoesNotMoveTheLineOnForTheVisitor() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(["r": Room(newUsersPerMinute: 0, totalActiveUsers: 10, refreshIntervalSeconds: 10)], clock: clock)
        defer { Task { await h.stop() } }
        var a = JSONModeVisitor(h)
        var b = JSONModeVisitor(h)
        _ = try await a.get("/r")
        clock.advance(by: .seconds(5))
        let bFirst = try await b.get("/r").1
        clock.advance(by: .seconds(6))
        // a's attempt counts (11 s), b's does not (6 s): b's answer is the one it had
        let aLater = try await a.get("/r").1
        let bEarly = try await b.get("/r").1
        #expect(aLater?["lastUpdated"] != nil && bEarly == bFirst)
    }

    @Test func queueAllAndPreQueueOverrideEveryMethod() async throws {
        let clock = VirtualClock()
        let now = clock.now()
        let h = try await Self.harness(
            [
                "pass": Room(queueingMethod: .passthrough, queueAll: true, refreshIntervalSeconds: 1),
                "reject": Room(queueingMethod: .reject, queueAll: true, refreshIntervalSeconds: 1),
                "event": Room(
                    queueingMethod: .passthrough, refreshIntervalSeconds: 1,
                    events: [
                        Event(
                            name: "e", eventStartTime: now.addingTimeInterval(3600), eventEndTime: now.addingTimeInterval(7200),
                            prequeueStartTime: now.addingTimeInterval(-10))
                    ])
            ], clock: clock)
        defer { Task { await h.stop() } }
        var visitors: [JSONModeVisitor] = []
        for room in ["pass", "reject", "event"] {
            for _ in 0..<3 {
                var v = JSONModeVisitor(h)
                let (response, reply) = try await v.get("/" + room)
                #expect(reply?["inWaitingRoom"] == .bool(true), "\(room): held, not let through (\(response.text.prefix(80)))")
                #expect(reply?["refreshIntervalSeconds"] == .number(1), "\(room): a refreshing wait")
                visitors.append(v)
            }
        }
        for _ in 0..<3 {
            clock.advance(by: .seconds(30))
            for i in visitors.indices { _ = try await visitors[i].get("/" + ["pass", "reject", "event"][i / 3]) }
        }
        #expect(h.emulator.active().values.reduce(0, +) == 0, "passthrough + queue_all, reject + queue_all and a pre-queue admit no one")
        #expect(h.emulator.counters.admitted == 0)
        // queue_all lifted: passthrough lets the whole line in, no limit applying
        var pass = try #require(h.emulator.room(named: "pass"))
        pass.queueAll = false
        h.emulator.update(room: "pass", pass)
        clock.advance(by: .seconds(1))
        for i in 0..<3 { #expect(try await visitors[i].get("/pass").1 == nil) }
    }

    @Test func aWaitingVisitorsPlaceIsHeldFiveMinutes() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(["r": Room(newUsersPerMinute: 0, totalActiveUsers: 10, refreshIntervalSeconds: 20)], clock: clock)
        defer { Task { await h.stop() } }
        var gone = JSONModeVisitor(h)
        var stays = JSONModeVisitor(h)
        _ = try await gone.get("/r")
        _ = try await stays.get("/r")
        for _ in 0..<15 {
            clock.advance(by: .seconds(20))
            _ = try await stays.get("/r")
        }
        #expect(h.emulator.counters.placesLost == 0, "exactly 5 minutes: still held")
        clock.advance(by: .seconds(20))
        _ = try await stays.get("/r")
        #expect(h.emulator.counters.placesLost == 1 && h.emulator.waiting()["r"] == 1)
    }

    @Test func fifoEstimatesGoByTheMinuteOfArrival() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(["r": Room(newUsersPerMinute: 2, totalActiveUsers: 0, refreshIntervalSeconds: 1)], clock: clock)
        defer { Task { await h.stop() } }
        var group: [JSONModeVisitor] = []
        var firstAnswers: [JSONValue?] = []
        for _ in 0..<3 {
            var v = JSONModeVisitor(h)
            firstAnswers.append(try await v.get("/r").1?["waitTime"])
            group.append(v)
        }
        #expect(firstAnswers == [.number(1), .number(1), .number(2)], "each told the time through the group as it stood")
        clock.advance(by: .seconds(60))
        var later = JSONModeVisitor(h)
        #expect(try await later.get("/r").1?["waitTime"] == .number(2), "the next minute's group: 4 ahead at 2 a minute")
        // the first of the group is told the group's time (3 at 2 a minute), not its place's (1)
        #expect(try await group[0].get("/r").1?["waitTime"] == .number(2))
    }

    @Test func severalEventsPerRoomRunInTurn() async throws {
        let clock = VirtualClock()
        let now = clock.now()
        let h = try await Self.harness(
            [
                "r": Room(
                    newUsersPerMinute: 1000, totalActiveUsers: 1000, refreshIntervalSeconds: 1,
                    events: [
                        Event(
                            name: "second", eventStartTime: now.addingTimeInterval(1800), eventEndTime: now.addingTimeInterval(2400),
                            prequeueStartTime: now.addingTimeInterval(1500)),
                        Event(
                            name: "first", eventStartTime: now.addingTimeInterval(600), eventEndTime: now.addingTimeInterval(1200),
                            prequeueStartTime: now.addingTimeInterval(300), newUsersPerMinute: 5)
                    ])
            ], clock: clock)
        defer { Task { await h.stop() } }
        func status() -> (String?, String?) {
            let r = h.emulator.status(room: "r")?["result"]
            return (r?["status"]?.stringValue, r?["event_id"]?.stringValue)
        }
        #expect(status().0 == "not_queueing")
        clock.advance(by: .seconds(300))
        #expect(status() == ("event_prequeueing", "first"))
        var early = JSONModeVisitor(h)
        #expect(try await early.get("/r").1?["timeUntilEventStart"] == .number(5))
        clock.advance(by: .seconds(400))
        #expect(status().1 == "first")
        #expect(try await early.get("/r").1 == nil, "let in at the first event's start")
        clock.advance(by: .seconds(900))
        #expect(status() == ("event_prequeueing", "second"))
        var held = JSONModeVisitor(h)
        let reply = try await held.get("/r").1
        #expect(reply?["isEventPrequeueing"] == .bool(true) && reply?["timeUntilEventStart"] == .number(4), "200 s, in whole minutes up")
        clock.advance(by: .seconds(301))
        #expect(try await held.get("/r").1 == nil, "let in at the second event's start")
        clock.advance(by: .seconds(700))
        #expect(status() == ("not_queueing", ""))
    }

    @Test func theOvershootFaultAdmitsAboveTheRateForItsWindowOnly() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(
            ["r": Room(newUsersPerMinute: 60, totalActiveUsers: 1_000_000, refreshIntervalSeconds: 1)], clock: clock)
        defer { Task { await h.stop() } }
        let fault = try CloudflareEmulatorFault.vocabulary.parse(.object(["overshoot": .number(200), "seconds": .number(60)]))
        h.emulator.faultQueue.add(fault)
        for _ in 0..<400 {
            var v = JSONModeVisitor(h)
            _ = try await v.get("/r")
        }
        #expect(h.emulator.counters.admitted == 60, "a minute's allowance at once")
        var admitted: [Int] = []
        for _ in 0..<4 {
            clock.advance(by: .seconds(30))
            _ = h.emulator.status(room: "r")
            admitted.append(h.emulator.counters.admitted)
        }
        // 60 s at 200 %: 120 more; then 30 a half minute, the configured rate
        #expect(admitted == [120, 180, 210, 240])
        // bad input names the field
        #expect(throws: WaitingRoomError.self) { try CloudflareEmulatorFault.vocabulary.parse(.object(["overshoot": .number(50)])) }
        #expect(throws: WaitingRoomError.self) {
            try CloudflareEmulatorFault.vocabulary.parse(.object(["overshoot": .number(150), "seconds": .number(0)]))
        }
    }
}
