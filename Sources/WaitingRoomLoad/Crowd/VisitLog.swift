import NIOConcurrencyHelpers

/// The visits of one crowd, as they end; ``all()`` returns once every user has one.
final class VisitLog: Sendable {
    /// Behind NIO's lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    private let state: NIOLockedValueBox<(visits: [Crowd.Visit], waiter: CheckedContinuation<[Crowd.Visit], Never>?)>
    private let expected: Int

    init(expected: Int) {
        self.expected = expected
        var visits: [Crowd.Visit] = []
        visits.reserveCapacity(expected)
        state = NIOLockedValueBox((visits, nil))
    }

    func add(_ visit: Crowd.Visit) {
        let finished = state.withLockedValue { state -> (CheckedContinuation<[Crowd.Visit], Never>, [Crowd.Visit])? in
            state.visits.append(visit)
            guard state.visits.count == expected, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.visits)
        }
        if let (waiter, visits) = finished { waiter.resume(returning: visits) }
    }

    func all() async -> [Crowd.Visit] {
        await withCheckedContinuation { (continuation: CheckedContinuation<[Crowd.Visit], Never>) in
            let ready = state.withLockedValue { state -> [Crowd.Visit]? in
                if state.visits.count >= expected { return state.visits }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
