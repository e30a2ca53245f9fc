import Logging
import PostgresNIO
import WaitingRoom

/// The tables of a ``PostgresStateStore`` and the statements that create them.
///
/// Four tables, named with a prefix (default `waitingroom_`) so several apps, or tests, can
/// share a database:
/// - `passes`: one row per vendor and room, the pass as JSON, `issued_at` and `expires_at`;
/// - `held_keys`: the journal of keys taken from vendors' servers, by id, with the owner and
///   lease the claims query reads;
/// - `sessions`: the session leases, by vendor, room and user, with the pass a session ended
///   with;
/// - `used_credentials`: the single-use ledger (``SingleUseLedger``): an id and, as a `bigint`
///   of whole seconds since 1970, when it expires; indexed by expiry so expired rows are pruned
///   a bounded batch at a time.
///
/// Dates are `double precision` seconds since 1970. The JSON (`jsonb`) is the record as the
/// SDK encodes it and is what is read back; the other columns are copies for the queries.
/// Creating the tables is idempotent and serialized across instances by a transaction-scoped
/// advisory lock, so instances starting at once do not race on `CREATE TABLE IF NOT EXISTS`.
package struct PostgresSchema: Sendable, Hashable {
    /// The table of passes (quoted-safe: validated identifier).
    let passes: String
    /// The journal of held keys.
    let heldKeys: String
    /// The session leases.
    let sessions: String
    /// The single-use ledger: ids used until they expire.
    let usedCredentials: String
    /// The prefix the names start with.
    let prefix: String

    /// The names for `prefix`: letters, digits and `_`, starting with a letter or `_`, at most
    /// 40 characters (PostgreSQL cuts identifiers at 63 bytes; the longest name made from it,
    /// `<prefix>used_credentials_expiry`, is then 63).
    init(prefix: String) throws {
        let allowed = prefix.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        guard !prefix.isEmpty, prefix.count <= 40, allowed, let first = prefix.unicodeScalars.first, !("0"..."9").contains(first) else {
            throw WaitingRoomError.invalidConfiguration(
                field: PostgresConnectionString.field,
                "the table prefix must be 1 to 40 lower-case letters, digits or _, not starting with a digit; got \"\(prefix)\"")
        }
        self.prefix = prefix
        self.passes = prefix + "passes"
        self.heldKeys = prefix + "held_keys"
        self.sessions = prefix + "sessions"
        self.usedCredentials = prefix + "used_credentials"
    }

    /// The statements that create what is missing, in order.
    var createStatements: [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS \(passes) (
                vendor text NOT NULL,
                scope text NOT NULL,
                room text NOT NULL,
                pass jsonb NOT NULL,
                issued_at double precision NOT NULL,
                expires_at double precision,
                PRIMARY KEY (vendor, scope, room)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS \(heldKeys) (
                id text PRIMARY KEY,
                vendor text NOT NULL,
                owner text NOT NULL,
                lease_until double precision NOT NULL,
                taken_at double precision NOT NULL,
                json jsonb NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS \(heldKeys)_order ON \(heldKeys) (taken_at, id COLLATE \"C\")",
            "CREATE INDEX IF NOT EXISTS \(heldKeys)_owner ON \(heldKeys) (owner)",
            """
            CREATE TABLE IF NOT EXISTS \(sessions) (
                vendor text NOT NULL,
                scope text NOT NULL,
                room text NOT NULL,
                user_id text NOT NULL,
                owner text NOT NULL,
                lease_until double precision NOT NULL,
                pass jsonb,
                pass_expires_at double precision,
                PRIMARY KEY (vendor, scope, room, user_id)
            )
            """,
            "CREATE INDEX IF NOT EXISTS \(sessions)_owner ON \(sessions) (owner) WHERE pass IS NULL",
            """
            CREATE TABLE IF NOT EXISTS \(usedCredentials) (
                id text PRIMARY KEY,
                expires_at bigint NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS \(usedCredentials)_expiry ON \(usedCredentials) (expires_at)"
        ]
    }

    /// Drops the store's tables (benchmarks and tests that made their own).
    package var dropStatement: String { "DROP TABLE IF EXISTS \(passes), \(heldKeys), \(sessions), \(usedCredentials)" }

    /// Creates the tables that are missing, on `connection`, in one transaction holding an
    /// advisory lock named after the prefix.
    func create(on connection: PostgresConnection, logger: Logger) async throws {
        let lockName = "waitingroom-schema:" + prefix
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(lockName)))::text", logger: logger).drain()
            for statement in createStatements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).drain()
            }
        }
    }
}
