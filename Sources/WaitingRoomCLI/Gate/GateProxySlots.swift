import Synchronization

/// The bound on the requests `waitingroom gate` forwards at once: a request takes a slot before
/// the gate engine is asked and gives it back once its answer (the upstream's body included) has
/// been sent, or its connection has gone. Over the bound the visitor gets 503 at once.
///
/// Taken and given on the connections' event loops (any of them), so the count is behind a lock.
final class GateProxySlots: Sendable {
    /// The most requests in flight.
    let limit: Int
    private let inFlight = Mutex(0)

    init(limit: Int) { self.limit = limit }

    /// Takes a slot; false when `limit` requests are in flight. Each `true` is paired with one ``give()``.
    func take() -> Bool {
        inFlight.withLock { count -> Bool in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Gives back a slot ``take()`` returned.
    func give() { inFlight.withLock { $0 -= 1 } }

    /// The requests in flight now.
    var count: Int { inFlight.withLock { $0 } }
}
