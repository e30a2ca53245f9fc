import Foundation
import WaitingRoom
import WaitingRoomBenchSupport
import WaitingRoomPostgres
import WaitingRoomSQLite

/// `waitingroom bench state`: what durability costs (issue 27).
///
/// - Journal writes per second of each durable store (`recordHeldKey`, one row per call, the
///   way a provider writes when a key is handed out), next to the bare `INSERT` of the same row
///   into a plain table on the same connection settings: goal ≥ 0.5×.
///   SQLite in a temporary file; PostgreSQL on `WR_BENCH_POSTGRES` (a `postgres://` address) or,
///   when Debian's `postgresql` is installed, on a throwaway cluster started for the run.
/// - Memory per waiting user with `--state` (SQLite) against the memory store: whole
///   `waitingroom load --emulator` runs in children, the marginal peak between 1k and 5k users
///   (`WR_BENCH_STATE_USERS=1000,5000` picks the sizes); goal: a few hundred bytes more. The peak
///   includes the burst of first-key writes when every user arrives at once; the steady-state
///   figure is ``BenchWaitingHeap``'s (5,000 users waiting, `WR_BENCH_WAITING_USERS`).
enum BenchState {
    static let writes = 3000

    static func run() async -> [BenchFigure] {
        var figures: [BenchFigure] = []
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wr-bench-state-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        do {
            let sqlite = try await SQLiteStateStore.benchmarkWrites(
                path: directory.appendingPathComponent("bench.sqlite").path, count: writes)
            figures.append(
                BenchFigure(
                    name: "state: SQLite journal writes (\(writes) recordHeldKey)", value: sqlite.storeWritesPerSecond, unit: "writes/s",
                    baseline: .init(name: "bare INSERT of the same row", value: sqlite.bareInsertsPerSecond, unit: "inserts/s"),
                    goal: .ratio(atLeast: 0.5), note: "WAL, synchronous=NORMAL"))
        } catch {
            figures.append(BenchFigure(name: "state: SQLite benchmark failed: \(error)", value: .nan, unit: ""))
        }

        figures += await postgres()
        figures += await memory(directory: directory)
        let waiting = ProcessInfo.processInfo.environment["WR_BENCH_WAITING_USERS"].flatMap { Int($0) } ?? 5000
        figures += await BenchWaitingHeap.run(users: max(waiting, 100), directory: directory)
        return figures
    }

    static func postgres() async -> [BenchFigure] {
        var cluster: PostgresThrowawayCluster?
        let url: String
        if let given = ProcessInfo.processInfo.environment["WR_BENCH_POSTGRES"], !given.isEmpty {
            url = given
        } else {
            do {
                let started = PostgresThrowawayCluster.shared
                cluster = started
                url = try await started.makeDatabase()
            } catch {
                return [
                    BenchFigure(
                        name: "state: PostgreSQL skipped (set WR_BENCH_POSTGRES or install postgresql: \(error))", value: .nan, unit: "")
                ]
            }
        }
        do {
            let result = try await PostgresStateStore.benchmarkWrites(url: url, count: writes)
            try? await cluster?.stop()
            return [
                BenchFigure(
                    name: "state: PostgreSQL journal writes (\(writes) recordHeldKey)", value: result.storeWritesPerSecond,
                    unit: "writes/s",
                    baseline: .init(name: "bare INSERT of the same row", value: result.bareInsertsPerSecond, unit: "inserts/s"),
                    goal: .ratio(atLeast: 0.5), note: cluster == nil ? "WR_BENCH_POSTGRES" : "throwaway local cluster")
            ]
        } catch {
            try? await cluster?.stop()
            return [BenchFigure(name: "state: PostgreSQL benchmark failed: \(error)", value: .nan, unit: "")]
        }
    }

    /// Marginal peak memory per waiting user, with and without `--state`.
    static func memory(directory: URL) async -> [BenchFigure] {
        guard let me = ChildProcess.currentExecutable else {
            return [BenchFigure(name: "state: the running executable was not found", value: .nan, unit: "")]
        }
        let sizes = (ProcessInfo.processInfo.environment["WR_BENCH_STATE_USERS"] ?? "1000,5000")
            .split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.filter { $0 > 0 }.sorted()
        guard sizes.count >= 2, let small = sizes.first, let large = sizes.last else {
            return [BenchFigure(name: "state: WR_BENCH_STATE_USERS needs two sizes", value: .nan, unit: "")]
        }
        let rooms = directory.appendingPathComponent("rooms.json").path
        do { try BenchMemory.roomDocument.write(toFile: rooms, atomically: true, encoding: .utf8) } catch {
            return [BenchFigure(name: "state: cannot write \(rooms): \(error)", value: .nan, unit: "")]
        }
        let common = [
            "load", "--emulator", "--emulator-config", rooms, "--vendor", "netfunnel", "--scope", "service_1", "--room", "bench",
            "--hold", "0", "--json", "--set", "networkTimeout=10000"
        ]
        func perUser(_ variant: String) async -> Result<Double, BenchMemory.Failure> {
            var peaks: [Int] = []
            for users in [small, large] {
                var arguments = common + ["--users", String(users)]
                switch variant {
                case "state": arguments += ["--state", directory.appendingPathComponent("load-\(users).sqlite").path]
                case "metrics": arguments += ["--metrics-port", "0"]
                default: break
                }
                switch await BenchMemory.loadPeak(me, arguments, output: directory.appendingPathComponent("\(variant)-\(users).json").path)
                {
                case .success(let peak): peaks.append(peak)
                case .failure(let failure): return .failure(failure)
                }
            }
            return .success(Double(peaks[1] - peaks[0]) / Double(large - small))
        }
        switch (await perUser("memory"), await perUser("state"), await perUser("metrics")) {
        case (.success(let memory), .success(let durable), .success(let measured)):
            return [
                BenchFigure(
                    name: "state: memory per waiting user with --state (SQLite), marginal \(small)→\(large)", value: durable, unit: "bytes",
                    baseline: .init(name: "the memory store", value: memory, unit: "bytes"), goal: .value(atMost: memory + 400),
                    note: "difference \(Int(durable - memory)) bytes"),
                BenchFigure(
                    name: "memory per waiting user with a metrics backend (--metrics-port: swift-prometheus), marginal \(small)→\(large)",
                    value: measured, unit: "bytes", baseline: .init(name: "no backend", value: memory, unit: "bytes"),
                    goal: .value(atMost: 16_384), note: "difference \(Int(measured - memory)) bytes")
            ]
        case (.failure(let failure), _, _), (_, .failure(let failure), _), (_, _, .failure(let failure)):
            return [BenchFigure(name: "state: memory per user \(failure.description.prefix(300))", value: .nan, unit: "")]
        }
    }
}
