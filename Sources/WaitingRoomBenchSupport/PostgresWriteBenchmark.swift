import Foundation
import Logging
import PostgresNIO
import WaitingRoom
import WaitingRoomPostgres

extension PostgresStateStore {
    /// What a journal write costs next to the database's own floor: `count` calls of
    /// ``recordHeldKey(_:)``, one after the other, against `count` bare single-row `INSERT`s of
    /// the same rows (same columns and JSON, encoded beforehand) into a plain table with the same
    /// primary key, WAL-logged like the store's (each commit flushed), on one connection. One run
    /// each; writes per second. What the ratio shows is what the store adds to the database's
    /// own cost of the row: the pool's lease per statement, the key's encoding and the upsert.
    ///
    /// The store's tables get their own prefix (`wrbench_<random>_`) and are dropped afterwards.
    /// - Throws: `.invalidConfiguration` for a bad URL, an unreachable server, or a `count`
    ///   below 1.
    package static func benchmarkWrites(url: String, count: Int) async throws -> (
        storeWritesPerSecond: Double, bareInsertsPerSecond: Double
    ) {
        guard count >= 1 else {
            throw WaitingRoomError.invalidConfiguration(field: "count", "the benchmark needs at least one write, not \(count)")
        }
        let tag = String(UInt32.random(in: .min ... .max), radix: 16)
        let logger = Logger(label: "waitingroom.postgres.bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let store = try await connect(url: url, logger: logger, tablePrefix: "wrbench_\(tag)_", maximumConnections: 2)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let keys = (0..<count).map { i in
            HeldKey(
                vendor: "bench", room: RoomKey(scope: "bench", room: "room"), key: "key-\(i)", details: ["node": "n1", "mode": "1"],
                takenAt: start.addingTimeInterval(Double(i) / 1000), expiresAt: start.addingTimeInterval(600), owner: "bench-instance",
                leaseUntil: start.addingTimeInterval(30))
        }
        let rows = try keys.map { key in (key, try PostgresRecordCoding.encode(key)) }
        let timer = ContinuousClock()
        do {
            let storeStart = timer.now
            for key in keys { try await store.recordHeldKey(key) }
            let storeElapsed = timer.now - storeStart

            let table = "wrbench_\(tag)_bare"
            let bareElapsed = try await store.client.withConnection { connection in
                try await connection.query(
                    """
                    CREATE TABLE \(unescaped: table) (
                        id text PRIMARY KEY, vendor text, owner text, lease_until double precision, taken_at double precision, json jsonb)
                    """, logger: logger
                ).drain()
                let bareStart = timer.now
                for (key, json) in rows {
                    try await connection.query(
                        """
                        INSERT INTO \(unescaped: table) (id, vendor, owner, lease_until, taken_at, json)
                        VALUES (\(key.id), \(key.vendor), \(key.owner), \(key.leaseUntil.postgresSeconds), \(key.takenAt.postgresSeconds), \(json)::jsonb)
                        """, logger: logger
                    ).drain()
                }
                let elapsed = timer.now - bareStart
                try await connection.query("DROP TABLE \(unescaped: table)", logger: logger).drain()
                return elapsed
            }
            try await store.dropTables()
            try await store.close()
            return (Double(count) / max(storeElapsed.seconds, 1e-9), Double(count) / max(bareElapsed.seconds, 1e-9))
        } catch {
            try? await store.dropTables()
            try? await store.close()
            throw PostgresFailure.unavailable("the write benchmark", error)
        }
    }

    /// Drops the store's tables (the benchmark's own).
    private func dropTables() async throws {
        try await client.query(PostgresQuery(unsafeSQL: schema.dropStatement), logger: logger).drain()
    }
}
