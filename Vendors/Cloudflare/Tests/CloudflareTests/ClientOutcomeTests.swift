import Cloudflare
import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomEmulatorKit
import WaitingRoomTesting

/// The client's typed reply, its distinct outcomes (reject, queue full, pre-queue) and fail-open.
@Suite("Cloudflare client outcomes")
struct CloudflareClientOutcomeTests {
    @Test func theReplyKeepsEveryDocumentedFieldTyped() throws {
        let body =
            #"{"cfWaitingRoom":{"inWaitingRoom":true,"waitTimeKnown":false,"waitTime":0,"waitTime25Percentile":0,"#
            + #""waitTime50Percentile":0,"waitTime75Percentile":0,"waitTimeFormatted":"unavailable","queueIsFull":false,"#
            + #""queueAll":false,"lastUpdated":"2020-08-03T23:46:00.000Z","refreshIntervalSeconds":20,"queueingMethod":"random","#
            + #""isFIFOQueue":false,"isRandomQueue":true,"isPassthroughQueue":false,"isRejectQueue":false,"isEventActive":true,"#
            + #""isEventPrequeueing":true,"timeUntilEventStart":15,"timeUntilEventStartFormatted":"15 minutes","timeUntilEventEnd":75,"#
            + #""timeUntilEventEndFormatted":"75 minutes","shuffleAtEventStart":true}}"#
        let r = try CloudflareWaitingRoomReply.decode(Array(body.utf8))
        #expect(r.queueingMethod == "random" && r.isRandomQueue && !r.isFIFOQueue && r.isEventActive && r.isEventPrequeueing)
        #expect(r.timeUntilEventStart == 15 && r.timeUntilEventStartFormatted == "15 minutes" && r.timeUntilEventEnd == 75)
        #expect(r.shuffleAtEventStart && r.extra.isEmpty && r.eventStartsIn == .seconds(900))
        #expect(try CloudflareWaitingRoomReply.decode(Array(r.json.jsonText.utf8)) == r, "round trip")
        #expect(Set(r.json["cfWaitingRoom"]?.objectValue?.keys ?? [:].keys) == Set(CloudflareWaitingRoomReply.documentedMembers))
        // wrong types are refused, naming the member
        do {
            _ = try CloudflareWaitingRoomReply.decode(Array(#"{"cfWaitingRoom":{"isRejectQueue":"true"}}"#.utf8))
            Issue.record("a string flag was accepted")
        } catch {
            #expect(error.vendorCode == CloudflareCode.invalidReply.rawValue && error.message.contains("isRejectQueue"))
        }
        // reject as documented (isRejectQueue), and the older form (refresh 0) still read
        #expect(CloudflareWaitingRoomReply(refreshIntervalSeconds: 20, queueingMethod: "reject", isRejectQueue: true).rejects)
        #expect(CloudflareWaitingRoomReply(refreshIntervalSeconds: 0).rejects)
        #expect(
            !CloudflareWaitingRoomReply(queueAll: true, refreshIntervalSeconds: 20, queueingMethod: "reject", isRejectQueue: true).rejects)
    }

    @Test func rejectQueueFullAndPreQueueAreDistinct() async throws {
        let clock = VirtualClock()
        let now = clock.now()
        typealias Room = CloudflareEmulatorConfiguration.Room
        let h = try await EmulatorHarness.start(
            CloudflareEmulator(
                configuration: .init(rooms: [
                    "reject": Room(queueingMethod: .reject),
                    "full": Room(newUsersPerMinute: 1, totalActiveUsers: 0),
                    "sale": Room(
                        newUsersPerMinute: 1000, totalActiveUsers: 1000,
                        events: [
                            .init(
                                name: "drop", eventStartTime: now.addingTimeInterval(300), eventEndTime: now.addingTimeInterval(900),
                                prequeueStartTime: now.addingTimeInterval(-1))
                        ])
                ]), now: { clock.now() }))
        defer { Task { await h.stop() } }
        let p = h.provider(try h.configuration(blockWhenQueueIsFull: false), clock: clock)
        let rejected = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "reject")))
        #expect(rejected.disposition == .blocked && rejected.status.code == CloudflareCode.rejected.rawValue)
        let held = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "sale"), userId: "a"))
        #expect(held.status.code == CloudflareCode.eventPrequeue.rawValue && held.progress?.eta == .seconds(300))
        for _ in 0..<1440 {
            var v = JSONModeVisitor(h)
            _ = try await v.get("/full")
        }
        let full = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "full"), userId: "late"))
        #expect(
            full.disposition == .queue && full.status.code == CloudflareCode.queueIsFull.rawValue,
            "blockWhenQueueIsFull false: waiting on, under the queue-full code")
    }

    @Test func failOpenLetsTheUserThroughWhenTheRoomCannotBeReached() async throws {
        let clock = VirtualClock()
        let h = try await EmulatorHarness.start(CloudflareEmulator(configuration: .testRooms, now: { clock.now() }))
        defer { Task { await h.stop() } }
        h.emulator.faultQueue.add(EmulatorFault(.status(503), on: CloudflareEmulatorFault.page, count: 4))
        var c = try h.configuration()
        c.failOpen = true
        let p = h.provider(c, clock: clock)
        let r = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "line"), userId: "u"))
        #expect(r.disposition == .passed && r.status.code == CloudflareCode.failedOpen.rawValue)
        let pass = try #require(r.pass)
        #expect(
            pass.bypassedError?.vendorCode == CloudflareCode.unreachable.rawValue && pass.credential.isEmpty
                && pass.details["failOpen"] == "true")
        // without failOpen the same failure fails
        let closed = h.provider(try h.configuration(), clock: clock)
        await #expect(throws: WaitingRoomError.self) { _ = try await closed.tryPass(Entry(room: RoomKey(scope: "site", room: "line"))) }
        #expect(try CloudflareConfiguration(json: .object(["siteURL": .string("https://a.example"), "failOpen": .bool(true)])).failOpen)
    }
}
