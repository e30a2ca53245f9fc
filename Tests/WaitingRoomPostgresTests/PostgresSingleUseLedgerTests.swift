import Foundation
import Testing
import WaitingRoom
import WaitingRoomBenchSupport
import WaitingRoomConformance

// `@testable` for one thing only: a throwaway cluster of the test's own
// (`PostgresThrowawayCluster()`), which it can stop without stopping everyone's shared one.
@testable import WaitingRoomPostgres

/// The PostgreSQL store as a ``SingleUseLedger`` against a real server (``PostgresTestCluster``),
/// each test in a database of its own; several stores (each its own pool) on one database. A
/// time limit, so a use that hangs ends the run instead of hanging it.
@Suite("PostgreSQL single-use ledger", .timeLimit(.minutes(3)))
struct PostgresSingleUseLedgerTests {
    /// A moment in seconds since 1970 (the ledger's unit).
    static let t0 = LedgerConformance.t0

    @Test func aSecondUseIsARefusalUntilTheIdExpires() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        // The database outlives the store: a new one still refuses them.
        try await LedgerConformance.secondUseIsARefusalUntilExpiry(
            try await PostgresStateStore.connect(url: url), odd: "it's \"quoted\"; DROP TABLE waitingroom_used_credentials; -- ü 🎟",
            close: { try await $0.close() }, reopen: { try await PostgresStateStore.connect(url: url) }, check: Self.check)
    }

    @Test func twoStoresOnOneDatabaseRacingGiveEachIdToOneUseOnly() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let a = try await PostgresStateStore.connect(url: url)
        let b = try await PostgresStateStore.connect(url: url)
        try await LedgerConformance.racingHandlesGiveEachIdToOneUseOnly(a, b, close: { try await $0.close() }, check: Self.check)
    }

    /// The same race for ids that expired: every expired id is taken over by exactly one use.
    @Test func racingUsesOfExpiredIdsTakeEachOverOnce() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let a = try await PostgresStateStore.connect(url: url)
        let b = try await PostgresStateStore.connect(url: url)
        let t0 = Self.t0
        let ids = (0..<50).map { "expired-\($0)" }
        for id in ids { #expect(try await a.use(id, expiresAt: t0 + 10, now: t0)) }
        let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<200 {
                let store = (i / 50) % 2 == 0 ? a : b
                group.addTask { try await store.use(ids[i % 50], expiresAt: t0 + 100, now: t0 + 20) }
            }
            var wins = 0
            for try await won in group where won { wins += 1 }
            return wins
        }
        #expect(wins == 50)
        for id in ids { #expect(try await b.wasUsed(id, now: t0 + 100)) }
        try await a.close()
        try await b.close()
    }

    @Test func expiredRowsArePrunedAsUsesGoOn() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let store = try await PostgresStateStore.connect(url: url)
        let t0 = Self.t0
        for i in 0..<300 { #expect(try await store.use("old-\(i)", expiresAt: t0 + 10, now: t0)) }
        // Later uses prune about one time in 64, up to 256 expired rows each time: 1,280 uses
        // prune at least twice but for a chance of about 4e-8.
        let recorded = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var recorded = 0
                    for i in stride(from: worker, to: 1280, by: 8)
                    where try await store.use("new-\(i)", expiresAt: t0 + 1000, now: t0 + 100) {
                        recorded += 1
                    }
                    return recorded
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(recorded == 1280)
        try await store.close()
        let counts = try await Self.psql(
            url,
            "SELECT count(*) FILTER (WHERE expires_at < \(t0 + 100)), count(*) FILTER (WHERE expires_at >= \(t0 + 100)) FROM waitingroom_used_credentials"
        )
        #expect(counts == "0|1280", "the 300 expired ids were pruned, no live one was: \(counts)")
    }

    @Test func tablePrefixesKeepLedgersApart() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let first = try await PostgresStateStore.connect(url: url, tablePrefix: "first_")
        let second = try await PostgresStateStore.connect(url: url, tablePrefix: "second_")
        #expect(try await first.use("a", expiresAt: Self.t0 + 60, now: Self.t0))
        #expect(try await second.wasUsed("a", now: Self.t0) == false)
        #expect(try await second.use("a", expiresAt: Self.t0 + 60, now: Self.t0))
        try await first.close()
        try await second.close()
    }

    @Test func aClosedStoreThrowsAtOnce() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        try await LedgerConformance.closedHandleThrowsAtOnce(
            try await PostgresStateStore.connect(url: url), close: { try await $0.close() }, check: Self.check)
    }

    /// The server stops under an open store (a cluster of this test's own, `pg_ctl stop -m
    /// immediate`): a use and a look-up throw `.unavailable` within the URL's `connect_timeout`
    /// (8 s here), not after the pool's minute of retries, and never hang.
    @Test func aStoppedServerIsAnErrorWithinTheConnectTimeout() async throws {
        let cluster = PostgresThrowawayCluster()
        do {
            // 8 s: a connect on a loaded machine can take a few seconds
            let url = try await cluster.makeDatabase().replacingOccurrences(of: "connect_timeout=30", with: "connect_timeout=8")
            #expect(url.contains("connect_timeout=8"), "\(url)")
            // the first connect to a cluster just started may miss 8 s on a loaded machine (the
            // full suite in parallel): up to three tries; what the test bounds is the stopped server
            var opened: PostgresStateStore?
            for attempt in 1...3 where opened == nil {
                do {
                    opened = try await PostgresStateStore.connect(url: url, maximumConnections: 2)
                } catch  where attempt < 3 {
                    continue
                }
            }
            let store = try #require(opened)
            #expect(try await store.use("a", expiresAt: Self.t0 + 60, now: Self.t0))
            try await cluster.stop()

            let timer = ContinuousClock()
            for attempt in 0..<2 {
                let started = timer.now
                let error = await #expect(throws: WaitingRoomError.self, "use \(attempt)") {
                    _ = try await store.use("b\(attempt)", expiresAt: Self.t0 + 60, now: Self.t0)
                }
                let elapsed = timer.now - started
                #expect(error?.kind == .unavailable, "\(String(describing: error))")
                #expect(error?.message.contains("recording a used credential") == true, "\(String(describing: error))")
                // Bounded by the connect timeout (8 s); generous for a loaded machine.
                #expect(elapsed < .seconds(30), "use \(attempt) took \(elapsed)")
            }
            let started = timer.now
            let lookUp = await #expect(throws: WaitingRoomError.self) { _ = try await store.wasUsed("a", now: Self.t0) }
            #expect(lookUp?.kind == .unavailable, "\(String(describing: lookUp))")
            #expect(timer.now - started < .seconds(30), "the look-up took \(timer.now - started)")

            let closing = timer.now
            try await store.close()
            #expect(timer.now - closing < .seconds(20), "closing took \(timer.now - closing)")
        } catch {
            try? await cluster.stop()
            throw error
        }
    }

    // MARK: helpers

    /// Records an issue for each of ``LedgerConformance``'s checks that fails.
    static func check(_ condition: Bool, _ message: String) { #expect(condition, Comment(rawValue: message)) }

    /// Runs `sql` with `psql` against the database of `url` (on the shared cluster) and returns
    /// its unaligned output without the trailing newline.
    static func psql(_ url: String, _ sql: String) async throws -> String {
        let server = try await PostgresTestCluster.shared.server()
        let database = String(url.split(separator: "/").last?.split(separator: "?").first ?? "")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: server.binaries + "/psql")
        process.arguments = [
            "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(server.port)",
            "-U", "postgres", "-d", database, "-c", sql
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0 else {
            throw PostgresTestCluster.Failure(description: "psql exited with \(process.terminationStatus): \(text)")
        }
        return text
    }
}
