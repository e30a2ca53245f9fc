import Foundation
import SQLiteNIO
import WaitingRoom
import WaitingRoomSQLite

extension SQLiteStateStore {
    /// Measures what the store adds to a write (`bench all`): `count` ``recordHeldKey(_:)``
    /// calls, one after another, against `count` bare `INSERT` statements of the same rows into
    /// a plain table (no key, no index, no JSON encoding, no actor or gate per statement) on the
    /// same connection, with the same settings (WAL, `synchronous=NORMAL`), in one run.
    ///
    /// Each write is its own transaction, as in use. Opens (or creates) the database at `path`;
    /// use a scratch file: the benchmark's rows and table are removed afterwards, but the file
    /// is left for the caller to delete.
    package static func benchmarkWrites(path: String, count: Int) async throws -> (
        storeWritesPerSecond: Double, bareInsertsPerSecond: Double
    ) {
        let store = try await SQLiteStateStore.open(path: path)
        do {
            let result = try await store.measureWrites(count: max(count, 1))
            try await store.close()
            return result
        } catch {
            try? await store.close()
            throw error
        }
    }

    private func measureWrites(count: Int) async throws -> (storeWritesPerSecond: Double, bareInsertsPerSecond: Double) {
        let owner = "benchmark-\(UUID().uuidString)"
        let start = Date()
        let keys = (0..<count).map { i in
            HeldKey(
                vendor: "benchmark", room: RoomKey(scope: "benchmark", room: "benchmark"), key: "\(owner)-\(i)", details: ["node": "n1"],
                takenAt: start, expiresAt: start.addingTimeInterval(60), owner: owner, leaseUntil: start.addingTimeInterval(30))
        }
        let rows = try keys.map { try records.heldKeyBinds($0) }
        let clock = ContinuousClock()

        let storeStarted = clock.now
        for key in keys { try await recordHeldKey(key) }
        let storeTime = (clock.now - storeStarted).seconds

        let bareTime = try await withDatabase("run the write benchmark") { db in
            _ = try await db.query(
                """
                CREATE TABLE IF NOT EXISTS benchmark_bare_inserts (
                    id TEXT, vendor TEXT, owner TEXT, lease_until REAL, taken_at REAL, record TEXT)
                """)
            let started = clock.now
            for row in rows {
                _ = try await db.query(
                    """
                    INSERT INTO benchmark_bare_inserts (id, vendor, owner, lease_until, taken_at, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                    """, row)
            }
            let elapsed = (clock.now - started).seconds
            _ = try await db.query("DROP TABLE benchmark_bare_inserts")
            _ = try await db.query("DELETE FROM held_keys WHERE owner = ?1", [.text(owner)])
            return elapsed
        }
        return (Double(count) / max(storeTime, 1e-9), Double(count) / max(bareTime, 1e-9))
    }
}
