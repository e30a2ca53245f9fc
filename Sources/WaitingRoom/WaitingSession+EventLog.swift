import Foundation
import Logging
import Synchronization

/// Emitting: every event is stored once in the session's log and handed to the waiting streams
/// and bound handlers after the lock.
extension WaitingSession {
    /// Emits from an engine run; dropped when the run was superseded.
    func emit(_ event: WaitingRoomEvent, generation: Int) {
        deliver(event) { $0.generation == generation }
    }

    func emitNow(_ event: WaitingRoomEvent) { deliver(event) { _ in true } }

    /// What one emit hands out after the lock: woken streams and bound handlers.
    struct Delivery {
        /// `connection(connected)`, announced before a vendor answer that follows a failure.
        var reconnected: WaitingRoomEvent?
        /// The `stateChanged(waiting)` announced before the first progress or queue page.
        var before: WaitingRoomEvent?
        var woken: [(Waiter, WaitingRoomEvent)] = []
        var handlers: [BoundHandler] = []
    }

    /// Records `event` (state, replay, the early events or the log) under one lock, then wakes
    /// the streams that were waiting for it and calls the bound handlers, outside the lock.
    ///
    /// Nobody listening costs no allocation and no second lock: the state is updated and the
    /// event kept for the first stream. Streams share one log, so an event is stored once
    /// however many read it; a stream that is not waiting picks it up on its next read.
    ///
    /// Why wake outside the lock: resuming a reader takes its task's status lock, and cancelling
    /// a task runs its cancellation handlers (which take this session's lock) while holding that
    /// same status lock; doing both under our lock could deadlock (found by the Lua stress test).
    func deliver(_ event: WaitingRoomEvent, when accept: (Core) -> Bool) {
        var delivery = Delivery()
        let accepted: Bool = core.withLock { core in
            guard accept(core) else { return false }
            return core.record(event, into: &delivery)
        }
        guard accepted else { return }
        announce(event, delivery)
    }

    /// Tells the instrumentation, wakes the streams `delivery` names and calls the bound
    /// handlers: the reconnected and state events `delivery` adds first, then `event`.
    private func announce(_ event: WaitingRoomEvent, _ delivery: Delivery) {
        if let instrumentation {
            if let reconnected = delivery.reconnected { instrumentation.observe(reconnected) }
            if let before = delivery.before { instrumentation.observe(before) }
            instrumentation.observe(event)
        }
        if !delivery.woken.isEmpty {
            _ = parking.load(ordering: .acquiring)  // see `parking`
            for (waiter, next) in delivery.woken { waiter.resume(returning: next) }
        }
        guard !delivery.handlers.isEmpty else { return }
        if let reconnected = delivery.reconnected {
            for bound in delivery.handlers where bound.name == nil || bound.name == reconnected.name { bound.handler(reconnected) }
        }
        if let before = delivery.before {
            for bound in delivery.handlers where bound.name == nil || bound.name == before.name { bound.handler(before) }
        }
        for bound in delivery.handlers where bound.name == nil || bound.name == event.name { bound.handler(event) }
    }
}

extension WaitingSession.Core {
    /// Records `event` in the session's state, replay, early events or log (under the session's
    /// lock); false when it changes nothing and is dropped. `delivery` collects the events it
    /// implies (reconnected, waiting) and the streams and handlers to tell.
    mutating func record(_ event: WaitingRoomEvent, into delivery: inout WaitingSession.Delivery) -> Bool {
        if self.connection != 0 {
            switch event {
            case .progress(_, let status), .queueOpened(_, let status), .passed(_, let status), .disabled(_, let status),
                .blocked(let status):
                // The vendor answered again.
                self.connection = 0
                delivery.reconnected = .connection(.connected, status)
            default:
                break
            }
        }
        switch event {
        case .stateChanged(let state, let status):
            guard state != self.state else { return false }
            self.state = state
            self.status = status
        case .progress(_, let status), .queueOpened(_, let status):
            self.status = status
            if self.state == .connecting || self.state == .idle {
                self.state = .waiting
                delivery.before = .stateChanged(.waiting, status)
            }
        case .keyReturnedLate, .queuePageChanged, .userExited:
            // the state and its status stay as they are
            break
        case .connection(let state, _):
            let code: UInt8
            switch state {
            case .connected: code = 0
            case .reconnecting: code = 1
            case .offline: code = 2
            }
            // Each retry is news; being connected or offline again is not.
            guard code != self.connection || code == 1 else { return false }
            self.connection = code
        default:
            self.status = event.status
        }
        switch event {
        case .passed, .disabled, .blocked, .closed, .failed, .completed, .keyReturnedLate: self.replay.append(event)
        case .stateChanged, .progress, .queueOpened, .sessionRestarted, .connection, .queuePageChanged, .userExited: break
        }
        if self.early != nil {
            if let reconnected = delivery.reconnected { self.early?.append(reconnected) }
            if let before = delivery.before { self.early?.append(before) }
            self.early?.append(event)
        } else if !self.readers.isEmpty, !self.streamsFinished {
            if let reconnected = delivery.reconnected { self.log.append(reconnected) }
            if let before = delivery.before { self.log.append(before) }
            self.log.append(event)
            for index in self.readers.indices where self.readers[index].waiter != nil {
                if let waiter = self.readers[index].waiter, let next = self.take(index) {
                    self.readers[index].waiter = nil
                    delivery.woken.append((waiter, next))
                }
            }
        }
        if !self.handlers.isEmpty { delivery.handlers = self.handlers }
        return true
    }
}
