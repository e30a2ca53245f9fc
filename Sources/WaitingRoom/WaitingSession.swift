import Foundation
import Logging
import Synchronization

/// An opaque handle for a handler bound with ``WaitingSession/bind(_:_:)``.
package struct HandlerID: Hashable, Sendable, CustomStringConvertible {
    let value: UInt64
    package var description: String { "handler-\(value)" }
}

/// One user waiting in one room: an event stream many consumers can read, bound handlers in the
/// style of EventflitSwift (`bind` / `unbind` / `unbindAll`), the state, the outcome, and the
/// calls that end or repeat the wait.
///
/// Lifecycle: `idle → connecting → waiting → passed | disabled | blocked | closed | failed`, and
/// `passed | disabled → completed` after ``complete()``.
///
/// Safe calls, by contract:
/// - ``complete()`` twice: the second call returns the first call's status without a request.
/// - ``cancel()`` after the outcome: does nothing (a held key is returned by ``complete()``).
/// - ``restart()`` while waiting: the current wait is cancelled (its key returned), a
///   `sessionRestarted` event is emitted, and a new wait begins in the same session.
/// - Using a session that has ended (``restart()`` after `closed`, `blocked`, `failed` or
///   `completed`; ``complete()`` before passing) throws a `.invalidUse` error.
///
/// Event streams end with the outcome event, or, when the pass holds a key that must be
/// returned, with the `completed` event; when a key return failed its documented attempts and
/// is retried in the background, they end after it (with `keyReturnedLate` if it succeeded).
public final class WaitingSession: Sendable {
    /// The entry being waited for.
    package let entry: Entry
    /// The vendor id.
    package let vendorID: String
    let environment: ProviderEnvironment
    /// The vendor's logger, made when asked for (rarely: engines log through their own); a
    /// logger kept per session cost each waiting user ~250 bytes.
    var logger: Logger { environment.logger(for: vendorID) }
    let engine: any WaitingSessionEngine
    let core: Mutex<Core>
    /// Metrics and trace (nil when the environment has neither: one reference per session).
    let instrumentation: SessionInstrumentation?
    /// The hand-off of a parked stream reader's continuation, in a form ThreadSanitizer sees: a
    /// reader adds to it (releasing) before it parks its continuation in `core`, and whoever takes
    /// a parked continuation out loads it (acquiring) before resuming it. `core`'s `Mutex` already
    /// orders the two, but TSan cannot see that `Mutex` on Linux and reported the continuation's
    /// set-up against its resume. Costs one atomic add per park and one load per wake-up, none on
    /// an emit that wakes nobody.
    let parking = Atomic<Int>(0)

    typealias Handler = @Sendable (WaitingRoomEvent) -> Void
    typealias Waiter = UnsafeContinuation<WaitingRoomEvent?, Never>

    struct BoundHandler {
        var id: UInt64
        var name: EventName?
        var handler: Handler
    }

    /// One stream's place in the shared event log.
    struct Reader {
        var id: UInt64
        /// Events this stream gets before the log (its first `stateChanged`, the replay).
        var prefix: [WaitingRoomEvent]
        /// The absolute index in the log of the next event it reads.
        var cursor: Int
        /// Its task, suspended until the next event (nil while it runs).
        var waiter: Waiter?
    }

    struct Core {
        var state: SessionState = .idle
        var status: VendorStatus
        var outcome: Outcome?
        var generation = 0
        var running: Task<Void, Never>?
        var cancelRequested = false
        var streamsFinished = false
        var nextID: UInt64 = 0
        var handlers: [BoundHandler] = []
        var outcomeWaiters: [OutcomeWaiter] = []
        var completion: Task<VendorStatus, Never>?
        /// `completed` was (or is being) announced.
        var completionAnnounced = false
        /// The outcome event and `completed`, once delivered: replayed to late subscribers.
        var replay: [WaitingRoomEvent] = []
        /// Events delivered before the first stream was opened (nil once one was).
        var early: EarlyEvents? = EarlyEvents(limit: WaitingSession.earlyEventLimit)
        /// The event log every stream reads from: each event is stored once, whatever the
        /// number of streams; it keeps what the slowest stream has not read yet.
        var log: [WaitingRoomEvent] = []
        /// The absolute index of `log[0]`.
        var logStart = 0
        /// The open streams (a handful: searched in order).
        var readers: [Reader] = []
        /// Key returns handed to the background by ``SessionContext/returnInBackground``.
        var lateReturns = 0
        /// The streams are due to finish once the late returns end.
        var finishDeferred = false
        /// Runs once when the session reaches a final state (``whenFinal(_:)``).
        var whenFinal: (@Sendable () -> Void)?
        /// The connection as last announced: 0 connected (the start), 1 reconnecting, 2 offline.
        var connection: UInt8 = 0
        let createdStatus: VendorStatus

