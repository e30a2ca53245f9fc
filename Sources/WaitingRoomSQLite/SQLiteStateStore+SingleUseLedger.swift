import SQLiteNIO
import WaitingRoom

/// The single-use ledger in the store's file: table `used_credentials (id, expires_at)` (schema
/// version 2, see ``SQLiteSchema``), shared by every handle and process on the file, so a
/// credential one of them accepted is refused by all the others until it expires.
///
/// **Why a use is atomic.** ``use(_:expiresAt:now:)`` is one statement (``SQLiteUsedCredentials/use``):
///
/// ```sql
/// INSERT INTO used_credentials (id, expires_at) VALUES (?1, ?2)
/// ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at
/// WHERE used_credentials.expires_at < ?3
/// RETURNING 1
/// ```
///
/// SQLite runs a writing statement under the database's single write lock (in WAL mode too:
/// one writer at a time, across connections and processes), and a statement outside an explicit
/// transaction is its own transaction. So the look for an existing row and the insert or update
/// happen together: of several uses of one id at once, the first to get the lock inserts (or
/// renews an expired row) and gets a row back; every later one finds a row that has not expired,
/// its `WHERE` is false, nothing changes and nothing is returned. `RETURNING` gives back only the
/// rows the statement inserted or updated, so "a row came back" is exactly "this call recorded
/// the id" (the same as `changes() = 1`, without a second statement). A use waits for another
/// connection's write lock up to the store's busy timeout (15 s), then throws; operations of one
/// store take turns through its ``SQLiteSerialGate``, like every other operation.
///
/// **Expiry.** `expires_at` is whole seconds since 1970. A row with `expires_at < now` counts as
/// unused: ``wasUsed(_:now:)`` does not see it and a use takes it over. Such rows are pruned now
/// and then: about one use in ``SQLiteUsedCredentials/pruneOneIn`` (at random, so no state is
/// kept and every process on the file takes its share) also deletes up to
/// ``SQLiteUsedCredentials/pruneLimit`` expired rows, oldest first, through the expiry index: a
/// bounded piece of work that removes several times more rows, on average, than uses add. A
/// failed pruning is logged and does not fail the use (whose row is already committed).
///
/// **Failures** are thrown as the store's other failures are: a ``WaitingRoomError`` naming what
/// failed (`.invalidUse` once the store is closed; `.invalidConfiguration`, field `stateStore`,
/// when the file cannot be used or another handle held the write lock past the busy timeout).
///
/// A damaged file that is recovered on opening keeps its passes, keys and sessions, not its used
/// credentials: after such a recovery, credentials used before it could be used once more.
extension SQLiteStateStore: SingleUseLedger {
    public func use(_ id: String, expiresAt: Int64, now: Int64) async throws -> Bool {
        try await withDatabase("record a used credential") { db in
            let recorded = try await db.query(
                SQLiteUsedCredentials.use, [.text(id), .integer(SQLiteInt64(expiresAt)), .integer(SQLiteInt64(now))])
            if SQLiteUsedCredentials.prunesNow() {
                await pruneUsedCredentials(db, now: now)
            }
            return !recorded.isEmpty
        }
    }

    public func wasUsed(_ id: String, now: Int64) async throws -> Bool {
        try await withDatabase("look up a used credential") { db in
            try await !db.query(SQLiteUsedCredentials.wasUsed, [.text(id), .integer(SQLiteInt64(now))]).isEmpty
        }
    }

    /// Deletes up to ``SQLiteUsedCredentials/pruneLimit`` rows that expired before `now`;
    /// a failure is logged, never thrown.
    private func pruneUsedCredentials(_ db: SQLiteConnection, now: Int64) async {
        do {
            _ = try await db.query(
                SQLiteUsedCredentials.prune, [.integer(SQLiteInt64(now)), .integer(SQLiteInt64(SQLiteUsedCredentials.pruneLimit))])
        } catch {
            logger.warning("state store \(path): cannot prune expired used credentials: \(error)")
        }
    }
}

/// The statements of the single-use ledger (table `used_credentials`).
enum SQLiteUsedCredentials {
    /// Records `?1` as used until `?2` unless it is recorded with an expiry at or after `?3`;
    /// returns one row when it recorded it, none for a replay.
    static let use = """
        INSERT INTO used_credentials (id, expires_at) VALUES (?1, ?2)
        ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at WHERE used_credentials.expires_at < ?3
        RETURNING 1
        """

    /// One row when `?1` is recorded with an expiry at or after `?2`.
    static let wasUsed = "SELECT 1 FROM used_credentials WHERE id = ?1 AND expires_at >= ?2"

    /// Deletes up to `?2` rows that expired before `?1`, oldest first (the expiry index bounds
    /// the work: the subquery stops after `?2` index entries).
    static let prune = """
        DELETE FROM used_credentials WHERE id IN (
            SELECT id FROM used_credentials WHERE expires_at < ?1 ORDER BY expires_at LIMIT ?2)
        """

    /// On average one use in this many also prunes.
    static let pruneOneIn: UInt32 = 64
    /// The most expired rows one pruning deletes.
    static let pruneLimit = 256

    /// Whether this use prunes (one in ``pruneOneIn``, at random).
    static func prunesNow() -> Bool {
        UInt32.random(in: 0..<pruneOneIn) == 0
    }
}
