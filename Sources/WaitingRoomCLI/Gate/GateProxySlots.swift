import Synchronization

/// The bound on the requests `waitingroom gate` forwards at once: a request takes a slot before
/// the gate engine is asked and gives it back when its answer (the upstream's body included) has
/// been sent or dropped. Over the bound the visitor gets 503 at once.
final class GateProxySlots: Sendable {
    /// The most requests in flight.
    let limit: Int
    private let inFlight = Mutex(0)

    init(limit: Int) { self.limit = limit }

    /// A slot, or nil when `limit` requests are in flight.
    func take() -> Slot? {
        let taken = inFlight.withLock { count -> Bool in
            guard count < limit else { return false }
            count += 1
            return true
        }
        return taken ? Slot(owner: self) : nil
    }

    /// The requests in flight now.
    var count: Int { inFlight.withLock { $0 } }

    fileprivate func give() { inFlight.withLock { $0 -= 1 } }

    /// One taken slot: given back when the last reference to it goes (the response body that
    /// streams the upstream's answer keeps it).
    final class Slot: Sendable {
        private let owner: GateProxySlots
        fileprivate init(owner: GateProxySlots) { self.owner = owner }
        deinit { owner.give() }
    }
}
