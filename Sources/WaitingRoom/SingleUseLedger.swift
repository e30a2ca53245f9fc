/// Where single-use credentials are remembered until they expire, so a second use is seen: a
/// gate's accepted `queueittoken`, an enqueue token's id. Shared by every instance that uses the
/// same store (a token accepted by one is refused by the others).
///
/// Implementations: the gate's in-process `GateReplayLedger` (one process), the SQLite store (one
/// host, several processes on one file) and the PostgreSQL store (a fleet on one database).
///
/// Promises every implementation keeps:
/// - ``use(_:expiresAt:now:)`` is atomic: of several uses of one id at once, in one process or
///   many, exactly one gets `true` while the id has not expired;
/// - an id whose expiry is before `now` counts as unused (it may be used again);
/// - a store that cannot answer throws (the caller's policy decides: open or closed).
public protocol SingleUseLedger: Sendable {
    /// Records `id` as used until `expiresAt` (epoch seconds). Returns false when it was
    /// already recorded with an expiry at or after `now` (a replay).
    func use(_ id: String, expiresAt: Int64, now: Int64) async throws -> Bool
    /// Whether `id` was used and has not expired at `now` (nothing is recorded).
    func wasUsed(_ id: String, now: Int64) async throws -> Bool
}
