import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization
import WaitingRoom

/// A ``StateStore`` in PostgreSQL: several instances of an app share one database, so a user
/// is enqueued once across them, a key a dead instance held is returned by another, and a pass
/// one instance got is seen by all.
///
/// Open it with ``connect(url:clock:logger:tablePrefix:maximumConnections:)``, which starts a
/// connection pool (PostgresNIO's `PostgresClient`, run by a task the store owns), checks the
/// server and creates its four tables when they are missing; ``close()`` stops
/// the pool.
///
/// Every operation is one statement, so the promises hold across instances without locks held
/// between calls:
/// - claiming held keys takes only keys whose lease lapsed (whoever their owner) and locks the
///   rows as it picks them (`FOR UPDATE SKIP LOCKED`), so no key goes to two claimers;
/// - asking for a session's lease is one `INSERT … ON CONFLICT DO UPDATE` whose row lock
///   orders the askers, with the rule of the memory store: a live lease with an unexpired pass
///   answers the pass, a live lease without a pass held by another owner answers `heldBy`, and
///   anything else (a lapsed lease, the asker's own lease, an expired pass) is the asker's.
///
/// Expiry is judged by the injected clock (the `now` of the caller), never the server's clock.
/// Dates are stored as `double precision` seconds since 1970 for the queries; the records
/// themselves (passes, held keys) read back exactly as written. The `until` of
/// ``SessionClaim/heldBy(owner:until:)`` is read from its column, so it may differ from the
/// date written by well under a microsecond.
public final class PostgresStateStore: StateStore {
    /// The pool (the benchmark borrows a connection from it).
    package let client: PostgresClient
    private let runTask: Task<Void, Never>
    /// Set by ``close()``: later calls fail with `.invalidUse` at once.
    private let closed = Atomic<Bool>(false)
    private let clock: any WaitingRoomClock
    /// The logger of the queries.
    package let logger: Logger
    /// The store's tables.
    package let schema: PostgresSchema
    /// Where the store is (the password is not part of its description).
    package let connectionString: PostgresConnectionString

    /// Shared by every instance on the database: sessions take leases.
    public var isShared: Bool { true }
    /// Kept by the server: providers journal the keys they take.
    public var isDurable: Bool { true }

    private init(
        client: PostgresClient, runTask: Task<Void, Never>, clock: any WaitingRoomClock, logger: Logger,
        schema: PostgresSchema, connectionString: PostgresConnectionString
    ) {
        self.client = client
        self.runTask = runTask
        self.clock = clock
        self.logger = logger
        self.schema = schema
        self.connectionString = connectionString
    }

    deinit { runTask.cancel() }

    /// Connects to the database at `url` and creates the store's tables if they are missing.
    ///
    /// - Parameters:
    ///   - url: `postgres://user:password@host:port/database?sslmode=disable`
    ///     (``PostgresConnectionString`` lists what it may say; `connect_timeout=SECONDS`
    ///     bounds this call, 10 s by default).
    ///   - clock: judges pass expiry.
    ///   - logger: the pool's and the queries' logger.
    ///   - tablePrefix: the start of the tables' names (letters, digits, `_`).
    ///   - maximumConnections: the size of the pool, 1 to 1000.
    /// - Throws: ``WaitingRoomError`` `.invalidConfiguration` (field `stateStore`) for a bad
    ///   URL or prefix, a server that cannot be reached, refuses the login or the database,
    ///   or does not answer within the connect timeout; never hangs longer than that.
    public static func connect(
        url: String,
        clock: any WaitingRoomClock = SystemClock(),
        logger: Logger = Logger(label: "waitingroom.postgres"),
        tablePrefix: String = "waitingroom_",
        maximumConnections: Int = 10
    ) async throws -> PostgresStateStore {
        let parsed = try PostgresConnectionString(parsing: url)
        let schema = try PostgresSchema(prefix: tablePrefix)
        guard (1...1000).contains(maximumConnections) else {
            throw WaitingRoomError.outOfRange(
                field: PostgresConnectionString.field, value: maximumConnections, range: 1...1000, unit: "connections")
        }
        let connectionConfiguration: PostgresConnection.Configuration
        do {
            connectionConfiguration = try parsed.connectionConfiguration()
        } catch {
            throw PostgresFailure.cannotConnect(parsed, error)
        }
        let client = PostgresClient(
            configuration: parsed.clientConfiguration(maximumConnections: maximumConnections), backgroundLogger: logger)
        let runTask = Task { await client.run() }
        do {
            try await withTimeout(parsed.connectTimeout, parsed) {
                try await prepare(connectionConfiguration, schema: schema, logger: logger)
            }
        } catch {
            runTask.cancel()
            await runTask.value
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            throw PostgresFailure.cannotConnect(parsed, error)
        }
        logger.debug("PostgreSQL state store ready", metadata: ["url": "\(parsed)", "tables": "\(schema.prefix)*"])
        return PostgresStateStore(client: client, runTask: runTask, clock: clock, logger: logger, schema: schema, connectionString: parsed)
    }

