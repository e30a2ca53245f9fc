import Foundation
import Logging
import Testing
import WaitingRoom
import WaitingRoomBenchSupport
import WaitingRoomConformance
import WaitingRoomPostgres
import WaitingRoomTesting

#if canImport(Glibc)
    import Glibc
#endif

/// The PostgreSQL store against a real server (``PostgresTestCluster``), each test in a
/// database of its own. A time limit, so a store that loops ends the run instead of hanging it.
@Suite("PostgreSQL state store", .timeLimit(.minutes(3)))
struct PostgresStoreTests {
    let room = RoomKey(scope: "s", room: "r")

    @Test func keepsEveryStorePromise() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        // Every `open` is another instance: its own pool on the same database.
        let subject = StoreConformance.Subject(name: "postgres") { clock in
            try await PostgresStateStore.connect(url: url, clock: clock)
        }
        let failures = try await StoreConformance(subject).run()
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func twoStoresOnOneDatabaseSeeEachOthersWrites() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let clock = VirtualClock()
        let a = try await PostgresStateStore.connect(url: url, clock: clock)
        let b = try await PostgresStateStore.connect(url: url, clock: clock)
        #expect(a.isShared && a.isDurable)

        let pass = Pass(
            vendor: "v", room: room, credential: "token", kind: .token, issuedAt: clock.now(),
            expiresAt: clock.now().addingTimeInterval(60), targetURL: "https://example.com/", details: ["k": "v"])
        try await a.save(pass)
        #expect(try await b.pass(vendor: "v", room: room) == pass)
        #expect(try await b.all() == [pass])
        try await b.remove(vendor: "v", room: room)
        #expect(try await a.pass(vendor: "v", room: room) == nil)

