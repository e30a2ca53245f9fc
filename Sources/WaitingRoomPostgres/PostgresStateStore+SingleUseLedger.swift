import PostgresNIO
import WaitingRoom

/// The single-use ledger in the database: table `<prefix>used_credentials (id, expires_at)` (see
/// ``PostgresSchema``), shared by every instance on the database, so a credential one instance
/// accepted is refused by all the others until it expires.
///
/// **Why a use is atomic.** ``use(_:expiresAt:now:)`` is one statement:
///
/// ```sql
/// INSERT INTO <prefix>used_credentials AS u (id, expires_at) VALUES ($1, $2)
/// ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at
/// WHERE u.expires_at < $3
/// RETURNING 1
/// ```
///
/// `INSERT … ON CONFLICT DO UPDATE` is PostgreSQL's atomic insert-or-update: whatever other
/// sessions do at the same time, it either inserts the row or finds the conflicting row and
/// locks it. Concurrent uses of one id therefore go one after the other on the unique index and
/// the row lock, and each one that waited evaluates the `WHERE` against the latest committed
/// version of the row (also under READ COMMITTED, where it may not be in its snapshot): the first
/// inserts (or takes over an expired row) and gets a row back; the others find a row that has not
/// expired, change nothing and get none. `RETURNING` gives back only rows the statement inserted
/// or updated, so "a row came back" is exactly "this call recorded the id". One statement on one
/// connection is one transaction: no lock is held between calls.
///
/// **Expiry.** `expires_at` is whole seconds since 1970 (`bigint`), judged against the caller's
/// `now`, never the server's clock. A row with `expires_at < now` counts as unused. About one use
/// in ``PostgresUsedCredentials/pruneOneIn`` (at random, so instances keep no state and share the
/// work) then deletes up to ``PostgresUsedCredentials/pruneLimit`` expired rows, oldest first,
/// through the expiry index, skipping rows other sessions have locked (`FOR UPDATE SKIP LOCKED`)
/// and re-checking the expiry on the row it deletes, so a row a concurrent use has just renewed
/// is never deleted. A failed pruning is logged at debug level and does not fail the use.
///
/// **Failures.** As every operation of the store: `.invalidUse` once the store is closed, else
/// `.unavailable` naming the operation and PostgreSQL's reason (``PostgresFailure``). Unlike the
/// other operations, a use or a look-up is also bounded in time: when it has not finished within
/// the URL's `connect_timeout` (10 s by default; a stopped server leaves the pool retrying its
/// connections for a minute before it fails its waiting queries) it throws `.unavailable` and is
/// cancelled. A use that timed out may still have been recorded: the same id is then refused
/// once, as a replay would be.
extension PostgresStateStore: SingleUseLedger {
    public func use(_ id: String, expiresAt: Int64, now: Int64) async throws -> Bool {
        let table = schema.usedCredentials
        return try await withinConnectTimeout("recording a used credential") {
            try await self.perform("recording a used credential") {
                let rows = try await self.client.query(
                    """
                    INSERT INTO \(unescaped: table) AS u (id, expires_at) VALUES (\(id), \(expiresAt))
                    ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at
                    WHERE u.expires_at < \(now)
                    RETURNING 1
                    """, logger: self.logger)
                var recorded = false
                for try await _ in rows { recorded = true }
                if PostgresUsedCredentials.prunesNow() { await self.pruneUsedCredentials(now: now) }
                return recorded
            }
        }
    }

    public func wasUsed(_ id: String, now: Int64) async throws -> Bool {
        let table = schema.usedCredentials
        return try await withinConnectTimeout("looking up a used credential") {
            try await self.perform("looking up a used credential") {
                let rows = try await self.client.query(
                    "SELECT 1 FROM \(unescaped: table) WHERE id = \(id) AND expires_at >= \(now)", logger: self.logger)
                var found = false
                for try await _ in rows { found = true }
                return found
            }
        }
    }

    /// Deletes up to ``PostgresUsedCredentials/pruneLimit`` rows that expired before `now`; a
    /// failure is logged, never thrown.
    private func pruneUsedCredentials(now: Int64) async {
        let table = schema.usedCredentials
        do {
            try await client.query(
                """
                DELETE FROM \(unescaped: table)
                WHERE id IN (
                    SELECT id FROM \(unescaped: table) WHERE expires_at < \(now)
                    ORDER BY expires_at LIMIT \(PostgresUsedCredentials.pruneLimit)
                    FOR UPDATE SKIP LOCKED)
                AND expires_at < \(now)
                """, logger: logger
            ).drain()
        } catch {
            logger.debug("PostgreSQL state store: cannot prune expired used credentials: \(PostgresFailure.reason(error))")
        }
    }

    /// Runs `body`, or throws `.unavailable` when it has not finished within the URL's
    /// `connect_timeout` (then `body` is cancelled and not waited for).
    private func withinConnectTimeout<T: Sendable>(_ operation: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T
    {
        let limit = connectionString.connectTimeout
        return try await withDeadline(
            limit, clock: SystemClock(),
            onTimeout: {
                WaitingRoomError(
                    .unavailable,
                    message:
                        "PostgreSQL state store: \(operation) failed: no answer within \(Int(limit.seconds.rounded())) s (connect_timeout)")
            }, operation: body)
    }
}

/// How the single-use ledger is pruned.
enum PostgresUsedCredentials {
    /// On average one use in this many also prunes.
    static let pruneOneIn: UInt32 = 64
    /// The most expired rows one pruning deletes.
    static let pruneLimit = 256

    /// Whether this use prunes (one in ``pruneOneIn``, at random).
    static func prunesNow() -> Bool {
        UInt32.random(in: 0..<pruneOneIn) == 0
    }
}
