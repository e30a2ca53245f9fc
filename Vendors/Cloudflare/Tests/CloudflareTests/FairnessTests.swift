import Cloudflare
import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomEmulatorKit
import WaitingRoomTesting

/// The emulator as a fairness source (issue 30 §2) on a virtual clock, over loopback: relative
/// event times in the rooms JSON, a scheduled start written as an event and moved, the admission
/// record. The 2,000-user run is `Tests/WaitingRoomCLITests/ScheduledSaleFairnessTests.swift`.
@Suite("Cloudflare fairness source")
struct CloudflareFairnessTests {
    static let sale = RoomKey(scope: "site", room: "sale")

    @Test func relativeEventTimesCountFromTheEmulatorsClock() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let c = try CloudflareEmulatorConfiguration(
            json: .object([
                "rooms": .object([
                    "sale": .object([
                        "events": .array([
                            .object([
                                "prequeue_start_time": .string("+0"), "event_start_time": .string("+60"),
                                "event_end_time": .string("2027-01-15T09:00:00Z"),
                                "shuffle_at_event_start": .bool(true), "seed": .number(9)
                            ])
                        ])
                    ])
                ])
            ]), now: now)
        let event = try #require(c.rooms["sale"]?.events.first)
        #expect(event.prequeueStartTime == now && event.eventStartTime == now.addingTimeInterval(60))
        #expect(event.seed == 9 && event.json["seed"] == .number(9))
        #expect(throws: WaitingRoomError.self) {
            try CloudflareEmulatorConfiguration(
                json: .object([
                    "rooms": .object([
                        "r": .object([
                            "events": .array([
                                .object([
                                    "event_start_time": .string("+-5"), "event_end_time": .string("+60")
                                ])
                            ])
                        ])
                    ])
                ]), now: now)
        }
    }

    @Test func scheduledStartHoldsEarlyVisitorsShufflesThemAndKeepsOrderAfter() async throws {
        let clock = VirtualClock()
        var rooms = CloudflareEmulatorConfiguration.testRooms
        rooms.rooms["sale"] = .init(newUsersPerMinute: 60, totalActiveUsers: 1000, refreshIntervalSeconds: 1)
        let emulator = CloudflareEmulator(configuration: rooms, now: { clock.now() })
        let h = try await EmulatorHarness.start(emulator)
        defer { Task { await h.stop() } }
        let p = h.provider(try h.configuration(), clock: clock)
        #expect(throws: EmulatorRoomError.self) {
            try emulator.scheduleStart(room: RoomKey(scope: "site", room: "nope"), at: nil, shuffle: true, seed: 1)
        }

        // a far start, then moved: the held visitors stay held for the new one
        try emulator.scheduleStart(room: Self.sale, at: clock.now().addingTimeInterval(3600), shuffle: true, seed: 5)
        let event = try #require(emulator.room(named: "sale")?.events.first)
        #expect(event.name == CloudflareEmulator.scheduledStartEvent && event.shuffleAtEventStart && event.prequeueStartTime != nil)
        for n in 0..<20 {
            #expect(try await p.tryPass(Entry(room: Self.sale, userId: "early\(n)")).disposition == .queue)
        }
        #expect(emulator.status(room: "sale")?["result"]?["status"] == .string("event_prequeueing"))
        let start = clock.now().addingTimeInterval(10)
        try emulator.scheduleStart(room: Self.sale, at: start, shuffle: true, seed: 5)
        #expect(emulator.waiting()["sale"] == 20)
        clock.advance(by: .seconds(11))
        for n in 0..<5 {
            #expect(try await p.tryPass(Entry(room: Self.sale, userId: "late\(n)")).disposition == .queue)
        }
        clock.advance(by: .seconds(60))
        let record = try #require(emulator.admissionRecord(room: Self.sale))
        #expect(record.shuffled && !record.truncated)
        #expect(abs((record.startsAt ?? .distantPast).timeIntervalSince(start)) < 0.01)
        #expect(record.entries.prefix(20).allSatisfy(\.prequeued) && !record.entries.suffix(5).contains(where: \.prequeued))
        let places = record.entries.map { $0.admission ?? -1 }
        #expect(Set(places.prefix(20)) == Set(0..<20), "the pre-queue goes first")
        #expect(Array(places.prefix(20)) != Array(0..<20), "shuffled")
        #expect(Array(places.suffix(5)) == Array(20..<25), "first come first served after the start")
        // one a second from the start (the allowance counts from the start)
        let times = record.entries.compactMap(\.admittedAt).sorted()
        #expect(times.count == 25)
        #expect(
            abs(times[0].timeIntervalSince(start) - 0) < 1.01 && abs(times[24].timeIntervalSince(start) - 24) < 1.01,
            "\(times.map { $0.timeIntervalSince(start) })")
        // a reset starts a new log
        emulator.reset()
        #expect(emulator.admissionRecord(room: Self.sale)?.entries.isEmpty == true)
        // removing the start: nothing held afterwards
        try emulator.scheduleStart(room: Self.sale, at: nil, shuffle: true, seed: 5)
        #expect(emulator.room(named: "sale")?.events.isEmpty == true)
    }
}
