import Foundation
import NIOPosix
import SQLiteNIO
import Testing
import WaitingRoom
import WaitingRoomBenchSupport
import WaitingRoomConformance
import WaitingRoomSQLite
import WaitingRoomTesting

@Suite("SQLite state store")
struct SQLiteStoreTests {
    /// A fresh folder for one test; `body` gets the database path in it. The folder is removed
    /// afterwards.
    func inTemporaryFolder(_ body: (_ folder: String, _ path: String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wr-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder.path, folder.appendingPathComponent("state.sqlite").path)
    }

    func names(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    func heldKey(_ name: String, at date: Date, owner: String = "A") -> HeldKey {
        HeldKey(
            vendor: "v", room: RoomKey(scope: "s", room: "r"), key: name, details: ["node": "n1"], takenAt: date,
            expiresAt: date.addingTimeInterval(60), owner: owner, leaseUntil: date.addingTimeInterval(10))
    }

    @Test func conforms() async throws {
        try await inTemporaryFolder { folder, path in
            let subject = StoreConformance.Subject(
                name: "sqlite",
                open: { clock in try await SQLiteStateStore.open(path: path, clock: clock) },
                damage: {
                    // Garbage over the whole file after SQLite's header (a file without the
                    // header is someone else's and refused); the log is gone too.
                    var generator = SeededRandom(seed: 7)
                    let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 8192
                    let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16)
                    let garbage = (16..<max(size, 4096)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    try (header + Data(garbage)).write(to: URL(fileURLWithPath: path))
                    try? FileManager.default.removeItem(atPath: path + "-wal")
                    try? FileManager.default.removeItem(atPath: path + "-shm")
                },
                inspectDamage: { store in
                    let sqlite = try #require(store as? SQLiteStateStore)
                    let aside = try names(in: folder).contains {
                        $0.hasPrefix("state.sqlite.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
                    }
                    return (await sqlite.problems, aside)
                })
            let failures = try await StoreConformance(subject).run()
            #expect(failures.isEmpty, "\(failures)")
        }
    }

    @Test func whatAWriterCommittedIsSeenByAnotherHandleWhileTheWriterIsStillOpen() async throws {
        try await inTemporaryFolder { _, path in
            let clock = VirtualClock()
            let writer = try await SQLiteStateStore.open(path: path, clock: clock, synchronous: .full)
            for i in 0..<20 { try await writer.recordHeldKey(heldKey("k\(i)", at: clock.now().addingTimeInterval(Double(i)))) }
            let pass = Pass(
                vendor: "v", room: RoomKey(scope: "s", room: "r"), credential: "c", kind: .key, issuedAt: clock.now(),
                expiresAt: clock.now().addingTimeInterval(30), requiresCompletion: true, details: ["node": "n1"])
            try await writer.save(pass)
            // The writer is not closed (as if its process were killed): the log holds the commits.
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
            let reader = try await SQLiteStateStore.open(path: path, clock: clock)
            #expect(try await reader.heldKeys().map(\.key) == (0..<20).map { "k\($0)" })
            #expect(try await reader.heldKeys().first == heldKey("k0", at: clock.now()))
            #expect(try await reader.pass(vendor: "v", room: RoomKey(scope: "s", room: "r")) == pass)
            #expect(await reader.problems.isEmpty)
            try await reader.close()
            try await writer.close()
        }
    }

    /// A crowd's first keys arrive at once: the writes are committed in groups, every caller
    /// returns once its own write is in the file, and removes queued behind records of the same
    /// key apply in order. A renewal (one statement over the lease column) is what claims read.
    @Test func aBurstOfJournalWritesIsCommittedInGroupsAndInOrder() async throws {
        try await inTemporaryFolder { _, path in
            let clock = VirtualClock()
            let store = try await SQLiteStateStore.open(path: path, clock: clock)
            let start = clock.now()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<3000 {
                    group.addTask {
                        try await store.recordHeldKey(heldKey("k\(i)", at: start, owner: i % 2 == 0 ? "A" : "B"))
                        if i % 3 == 0 { try await store.removeHeldKey(id: "v:k\(i)") }
                    }
                }
                try await group.waitForAll()
            }
            let held = try await store.heldKeys()
            #expect(held.count == 2000)
            #expect(!held.contains { Int($0.key.dropFirst())! % 3 == 0 })

            // A's leases are renewed; B's lapse. A claim 20 s later takes only B's keys.
            try await store.renewLeases(owner: "A", until: start.addingTimeInterval(60))
            let later = start.addingTimeInterval(20)
            let claimed = try await store.claimHeldKeys(
                vendor: "v", owner: "C", now: later, leaseUntil: later.addingTimeInterval(10), limit: 10_000)
            #expect(claimed.count == 1000)
            #expect(claimed.allSatisfy { Int($0.key.dropFirst())! % 2 == 1 && $0.owner == "C" })
            let afterClaim = try await store.heldKeys()
            #expect(afterClaim.filter { $0.owner == "A" }.allSatisfy { abs($0.leaseUntil.timeIntervalSince(start) - 60) < 0.01 })
            #expect(afterClaim.filter { $0.owner == "C" }.count == 1000)

            // Writes queued when the store closes are answered with an error, not left waiting.
            try await store.close()
            await #expect(throws: (any Error).self) { try await store.recordHeldKey(heldKey("late", at: start)) }
        }
    }

    @Test func theFileAndItsLogHaveMode0600() async throws {
        try await inTemporaryFolder { folder, path in
            let store = try await SQLiteStateStore.open(path: path, clock: VirtualClock())
            try await store.recordHeldKey(heldKey("k", at: Date()))
            for name in try names(in: folder) {
                let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/" + name)
                #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(name)")
            }
            #expect(try names(in: folder).contains("state.sqlite-wal"))
            try await store.close()
        }
    }

    @Test func aTruncatedFileKeepsTheRowsThatCanStillBeRead() async throws {
        try await inTemporaryFolder { folder, path in
            let clock = VirtualClock()
            let store = try await SQLiteStateStore.open(path: path, clock: clock)
            // Enough rows for several pages; long details make the table span the file.
            for i in 0..<300 {
                var key = heldKey("key-\(i)", at: clock.now().addingTimeInterval(Double(i)))
                key.details = ["recipe": String(repeating: "x", count: 200)]
                try await store.recordHeldKey(key)
            }
            try await store.close()  // the last handle: the log is folded into the file
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: path))

            let reopened = try await SQLiteStateStore.open(path: path, clock: clock)
            let problems = await reopened.problems
            #expect(problems.count == 1)
            let kept = try await reopened.heldKeys()
            #expect(kept.count > 0 && kept.count < 300, "kept \(kept.count)")
            #expect(problems.first?.contains("kept \(kept.count) readable row(s)") == true, "\(problems)")
            #expect(try names(in: folder).contains { $0.hasPrefix("state.sqlite.corrupt-") })
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)
            // The fresh file works and is sound on the next opening.
            try await reopened.recordHeldKey(heldKey("after", at: clock.now()))
            try await reopened.close()
            let third = try await SQLiteStateStore.open(path: path, clock: clock)
            #expect(await third.problems.isEmpty)
            #expect(try await third.heldKeys().count == kept.count + 1)
            try await third.close()
        }
    }

    @Test func aMissingFolderIsAConfigurationErrorAndNothingIsMoved() async throws {
        try await inTemporaryFolder { folder, _ in
            let path = folder + "/no-such-folder/state.sqlite"
            let error = await #expect(throws: WaitingRoomError.self) { _ = try await SQLiteStateStore.open(path: path) }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.field == "stateStore")
            let left = try names(in: folder)
            #expect(left.isEmpty)
        }
    }

    /// A path that holds something other than a store file is refused and left as it is. Damage
    /// recovery moved `/etc/passwd` aside and wrote a database in its place when `--state` named it.
    @Test func someoneElsesFileIsRefusedAndLeftAsItIs() async throws {
        try await inTemporaryFolder { folder, path in
            var generator = SeededRandom(seed: 11)
            let binary = Data((0..<5000).map { _ in UInt8.random(in: 1...255, using: &generator) })
            for (content, says) in [
                (Data("root:x:0:0:root:/root:/bin/bash\n".utf8), "it holds text"),
                (Data(#"{"name": "my-app"}"#.utf8), "it holds text"),
                (binary, "does not start as a SQLite database does")
            ] {
                try content.write(to: URL(fileURLWithPath: path))
                let error = await #expect(throws: WaitingRoomError.self) { _ = try await SQLiteStateStore.open(path: path) }
                #expect(error?.kind == .invalidConfiguration && error?.field == "stateStore")
                #expect(
                    error?.message.contains(says) == true && error?.message.contains("nothing was changed") == true,
                    "\(String(describing: error))")
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == content)
                #expect(try names(in: folder) == ["state.sqlite"], "nothing moved aside, no log")
            }
            try FileManager.default.removeItem(atPath: path)

            // another application's database: not written to (no tables added, no WAL switch)
            let threads = NIOThreadPool(numberOfThreads: 1)
            threads.start()
            let other = try await SQLiteConnection.open(
                storage: .file(path: path), threadPool: threads, on: MultiThreadedEventLoopGroup.singleton.any())
            _ = try await other.query("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
            _ = try await other.query("INSERT INTO users (name) VALUES ('ada')")
            try await other.close()
            try await threads.shutdownGracefully()
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let error = await #expect(throws: WaitingRoomError.self) { _ = try await SQLiteStateStore.open(path: path) }
            #expect(error?.message.contains("another application's SQLite database (tables users)") == true, "\(String(describing: error))")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            #expect(try names(in: folder) == ["state.sqlite"])
            try FileManager.default.removeItem(atPath: path)

            // a file zeroed by a crash is the store's own, damaged: recovered as damage
            try Data(count: 8192).write(to: URL(fileURLWithPath: path))
            let recovered = try await SQLiteStateStore.open(path: path)
            #expect(await recovered.problems.count == 1)
            try await recovered.recordHeldKey(heldKey("after-zeros", at: Date()))
            #expect(try await recovered.heldKeys().count == 1)
            try await recovered.close()
            #expect(try names(in: folder).contains { $0.hasPrefix("state.sqlite.corrupt-") })
        }
    }

    @Test func aClosedStoreRefusesWork() async throws {
        try await inTemporaryFolder { _, path in
            let store = try await SQLiteStateStore.open(path: path)
            try await store.close()
            try await store.close()
            await #expect(throws: WaitingRoomError.self) { _ = try await store.heldKeys() }
        }
    }

    @Test func theJournalStopsRenewingOnceItsStoreIsClosed() async throws {
        try await inTemporaryFolder { _, path in
            let clock = VirtualClock()
            let store = try await SQLiteStateStore.open(path: path)
            let journal = KeyJournal(store: store, clock: clock, lease: .seconds(3), owner: "A")
            await journal.hold(vendor: "v", room: RoomKey(scope: "s", room: "r"), key: "k")
            #expect(await clock.waitForSleepers(1))
            // The process closes its store while it still holds the key (as on a hard shutdown).
            try await store.close()
            clock.advance(by: .seconds(1))
            // One renewal fails and the heartbeat ends: no retry every second until the lease
            // has passed.
            for _ in 0..<500 where journal.writeFailures == 0 || clock.sleeperCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(journal.writeFailures == 1)
            #expect(clock.sleeperCount == 0)
            clock.advance(by: .seconds(5))
            try await Task.sleep(for: .milliseconds(50))
            #expect(journal.writeFailures == 1)
        }
    }

    @Test func aStoreDroppedWithoutClosingLetsGoOfItsConnection() async throws {
        try await inTemporaryFolder { _, path in
            let clock = VirtualClock()
            do {
                let dropped = try await SQLiteStateStore.open(path: path, clock: clock)
                try await dropped.recordHeldKey(heldKey("kept", at: clock.now()))
            }
            try await Task.sleep(for: .milliseconds(100))
            let store = try await SQLiteStateStore.open(path: path, clock: clock)
            #expect(try await store.heldKeys().map(\.key) == ["kept"])
            try await store.close()
        }
    }

    @Test func theWriteBenchmarkRuns() async throws {
        try await inTemporaryFolder { _, path in
            let result = try await SQLiteStateStore.benchmarkWrites(path: path, count: 200)
            #expect(result.storeWritesPerSecond > 0)
            #expect(result.bareInsertsPerSecond > 0)
            // Nothing of the benchmark is left in the file.
            let store = try await SQLiteStateStore.open(path: path)
            #expect(try await store.heldKeys().isEmpty)
            try await store.close()
        }
    }
}

@Suite("Durable environment")
struct DurableEnvironmentTests {
    @Test func anAppThatAsksForDurabilityGetsTheSQLiteStoreAndAnActiveJournal() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wr-durable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let environment = try await ProviderEnvironment.durable(
            path: dir.appendingPathComponent("state.sqlite").path, transport: NoNetworkTransport())
        #expect(environment.store is SQLiteStateStore)
        #expect(environment.keyJournal.isActive)
        await environment.keyJournal.hold(vendor: "v", room: RoomKey(scope: "s", room: "r"), key: "k")
        #expect(try await environment.store.heldKeys().map(\.id) == ["v:k"])
        await environment.keyJournal.released(vendor: "v", key: "k")
        #expect(try await environment.store.heldKeys().isEmpty)
        try await environment.store.close()
    }
}