        var logEnd: Int { logStart + log.count }

        /// Drops the events every stream has read (amortised: when at least half the log is read).
        mutating func trimLog() {
            guard !log.isEmpty else { return }
            guard !readers.isEmpty else {
                logStart = logEnd
                log = []
                return
            }
            var lowest = Int.max
            for reader in readers where reader.cursor < lowest { lowest = reader.cursor }
            let read = lowest - logStart
            guard read > 0, read >= log.count / 2 else { return }
            if read == log.count {
                log.removeAll(keepingCapacity: log.capacity <= 1024)
            } else {
                log.removeFirst(read)
            }
            logStart = lowest
        }

        /// The next event for the reader at `index` (nil when it has read everything so far).
        mutating func take(_ index: Int) -> WaitingRoomEvent? {
            if !readers[index].prefix.isEmpty { return readers[index].prefix.removeFirst() }
            let cursor = readers[index].cursor
            guard cursor < logEnd else { return nil }
            let event = log[cursor - logStart]
            readers[index].cursor = cursor + 1
            if cursor - logStart + 1 >= 32 { trimLog() }
            return event
        }

        func index(of id: UInt64) -> Int? { readers.firstIndex { $0.id == id } }
    }

    /// How many events a session keeps for its first stream while nobody reads it. Small on
    /// purpose: a waiting user nobody follows (tens of thousands under `load`) should cost its
    /// key, position and timer, not a backlog of stale progress (8 events: the states, the queue
    /// page, the outcome and the latest progress).
    package static let earlyEventLimit = 8

    /// Creates a session and starts waiting at once. Vendors call this from
    /// ``WaitingRoomProvider/enqueue(_:)``.
    public init(entry: Entry, engine: any WaitingSessionEngine, environment: ProviderEnvironment) {
        self.entry = entry
        self.engine = engine
        self.vendorID = engine.vendorID
        self.environment = environment
        self.instrumentation = SessionInstrumentation(environment: environment, vendor: engine.vendorID, room: entry.room)
        let created = VendorStatus(vendor: engine.vendorID, code: 0, message: "created")
        self.core = Mutex(Core(status: created, createdStatus: created))
        start()
    }

    // MARK: - control

    /// Returns what the pass holds (a key) and ends the session with `completed`.
    ///
    /// - Returns: the vendor's status for the return (a failed return is reported in the status,
    ///   not thrown, and the session still ends).
    /// - Throws: `.invalidUse` when the session has not passed.
    @discardableResult
    public func complete() async throws -> VendorStatus {
        let plan: Task<VendorStatus, Never> = try core.withLock { core in
            if let completion = core.completion { return completion }
            guard core.state == .passed || core.state == .disabled, let outcome = core.outcome else {
                throw WaitingRoomError(
                    .invalidUse, vendor: vendorID,
                    message: "complete() needs a passed session; this one is \(core.state.rawValue)"
                        + (core.state.hasOutcome ? "" : " (use cancel() to leave the line)"))
            }
            let context = SessionContext(session: self, generation: core.generation)
            let engine = self.engine
            let vendor = vendorID
            let instrumentation = self.instrumentation
            let task = Task<VendorStatus, Never> {
                if let pass = outcome.pass, pass.requiresCompletion {
                    guard let instrumentation else { return await engine.complete(pass, context: context) }
                    return await instrumentation.traceCompletion { await engine.complete(pass, context: context) }
                }
                return VendorStatus(vendor: vendor, code: outcome.status.code, message: "nothing to return")
            }
            core.completion = task
            return task
        }
        let status = await plan.value
        finishCompletion(status)
        return status
    }

