import Synchronization

/// Keys whose documented return attempts failed, still being returned in the background.
///
/// A vendor whose server holds a slot per key (NetFUNNEL) reports a failed return as its SDK
/// documents (`nfComplete` 500), but the key still occupies a place in the room until the server
/// times it out, costing every user behind it. Instead of dropping it, the vendor hands the key
/// here: it is tried again with a doubling backoff until it is returned or its time budget
/// runs out, and the session reports the late return as ``WaitingRoomEvent/keyReturnedLate(_:)``.
///
/// One instance lives in each ``ProviderEnvironment``; `drain(timeout:)` is what a process
/// calls before it exits (``WaitingRoomProvider/drainPendingReturns(timeout:)``), so shutdown
/// does not drop a key that could still be returned.
///
/// Threading: every method may be called from any thread; the state is behind one lock, and
/// the background attempts run in unstructured tasks that are not cancelled with the session
/// or the caller, only by `drain(timeout:)` when its bound passes.
public final class PendingReturns: Sendable {
    /// What happened to the background returns so far.
    package struct Statistics: Sendable, Hashable, Codable {
        /// Returns handed to the background.
        package var started = 0
        /// Returned in the background (the server took the key).
        package var returnedLate = 0
        /// The server answered that it no longer knows the key (it was returned or timed out).
        package var alreadyGone = 0
        /// Given up: the time budget ran out (or ``drain(timeout:)`` passed its bound) first.
        package var gaveUp = 0
        /// Still being tried.
        package var pending: Int { started - returnedLate - alreadyGone - gaveUp }

        /// Creates empty statistics.
        package init() {}
    }

    /// The schedule of background attempts.
    package struct Schedule: Sendable, Hashable {
        /// How long after the hand-over attempts may still start.
        package var budget: Duration
        /// The wait before the first background attempt; it doubles after each failure.
        package var initialDelay: Duration
        /// The longest wait between two attempts.
        package var maximumDelay: Duration
        /// Each wait is stretched or shrunk at random by up to this share (0…0.5), so the
        /// returns of many users whose keys failed together do not come back together.
        package var jitter: Double

        /// Creates a schedule.
        package init(budget: Duration, initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(10), jitter: Double = 0) {
            self.budget = budget
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
            self.jitter = min(0.5, max(0, jitter))
        }

        /// `delay` with the schedule's jitter applied (a uniform factor in 1 ± jitter).
        package func jittered(_ delay: Duration) -> Duration {
            guard jitter > 0 else { return delay }
            return delay * Double.random(in: (1 - jitter)...(1 + jitter))
        }

        /// The waits before each attempt that fits in the budget (the sum stays within it).
        package var delays: [Duration] {
            var result: [Duration] = []
            var total: Duration = .zero
            var next = max(initialDelay, .milliseconds(1))
            while total + next <= budget {
                result.append(next)
                total += next
                next = min(next * 2, max(maximumDelay, initialDelay))
            }
            return result
        }
    }

    /// The result of one background attempt.
    package enum Attempt: Sendable {
        /// The key was returned; the status is reported with the late-return event.
        case returned(VendorStatus)
        /// Worth trying again later (network failure, server error).
        case failed(String)
        /// The server no longer knows the key: nothing left to return.
        case gone(VendorStatus)
    }

    private struct State {
        var statistics = Statistics()
        var nextID: UInt64 = 0
        var tasks: [UInt64: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty tracker.
    public init() {}

    /// Counts so far.
    package var statistics: Statistics { state.withLock { $0.statistics } }

    /// Returns in flight.
    package var pendingCount: Int { state.withLock { $0.tasks.count } }

    /// Starts returning a key in the background.
    ///
    /// - Parameters:
    ///   - schedule: when attempts are made; an empty schedule gives up at once.
    ///   - clock: the clock the waits run on.
    ///   - attempt: one return attempt.
    ///   - finished: called once at the end with the returned status, or nil when it gave up.
    package func start(
        schedule: Schedule,
        clock: any WaitingRoomClock,
        attempt: @escaping @Sendable () async -> Attempt,
        finished: @escaping @Sendable (VendorStatus?) -> Void
    ) {
        let delays = schedule.delays
        state.withLock { state in
            state.nextID += 1
            state.statistics.started += 1
            let id = state.nextID
            // Created under the lock, so it is tracked before its first line can run (its end
            // takes the same lock).
            state.tasks[id] = Task { [self] in
                var result: Attempt?
                for delay in delays {
                    do { try await clock.sleep(for: schedule.jittered(delay)) } catch { break }
                    if Task.isCancelled { break }
                    let outcome = await attempt()
                    if case .failed = outcome { continue }
                    result = outcome
                    break
                }
                end(id, with: result)
                if case .returned(let status) = result { finished(status) } else { finished(nil) }
            }
        }
    }

    private func end(_ id: UInt64, with result: Attempt?) {
        state.withLock { state in
            switch result {
            case .returned?: state.statistics.returnedLate += 1
            case .gone?: state.statistics.alreadyGone += 1
            case .failed?, nil: state.statistics.gaveUp += 1
            }
            state.tasks.removeValue(forKey: id)
        }
    }

    /// Waits up to `timeout` for the returns in flight to end, then cancels those left.
    ///
    /// The wait is timed on ``SystemClock`` (an event-loop timer), so it ends on time even when
    /// the cooperative pool is busy.
    /// - Returns: how many returns were still in flight when the bound passed (0 = none lost).
    @discardableResult
    package func drain(timeout: Duration) async -> Int {
        let clock = ContinuousClock()
        let limit = clock.now + timeout
        while state.withLock({ $0.statistics.pending }) > 0 && clock.now < limit {
            try? await SystemClock().sleep(for: min(.milliseconds(20), limit - clock.now))
        }
        let left = state.withLock { state -> [Task<Void, Never>] in Array(state.tasks.values) }
        for task in left { task.cancel() }
        for task in left { await task.value }
        return left.count
    }
}
