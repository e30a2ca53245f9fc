import Foundation
import NIOPosix
import SQLiteNIO
import Testing
import WaitingRoom
import WaitingRoomConformance
import WaitingRoomSQLite
import WaitingRoomTesting

/// The SQLite store as a ``SingleUseLedger``: real files in a fresh folder per test, several
/// handles on one file. A time limit, so a use that hangs ends the run instead of hanging it.
@Suite("SQLite single-use ledger", .timeLimit(.minutes(3)))
struct SQLiteSingleUseLedgerTests {
    /// A moment in seconds since 1970 (the ledger's unit).
    static let t0 = LedgerConformance.t0

    /// Records an issue for each of ``LedgerConformance``'s checks that fails.
    static func check(_ condition: Bool, _ message: String) { #expect(condition, Comment(rawValue: message)) }

    /// A fresh folder for one test; `body` gets the database path in it. The folder is removed
    /// afterwards.
    func inTemporaryFolder(_ body: (_ path: String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wr-ledger-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder.appendingPathComponent("state.sqlite").path)
    }

    /// Runs `body` on a connection of its own to the file at `path` (not the store's: another
    /// process, as far as SQLite's locks go).
    func withRawConnection<T>(_ path: String, _ body: (SQLiteConnection) async throws -> T) async throws -> T {
        let threads = NIOThreadPool(numberOfThreads: 1)
        threads.start()
        let db = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: threads, on: MultiThreadedEventLoopGroup.singleton.any())
        do {
            let result = try await body(db)
            try await db.close()
            try await threads.shutdownGracefully()
            return result
        } catch {
            try? await db.close()
            try? await threads.shutdownGracefully()
            throw error
        }
    }

    @Test func aSecondUseIsARefusalUntilTheIdExpires() async throws {
        try await inTemporaryFolder { path in
            // The file outlives the store: a new handle still refuses them.
            try await LedgerConformance.secondUseIsARefusalUntilExpiry(
                try await SQLiteStateStore.open(path: path), odd: "it's \"quoted\"; DROP TABLE used_credentials; -- ü 🎟",
                close: { try await $0.close() }, reopen: { try await SQLiteStateStore.open(path: path) }, check: Self.check)
        }
    }

    @Test func twoStoresOnOneFileRacingGiveEachIdToOneUseOnly() async throws {
        try await inTemporaryFolder { path in
            let a = try await SQLiteStateStore.open(path: path)
            let b = try await SQLiteStateStore.open(path: path)
            try await LedgerConformance.racingHandlesGiveEachIdToOneUseOnly(a, b, close: { try await $0.close() }, check: Self.check)
        }
    }

