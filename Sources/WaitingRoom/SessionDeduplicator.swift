import NIOConcurrencyHelpers

/// Keeps one session per entry in flight, so a second `enqueue` for the same entry joins the
/// first session or is refused (``DuplicatePolicy``). Providers own one.
public final class SessionDeduplicator: Sendable {
    private struct State {
        var sessions: [Entry: WaitingSession] = [:]
        /// The size at which finished sessions are next swept out: twice the live count after
        /// the last sweep, so sweeping costs O(1) per `enqueue` amortised (a sweep on every call
        /// made `n` concurrent sessions cost O(n²) under the lock).
        var sweepAt = State.minimumSweep
        static let minimumSweep = 64
    }

    /// Behind NIO's lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    private let state = NIOLockedValueBox(State())

    /// Creates an empty deduplicator.
    public init() {}

    /// The session in flight for `entry` (joined), a refusal, or a new session from `make`.
    /// A session counts as in flight until it reaches a final state (blocked, closed, failed,
    /// completed).
    public func session(for entry: Entry, policy: DuplicatePolicy, make: () -> WaitingSession) throws -> WaitingSession {
        try state.withLockedValue { state in
            if let existing = state.sessions[entry], !existing.state.isFinal {
                switch policy {
                case .join:
                    return existing
                case .reject:
                    throw WaitingRoomError(
                        .invalidUse, vendor: existing.vendorID,
                        message: "a session for \(entry.room) (user \(entry.userId ?? "-")) is already in flight; "
                            + "wait for its outcome or cancel it first (duplicate policy: reject)")
                }
            }
            if state.sessions.count >= state.sweepAt {
                state.sessions = state.sessions.filter { !$0.value.state.isFinal }
                state.sweepAt = max(State.minimumSweep, state.sessions.count * 2)
            }
            let created = make()
            // A finished session leaves at once (its events and pass with it), not at the next
            // sweep: under `load`, ten thousand finished sessions stayed until the run ended.
            let id = ObjectIdentifier(created)
            if created.whenFinal({ [weak self] in self?.forget(entry, id: id) }) {
                state.sessions[entry] = created
            }
            return created
        }
    }

    /// The session in flight for `entry` (joined), a refusal, or a new session of `engine` in
    /// `environment` (under the environment's duplicate policy): a provider's `enqueue`.
    package func session(for entry: Entry, engine: some WaitingSessionEngine, environment: ProviderEnvironment) throws -> WaitingSession {
        try session(for: entry, policy: environment.duplicatePolicy) {
            WaitingSession(entry: entry, engine: engine, environment: environment)
        }
    }

    /// Drops the session for `entry` if it is still the one with `id`.
    private func forget(_ entry: Entry, id: ObjectIdentifier) {
        state.withLockedValue { state in
            if let held = state.sessions[entry], ObjectIdentifier(held) == id { state.sessions[entry] = nil }
        }
    }

    /// Sessions currently in flight.
    package var inFlightCount: Int { state.withLockedValue { $0.sessions.values.filter { !$0.state.isFinal }.count } }
}
