import Foundation
import Synchronization
import Testing

@testable import WaitingRoom

/// `SystemClock`'s sleeps are woken from a NIO event loop; cancellation ends them at once.
@Suite("SystemClock sleeps")
struct SystemClockTests {
    @Test func aSleepLastsAtLeastItsDuration() async throws {
        let started = ContinuousClock.now
        try await SystemClock().sleep(for: .milliseconds(30))
        #expect(ContinuousClock.now - started >= .milliseconds(30))
    }

    /// The bound is generous (the sleep would last 60 s); what matters is that cancelling does
    /// not wait for the timer.
    @Test func cancellingEndsTheSleepAtOnce() async throws {
        let started = ContinuousClock.now
        let sleeper = Task { try await SystemClock().sleep(for: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(20))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        // 30 s: a machine loaded with parallel builds stalled this process for 11 s once.
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func aCancelledTaskDoesNotSleep() async throws {
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await SystemClock().sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func zeroAndNegativeDurationsReturn() async throws {
        try await SystemClock().sleep(for: .zero)
        try await SystemClock().sleep(for: .milliseconds(-5))
        try await SystemClock().sleep(until: Date().addingTimeInterval(-1))
    }

    /// Many concurrent sleeps, half cancelled: every sleeper ends exactly once, the right way.
    @Test func concurrentSleepsAndCancellations() async throws {
        let outcomes = await withTaskGroup(of: Bool.self) { group -> [Bool] in
            var sleepers: [Task<Void, any Error>] = []
            for i in 0..<200 {
                let sleeper = Task { try await SystemClock().sleep(for: .milliseconds(Int64(5 + i % 20))) }
                sleepers.append(sleeper)
                if i % 2 == 1 { sleeper.cancel() }
            }
            for sleeper in sleepers {
                group.addTask { (try? await sleeper.value) != nil }
            }
            var all: [Bool] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.count == 200)
        #expect(outcomes.filter { $0 }.count >= 100)
    }

    /// Issue 26: without a transport's event loops the core's own timer queue wakes sleeps
    /// (the core links no NIOPosix); a cancelled timer does not fire.
    @Test func theCoresTimerQueueFiresAndCancels() async throws {
        let fired = Mutex<ContinuousClock.Instant?>(nil)
        let started = ContinuousClock.now
        _ = EventLoopTimer.scheduleOnQueue(after: .milliseconds(40)) { fired.withLock { $0 = ContinuousClock.now } }
        let cancelled = Mutex(false)
        let item = EventLoopTimer.scheduleOnQueue(after: .milliseconds(20)) { cancelled.withLock { $0 = true } }
        item.cancel()
        try await Task.sleep(for: .milliseconds(300))
        let at = try #require(fired.withLock { $0 })
        #expect(at - started >= .milliseconds(40))
        #expect(!cancelled.withLock { $0 })
    }
}
