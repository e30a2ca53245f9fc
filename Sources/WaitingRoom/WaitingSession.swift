import Foundation
import Logging
import Synchronization

/// An opaque handle for a handler bound with ``WaitingSession/bind(_:_:)``.
public struct HandlerID: Hashable, Sendable, CustomStringConvertible {
    let value: UInt64
    public var description: String { "handler-\(value)" }
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
    public let entry: Entry
    /// The vendor id.
    public let vendorID: String
    let environment: ProviderEnvironment
    let logger: Logger
    private let engine: any WaitingSessionEngine
    private let core: Mutex<Core>

    private typealias Handler = @Sendable (WaitingRoomEvent) -> Void

    private struct Core {
        var state: SessionState = .idle
        var status: VendorStatus
        var outcome: Outcome?
        var generation = 0
        var running: Task<Void, Never>?
        var cancelRequested = false
        var streamsFinished = false
        var nextID: UInt64 = 0
        var streams: [UInt64: AsyncStream<WaitingRoomEvent>.Continuation] = [:]
        var handlers: [(id: UInt64, name: EventName?, handler: Handler)] = []
        var outcomeWaiters: [CheckedContinuation<Outcome, Never>] = []
        var completion: Task<VendorStatus, Never>?
        /// `completed` was (or is being) announced.
        var completionAnnounced = false
        /// The outcome event and `completed`, once delivered: replayed to late subscribers.
        var replay: [WaitingRoomEvent] = []
        /// Events delivered before the first stream was opened (nil once one was).
        var early: [WaitingRoomEvent]? = []
        /// Stream operations decided under the lock, carried out outside it, in order.
        var outbox: [Outgoing] = []
        /// A thread is carrying out the outbox.
        var draining = false
        /// Key returns handed to the background by ``SessionContext/returnInBackground``.
        var lateReturns = 0
        /// The streams are due to finish once the late returns end.
        var finishDeferred = false
        let createdStatus: VendorStatus
    }

    private typealias Stream = AsyncStream<WaitingRoomEvent>.Continuation

    /// A stream operation waiting in the outbox.
    private enum Outgoing {
        case yield(WaitingRoomEvent, to: [(id: UInt64, stream: Stream)])
        case finish([Stream])
    }

    /// How many events a session keeps for its first stream.
    public static let earlyEventLimit = 32

    /// Creates a session and starts waiting at once. Vendors call this from
    /// ``WaitingRoomProvider/enqueue(_:)``.
    public init(entry: Entry, engine: any WaitingSessionEngine, environment: ProviderEnvironment) {
        self.entry = entry
        self.engine = engine
        self.vendorID = engine.vendorID
        self.environment = environment
        self.logger = environment.logger(for: engine.vendorID)
        let created = VendorStatus(vendor: engine.vendorID, code: 0, message: "created")
        self.core = Mutex(Core(status: created, createdStatus: created))
        start()
    }

    // MARK: - reading

    /// The current state.
    public var state: SessionState { core.withLock { $0.state } }

    /// The outcome, once known (nil while waiting or after a restart).
    public var currentOutcome: Outcome? { core.withLock { $0.outcome } }

    /// A new stream of this session's events; any number of streams may be read at the same time.
    ///
    /// - The **first** stream opened on a session gets everything that happened before it was
    ///   opened (from `stateChanged(idle)` on; at most the last 32 events, the oldest progress
    ///   events dropped first), because a session starts waiting as soon as `enqueue` returns and
    ///   can emit before the caller subscribes.
    /// - A **later** stream starts with `stateChanged` for the current state, so it knows where
    ///   the session stands, and gets the outcome event (`passed`, `blocked`, …) replayed, and
    ///   `completed` when the key was already returned.
    ///
    /// So a loop that waits for an event never misses it, however late it subscribes.
    public var events: AsyncStream<WaitingRoomEvent> {
        let (stream, continuation) = AsyncStream<WaitingRoomEvent>.makeStream(bufferingPolicy: .unbounded)
        core.withLock { core in
            if core.early != nil {
                Self.trim(&core.early, to: Self.earlyEventLimit)
                let early = core.early ?? []
                core.early = nil
                continuation.yield(.stateChanged(.idle, core.createdStatus))
                for event in early { continuation.yield(event) }
            } else {
                continuation.yield(.stateChanged(core.state, core.status))
                for event in core.replay { continuation.yield(event) }
            }
            if core.streamsFinished {
                continuation.finish()
                return
            }
            core.nextID += 1
            core.streams[core.nextID] = continuation
        }
        // No `onTermination` that takes the lock: a stream whose reader has gone is dropped at the
        // next event (`yield` answers `.terminated`), or when the streams finish.
        return stream
    }