    @Test func expiredRowsArePrunedAsUsesGoOn() async throws {
        try await inTemporaryFolder { path in
            let store = try await SQLiteStateStore.open(path: path)
            let t0 = Self.t0
            for i in 0..<300 { #expect(try await store.use("old-\(i)", expiresAt: t0 + 10, now: t0)) }
            // Later uses prune about one time in 64, up to 256 expired rows each time: 1,280 uses
            // prune at least twice but for a chance of about 4e-8.
            for i in 0..<1280 { #expect(try await store.use("new-\(i)", expiresAt: t0 + 1000, now: t0 + 100)) }
            try await store.close()
            let (expired, live) = try await withRawConnection(path) { db in
                let expired = try await db.query(
                    "SELECT count(*) AS n FROM used_credentials WHERE expires_at < ?1", [.integer(SQLiteInt64(t0 + 100))])
                let live = try await db.query(
                    "SELECT count(*) AS n FROM used_credentials WHERE expires_at >= ?1", [.integer(SQLiteInt64(t0 + 100))])
                return (expired.first?.column("n")?.integer, live.first?.column("n")?.integer)
            }
            #expect(expired == 0, "the 300 expired ids were pruned")
            #expect(live == 1280, "no live id was")
        }
    }

    /// A file a version-1 build wrote (no `used_credentials`) is brought up to version 2 when it
    /// is opened; what it held is kept.
    @Test func aFileOfTheVersionBeforeGainsTheLedgerWhenOpened() async throws {
        try await inTemporaryFolder { path in
            try await withRawConnection(path) { db in
                _ = try await db.query("PRAGMA journal_mode = WAL")
                _ = try await db.query(
                    """
                    CREATE TABLE passes (vendor TEXT NOT NULL, scope TEXT NOT NULL, room TEXT NOT NULL,
                        issued_at REAL NOT NULL, expires_at REAL, pass TEXT NOT NULL, PRIMARY KEY (vendor, scope, room))
                    """)
                _ = try await db.query(
                    """
                    CREATE TABLE held_keys (id TEXT NOT NULL PRIMARY KEY, vendor TEXT NOT NULL, owner TEXT NOT NULL,
                        lease_until REAL NOT NULL, taken_at REAL NOT NULL, record TEXT NOT NULL)
                    """)
                _ = try await db.query(
                    """
                    CREATE TABLE sessions (vendor TEXT NOT NULL, scope TEXT NOT NULL, room TEXT NOT NULL, user TEXT NOT NULL,
                        owner TEXT NOT NULL, lease_until REAL NOT NULL, pass TEXT, PRIMARY KEY (vendor, scope, room, user))
                    """)
                _ = try await db.query("PRAGMA user_version = 1")
            }
            let clock = VirtualClock()
            let before = try await SQLiteStateStore.open(path: path, clock: clock)
            let room = RoomKey(scope: "s", room: "r")
            let pass = Pass(
                vendor: "v", room: room, credential: "c", kind: .token, issuedAt: clock.now(),
                expiresAt: clock.now().addingTimeInterval(600))
            try await before.save(pass)
            #expect(try await before.use("a", expiresAt: Self.t0 + 60, now: Self.t0))
            #expect(try await before.use("a", expiresAt: Self.t0 + 60, now: Self.t0) == false)
            try await before.close()
            let version = try await withRawConnection(path) { db in
                try await db.query("PRAGMA user_version").first?.column("user_version")?.integer
            }
            #expect(version == 2)
            let after = try await SQLiteStateStore.open(path: path, clock: clock)
            #expect(try await after.pass(vendor: "v", room: room) == pass)
            #expect(try await after.wasUsed("a", now: Self.t0))
            try await after.close()
        }
    }

    @Test func aClosedStoreThrowsAtOnce() async throws {
        try await inTemporaryFolder { path in
            try await LedgerConformance.closedHandleThrowsAtOnce(
                try await SQLiteStateStore.open(path: path), close: { try await $0.close() }, check: Self.check)
        }
    }

    /// Another process holds the file's write lock and does not let go: a use waits for it only
    /// as long as the store's busy timeout (15 s), then throws; nothing is recorded.
    @Test func aWriteLockHeldElsewhereIsAnErrorAfterTheBusyTimeoutNotAHang() async throws {
        try await inTemporaryFolder { path in
            let store = try await SQLiteStateStore.open(path: path)
            let threads = NIOThreadPool(numberOfThreads: 1)
            threads.start()
            let holder = try await SQLiteConnection.open(
                storage: .file(path: path), threadPool: threads, on: MultiThreadedEventLoopGroup.singleton.any())
            _ = try await holder.query("BEGIN IMMEDIATE")
            let timer = ContinuousClock()
            let started = timer.now
            let error = await #expect(throws: WaitingRoomError.self) { _ = try await store.use("a", expiresAt: Self.t0 + 60, now: Self.t0) }
            let elapsed = timer.now - started
            _ = try await holder.query("ROLLBACK")
            try await holder.close()
            try await threads.shutdownGracefully()
            #expect(error?.kind == .invalidConfiguration && error?.field == "stateStore", "\(String(describing: error))")
            #expect(error?.message.contains("record a used credential") == true, "\(String(describing: error))")
            // Bounded, not a hang: generous for a loaded machine.
            #expect(elapsed >= .seconds(14) && elapsed < .seconds(60), "took \(elapsed)")
            // The failed use recorded nothing: the id is still free.
            #expect(try await store.use("a", expiresAt: Self.t0 + 60, now: Self.t0))
            try await store.close()
        }
    }
}
