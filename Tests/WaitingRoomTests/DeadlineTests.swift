import Dispatch
import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomTesting

/// `withDeadline`: the first of the operation, the deadline and the caller's cancellation
/// resumes the caller, which never waits for a cancelled operation to end.
///
/// Serialized: the 16,000-operation test floods a 2-core pool, and a loaded CI run kept the
/// other tests' cancellations waiting behind it for 8 s.
@Suite("withDeadline", .serialized)
struct DeadlineTests {
    struct TimedOut: Error, Equatable {}
    struct Refused: Error, Equatable {}

    /// An operation that ignores cancellation: it ends only when its own real-time wait does.
    static func deafWait(_ seconds: Double, cancelled: Cancelled) async -> Int {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { continuation.resume() }
            }
        } onCancel: {
            cancelled.mark()
        }
        return 1
    }

    final class Cancelled: Sendable {
        private let flag = Atomic<Bool>(false)
        func mark() { flag.store(true, ordering: .releasing) }
        var value: Bool { flag.load(ordering: .acquiring) }
    }

    @Test func theOperationsValueOrErrorComesBackWhenItEndsFirst() async throws {
        let value = try await withDeadline(.seconds(60), clock: SystemClock(), onTimeout: { TimedOut() }) { 42 }
        #expect(value == 42)
        await #expect(throws: Refused.self) {
            try await withDeadline(.seconds(60), clock: SystemClock(), onTimeout: { TimedOut() }) { () async throws -> Int in
                throw Refused()
            }
        }
    }

    /// An operation that ends first always gives its value: the timer's watcher, woken when the
    /// timer is cancelled, must not win the race with a `CancellationError` (it did now and then
    /// under load: `PostgresStateStore.connect` threw `CancellationError` after a connect that
    /// had succeeded, in one full parallel run of seven).
    @Test func manyQuickOperationsAllGiveTheirValue() async throws {
        let failures = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var failed = 0
                    for i in 0..<2_000 {
                        let value = try? await withDeadline(.seconds(60), clock: SystemClock(), onTimeout: { TimedOut() }) {
                            worker * 10_000 + i
                        }
                        if value != worker * 10_000 + i { failed += 1 }
                    }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0, "\(failures) of 16,000 operations that had ended came back as an error")
    }

    @Test func theDeadlineDoesNotWaitForAnOperationThatIgnoresCancellation() async throws {
        let cancelled = Cancelled()
        let timer = ContinuousClock()
        let started = timer.now
        await #expect(throws: TimedOut.self) {
            try await withDeadline(.milliseconds(200), clock: SystemClock(), onTimeout: { TimedOut() }) {
                await Self.deafWait(120, cancelled: cancelled)
            }
        }
        let elapsed = timer.now - started
        #expect(cancelled.value, "the operation was cancelled at the deadline")
        // Not a timing figure: the operation takes 120 s; a task group would have waited for it.
        // (The bound is far from both ends: CI saw a loaded 2-core run take 8.3 s here.)
        #expect(elapsed >= .milliseconds(190) && elapsed < .seconds(60), "took \(elapsed)")
    }

    @Test func aVirtualDeadlineFiresWhenItsClockMoves() async throws {
        let clock = VirtualClock()
        let cancelled = Cancelled()
        let call = Task {
            try await withDeadline(.seconds(30), clock: clock, onTimeout: { TimedOut() }) {
                await Self.deafWait(120, cancelled: cancelled)
            }
        }
        #expect(await clock.advanceToNextWakeup(), "the deadline sleeps on the clock")
        await #expect(throws: TimedOut.self) { try await call.value }
        #expect(cancelled.value)
        #expect(clock.sleepLog == [.seconds(30)])
    }

    @Test func aCancelledCallerGetsCancellationErrorAtOnceAndCancelsTheOperation() async throws {
        let cancelled = Cancelled()
        let timer = ContinuousClock()
        let started = timer.now
        let call = Task {
            try await withDeadline(.seconds(60), clock: SystemClock(), onTimeout: { TimedOut() }) {
                await Self.deafWait(120, cancelled: cancelled)
            }
        }
        call.cancel()  // before or after the call has begun: either way it ends at once
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(cancelled.value)
        // Not a timing figure: the operation takes 120 s (a loaded CI run took 8.3 s here).
        #expect(timer.now - started < .seconds(60), "took \(timer.now - started)")
    }
}