    /// Keeps the last `limit` events, dropping the oldest progress events first.
    private static func trim(_ events: inout [WaitingRoomEvent]?, to limit: Int) {
        guard let count = events?.count, count > limit else { return }
        var excess = count - limit
        events?.removeAll { event in
            guard excess > 0, case .progress = event else { return false }
            excess -= 1
            return true
        }
        if excess > 0 { events?.removeFirst(excess) }
    }

    /// Waits for the outcome.
    public func outcome() async -> Outcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let ready: Outcome? = core.withLock { core in
                if let outcome = core.outcome { return outcome }
                core.outcomeWaiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    // MARK: - handlers (EventflitSwift style)

    /// Calls `handler` for every event named `name` (every event when `name` is nil) and
    /// returns an id for ``unbind(_:)``. Handlers run on the emitting task, in bind order.
    @discardableResult
    public func bind(_ name: EventName?, _ handler: @escaping @Sendable (WaitingRoomEvent) -> Void) -> HandlerID {
        core.withLock { core in
            core.nextID += 1
            core.handlers.append((core.nextID, name, handler))
            return HandlerID(value: core.nextID)
        }
    }

    /// Removes one handler; returns false when the id is unknown.
    @discardableResult
    public func unbind(_ id: HandlerID) -> Bool {
        core.withLock { core in
            let before = core.handlers.count
            core.handlers.removeAll { $0.id == id.value }
            return core.handlers.count != before
        }
    }

    /// Removes every handler.
    public func unbindAll() { core.withLock { $0.handlers.removeAll() } }

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
            let task = Task<VendorStatus, Never> {
                if let pass = outcome.pass, pass.requiresCompletion {
                    return await engine.complete(pass, context: context)
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
            throw WaitingRoomError(.invalidUse, vendor: vendorID, message: "this session has ended (\(state.rawValue)); call enqueue for a new one")
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
        emitNow(.sessionRestarted(VendorStatus(vendor: vendorID, code: 0, message: "restarted by the caller")))
        start(after: previous)
    }

    // MARK: - internals

    private func start(after previous: Task<Void, Never>? = nil) {
        core.withLock { core in
            let generation = core.generation
            let engine = self.engine
            let entry = self.entry
            core.running = Task { [self] in
                await previous?.value
                emit(.stateChanged(.connecting, VendorStatus(vendor: vendorID, code: 0, message: "connecting")), generation: generation)
                let outcome = await engine.wait(for: entry, context: SessionContext(session: self, generation: generation))
                await finishRunChecked(outcome, generation: generation)
            }
        }
    }

    private func finishRunChecked(_ outcome: Outcome, generation: Int) async {
        // A user cancel that raced with admission: give the key back and report closed.
        let cancelled = core.withLock { $0.cancelRequested && $0.generation == generation }
        if cancelled, let pass = outcome.pass, pass.requiresCompletion {
            _ = await engine.complete(pass, context: SessionContext(session: self, generation: generation))
            finishRun(.closed(engine.cancelledStatus), generation: generation)
            return
        }
        finishRun(outcome, generation: generation)
    }

    private func finishRun(_ outcome: Outcome, generation: Int) {
        let waiters: [CheckedContinuation<Outcome, Never>]? = core.withLock { core in
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
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    private func finishCompletion(_ status: VendorStatus) {
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
    }

    private func finishStreams() {
        let deferred = core.withLock { core -> Bool in
            guard core.lateReturns == 0 else {
                core.finishDeferred = true
                return true
            }
            core.streamsFinished = true
            core.outbox.append(.finish(Array(core.streams.values)))
            core.streams.removeAll()
            return false
        }
        if !deferred { drainOutbox() }
    }

    /// A key return the engine handed to the background (see
    /// ``SessionContext/returnInBackground(schedule:attempt:)``): the streams stay open until it
    /// ends, and a successful return is announced as `keyReturnedLate`.
    func returnInBackground(schedule: PendingReturns.Schedule, attempt: @escaping @Sendable () async -> PendingReturns.Attempt) {
        core.withLock { $0.lateReturns += 1 }
        environment.pendingReturns.start(schedule: schedule, clock: environment.clock, attempt: attempt) { [self] status in
            if let status { emitNow(.keyReturnedLate(status)) }
            let finish = core.withLock { core -> Bool in
                core.lateReturns -= 1
                return core.lateReturns == 0 && core.finishDeferred
            }
            if finish { finishStreams() }
        }
    }

    /// Carries out the outbox outside the lock, in order; one thread at a time does it (a thread
    /// that finds another at it leaves its operations to that one).
    ///
    /// Why not under the lock: a `yield` resumes the reader's task and takes that task's status
    /// lock, and cancelling a task runs its cancellation handlers while holding that same status
    /// lock; a handler that calls into this session (`cancel()`, a stream's termination) then
    /// waits for our lock. Yielding under our lock made the two orders deadlock (found by the Lua
    /// stress test: a flow task cancelled while its session emitted).
    private func drainOutbox() {
        let claimed = core.withLock { core -> Bool in
            guard !core.draining, !core.outbox.isEmpty else { return false }
            core.draining = true
            return true
        }
        guard claimed else { return }
        while true {
            let batch: [Outgoing]? = core.withLock { core in
                guard !core.outbox.isEmpty else {
                    core.draining = false
                    return nil
                }
                defer { core.outbox.removeAll(keepingCapacity: true) }
                return core.outbox
            }
            guard let batch else { return }
            var gone: [UInt64] = []
            for item in batch {
                switch item {
                case .yield(let event, let streams):
                    for (id, stream) in streams {
                        if case .terminated = stream.yield(event) { gone.append(id) }
                    }
                case .finish(let streams):
                    for stream in streams { stream.finish() }
                }
            }
            if !gone.isEmpty {
                core.withLock { core in for id in gone { core.streams.removeValue(forKey: id) } }
            }
        }
    }

    /// Emits from an engine run; dropped when the run was superseded.
    func emit(_ event: WaitingRoomEvent, generation: Int) {
        deliver(event) { $0.generation == generation }
    }

    private func emitNow(_ event: WaitingRoomEvent) { deliver(event) { _ in true } }

    private func deliver(_ event: WaitingRoomEvent, when accept: (Core) -> Bool) {
        let calls: [(Handler, WaitingRoomEvent)] = core.withLock { core in
            guard accept(core) else { return [] }
            var events = [event]
            switch event {
            case .stateChanged(let state, let status):
                guard state != core.state else { return [] }
                core.state = state
                core.status = status
            case .progress(_, let status), .queueOpened(_, let status):
                core.status = status
                if core.state == .connecting || core.state == .idle {
                    core.state = .waiting
                    events.insert(.stateChanged(.waiting, status), at: 0)
                }
            case .keyReturnedLate:
                // after the outcome: the state and its status stay as they are
                break
            default:
                core.status = event.status
            }
            switch event {
            case .passed, .disabled, .blocked, .closed, .failed, .completed, .keyReturnedLate: core.replay.append(event)
            case .stateChanged, .progress, .queueOpened, .sessionRestarted: break
            }
            if core.early != nil {
                core.early?.append(contentsOf: events)
                // trimmed in batches (amortised O(1) per event); exact when a stream takes them
                if let count = core.early?.count, count > 2 * Self.earlyEventLimit {
                    Self.trim(&core.early, to: Self.earlyEventLimit)
                }
            }
            var calls: [(Handler, WaitingRoomEvent)] = []
            let streams = core.streamsFinished || core.streams.isEmpty ? [] : core.streams.map { (id: $0.key, stream: $0.value) }
            for event in events {
                if !streams.isEmpty { core.outbox.append(.yield(event, to: streams)) }
                for bound in core.handlers where bound.name == nil || bound.name == event.name {
                    calls.append((bound.handler, event))
                }
            }
            return calls
        }
        drainOutbox()
        for (handler, event) in calls { handler(event) }
    }
}
