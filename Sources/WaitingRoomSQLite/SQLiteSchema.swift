import SQLiteNIO
import WaitingRoom

/// The tables of the SQLite store, their version and the connection settings.
///
/// ```
/// passes     (vendor, scope, room) → issued_at, expires_at, pass (JSON)
/// held_keys  (id)                  → vendor, owner, lease_until, taken_at, record (JSON)
/// sessions   (vendor, scope, room, user) → owner, lease_until, pass (JSON or NULL)
/// used_credentials (id)            → expires_at (INTEGER)          (since version 2)
/// ```
///
/// Times are `REAL` seconds since 1970, except `used_credentials.expires_at`: whole `INTEGER`
/// seconds since 1970, as ``SingleUseLedger`` counts them. The version lives in
/// `PRAGMA user_version` (0: a new, empty file); a file of a newer version is refused rather
/// than changed, and a file of an older version is brought up to this one when it is opened
/// (``prepare(_:path:)``: every statement is `CREATE … IF NOT EXISTS`, so running them all adds
/// just what the older version lacked).
///
/// Versions: 1 — passes, held keys, sessions; 2 — adds `used_credentials` and its expiry
/// index. (A build of version 1 refuses a file once a version-2 build has opened it.)
///
/// No secondary indexes: a key is recorded and removed, and a session lease taken and
/// finished, for every user, while the queries that would use an index (claims after a crash,
/// a process's lease renewal every third of its lease) scan tables that hold only what is in
/// flight. Each index is one more page written at every commit: without the two on
/// `held_keys` a recorded key costs about 2.2 bare inserts instead of 3.5 (`bench all`).
///
/// The one exception is `used_credentials_expiry`: that table is not only what is in flight but
/// every credential used until it expires, and pruning it (a bounded `DELETE` of the oldest
/// expired rows, see `SQLiteStateStore+SingleUseLedger.swift`) must not scan it whole. The
/// table is `WITHOUT ROWID` (the id is the b-tree's key), so a use still writes two b-trees,
/// as a rowid table with its primary-key index would without the expiry index.
enum SQLiteSchema {
    /// The version this build writes and reads.
    static let version = 2

    /// How long a statement waits for another connection's write lock before it fails. SQLite's
    /// busy handler keeps no queue: on a saturated machine one of several handles can be passed
    /// over for seconds (seen at 5 s, four claimers during a full test run).
    static let busyTimeoutMilliseconds = 15000

    /// The tables and indexes of ``version``, in order; each creates only what is missing, so
    /// the list also upgrades a file of an older version.
    static let statements = [
        """
        CREATE TABLE IF NOT EXISTS passes (
            vendor TEXT NOT NULL, scope TEXT NOT NULL, room TEXT NOT NULL,
            issued_at REAL NOT NULL, expires_at REAL, pass TEXT NOT NULL,
            PRIMARY KEY (vendor, scope, room))
        """,
        """
        CREATE TABLE IF NOT EXISTS held_keys (
            id TEXT NOT NULL PRIMARY KEY, vendor TEXT NOT NULL, owner TEXT NOT NULL,
            lease_until REAL NOT NULL, taken_at REAL NOT NULL, record TEXT NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS sessions (
            vendor TEXT NOT NULL, scope TEXT NOT NULL, room TEXT NOT NULL, user TEXT NOT NULL,
            owner TEXT NOT NULL, lease_until REAL NOT NULL, pass TEXT,
            PRIMARY KEY (vendor, scope, room, user))
        """,
        // version 2
        """
        CREATE TABLE IF NOT EXISTS used_credentials (
            id TEXT NOT NULL PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS used_credentials_expiry ON used_credentials (expires_at)"
    ]

    /// Sets up a fresh connection: a bounded wait for other connections' locks, write-ahead
    /// logging (readers never block the writer, and a process that dies loses nothing it
    /// committed) and the sync level. Returns the journal mode SQLite settled on ("wal" unless
    /// the file system cannot share memory between processes).
    static func configure(_ db: SQLiteConnection, synchronous: SQLiteStateStore.Synchronous) async throws -> String {
        // Replaces sqlite-nio's own busy handler, which retries for ever.
        _ = try await db.query("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)")
        let mode = try await db.query("PRAGMA journal_mode = WAL").first?.column("journal_mode")?.string ?? "unknown"
        _ = try await db.query("PRAGMA synchronous = \(synchronous.rawValue)")
        // A small page cache (512 KiB, SQLite's default is 2 MiB): the journal's rows are written
        // once and read back only after a crash, so a large cache only adds to the process.
        _ = try await db.query("PRAGMA cache_size = -512")
        return mode.lowercased()
    }

    /// What `PRAGMA quick_check` finds wrong with the file (empty: it is sound).
    static func quickCheck(_ db: SQLiteConnection) async throws -> [String] {
        let rows = try await db.query("PRAGMA quick_check")
        let lines = rows.compactMap { $0.columns.first?.data.string }
        return lines == ["ok"] ? [] : (lines.isEmpty ? ["quick_check returned nothing"] : lines)
    }

    /// The tables of this store.
    static let tables = ["passes", "held_keys", "sessions", "used_credentials"]

    /// Throws when `db` is a database of another application: a file of version 0 (not yet
    /// this store's) that has tables of its own. Nothing is written to it (no WAL switch, no
    /// tables); `path` is for the message.
    static func refuseOtherApplications(_ db: SQLiteConnection, path: String) async throws {
        guard try await userVersion(db) == 0 else { return }
        let names = try await db.query(
            "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        .compactMap { $0.column("name")?.string }
        .filter { !tables.contains($0) }
        guard !names.isEmpty else { return }
        throw WaitingRoomError(
            .invalidConfiguration,
            message:
                "state store \(path) is another application's SQLite database (tables \(names.prefix(5).joined(separator: ", "))\(names.count > 5 ? ", …" : "")); nothing was changed: give a path of its own",
            field: "stateStore")
    }

    /// The file's schema version.
    static func userVersion(_ db: SQLiteConnection) async throws -> Int {
        try await db.query("PRAGMA user_version").first?.column("user_version")?.integer.map { Int($0) } ?? 0
    }

    /// Creates the tables of a new file, or adds what an older version lacks (in one write
    /// transaction, so two processes opening it at once both find them whole), or checks the
    /// version of an existing one. `path` is for messages.
    static func prepare(_ db: SQLiteConnection, path: String) async throws {
        let found = try await userVersion(db)
        if found == version { return }
        if found > version { throw newerVersion(found, path: path) }
        _ = try await db.query("BEGIN IMMEDIATE")
        do {
            let now = try await userVersion(db)
            if now > version { throw newerVersion(now, path: path) }
            if now < version {
                for statement in statements { _ = try await db.query(statement) }
                _ = try await db.query("PRAGMA user_version = \(version)")
            }
            _ = try await db.query("COMMIT")
        } catch {
            _ = try? await db.query("ROLLBACK")
            throw error
        }
    }

    private static func newerVersion(_ found: Int, path: String) -> WaitingRoomError {
        WaitingRoomError(
            .invalidConfiguration,
            message: "state store \(path) has schema version \(found); this build reads version \(version) (a newer build wrote it)",
            field: "stateStore")
    }
}
