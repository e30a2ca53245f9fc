import Cloudflare
import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomEmulatorKit
import WaitingRoomHTTP
import WaitingRoomTesting

/// Faults through the emulator kit's vocabulary: retried, then failed; a 4xx blocks.
@Suite("Cloudflare faults")
struct CloudflareFaultTests {
    @Test func aFailedRequestIsRetriedAndReported() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let h = try await EmulatorHarness.start(CloudflareEmulator(configuration: .testRooms, now: { clock.now() }))
        defer { Task { await h.stop() } }
        try h.emulator.installFaults(.object(["action": .string("status"), "status": .number(503), "on": .string("page")]))
        let p = h.provider(try h.configuration(retries: 2, retryDelay: .seconds(1)), clock: clock)
        let session = try p.enqueue(Entry(room: RoomKey(scope: "site", room: "open")))
        let events = Events(session)
        let outcome = await session.outcome()
        #expect(outcome.name == "passed")
        #expect(
            await eventually {
                events.all.contains { if case .connection(.reconnecting, let s) = $0 { return s.code == 503 } else { return false } }
            })
        #expect(h.emulator.counters.faultsInjected == 1)
    }

    @Test func everyAttemptFailingEndsUnavailable() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let h = try await EmulatorHarness.start(CloudflareEmulator(configuration: .testRooms, now: { clock.now() }))
        defer { Task { await h.stop() } }
        for action in ["garbage", "drop"] {
            h.emulator.faultQueue.clear()
            try h.emulator.installFaults(.object(["action": .string(action), "on": .string("page"), "count": .number(3)]))
            let p = h.provider(try h.configuration(retries: 2), clock: clock)
            let outcome = await (try p.enqueue(Entry(room: RoomKey(scope: "site", room: "open"), userId: action))).outcome()
            guard case .failed(let e) = outcome else {
                Issue.record("\(action): expected failed, got \(outcome)")
                continue
            }
            #expect(e.kind == .unavailable && e.vendorCode == CloudflareCode.unreachable.rawValue, "\(action): \(e)")
            #expect(e.vendor == "cloudflare")
        }
    }

    @Test func aRefusalBlocksWithItsStatus() async throws {
        let clock = VirtualClock()
        let h = try await EmulatorHarness.start(CloudflareEmulator(configuration: .testRooms, now: { clock.now() }))
        defer { Task { await h.stop() } }
        try h.emulator.installFaults(.object(["action": .string("status"), "status": .number(403), "on": .string("page")]))
        let p = h.provider(try h.configuration(), clock: clock)
        let r = try await p.tryPass(Entry(room: RoomKey(scope: "site", room: "open")))
        #expect(r.disposition == .blocked && r.status.code == 403)
    }

    @Test func badFaultsNameTheField() throws {
        let e = CloudflareEmulator(configuration: .testRooms)
        do {
            try e.installFaults(.object(["action": .string("drop"), "on": .string("enqueue")]))
            Issue.record("a bad request kind was accepted")
        } catch let error as WaitingRoomError {
            #expect(error.field == "faults.on")
        }
    }
}
