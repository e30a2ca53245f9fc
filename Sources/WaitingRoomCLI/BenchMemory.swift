import Foundation
import WaitingRoom

/// `waitingroom bench memory`: what a waiting user costs in memory, from whole `waitingroom load`
/// runs in child processes (each child's peak resident set, `VmHWM`, from its JSON summary):
///
/// - the marginal cost, (peak at 10k users − peak at 1k users) / 9000, which leaves out what
///   the process costs with no user at all;
/// - peak / users at 10k, the figure the issue was filed with (it includes the fixed cost).
///
/// Each run is NetFUNNEL on the embedded emulator (the emulator runs in the same process, so
/// both the client's and the server's cost of a user are counted), with a room that admits 500
/// at a time and polls every second, so at the peak nearly every user is waiting in line (and,
/// since every user starts at once, has its first request in flight).
/// `WR_BENCH_USERS=1000,10000,50000` picks other crowd sizes (the marginal figure is taken
/// between the two largest, and each is reported).
enum BenchMemory {
    static let roomDocument = """
        { "netfunnel": { "projects": { "service_1": { "segments": {
          "bench": { "control": "basic", "limit": 500, "ttlMin": 1, "ttlMax": 1, "timeoutSec": 120, "retentionSec": 120 } } } } } }
        """

    static func run() async -> [BenchFigure] {
        guard let me = ChildProcess.currentExecutable else {
            return [BenchFigure(name: "memory: the running executable was not found", value: .nan, unit: "")]
        }
        let sizes = (ProcessInfo.processInfo.environment["WR_BENCH_USERS"] ?? "1000,10000")
            .split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.filter { $0 > 0 }.sorted()
        guard sizes.count >= 2 else {
            return [BenchFigure(name: "memory: WR_BENCH_USERS needs two or more sizes", value: .nan, unit: "")]
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wr-bench-memory-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rooms = directory.appendingPathComponent("rooms.json").path
        do { try roomDocument.write(toFile: rooms, atomically: true, encoding: .utf8) } catch {
            return [BenchFigure(name: "memory: cannot write \(rooms): \(error)", value: .nan, unit: "")]
        }
        var peaks: [(users: Int, bytes: Int)] = []
        for users in sizes {
            let output = directory.appendingPathComponent("load-\(users).json").path
            let load = ChildProcess(executable: me, arguments: [
                "load", "--vendor", "netfunnel", "--emulator", "--emulator-config", rooms,
                "--scope", "service_1", "--room", "bench", "--users", String(users), "--hold", "0", "--json",
                // the longest deadline the agent allows: every user sends its 5101 at the same
                // moment, and a loaded machine must not turn the burst into failures
                "--set", "networkTimeout=10000",
            ], outputPath: output)
            do {
                let run = try await load.run()
                guard run.status == 0 else {
                    let summary = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                    return [BenchFigure(name: "memory: load --users \(users) exited with \(run.status) \(summary.prefix(300))", value: .nan, unit: "")]
                }
                // The child's own VmHWM from its summary: `ru_maxrss` of a spawned child keeps the
                // parent's resident set as a floor (this process can be large after other suites).
                let summary = (try? String(contentsOfFile: output, encoding: .utf8)).flatMap { try? JSONValue.parse($0) }
                let peak = summary?.objectValue?["peakResidentBytes"].flatMap { value -> Int? in
                    if case .number(let n) = value { return Int(n) } else { return nil }
                } ?? run.peakResidentBytes
                peaks.append((users, peak))
            } catch {
                return [BenchFigure(name: "memory: load --users \(users) failed: \(error)", value: .nan, unit: "")]
            }
        }
        var figures: [BenchFigure] = []
        for peak in peaks {
            figures.append(BenchFigure(
                name: "memory: peak RSS of load --users \(peak.users)", value: Double(peak.bytes) / 1_048_576, unit: "MiB"))
        }
        let (small, large) = (peaks[peaks.count - 2], peaks[peaks.count - 1])
        let marginal = Double(large.bytes - small.bytes) / Double(large.users - small.users)
        figures.append(BenchFigure(
            name: "memory per waiting user, marginal ((peak \(large.users) − peak \(small.users)) / \(large.users - small.users))",
            value: marginal, unit: "bytes", baseline: .init(name: "16 KiB", value: 16384, unit: "bytes"), goal: .value(atMost: 16384),
            note: "client, emulator and load driver in one process"))
        figures.append(BenchFigure(
            name: "memory per waiting user, peak RSS / users at \(large.users)", value: Double(large.bytes) / Double(large.users), unit: "bytes",
            baseline: .init(name: "16 KiB", value: 16384, unit: "bytes"), goal: .value(atMost: 16384),
            note: "includes the process's fixed cost"))
        return figures
    }
}
