import NIOConcurrencyHelpers

/// The bound on the connections one client address holds open to `waitingroom gate` at once, so
/// that one visitor (slow uploads, idle sockets) cannot take every `--max-connections` slot.
/// A connection counts from when it is accepted until it closes; a peer that is a trusted proxy
/// is not bounded (every visitor behind it shares its address). Over the bound the connection
/// gets a 503 and is closed.
///
/// Counted once per connection, not per request, behind NIO's lock (ThreadSanitizer sees it).
final class GateProxyClientBound: Sendable {
    /// The most connections one address may hold; 0: no bound.
    let limit: Int
    private let open = NIOLockedValueBox<[String: Int]>([:])

    init(limit: Int) { self.limit = limit }

    /// Counts a connection from `address`; false (nothing counted) when it already holds `limit`.
    func admit(_ address: String) -> Bool {
        guard limit > 0 else { return true }
        return open.withLockedValue { counts in
            let count = counts[address, default: 0]
            guard count < limit else { return false }
            counts[address] = count + 1
            return true
        }
    }

    /// Forgets a connection ``admit(_:)`` counted.
    func release(_ address: String) {
        guard limit > 0 else { return }
        open.withLockedValue { counts in
            let count = counts[address, default: 0]
            if count <= 1 { counts.removeValue(forKey: address) } else { counts[address] = count - 1 }
        }
    }
}