        let now = clock.now()
        let key = HeldKey(vendor: "v", room: room, key: "k1", takenAt: now, owner: "a", leaseUntil: now.addingTimeInterval(10))
        try await a.recordHeldKey(key)
        #expect(try await b.heldKeys() == [key])
        #expect(
            try await b.claimHeldKeys(
                vendor: nil, owner: "b", now: now.addingTimeInterval(5), leaseUntil: now.addingTimeInterval(20), limit: 10
            ).isEmpty)
        let taken = try await b.claimHeldKeys(
            vendor: nil, owner: "b", now: now.addingTimeInterval(10), leaseUntil: now.addingTimeInterval(20), limit: 10)
        #expect(taken.map(\.owner) == ["b"])
        #expect(try await a.heldKeys().map(\.owner) == ["b"])

        let session = SessionLeaseID(vendor: "v", room: room, user: "u")
        #expect(try await a.acquireSession(session, owner: "a", now: now, until: now.addingTimeInterval(30)) == .acquired)
        #expect(
            try await b.acquireSession(session, owner: "b", now: now, until: now.addingTimeInterval(30))
                == .heldBy(owner: "a", until: now.addingTimeInterval(30)))
        try await a.close()
        try await b.close()
    }

    @Test func recordsReadBackExactlyWithDatesThatAreNotWholeSeconds() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let store = try await PostgresStateStore.connect(url: url)
        // Real dates: their seconds since 1970 do not always survive a trip through a double.
        let now = Date()
        let pass = Pass(
            vendor: "v", room: room, credential: "c", kind: .key, issuedAt: now, expiresAt: now.addingTimeInterval(600.123_456_7),
            requiresCompletion: true, bypassedError: WaitingRoomError(.networkTimeout, message: "slow"))
        try await store.save(pass)
        #expect(try await store.pass(vendor: "v", room: room) == pass)
        var key = HeldKey(
            vendor: "v", room: room, key: "k", details: ["node": "n"], takenAt: now, expiresAt: now.addingTimeInterval(0.1),
            owner: "a", leaseUntil: now.addingTimeInterval(-0.000_001))
        try await store.recordHeldKey(key)
        #expect(try await store.heldKeys() == [key])
        let leaseUntil = now.addingTimeInterval(33.333_333_3)
        key.owner = "b"
        key.leaseUntil = leaseUntil
        #expect(try await store.claimHeldKeys(vendor: "v", owner: "b", now: now, leaseUntil: leaseUntil, limit: 1) == [key])
        #expect(try await store.heldKeys() == [key])
        key.leaseUntil = now.addingTimeInterval(77.777_777_7)
        try await store.renewLeases(owner: "b", until: key.leaseUntil)
        #expect(try await store.heldKeys() == [key])
        try await store.close()
    }

    @Test func tablePrefixesKeepStoresApart() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let clock = VirtualClock()
        let first = try await PostgresStateStore.connect(url: url, clock: clock, tablePrefix: "first_")
        let second = try await PostgresStateStore.connect(url: url, clock: clock, tablePrefix: "second_")
        try await first.save(Pass(vendor: "v", room: room, credential: "c", kind: .token, issuedAt: clock.now()))
        #expect(try await first.all().count == 1)
        #expect(try await second.all().isEmpty)
        try await first.close()
        try await second.close()
    }

    @Test func aClosedStoreRefusesWork() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let store = try await PostgresStateStore.connect(url: url)
        try await store.close()
        let error = await #expect(throws: WaitingRoomError.self) { try await store.heldKeys() }
        #expect(error?.kind == .invalidUse, "\(String(describing: error))")
        try await store.close()  // twice is harmless
    }

    /// Runs the write benchmark (a small count; `WAITINGROOM_PG_BENCH_COUNT` sets another) and
    /// prints its figures.
    @Test func theWriteBenchmarkMeasuresBothKindsOfWrites() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let count = ProcessInfo.processInfo.environment["WAITINGROOM_PG_BENCH_COUNT"].flatMap(Int.init) ?? 200
        let figures = try await PostgresStateStore.benchmarkWrites(url: url, count: count)
        print(
            "PostgreSQL writes (\(count)): store \(Int(figures.storeWritesPerSecond))/s, bare INSERT of the same row \(Int(figures.bareInsertsPerSecond))/s"
        )
        #expect(figures.storeWritesPerSecond > 0 && figures.bareInsertsPerSecond > 0)
        let store = try await PostgresStateStore.connect(url: url)
        #expect(try await store.heldKeys().isEmpty, "the benchmark's tables are its own")
        try await store.close()
    }

    @Test func aBadURLOrAnUnreachableServerIsAConfigurationErrorAtOnce() async throws {
        let closedPort = try PostgresTestCluster.freePort()
        let server = try await PostgresTestCluster.shared.server()
        let urls = [
            "",
            "localhost:5432",
            "mysql://user@localhost/db",
            "postgres://localhost/db",
            "postgres://user@/db",
            "postgres://user@localhost:70000/db",
            "postgres://user@localhost:port/db",
            "postgres://user@[::1/db",
            "postgres://user@localhost/db?sslmode=sometimes",
            "postgres://user@localhost/db?connect_timeout=soon",
            "postgres://user@localhost/db?colour=blue",
            "postgres://postgres:s3cret@127.0.0.1:\(closedPort)/db?sslmode=disable",
            "postgres://postgres:s3cret@127.0.0.1:\(server.port)/no_such_database?sslmode=disable"
        ]
        let timer = ContinuousClock()
        for url in urls {
            let started = timer.now
            let error = await #expect(throws: WaitingRoomError.self, "\(url)") { try await PostgresStateStore.connect(url: url) }
            #expect(error?.kind == .invalidConfiguration, "\(url): \(String(describing: error))")
            #expect(error?.field == "stateStore", "\(url)")
            #expect(error?.message.contains("s3cret") == false, "the password is not repeated: \(String(describing: error))")
            // "at once": well inside the connect timeout; generous, a loaded CI machine only proves no hang
            #expect(timer.now - started < .seconds(15), "\(url) took \(timer.now - started)")
        }
        let missing = await #expect(throws: WaitingRoomError.self) {
            try await PostgresStateStore.connect(url: "postgres://postgres@127.0.0.1:\(server.port)/no_such_database?sslmode=disable")
        }
        #expect(missing?.message.contains("does not exist") == true, "\(String(describing: missing))")
        let badPrefix = await #expect(throws: WaitingRoomError.self) {
            try await PostgresStateStore.connect(
                url: "postgres://postgres@127.0.0.1:\(server.port)/postgres?sslmode=disable", tablePrefix: "x; DROP")
        }
        #expect(badPrefix?.kind == .invalidConfiguration)
    }

    /// Another instance holds the schema's lock (a transaction of its own, as while it creates
    /// the tables): a new store waits for it only until its connect timeout, then gives up with
    /// a clear error; its half-done transaction is cancelled, nothing hangs.
    @Test func aSchemaLockHeldElsewhereEndsAtTheConnectTimeout() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let server = try await PostgresTestCluster.shared.server()
        let database = String(url.split(separator: "/").last?.split(separator: "?").first ?? "")
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: server.binaries + "/psql")
        holder.arguments = ["-X", "-q", "-h", "127.0.0.1", "-p", "\(server.port)", "-U", "postgres", "-d", database]
        let input = Pipe()
        let output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        holder.standardError = output
        try holder.run()
        defer {
            try? input.fileHandleForWriting.close()
            holder.waitUntilExit()
        }
        input.fileHandleForWriting.write(
            Data(
                """
                BEGIN;
                SELECT pg_advisory_xact_lock(hashtext('waitingroom-schema:waitingroom_'));
                \\echo holding

                """.utf8))
        var seen = ""
        while !seen.contains("holding") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        try #require(seen.contains("holding"), "psql: \(seen)")

        let timer = ContinuousClock()
        let started = timer.now
        let error = await #expect(throws: WaitingRoomError.self) {
            try await PostgresStateStore.connect(url: url.replacingOccurrences(of: "connect_timeout=30", with: "connect_timeout=2"))
        }
        let elapsed = timer.now - started
        #expect(error?.kind == .invalidConfiguration, "\(String(describing: error))")
        #expect(error?.message.contains("did not answer within 2 s") == true, "\(String(describing: error))")
        // Bounded, not a hang: the bound is generous for a loaded CI machine.
        #expect(elapsed >= .milliseconds(1900) && elapsed < .seconds(30), "took \(elapsed)")
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let timer = ContinuousClock()
        let started = timer.now
        let error = await #expect(throws: WaitingRoomError.self) {
            try await PostgresStateStore.connect(url: "postgres://postgres@127.0.0.1:\(listener.port)/db?sslmode=disable&connect_timeout=1")
        }
        let elapsed = timer.now - started
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.message.contains("did not answer within 1 s") == true, "\(String(describing: error))")
        // Bounded, not a hang: the bound is generous for a loaded CI machine.
        #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(30), "took \(elapsed)")
    }

    @Test func parsesConnectionURLs() throws {
        let full = try PostgresConnectionString(
            parsing: "postgresql://app%40corp:p%3Ass@[::1]:6543/my%20db?sslmode=verify-full&connect_timeout=3&application_name=wr")
        #expect(full.username == "app@corp")
        #expect(full.password == "p:ss")
        #expect(full.host == "::1")
        #expect(full.port == 6543)
        #expect(full.database == "my db")
        #expect(full.tlsMode == .verifyFull)
        #expect(full.connectTimeout == .seconds(3))
        #expect(full.applicationName == "wr")
        #expect(full.endpoint == "[::1]:6543")
        #expect(!full.description.contains("p:ss") && !full.description.contains("p%3Ass"), "\(full)")

        let socket = try PostgresConnectionString(parsing: "postgres://me@%2Fvar%2Frun%2Fpostgresql/db")
        #expect(socket.host == nil)
        #expect(socket.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432")
        let socketByParameter = try PostgresConnectionString(parsing: "postgres://me@localhost:5433/db?host=/tmp")
        #expect(socketByParameter.unixSocketPath == "/tmp/.s.PGSQL.5433")

        let plain = try PostgresConnectionString(parsing: "postgres://me@db.example")
        #expect(plain.port == 5432)
        #expect(plain.database == nil)
        #expect(plain.password == nil)
        #expect(plain.tlsMode == .prefer)
        #expect(plain.connectTimeout == .seconds(10))
    }
}

/// A TCP socket on 127.0.0.1 that accepts connections (the kernel's backlog does) and never
/// says a word: a server that hangs.
private struct SilentListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw PostgresTestCluster.Failure(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = descriptor
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard listening else {
            Glibc.close(fd)
            throw PostgresTestCluster.Failure(description: "cannot listen on 127.0.0.1: errno \(errno)")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { Glibc.close(descriptor) }
}
