import Cloudflare
import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomTesting

/// Every JSON answer of the emulator carries the 23 documented `cfWaitingRoom` members with
/// their documented types, in each situation of issue 50 (virtual clock, loopback HTTP).
@Suite("Cloudflare reply: the 23 documented fields")
struct CloudflareReplyFieldsTests: CloudflareRoomSuite {
    @Test func fifo() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(["r": Room(newUsersPerMinute: 2, totalActiveUsers: 0, refreshIntervalSeconds: 5)], clock: clock)
        defer { Task { await h.stop() } }
        var v = JSONModeVisitor(h)
        let (response, reply) = try await v.get("/r")
        #expect(response.status == 200)
        DocumentedReply.check(reply, "fifo")
        #expect(reply?["queueingMethod"] == .string("fifo") && reply?["isFIFOQueue"] == .bool(true))
        #expect(
            reply?["waitTimeKnown"] == .bool(true) && reply?["waitTime"] == .number(1) && reply?["waitTimeFormatted"] == .string("1 minute")
        )
        #expect(reply?["refreshIntervalSeconds"] == .number(5))
        #expect(reply?["lastUpdated"] == .string("2027-01-15T08:00:00.000Z"))
    }

    @Test func random() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(["r": Room(newUsersPerMinute: 1, totalActiveUsers: 0, queueingMethod: .random)], clock: clock)
        defer { Task { await h.stop() } }
        var last: [String: JSONValue]?
        for _ in 0..<8 {
            var v = JSONModeVisitor(h)
            last = try await v.get("/r").1
        }
        DocumentedReply.check(last, "random")
        #expect(last?["isRandomQueue"] == .bool(true) && last?["queueingMethod"] == .string("random"))
        #expect(
            last?["waitTime25Percentile"] == .number(2) && last?["waitTime50Percentile"] == .number(4)
                && last?["waitTime75Percentile"] == .number(6))
        #expect(last?["waitTime"] == .number(4), "waitTime is the 50th percentile")
        #expect(last?["waitTimeFormatted"] == .string("2 minutes to 6 minutes"))
    }

    @Test func reject() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(["r": Room(queueingMethod: .reject)], clock: clock)
        defer { Task { await h.stop() } }
        var v = JSONModeVisitor(h)
        let reply = try await v.get("/r").1
        DocumentedReply.check(reply, "reject")
        #expect(reply?["isRejectQueue"] == .bool(true) && reply?["queueingMethod"] == .string("reject"))
        #expect(reply?["refreshIntervalSeconds"] == .number(0), "documented: always zero for reject")
        #expect(reply?["waitTimeKnown"] == .bool(false))
    }

    @Test func passthroughWithQueueAll() async throws {
        let clock = VirtualClock()
        let h = try await Self.harness(["r": Room(queueingMethod: .passthrough, queueAll: true)], clock: clock)
        defer { Task { await h.stop() } }
        var v = JSONModeVisitor(h)
        let reply = try await v.get("/r").1
        DocumentedReply.check(reply, "passthrough + queue_all")
        #expect(reply?["isPassthroughQueue"] == .bool(true) && reply?["queueAll"] == .bool(true))
        #expect(reply?["waitTimeKnown"] == .bool(false), "queue_all: the estimate becomes unavailable")
        #expect(reply?["refreshIntervalSeconds"] == .number(20), "queue_all: the page refreshes")
    }

    @Test func queueFull() async throws {
        let clock = VirtualClock()
        // one new user a minute: a line of 1,440 is a day's wait
        let h = try await Self.harness(["r": Room(newUsersPerMinute: 1, totalActiveUsers: 0)], clock: clock)
        defer { Task { await h.stop() } }
        for _ in 0..<1440 {
            var v = JSONModeVisitor(h)
            _ = try await v.get("/r")
        }
        var late = JSONModeVisitor(h)
        let reply = try await late.get("/r").1
        DocumentedReply.check(reply, "queue full")
        #expect(reply?["queueIsFull"] == .bool(true))
    }

    @Test func preQueueAndEventStarted() async throws {
        let clock = VirtualClock()
        let now = clock.now()
        let h = try await Self.harness(
            [
                "r": Room(
                    newUsersPerMinute: 1, totalActiveUsers: 0, refreshIntervalSeconds: 1,
                    events: [
                        Event(
                            name: "drop", eventStartTime: now.addingTimeInterval(600), eventEndTime: now.addingTimeInterval(4200),
                            prequeueStartTime: now.addingTimeInterval(-60), shuffleAtEventStart: true, queueingMethod: .random)
                    ])
            ], clock: clock)
        defer { Task { await h.stop() } }
        var v = JSONModeVisitor(h)
        let held = try await v.get("/r").1
        DocumentedReply.check(held, "pre-queue")
        #expect(held?["isEventPrequeueing"] == .bool(true) && held?["isEventActive"] == .bool(true))
        #expect(held?["timeUntilEventStart"] == .number(10) && held?["timeUntilEventStartFormatted"] == .string("10 minutes"))
        #expect(held?["timeUntilEventEnd"] == .number(70) && held?["timeUntilEventEndFormatted"] == .string("70 minutes"))
        #expect(held?["shuffleAtEventStart"] == .bool(true) && held?["waitTimeKnown"] == .bool(false))
        clock.advance(by: .seconds(660))
        var late = JSONModeVisitor(h)
        _ = try await late.get("/r")
        let started = try await v.get("/r").1
        DocumentedReply.check(started, "event started")
        #expect(started?["isEventActive"] == .bool(true) && started?["isEventPrequeueing"] == .bool(false))
        #expect(started?["queueingMethod"] == .string("random"), "the event's queueing method overrides the room's")
        #expect(started?["timeUntilEventStart"] == .number(0) && started?["timeUntilEventEnd"] == .number(59))
    }
}