    /// Leaves the line: the wait is cancelled, any key taken is returned and the session ends
    /// with `closed` (the vendor's cancel code). After the outcome this does nothing.
    public func cancel() {
        let action: (Task<Void, Never>?, Bool) = core.withLock { core in
            guard !core.state.hasOutcome else { return (nil, false) }
            core.cancelRequested = true
            if let running = core.running { return (running, false) }
            return (nil, true)
        }
        if let running = action.0 { running.cancel() }
        if action.1 { finishRun(.closed(engine.cancelledStatus), generation: core.withLock { $0.generation }) }
    }

    /// Starts waiting again in this session. While waiting, the current wait is cancelled (its
    /// key returned) first; after passing, the held key is returned first.
    ///
    /// - Throws: `.invalidUse` when the session has ended (closed, blocked, failed, completed).
    public func restart() async throws {
        let (state, outcome) = core.withLock { ($0.state, $0.outcome) }
        if state.isFinal {
            throw WaitingRoomError(
                .invalidUse, vendor: vendorID, message: "this session has ended (\(state.rawValue)); call enqueue for a new one")
        }
        if let pass = outcome?.pass, pass.requiresCompletion {
            _ = await engine.complete(pass, context: SessionContext(session: self, generation: core.withLock { $0.generation }))
        }
        let previous: Task<Void, Never>? = core.withLock { core in
            core.generation += 1
            core.outcome = nil
            core.replay = []
            core.completion = nil
            core.completionAnnounced = false
            core.cancelRequested = false
            let previous = core.running
            core.running = nil
            return previous
        }
        previous?.cancel()
        emitNow(.sessionRestarted(engine.restartedStatus))
        start(after: previous)
    }

    // MARK: - internals

    func start(after previous: Task<Void, Never>? = nil) {
        core.withLock { core in
            let generation = core.generation
            let entry = self.entry
            let leased = environment.store.isShared && entry.userId?.isEmpty == false
            let plain = !leased && instrumentation == nil
            // Memory: this task lives as long as the user waits, and a task keeps the memory of
            // its deepest frames until it ends, so its own frame holds little: the event is built
            // in `announceConnecting`, the outcome handled in `finishRunChecked`.
            core.running = Task { [self] in
                await previous?.value
                announceConnecting(generation: generation)
                // A shared store's session lease is a separate frame, so a user waiting without
                // one pays nothing for it (the wait frame lives as long as the user waits).
                let context = SessionContext(session: self, generation: generation)
                let outcome =
                    plain
                    ? await engine.wait(for: entry, context: context)
                    : await decoratedWait(for: entry, context: context, leased: leased)
                await finishRunChecked(outcome, generation: generation)
            }
        }
    }

    @inline(never)
    func announceConnecting(generation: Int) {
        emit(.stateChanged(.connecting, VendorStatus(vendor: vendorID, code: 0, message: "connecting")), generation: generation)
    }

    func finishRunChecked(_ outcome: Outcome, generation: Int) async {
        if cancelRaced(with: outcome, generation: generation) {
            await giveBackRacedPass(outcome, generation: generation)
            return
        }
        finishRun(outcome, generation: generation)
    }

    /// A user cancel that raced with admission: the pass holds a key that must go back.
    @inline(never)
    func cancelRaced(with outcome: Outcome, generation: Int) -> Bool {
        let cancelled = core.withLock { $0.cancelRequested && $0.generation == generation }
        return cancelled && outcome.pass?.requiresCompletion == true
    }

    /// Gives back the key of a pass that came after the user cancelled, and reports closed.
    @inline(never)
    func giveBackRacedPass(_ outcome: Outcome, generation: Int) async {
        if let pass = outcome.pass {
            _ = await engine.complete(pass, context: SessionContext(session: self, generation: generation))
        }
        finishRun(.closed(engine.cancelledStatus), generation: generation)
    }

