import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO
import WaitingRoom

/// A ``StateStore`` in one SQLite file: passes, the journal of held keys and session leases,
/// crash-safe on one machine (the default when an app or the CLI asks for durability).
///
/// ```swift
/// let store = try await SQLiteStateStore.open(path: "/var/lib/app/waitingroom.sqlite")
/// defer { Task { try await store.close() } }
/// ```
///
/// **Durability.** The file is in write-ahead-log mode (`PATH-wal`, `PATH-shm` beside it)
/// with `synchronous=NORMAL` by default: whatever a call committed survives the process dying
/// at any point (a crash, `kill -9`), and another handle or process sees it at once. A power
/// loss or kernel crash may lose the last transactions (never corrupt the file); ask for
/// ``Synchronous/full`` to sync the log at every commit and keep those too, at the cost of
/// one disk flush per write. The file (and so its log) is created with mode 0600.
///
/// **Several handles.** Any number of stores (in one or several processes on the same
/// machine) may open the same file: reads never wait, writes take turns (a write waits up to
/// 15 s for another's lock), and the claims of held keys and session leases run in
/// `BEGIN IMMEDIATE` transactions, so two claimers never both win. ``isShared`` is still
/// false: the file is local to one machine (use the PostgreSQL store to share state between
/// machines; do not put the file on a network file system).
///
/// **Threads.** Every SQLite call runs on the store's own thread (a one-thread
/// `NIOThreadPool`, started when the store opens and stopped by ``close()``), never on Swift's
/// cooperative pool or an event loop; results come back through an event loop of
/// `eventLoopGroup` (the NIO singleton by default) and then to this actor. A thread of its own
/// means that waiting for another handle's write lock blocks only this store, never a thread
/// another store needs in order to finish and release that lock. Operations of one store run
/// one at a time, in the order they were asked for.
///
/// **Someone else's file.** A file at `path` that is not a store file is refused
/// (``WaitingRoomError/Kind/invalidConfiguration``, field `stateStore`) and left as it is: one
/// that does not start as a SQLite database does (a document, a typo), and a SQLite database
/// whose tables are not this store's (another application's).
///
/// **Damage.** When the file cannot be opened as a database or `PRAGMA quick_check` finds it
/// damaged (garbage, a truncated file), the store does not fail: it reads every row it can
/// from each table, moves the file and its log aside as `PATH.corrupt-EPOCH`, creates a fresh
/// file with the rows it saved and reports it all in ``problems`` and a logged warning. Only
/// when that fails does opening throw (``WaitingRoomError/Kind/invalidConfiguration``, field
/// `stateStore`). Damage found later, by a statement on an open store, is thrown; the next
/// opening recovers. Other processes that still have the damaged file open keep using the
/// moved file: recover with every other handle closed.
public actor SQLiteStateStore: StateStore {
    /// How hard a commit pushes the log to the disk.
    public enum Synchronous: String, Sendable {
        /// `synchronous=NORMAL`: no flush at each commit. Survives a process crash; a power loss
        /// may lose the last commits (the file stays sound). The default.
        case normal = "NORMAL"
        /// `synchronous=FULL`: the log is flushed at every commit. Survives a power loss too.
        case full = "FULL"
    }

    /// The database file.
    package nonisolated let path: String
    /// What went wrong while opening the file (empty when it was sound): damage found, what was
    /// kept of it and where the damaged file went.
    package internal(set) var problems: [String] = []

    let clock: any WaitingRoomClock
    let logger: Logger
    let synchronous: Synchronous
    package let records = SQLiteRecords()
    private let eventLoopGroup: any EventLoopGroup
    /// The one thread that touches the SQLite handle.
    private let threadPool = NIOThreadPool(numberOfThreads: 1)
    private var threadStarted = false
    private var state = State.idle
    private var gate = SQLiteSerialGate()
    private var journalBatch = SQLiteJournalBatch()

    private enum State {
        case idle
        case open(SQLiteConnection)
        case closed
    }

    /// Creates a store for the file at `path` (created with mode 0600 if missing), judging pass
    /// expiry by `clock`. The file is opened by the first operation; ``open(path:clock:logger:synchronous:eventLoopGroup:)``
    /// opens it at once, so damage is found and reported before the store is used.
    package init(
        path: String, clock: any WaitingRoomClock = SystemClock(), logger: Logger = Logger(label: "waitingroom.sqlite"),
        synchronous: Synchronous = .normal, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.path = path
        self.clock = clock
        self.logger = logger
        self.synchronous = synchronous
        self.eventLoopGroup = eventLoopGroup
    }

    /// Opens (creating it if missing) the store at `path`: checks the file, recovers from
    /// damage (see ``problems``) and creates the tables. Throws
    /// ``WaitingRoomError/Kind/invalidConfiguration`` (field `stateStore`) when the file cannot
    /// be used: a missing folder, no permission, a newer schema, damage that cannot be moved
    /// aside.
    public static func open(
        path: String, clock: any WaitingRoomClock = SystemClock(), logger: Logger = Logger(label: "waitingroom.sqlite"),
        synchronous: Synchronous = .normal, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> SQLiteStateStore {
        let store = SQLiteStateStore(path: path, clock: clock, logger: logger, synchronous: synchronous, eventLoopGroup: eventLoopGroup)
        try await store.prepare()
        return store
    }

    /// Opens the file now if no operation has yet (see ``open(path:clock:logger:synchronous:eventLoopGroup:)``).
    package func prepare() async throws {
        try await withDatabase("open") { _ in }
    }

    /// One machine: nothing is shared between machines (several processes on this one may
    /// still use the file together).
    public nonisolated var isShared: Bool { false }
    /// The file outlives the process.
    public nonisolated var isDurable: Bool { true }

    // MARK: - passes

    public func pass(vendor: String, room: RoomKey) async throws -> Pass? {
        try await withDatabase("read a pass") { db in
            let key = SQLiteRecords.roomBinds(vendor: vendor, room: room)
            guard let text = try await db.query(SQLiteRecords.selectPass, key).first?.column("pass")?.string else { return nil }
            guard let pass = decode(Pass.self, text, what: "pass of \(vendor) \(room)") else { return nil }
            if pass.isExpired(at: clock.now()) {
                // Only the version read: another handle may have saved a new pass since.
                _ = try await db.query(
                    "DELETE FROM passes WHERE vendor = ?1 AND scope = ?2 AND room = ?3 AND pass = ?4", key + [.text(text)])
                return nil
            }
            return pass
        }
    }

    public func save(_ pass: Pass) async throws {
        try await withDatabase("save a pass") { db in
            _ = try await db.query(SQLiteRecords.insertPass, try records.passBinds(pass))
        }
    }

    public func remove(vendor: String, room: RoomKey) async throws {
        try await withDatabase("remove a pass") { db in
            _ = try await db.query(
                "DELETE FROM passes WHERE vendor = ?1 AND scope = ?2 AND room = ?3",
                SQLiteRecords.roomBinds(vendor: vendor, room: room))
        }
    }

    public func all() async throws -> [Pass] {
        try await withDatabase("list passes") { db in
            let now = clock.now()
            let passes = try await db.query("SELECT pass FROM passes").compactMap { row in
                row.column("pass")?.string.flatMap { decode(Pass.self, $0, what: "a pass") }
            }
            return passes.filter { !$0.isExpired(at: now) }.sorted(by: Pass.sqliteStoreOrder)
        }
    }

    // MARK: - held keys

    public func recordHeldKey(_ key: HeldKey) async throws {
        try await commitInGroup(.record(key))
    }

    public func removeHeldKey(id: String) async throws {
        try await commitInGroup(.remove(id: id))
    }

    /// Queues a journal write for the next group commit (see ``SQLiteJournalBatch``) and returns
    /// once it is committed.
    private func commitInGroup(_ write: SQLiteJournalWrite) async throws {
        if journalBatch.lead() {
            defer { if journalBatch.handOff() { Task { await self.drainJournal() } } }
            try await withDatabase("write the key journal") { db in try await apply(write, db) }
            return
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            if journalBatch.append(write, continuation) {
                Task { await self.drainJournal() }
            }
        }
    }

    /// Commits the queued journal writes, a group at a time, until none is left. A group that
    /// fails is written again one write at a time, so only the writes that fail are answered
    /// with an error.
    private func drainJournal() async {
        while let group = journalBatch.take() {
            do {
                try await withDatabase("write the key journal", transaction: group.count > 1) { db in
                    for entry in group { try await apply(entry.write, db) }
                }
                for entry in group { entry.continuation.resume() }
            } catch {
                guard group.count > 1 else {
                    group.first?.continuation.resume(throwing: error)
                    continue
                }
                for entry in group {
                    do {
                        try await withDatabase("write the key journal") { db in try await apply(entry.write, db) }
                        entry.continuation.resume()
                    } catch {
                        entry.continuation.resume(throwing: error)
                    }
                }
            }
        }
    }

    private func apply(_ write: SQLiteJournalWrite, _ db: SQLiteConnection) async throws {
        switch write {
        case .record(let key):
            _ = try await db.query(SQLiteRecords.insertHeldKey, try records.heldKeyBinds(key))
        case .remove(let id):
            _ = try await db.query("DELETE FROM held_keys WHERE id = ?1", [.text(id)])
        }
    }

    public func heldKeys() async throws -> [HeldKey] {
        try await withDatabase("list held keys") { db in
            try await db.query("SELECT record, owner, lease_until FROM held_keys ORDER BY taken_at, id").compactMap { row in
                heldKey(row)
            }.sorted(by: HeldKey.sqliteJournalOrder)
        }
    }

    public func claimHeldKeys(vendor: String?, owner: String, now: Date, leaseUntil: Date, limit: Int) async throws -> [HeldKey] {
        guard limit > 0 else { return [] }
        return try await withDatabase("claim held keys", transaction: true) { db in
            let candidates = try await db.query(
                """
                SELECT record, owner, lease_until FROM held_keys WHERE (?1 IS NULL OR vendor = ?1) AND lease_until <= ?2
                ORDER BY taken_at, id LIMIT ?3
                """,
                [vendor.map { .text($0) } ?? .null, SQLiteRecords.seconds(now), .integer(SQLiteInt64(limit))])
            var claimed: [HeldKey] = []
            for row in candidates {
                guard var key = heldKey(row), key.sqliteClaimable(vendor: vendor, now: now) else { continue }
                key.owner = owner
                key.leaseUntil = leaseUntil
                _ = try await db.query(SQLiteRecords.updateHeldKey, try records.heldKeyLeaseBinds(key))
                claimed.append(key)
            }
            return claimed.sorted(by: HeldKey.sqliteJournalOrder)
        }
    }

    public func renewLeases(owner: String, until: Date) async throws {
        // One statement however many keys the owner holds: the columns carry the lease, and
        // ``heldKey(_:)`` reads them over the record's copy.
        try await withDatabase("renew leases", transaction: true) { db in
            _ = try await db.query("UPDATE held_keys SET lease_until = ?1 WHERE owner = ?2", [SQLiteRecords.seconds(until), .text(owner)])
            _ = try await db.query(
                "UPDATE sessions SET lease_until = ?1 WHERE owner = ?2 AND pass IS NULL",
                [SQLiteRecords.seconds(until), .text(owner)])
        }
    }

    /// A journal row's key: its record, with the owner and lease of its columns (a renewal
    /// updates only the columns).
    private func heldKey(_ row: SQLiteRow) -> HeldKey? {
        guard var key = row.column("record")?.string.flatMap({ decode(HeldKey.self, $0, what: "a held key") }) else { return nil }
        if let owner = row.column("owner")?.string { key.owner = owner }
        if let lease = SQLiteRecords.date(row.column("lease_until")) { key.leaseUntil = lease }
        return key
    }

    // MARK: - session leases

    public func acquireSession(_ id: SessionLeaseID, owner: String, now: Date, until: Date) async throws -> SessionClaim {
        try await withDatabase("acquire a session lease", transaction: true) { db in
            var existing: SQLiteSessionRow?
            if let row = try await db.query(SQLiteRecords.selectSession, SQLiteRecords.sessionBinds(id)).first {
                do {
                    existing = try records.sessionRow(row)
                } catch {
                    // An unreadable lease holds nobody: it is replaced.
                    logger.warning("state store \(path): session lease \(id) is unreadable (\(error)); replacing it")
                }
            }
            let (claim, updated) = SQLiteSessionRow.claim(existing, id: id, owner: owner, now: now, until: until)
            if let updated, updated != existing {
                _ = try await db.query(SQLiteRecords.insertSession, try records.sessionRowBinds(updated))
            }
            return claim
        }
    }

    public func finishSession(_ id: SessionLeaseID, owner: String, pass: Pass?, keepUntil: Date) async throws {
        try await withDatabase("finish a session lease") { db in
            let key = SQLiteRecords.sessionBinds(id)
            if let pass {
                _ = try await db.query(
                    "UPDATE sessions SET lease_until = ?6, pass = ?7 WHERE vendor = ?1 AND scope = ?2 AND room = ?3 AND user = ?4 AND owner = ?5",
                    key + [.text(owner), SQLiteRecords.seconds(pass.expiresAt ?? keepUntil), .text(try records.text(pass))])
            } else {
                _ = try await db.query(
                    "DELETE FROM sessions WHERE vendor = ?1 AND scope = ?2 AND room = ?3 AND user = ?4 AND owner = ?5",
                    key + [.text(owner)])
            }
        }
    }

    // MARK: - closing

    /// Closes the connection and stops the store's thread; the store is not used after this.
    public func close() async throws {
        await enter()
        defer { gate.leave() }
        let previous = state
        state = .closed
        var failure: (any Error)?
        if case .open(let db) = previous {
            do { try await db.close() } catch { failure = error }
        }
        if threadStarted {
            threadStarted = false
            try await threadPool.shutdownGracefully()
        }
        if let failure { throw storeError("close", failure) }
    }

    deinit {
        // A store dropped without `close()`: close the connection on its thread, then stop it.
        if case .open(let db) = state {
            let pool = threadPool
            db.close().whenComplete { _ in pool.shutdownGracefully { _ in } }
        } else if threadStarted {
            threadPool.shutdownGracefully { _ in }
        }
    }

    // MARK: - running operations

    /// Runs `body` with the open connection, alone (see ``SQLiteSerialGate``), inside a
    /// `BEGIN IMMEDIATE` transaction when asked (committed when `body` returns, rolled back
    /// when it throws). Errors are thrown as ``WaitingRoomError`` naming `what` failed.
    package func withDatabase<T>(_ what: String, transaction: Bool = false, _ body: (SQLiteConnection) async throws -> T) async throws -> T
    {
        await enter()
        defer { gate.leave() }
        let db = try await connection()
        do {
            if transaction { _ = try await db.query("BEGIN IMMEDIATE") }
            do {
                let result = try await body(db)
                if transaction { _ = try await db.query("COMMIT") }
                return result
            } catch {
                if transaction { _ = try? await db.query("ROLLBACK") }
                throw error
            }
        } catch {
            throw storeError(what, error)
        }
    }

    /// Waits for the gate (see ``SQLiteSerialGate``).
    private func enter() async {
        if !gate.tryEnter() {
            await withCheckedContinuation { gate.wait($0) }
        }
    }

    /// The open connection, opening the file on first use.
    private func connection() async throws -> SQLiteConnection {
        switch state {
        case .open(let db):
            return db
        case .closed:
            throw WaitingRoomError(.invalidUse, message: "state store \(path) is closed", field: "stateStore")
        case .idle:
            let db = try await openChecked()
            state = .open(db)
            return db
        }
    }

    /// What opening found.
    private enum Opening {
        case sound(SQLiteConnection)
        case damaged(SQLiteConnection?, String)
    }

    /// Opens the file, checks it and creates the tables; recovers from damage.
    private func openChecked() async throws -> SQLiteConnection {
        let opening: Opening
        let db: SQLiteConnection
        do {
            db = try await connect()
        } catch  where SQLiteSalvage.isDamage(error) {
            return try await recover(damaged: nil, reason: "\(error)")
        }
        do {
            // before anything is written (WAL mode is a lasting change to a file)
            try await SQLiteSchema.refuseOtherApplications(db, path: path)
            try await configure(db)
            let issues = try await SQLiteSchema.quickCheck(db)
            if issues.isEmpty {
                try await SQLiteSchema.prepare(db, path: path)
                opening = .sound(db)
            } else {
                opening = .damaged(db, issues.prefix(3).joined(separator: "; "))
            }
        } catch  where SQLiteSalvage.isDamage(error) {
            opening = .damaged(db, "\(error)")
        } catch {
            try? await db.close()
            throw storeError("open", error)
        }
        switch opening {
        case .sound(let db): return db
        case .damaged(let db, let reason): return try await recover(damaged: db, reason: reason)
        }
    }

    /// Opens a fresh file after damage was moved aside: no second recovery.
    func openFresh() async throws -> SQLiteConnection {
        let db = try await connect()
        do {
            try await configure(db)
            try await SQLiteSchema.prepare(db, path: path)
            return db
        } catch {
            try? await db.close()
            throw storeError("create a fresh database", error)
        }
    }

    /// Creates the file (mode 0600) if missing and connects to it on the store's thread.
    /// Throws SQLite's error when it is damage, else a ``WaitingRoomError``.
    private func connect() async throws -> SQLiteConnection {
        if !threadStarted {
            threadPool.start()
            threadStarted = true
        }
        if let why = SQLiteFiles.foreignContent(path) {
            throw WaitingRoomError(
                .invalidConfiguration,
                message:
                    "state store \(path) is not a store file (\(why)); nothing was changed: give a path of its own, or move the file away",
                field: "stateStore")
        }
        do {
            try SQLiteFiles.createIfMissing(path)
        } catch {
            throw storeError("open", error)
        }
        do {
            return try await SQLiteConnection.open(
                storage: .file(path: path), threadPool: threadPool, logger: logger, on: eventLoopGroup.any())
        } catch  where SQLiteSalvage.isDamage(error) {
            throw error
        } catch {
            throw storeError("open", error)
        }
    }

    private func configure(_ db: SQLiteConnection) async throws {
        let mode = try await SQLiteSchema.configure(db, synchronous: synchronous)
        if mode != "wal" {
            logger.warning("state store \(path): journal mode is \(mode), not wal; other processes wait while this one writes")
        }
    }

    /// Records a problem and logs it.
    func report(_ problem: String) {
        problems.append(problem)
        logger.warning("\(problem)")
    }

    /// `error` as the store's error: a ``WaitingRoomError`` stays as it is.
    func storeError(_ what: String, _ error: any Error) -> WaitingRoomError {
        if let error = error as? WaitingRoomError { return error }
        return WaitingRoomError(.invalidConfiguration, message: "state store \(path): cannot \(what): \(error)", field: "stateStore")
    }

    /// The value in `text`, or nil (logged) when the row is damaged.
    private func decode<T: Decodable>(_ type: T.Type, _ text: String, what: String) -> T? {
        do {
            return try records.decode(type, text)
        } catch {
            logger.warning("state store \(path): \(what) is unreadable and left out: \(error)")
            return nil
        }
    }
}
