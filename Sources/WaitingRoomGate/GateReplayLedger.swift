import Foundation
import NIOConcurrencyHelpers
import WaitingRoom

/// Remembers single-use credentials (an accepted `queueittoken`, an enqueue token's id) until
/// they expire, so a second use is seen, in this process. (proposal) The KnownUser connectors
/// accept a token as often as it is presented until its `ts`; a gate that also refuses a second
/// presentation stops a token copied out of a URL. One process only: behind several instances,
/// give the engines a shared `SingleUseLedger` instead (the SQLite store for processes on one
/// host, the PostgreSQL store for a fleet), or a token can be used once per instance.
///
/// Answers on the caller's thread (an engine asks it without leaving the event loop).
public final class GateReplayLedger: SingleUseLedger {
    struct State {
        var expiries: [String: Int64] = [:]
        var insertions = 0
    }

    /// NIO's lock (a pthread mutex), which ThreadSanitizer sees; it cannot see `Synchronization.Mutex` on Linux.
    let state = NIOLockedValueBox(State())
    /// The most ids kept; when full, the ones expired are dropped, then the soonest to expire.
    package let capacity: Int

    public init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    /// Records `id` as used until `expiresAt` (epoch seconds). Returns false when it was already
    /// recorded and has not expired at `now` (a replay).
    public func use(_ id: String, expiresAt: Int64, now: Int64) -> Bool {
        state.withLockedValue { s in
            if let until = s.expiries[id], until >= now { return false }
            if s.expiries.count >= capacity { Self.prune(&s, now: now, capacity: capacity) }
            s.expiries[id] = expiresAt
            return true
        }
    }

    /// Whether `id` was used and has not expired at `now`.
    public func wasUsed(_ id: String, now: Int64) -> Bool {
        state.withLockedValue { s in s.expiries[id].map { $0 >= now } ?? false }
    }

    /// How many ids are kept.
    package var count: Int { state.withLockedValue { $0.expiries.count } }

    static func prune(_ s: inout State, now: Int64, capacity: Int) {
        s.expiries = s.expiries.filter { $0.value >= now }
        if s.expiries.count >= capacity {
            let keep = s.expiries.sorted { $0.value > $1.value }.prefix(capacity / 2)
            s.expiries = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
    }
}
