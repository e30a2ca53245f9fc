import Synchronization

/// Keeps one session per entry in flight, so a second `enqueue` for the same entry joins the
/// first session or is refused (``DuplicatePolicy``). Providers own one.
public final class SessionDeduplicator: Sendable {
    private let sessions = Mutex<[Entry: WaitingSession]>([:])

    /// Creates an empty deduplicator.
    public init() {}

    /// The session in flight for `entry` (joined), a refusal, or a new session from `make`.
    /// A session counts as in flight until it reaches a final state (blocked, closed, failed,
    /// completed).
    public func session(for entry: Entry, policy: DuplicatePolicy, make: () -> WaitingSession) throws -> WaitingSession {
        try sessions.withLock { sessions in
            if let existing = sessions[entry], !existing.state.isFinal {
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
            sessions = sessions.filter { !$0.value.state.isFinal }
            let created = make()
            sessions[entry] = created
            return created
        }
    }

    /// Sessions currently in flight.
    public var inFlightCount: Int { sessions.withLock { $0.values.filter { !$0.state.isFinal }.count } }
}
