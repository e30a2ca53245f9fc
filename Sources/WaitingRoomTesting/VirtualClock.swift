import Foundation
import NIOConcurrencyHelpers
import WaitingRoom

/// A ``WaitingRoomClock`` whose time moves only when told, so timing rules (polling intervals,
/// retry spacing, expiry) are tested without sleeping.
///
/// Two modes:
/// - manual (default): `sleep` suspends until ``advance(by:)`` or ``advanceToNextWakeup()``
///   moves time past its deadline;
/// - `autoAdvance`: every `sleep` returns at once and moves time forward by its duration, which
///   suits end-to-end tests where only the waiting between requests should vanish.
public final class VirtualClock: WaitingRoomClock {
    private struct Sleeper {
        var id: UInt64
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var sleepLog: [Duration] = []
    }

    /// Behind NIO's lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    private let state: NIOLockedValueBox<State>

    /// What a new sleep does, decided under the lock.
    private enum SleepStart { case resume, cancel, wait }
    /// The time the clock started at.
    package let start: Date
    /// Whether sleeps return at once and move time forward.
    package let autoAdvance: Bool

    /// Creates a clock at `start` (default 2027-01-15 08:00:00 UTC).
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000), autoAdvance: Bool = false) {
        self.start = start
        self.autoAdvance = autoAdvance
        self.state = NIOLockedValueBox(State(now: start))
    }

    public func now() -> Date { state.withLockedValue { $0.now } }

    /// Virtual time passed since ``start``.
    package var elapsed: Duration { .milliseconds(Int64((now().timeIntervalSince(start) * 1000).rounded())) }

    /// Every duration slept so far, in order.
    package var sleepLog: [Duration] { state.withLockedValue { $0.sleepLog } }

    /// Tasks currently asleep on this clock.
    package var sleeperCount: Int { state.withLockedValue { $0.sleepers.count } }

    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        if autoAdvance {
            state.withLockedValue {
                $0.sleepLog.append(duration)
                $0.now = $0.now.addingTimeInterval(max(0, duration.seconds))
            }
            await Task.yield()
            try Task.checkCancellation()
            return
        }
        let id = state.withLockedValue { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Decided under the lock, so the cancellation handler (which takes the same lock)
                // either ran before (the task is cancelled: resume here, it found no sleeper) or
                // runs after the sleeper is stored (it removes and resumes it): exactly one resume.
                // (An earlier version also resumed here when the handler had already removed the
                // sleeper, resuming twice: a crash found by the full-suite loop.)
                let action: SleepStart = state.withLockedValue { s in
                    s.sleepLog.append(duration)
                    if duration <= .zero { return .resume }
                    if Task.isCancelled { return .cancel }
                    s.sleepers.append(Sleeper(id: id, deadline: s.now.addingTimeInterval(duration.seconds), continuation: continuation))
                    return .wait
                }
                switch action {
                case .resume: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLockedValue { s in
                guard let index = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration`, waking every sleeper whose deadline has come, in
    /// deadline order.
    public func advance(by duration: Duration) {
        let due: [Sleeper] = state.withLockedValue { s in
            s.now = s.now.addingTimeInterval(duration.seconds)
            let now = s.now
            let due = s.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            s.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits (in real time, up to `timeout`) until some task sleeps on this clock, then moves
    /// time to the earliest deadline and wakes it. Returns false if nobody went to sleep.
    @discardableResult
    public func advanceToNextWakeup(timeout: Duration = .seconds(30)) async -> Bool {
        let limit = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < limit {
            let next: Date? = state.withLockedValue { s in s.sleepers.map(\.deadline).min() }
            if let next {
                let gap = max(0, next.timeIntervalSince(now()))
                advance(by: .milliseconds(Int64((gap * 1000).rounded(.up))))
                return true
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }

    /// Waits in real time until at least `count` tasks sleep on this clock.
    @discardableResult
    package func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(30)) async -> Bool {
        let limit = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < limit {
            if sleeperCount >= count { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }
}
