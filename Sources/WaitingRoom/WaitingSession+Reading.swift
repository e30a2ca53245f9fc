import Foundation
import Logging
import Synchronization

/// Reading a session: its event streams over the shared event log, the outcome.
extension WaitingSession {
    /// The current state.
    package var state: SessionState { core.withLock { $0.state } }

    /// The outcome, once known (nil while waiting or after a restart).
    package var currentOutcome: Outcome? { core.withLock { $0.outcome } }

    /// A new stream of this session's events; any number of streams may be read at the same time.
    ///
    /// - The **first** stream opened on a session gets everything that happened before it was
    ///   opened (from `stateChanged(idle)` on; at most the last `earlyEventLimit` events, the oldest progress
    ///   events dropped first), because a session starts waiting as soon as `enqueue` returns and
    ///   can emit before the caller subscribes.
    /// - A **later** stream starts with `stateChanged` for the current state, so it knows where
    ///   the session stands, and gets the outcome event (`passed`, `blocked`, …) replayed, and
    ///   `completed` when the key was already returned.
    ///
    /// So a loop that waits for an event never misses it, however late it subscribes.
    public var events: AsyncStream<WaitingRoomEvent> {
        let id: UInt64 = core.withLock { core in
            var prefix: [WaitingRoomEvent]
            let cursor: Int
            if let early = core.early {
                prefix = [.stateChanged(.idle, core.createdStatus)]
                core.early = nil
                // The first stream reads the early events through the log like any other.
                core.log = early.drain()
                cursor = core.logStart
            } else {
                prefix = [.stateChanged(core.state, core.status)]
                prefix.append(contentsOf: core.replay)
                cursor = core.logEnd
            }
            core.nextID += 1
            core.readers.append(Reader(id: core.nextID, prefix: prefix, cursor: cursor))
            return core.nextID
        }
        // The stream holds the subscription; when the stream is gone, so is its place in the log.
        let subscription = Subscription(session: self, id: id)
        return AsyncStream(unfolding: { await subscription.next() })
    }

    /// A stream's hold on its place in the log; dropping the last reference leaves it.
    ///
    /// It reads the log in batches: one lock of the session takes every event the stream has
    /// not read yet, and the stream's own (uncontended) lock hands them out one by one, so
    /// readers do not take the session's lock, which the emitting task needs, for every event.
    final class Subscription: Sendable {
        let session: WaitingSession
        let id: UInt64
        private let batch = Mutex<(events: [WaitingRoomEvent], next: Int)>(([], 0))

        init(session: WaitingSession, id: UInt64) {
            self.session = session
            self.id = id
        }

        func next() async -> WaitingRoomEvent? {
            let buffered: WaitingRoomEvent? = batch.withLock { batch in
                guard batch.next < batch.events.count else { return nil }
                batch.next += 1
                return batch.events[batch.next - 1]
            }
            if let buffered { return buffered }
            // Refill, keeping the buffer's capacity.
            var events = batch.withLock { batch -> [WaitingRoomEvent] in
                var taken: [WaitingRoomEvent] = []
                swap(&taken, &batch.events)
                batch.next = 0
                return taken
            }
            events.removeAll(keepingCapacity: true)
            switch session.fill(id, into: &events) {
            case .filled:
                let first = events[0]
                batch.withLock { $0 = (events, 1) }
                return first
            case .end:
                return nil
            case .wait:
                batch.withLock { $0 = (events, 0) }
                return await session.waitForNext(id)
            }
        }

        deinit { session.leave(id) }
    }

    enum Fill { case filled, end, wait }

    /// Appends every event stream `id` has not read yet to `events`.
    func fill(_ id: UInt64, into events: inout [WaitingRoomEvent]) -> Fill {
        core.withLock { core in
            guard let index = core.index(of: id) else { return .end }
            if !core.readers[index].prefix.isEmpty {
                events.append(contentsOf: core.readers[index].prefix)
                core.readers[index].prefix = []
            }
            let cursor = core.readers[index].cursor
            if cursor < core.logEnd {
                events.append(contentsOf: core.log[(cursor - core.logStart)...])
                core.readers[index].cursor = core.logEnd
                core.trimLog()
            }
            if !events.isEmpty { return .filled }
            return core.streamsFinished ? .end : .wait
        }
    }

    /// Waits for the next event of stream `id` (it has read everything so far); nil when the
    /// streams finish first or its task is cancelled.
    func waitForNext(_ id: UInt64) async -> WaitingRoomEvent? {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (waiter: Waiter) in
                parking.wrappingAdd(1, ordering: .releasing)  // see `parking`
                let ready: (WaitingRoomEvent?, Bool) = core.withLock { core in
                    guard let index = core.index(of: id) else { return (nil, true) }
                    if let event = core.take(index) { return (event, true) }
                    if core.streamsFinished { return (nil, true) }
                    core.readers[index].waiter = waiter
                    return (nil, false)
                }
                if ready.1 { waiter.resume(returning: ready.0) }
            }
        } onCancel: {
            // A cancelled stream reads nothing more (as AsyncStream's iterator): it leaves now.
            // Never resumed under the lock: a resume takes the reader task's own lock.
            leave(id)
        }
    }

    /// Stream `id` is gone: its place in the log is given up.
    func leave(_ id: UInt64) {
        let waiter: Waiter? = core.withLock { core in
            guard let index = core.index(of: id) else { return nil }
            let waiter = core.readers[index].waiter
            core.readers.remove(at: index)
            core.trimLog()
            return waiter
        }
        guard let waiter else { return }
        _ = parking.load(ordering: .acquiring)  // see `parking`
        waiter.resume(returning: nil)
    }

    /// Waits for the outcome.
    public func outcome() async -> Outcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let ready: Outcome? = core.withLock { core in
                if let outcome = core.outcome { return outcome }
                core.outcomeWaiters.append(.task(continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Calls `body` once with the outcome: at once, on the calling thread, when the session has
    /// one already; else on the task that reaches it, right after the outcome event was emitted
    /// (the moment ``outcome()`` returns to its callers). `body` must not block.
    ///
    /// For hosts that follow many sessions at once: a task suspended in ``outcome()`` keeps its
    /// async frames for as long as the user waits, a callback costs one closure.
    public func whenOutcome(_ body: @escaping @Sendable (Outcome) -> Void) {
        let ready: Outcome? = core.withLock { core in
            if let outcome = core.outcome { return outcome }
            core.outcomeWaiters.append(.callback(body))
            return nil
        }
        if let ready { body(ready) }
    }
}
