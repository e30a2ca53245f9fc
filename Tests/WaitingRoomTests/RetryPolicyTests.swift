import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomTesting

@Suite("RetryPolicy")
struct RetryPolicyTests {
    /// NetFUNNEL's rule: slots of one full timeout from each attempt's start, even when the error
    /// comes back at once; the last failure is reported at once ("immediate error response → no
    /// timeout wait"): 3000 ms × 3 retries of an immediate refusal ⇒ reported at 9 s.
    @Test func fixedSlotsWaitOutEachSlotButReportTheLastFailureAtOnce() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let attempts = Mutex<[Duration]>([])
        let policy = RetryPolicy.fixedSlots(attemptTimeout: .milliseconds(3000), retries: 3)
        await #expect(throws: WaitingRoomError.self) {
            try await policy.run(clock: clock, vendor: "v") { attempt, timeout in
                attempts.withLock { $0.append(clock.elapsed) }
                #expect(timeout == .milliseconds(3000))
                throw WaitingRoomError(.networkOffline, vendor: "v", vendorCode: 1001, message: "refused")
            }
        }
        #expect(attempts.withLock { $0 } == [.zero, .seconds(3), .seconds(6), .seconds(9)])
        #expect(clock.elapsed == .seconds(9))
    }

    @Test func fixedSlotsWithATimeoutThatTakesTheWholeSlot() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let policy = RetryPolicy.fixedSlots(attemptTimeout: .milliseconds(3000), retries: 1)
        do {
            _ = try await policy.run(clock: clock) { _, timeout in
                try await clock.sleep(for: timeout ?? .zero)  // a transport that times out
                throw WaitingRoomError(.networkTimeout, vendorCode: 1002, message: "timeout")
            }
        } catch let error as WaitingRoomError {
            #expect(error.kind == .networkTimeout)
        }
        #expect(clock.elapsed == .seconds(6))
    }

    @Test func fixedSlotsSucceedOnALaterAttempt() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let policy = RetryPolicy.fixedSlots(attemptTimeout: .milliseconds(500), retries: 2)
        let value = try await policy.run(clock: clock) { attempt, _ in
            if attempt < 2 { throw WaitingRoomError(.networkOffline, message: "down") }
            return attempt
        }
        #expect(value == 2)
        #expect(clock.elapsed == .seconds(1))
    }

    /// Queue-it's rule: waits of 1, 2, 4, 8 s, then "unavailable" with code 3.
    @Test func doublingBackoffWaitsOneTwoFourEightThenUnavailable() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let policy = RetryPolicy.doublingBackoff(
            initial: .seconds(1), limit: .seconds(10), attemptTimeout: nil, unavailableCode: 3, message: "queue unavailable")
        #expect(policy.delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(8)])
        #expect(policy.maxAttempts == 5)
        let count = Mutex(0)
        do {
            _ = try await policy.run(clock: clock, vendor: "q") { _, _ -> Int in
                count.withLock { $0 += 1 }
                throw WaitingRoomError(.server, vendorCode: 503, message: "busy")
            }
            Issue.record("expected unavailable")
        } catch let error as WaitingRoomError {
            #expect(error.kind == .unavailable)
            #expect(error.vendorCode == 3)
        }
        #expect(count.withLock { $0 } == 5)
        #expect(clock.sleepLog == [.seconds(1), .seconds(2), .seconds(4), .seconds(8)])
    }

    @Test func rejectionsAreNeverRetried() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let policy = RetryPolicy.doublingBackoff(
            initial: .seconds(1), limit: .seconds(10), attemptTimeout: nil, unavailableCode: 3, message: "x")
        let count = Mutex(0)
        do {
            _ = try await policy.run(clock: clock) { _, _ -> Int in
                count.withLock { $0 += 1 }
                throw WaitingRoomError(.rejected, vendorCode: 404, message: "no such room")
            }
        } catch let error as WaitingRoomError {
            #expect(error.vendorCode == 404)
        }
        #expect(count.withLock { $0 } == 1)
        #expect(clock.sleepLog.isEmpty)
    }

    @Test func eachRunStartsWithAFreshBackoff() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let policy = RetryPolicy.doublingBackoff(
            initial: .seconds(1), limit: .seconds(10), attemptTimeout: nil, unavailableCode: 3, message: "x")
        for _ in 0..<2 {
            _ = try await policy.run(clock: clock) { attempt, _ in
                if attempt == 0 { throw WaitingRoomError(.server, message: "once") }
                return 1
            }
        }
        #expect(clock.sleepLog == [.seconds(1), .seconds(1)])
    }

    @Test func outOfRangeSettingsNameTheSettingAndTheRange() {
        let error = WaitingRoomError.outOfRange(field: "networkTimeout", value: 50, range: 100...10000, unit: "ms")
        #expect(error.kind == .invalidConfiguration)
        #expect(error.field == "networkTimeout")
        #expect(error.message.contains("100…10000"))
    }
}