    @inline(never)
    func finishRun(_ outcome: Outcome, generation: Int) {
        let waiters: [OutcomeWaiter]? = core.withLock { core in
            guard core.generation == generation, core.outcome == nil else { return nil }
            core.outcome = outcome
            core.running = nil
            let waiters = core.outcomeWaiters
            core.outcomeWaiters = []
            return waiters
        }
        guard let waiters else { return }
        emit(.stateChanged(outcome.state, outcome.status), generation: generation)
        emit(outcome.event, generation: generation)
        let keepOpen = outcome.pass?.requiresCompletion == true
        if !keepOpen { finishStreams() }
        for waiter in waiters {
            switch waiter {
            case .task(let continuation): continuation.resume(returning: outcome)
            case .callback(let body): body(outcome)
            }
        }
        if outcome.state.isFinal { announceFinal() }
    }

    /// Registers `body` to run once, when the session reaches a final state (blocked, closed,
    /// failed, completed). Returns false, and drops `body`, when it already has.
    func whenFinal(_ body: @escaping @Sendable () -> Void) -> Bool {
        core.withLock { core in
            guard !core.state.isFinal else { return false }
            core.whenFinal = body
            return true
        }
    }

    func announceFinal() {
        let (final, body) = core.withLock { core -> (Bool, (@Sendable () -> Void)?) in
            guard core.state.isFinal else { return (false, nil) }
            defer { core.whenFinal = nil }
            return (true, core.whenFinal)
        }
        if final { instrumentation?.finish() }
        body?()
    }

    func finishCompletion(_ status: VendorStatus) {
        // Claimed under the lock: two `complete()` calls racing past the same completion task
        // must announce `completed` once (checking the state was not enough: both could see
        // `passed` before either announced; found by the conformance suite's completeOnce).
        let first = core.withLock { core -> Bool in
            guard !core.completionAnnounced else { return false }
            core.completionAnnounced = true
            return true
        }
        guard first else { return }
        emitNow(.stateChanged(.completed, status))
        emitNow(.completed(status))
        finishStreams()
        announceFinal()
    }

    func finishStreams() {
        let waiters: [Waiter]? = core.withLock { core in
            guard core.lateReturns == 0 else {
                core.finishDeferred = true
                return nil
            }
            core.streamsFinished = true
            // A stream that waits has read everything: it ends now; the others end once they
            // have read what is left in the log.
            var waiters: [Waiter] = []
            for index in core.readers.indices {
                if let waiter = core.readers[index].waiter {
                    waiters.append(waiter)
                    core.readers[index].waiter = nil
                }
            }
            return waiters
        }
        guard let waiters, !waiters.isEmpty else { return }
        _ = parking.load(ordering: .acquiring)  // see `parking`
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// A key return the engine handed to the background (see
    /// ``SessionContext/returnInBackground(schedule:attempt:)``): the streams stay open until it
    /// ends, and a successful return is announced as `keyReturnedLate`.
    func returnInBackground(schedule: PendingReturns.Schedule, attempt: @escaping @Sendable () async -> PendingReturns.Attempt) {
        core.withLock { $0.lateReturns += 1 }
        let pending = environment.pendingReturns
        let metrics = environment.metrics
        metrics?.keyReturn(vendor: vendorID, result: "started", pending: pending.pendingCount + 1)
        pending.start(schedule: schedule, clock: environment.clock, attempt: attempt) { [self] status in
            metrics?.keyReturn(vendor: vendorID, result: status != nil ? "late" : "gave_up", pending: max(0, pending.pendingCount - 1))
            if let status { emitNow(.keyReturnedLate(status)) }
            let finish = core.withLock { core -> Bool in
                core.lateReturns -= 1
                return core.lateReturns == 0 && core.finishDeferred
            }
            if finish { finishStreams() }
        }
    }
}

/// Who waits for a session's outcome: a task suspended in ``WaitingSession/outcome()`` or a
/// callback from ``WaitingSession/whenOutcome(_:)``.
enum OutcomeWaiter {
    case task(CheckedContinuation<Outcome, Never>)
    case callback(@Sendable (Outcome) -> Void)
}
