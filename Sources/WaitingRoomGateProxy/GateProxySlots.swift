import Synchronization

/// The bound on the requests `waitingroom gate` forwards at once: a request takes a slot before
/// the gate engine is asked and gives it back once its answer (the upstream's body included) has
/// been sent, or its connection has gone. Over the bound the visitor gets 503 at once.
///
/// Taken and given on the connections' event loops (any of them), so the count is an atomic
/// (ThreadSanitizer sees atomics; it cannot see `Synchronization.Mutex` on Linux).
final class GateProxySlots: Sendable {
    /// The most requests in flight.
    let limit: Int
    private let inFlight = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Takes a slot; false when `limit` requests are in flight. Each `true` is paired with one ``give()``.
    func take() -> Bool {
        var count = inFlight.load(ordering: .relaxed)
        while count < limit {
            let (exchanged, original) = inFlight.weakCompareExchange(
                expected: count, desired: count + 1,
                successOrdering: .acquiringAndReleasing, failureOrdering: .relaxed)
            if exchanged { return true }
            count = original
        }
        return false
    }

    /// Gives back a slot ``take()`` returned.
    func give() { inFlight.subtract(1, ordering: .acquiringAndReleasing) }

    /// The requests in flight now.
    var count: Int { inFlight.load(ordering: .acquiring) }
}