    /// Connects once outside the pool (so a refused connection or login is reported at once,
    /// not retried by the pool), creates the tables, and disconnects.
    private static func prepare(_ configuration: PostgresConnection.Configuration, schema: PostgresSchema, logger: Logger) async throws {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        do {
            try await withTaskCancellationHandler {
                try await schema.create(on: connection, logger: logger)
            } onCancel: {
                connection.close().whenComplete { _ in }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    /// Runs `body`, or throws `.invalidConfiguration` when it has not finished within `limit`
    /// (then `body` is cancelled, and not waited for: ``withDeadline(_:clock:onTimeout:operation:)``).
    private static func withTimeout(
        _ limit: Duration, _ url: PostgresConnectionString, _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await withDeadline(
            limit, clock: SystemClock(),
            onTimeout: {
                WaitingRoomError.invalidConfiguration(
                    field: PostgresConnectionString.field,
                    "PostgreSQL at \(url.endpoint) did not answer within \(Int(limit.seconds.rounded())) s (connect_timeout)")
            }, operation: body)
    }

    /// Stops the pool and closes its connections; later calls fail with `.invalidUse`.
    public func close() async throws {
        closed.store(true, ordering: .releasing)
        runTask.cancel()
        await runTask.value
    }

    // MARK: passes

    public func pass(vendor: String, room: RoomKey) async throws -> Pass? {
        let now = clock.now()
        return try await perform("reading a pass") {
            let rows = try await client.query(
                "SELECT pass::text FROM \(unescaped: schema.passes) WHERE vendor = \(vendor) AND scope = \(room.scope) AND room = \(room.room)",
                logger: logger)
            var found: Pass?
            for try await text in rows.decode(String.self) {
                found = try PostgresRecordCoding.decode(Pass.self, from: text, table: schema.passes)
            }
            guard let found, !found.isExpired(at: now) else { return nil }
            return found
        }
    }

    public func save(_ pass: Pass) async throws {
        try await perform("saving a pass") {
            let json = try PostgresRecordCoding.encode(pass)
            try await client.query(
                """
                INSERT INTO \(unescaped: schema.passes) (vendor, scope, room, pass, issued_at, expires_at)
                VALUES (\(pass.vendor), \(pass.room.scope), \(pass.room.room), \(json)::jsonb, \(pass.issuedAt.postgresSeconds), \(pass.expiresAt?.postgresSeconds))
                ON CONFLICT (vendor, scope, room) DO UPDATE
                SET pass = EXCLUDED.pass, issued_at = EXCLUDED.issued_at, expires_at = EXCLUDED.expires_at
                """, logger: logger
            ).drain()
        }
    }

    public func remove(vendor: String, room: RoomKey) async throws {
        try await perform("removing a pass") {
            try await client.query(
                "DELETE FROM \(unescaped: schema.passes) WHERE vendor = \(vendor) AND scope = \(room.scope) AND room = \(room.room)",
                logger: logger
            ).drain()
        }
    }

    public func all() async throws -> [Pass] {
        let now = clock.now()
        return try await perform("listing passes") {
            // `>=`: the column may round a date down; the exact test is the pass's own.
            let rows = try await client.query(
                "SELECT pass::text FROM \(unescaped: schema.passes) WHERE expires_at IS NULL OR expires_at >= \(now.postgresSeconds)",
                logger: logger)
            var passes: [Pass] = []
            for try await text in rows.decode(String.self) {
                let pass = try PostgresRecordCoding.decode(Pass.self, from: text, table: schema.passes)
                if !pass.isExpired(at: now) { passes.append(pass) }
            }
            return passes.sorted {
                ($0.issuedAt, $0.vendor, $0.room.scope, $0.room.room) < ($1.issuedAt, $1.vendor, $1.room.scope, $1.room.room)
            }
        }
    }

    // MARK: held keys

    public func recordHeldKey(_ key: HeldKey) async throws {
        try await perform("recording a held key") {
            let json = try PostgresRecordCoding.encode(key)
            try await client.query(
                """
                INSERT INTO \(unescaped: schema.heldKeys) (id, vendor, owner, lease_until, taken_at, json)
                VALUES (\(key.id), \(key.vendor), \(key.owner), \(key.leaseUntil.postgresSeconds), \(key.takenAt.postgresSeconds), \(json)::jsonb)
                ON CONFLICT (id) DO UPDATE
                SET vendor = EXCLUDED.vendor, owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until,
                    taken_at = EXCLUDED.taken_at, json = EXCLUDED.json
                """, logger: logger
            ).drain()
        }
    }

    public func removeHeldKey(id: String) async throws {
        try await perform("removing a held key") {
            try await client.query("DELETE FROM \(unescaped: schema.heldKeys) WHERE id = \(id)", logger: logger).drain()
        }
    }

    public func heldKeys() async throws -> [HeldKey] {
        try await perform("listing held keys") {
            let rows = try await client.query(
                "SELECT json::text FROM \(unescaped: schema.heldKeys) ORDER BY taken_at, id COLLATE \"C\"", logger: logger)
            return try await decodeHeldKeys(rows)
        }
    }

    public func claimHeldKeys(vendor: String?, owner: String, now: Date, leaseUntil: Date, limit: Int) async throws -> [HeldKey] {
        guard limit > 0 else { return [] }
        return try await perform("claiming held keys") {
            let leaseJSON = try PostgresRecordCoding.jsonFragment(leaseUntil)
            // The rows are locked as they are picked; rows another claimer has locked are
            // skipped, and one it claimed meanwhile no longer passes the test once re-read.
            let rows = try await client.query(
                """
                UPDATE \(unescaped: schema.heldKeys)
                SET owner = \(owner), lease_until = \(leaseUntil.postgresSeconds),
                    json = jsonb_set(jsonb_set(json, '{owner}', to_jsonb(\(owner)::text)), '{leaseUntil}', \(leaseJSON)::jsonb)
                WHERE id IN (
                    SELECT id FROM \(unescaped: schema.heldKeys)
                    WHERE (\(vendor)::text IS NULL OR vendor = \(vendor)) AND lease_until <= \(now.postgresSeconds)
                    ORDER BY taken_at, id COLLATE "C"
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED)
                RETURNING json::text
                """, logger: logger)
            return try await decodeHeldKeys(rows)
        }
    }

    public func renewLeases(owner: String, until: Date) async throws {
        try await perform("renewing leases") {
            let untilJSON = try PostgresRecordCoding.jsonFragment(until)
            try await client.query(
                """
                WITH renewed AS (
                    UPDATE \(unescaped: schema.heldKeys)
                    SET lease_until = \(until.postgresSeconds), json = jsonb_set(json, '{leaseUntil}', \(untilJSON)::jsonb)
                    WHERE owner = \(owner)
                    RETURNING 1)
                UPDATE \(unescaped: schema.sessions) SET lease_until = \(until.postgresSeconds)
                WHERE owner = \(owner) AND pass IS NULL
                """, logger: logger
            ).drain()
        }
    }

    /// Held keys from rows of one JSON column, oldest first.
    private func decodeHeldKeys(_ rows: PostgresRowSequence) async throws -> [HeldKey] {
        var keys: [HeldKey] = []
        for try await text in rows.decode(String.self) {
            keys.append(try PostgresRecordCoding.decode(HeldKey.self, from: text, table: schema.heldKeys))
        }
        return keys.sorted { ($0.takenAt, $0.id) < ($1.takenAt, $1.id) }
    }

    // MARK: session leases

    public func acquireSession(_ id: SessionLeaseID, owner: String, now: Date, until: Date) async throws -> SessionClaim {
        try await perform("asking for a session lease") {
            var binds = PostgresBindings(capacity: 7)
            binds.append(id.vendor)  // $1
            binds.append(id.room.scope)  // $2
            binds.append(id.room.room)  // $3
            binds.append(id.user)  // $4
            binds.append(owner)  // $5
            binds.append(until.postgresSeconds)  // $6
            binds.append(now.postgresSeconds)  // $7
            // Whether the asker takes the row over: the lease lapsed, it is the asker's own
            // (without a pass), or its pass expired. Otherwise the row is kept as it is (and
            // locked, so concurrent askers are answered one after the other).
            let take = "(s.lease_until <= $7 OR (s.pass IS NULL AND s.owner = $5) OR COALESCE(s.pass_expires_at <= $7, false))"
            let sql = """
                INSERT INTO \(schema.sessions) AS s (vendor, scope, room, user_id, owner, lease_until, pass, pass_expires_at)
                VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL)
                ON CONFLICT (vendor, scope, room, user_id) DO UPDATE SET
                    owner = CASE WHEN \(take) THEN EXCLUDED.owner ELSE s.owner END,
                    lease_until = CASE WHEN \(take) THEN EXCLUDED.lease_until ELSE s.lease_until END,
                    pass = CASE WHEN \(take) THEN NULL ELSE s.pass END,
                    pass_expires_at = CASE WHEN \(take) THEN NULL ELSE s.pass_expires_at END
                RETURNING owner, lease_until, pass::text
                """
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            var claim: SessionClaim?
            for try await (holder, leaseUntil, passText) in rows.decode((String, Double, String?).self) {
                if let passText {
                    // Kept: a live lease with an unexpired pass.
                    claim = .passed(try PostgresRecordCoding.decode(Pass.self, from: passText, table: schema.sessions))
                } else if holder == owner {
                    claim = .acquired
                } else {
                    claim = .heldBy(owner: holder, until: Date(postgresSeconds: leaseUntil))
                }
            }
            guard let claim else {
                throw WaitingRoomError(.invalidResponse, message: "PostgreSQL state store: asking for a session lease returned no row")
            }
            return claim
        }
    }

    public func finishSession(_ id: SessionLeaseID, owner: String, pass: Pass?, keepUntil: Date) async throws {
        try await perform("finishing a session lease") {
            if let pass {
                let json = try PostgresRecordCoding.encode(pass)
                let leaseUntil = pass.expiresAt ?? keepUntil
                try await client.query(
                    """
                    UPDATE \(unescaped: schema.sessions)
                    SET lease_until = \(leaseUntil.postgresSeconds), pass = \(json)::jsonb, pass_expires_at = \(pass.expiresAt?.postgresSeconds)
                    WHERE vendor = \(id.vendor) AND scope = \(id.room.scope) AND room = \(id.room.room) AND user_id = \(id.user) AND owner = \(owner)
                    """, logger: logger
                ).drain()
            } else {
                try await client.query(
                    """
                    DELETE FROM \(unescaped: schema.sessions)
                    WHERE vendor = \(id.vendor) AND scope = \(id.room.scope) AND room = \(id.room.room) AND user_id = \(id.user) AND owner = \(owner)
                    """, logger: logger
                ).drain()
            }
        }
    }

    // MARK: errors

    /// Runs one operation; a failure becomes `.unavailable` naming `operation` (`.invalidUse`
    /// once the store is closed).
    func perform<Result>(_ operation: String, _ body: () async throws -> Result) async throws -> Result {
        guard !closed.load(ordering: .acquiring) else { throw Self.closedError(operation) }
        do {
            return try await body()
        } catch {
            if closed.load(ordering: .acquiring), !(error is CancellationError) { throw Self.closedError(operation) }
            throw PostgresFailure.unavailable(operation, error)
        }
    }

    private static func closedError(_ operation: String) -> WaitingRoomError {
        WaitingRoomError(.invalidUse, message: "PostgreSQL state store: \(operation) after the store was closed")
    }
}
