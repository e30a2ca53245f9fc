import Foundation
import WaitingRoom

/// `waitingroom bench memory`: what a waiting user costs in memory, from whole `waitingroom load`
/// runs in child processes (each child's peak resident set, `VmHWM`, from its JSON summary):
///
/// - the marginal cost, (peak at 10k users − peak at 1k users) / 9000, which leaves out what
///   the process costs with no user at all;
/// - peak / users at 10k, the figure the issue was filed with (it includes the fixed cost).
///
/// Each size is run twice: NetFUNNEL on the embedded emulator (the emulator runs in the same
/// process, so both the client's and the server's cost of a user are counted), and "client only":
/// `waitingroom emulate --port 0 --json` in a child of its own and `load --set serverUrl=…` in
/// another, so the load driver's and the SDK's cost is measured apart from the emulator's (whose
/// own peak, `VmHWM` read just before it is stopped, is reported too). The room admits 500
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
        let common = [
            "--vendor", "netfunnel", "--scope", "service_1", "--room", "bench", "--hold", "0", "--json",
            // the longest deadline the agent allows: every user sends its 5101 at the same
            // moment, and a loaded machine must not turn the burst into failures
            "--set", "networkTimeout=10000"
        ]
        // 1. Embedded: client, emulator and load driver in one process.
        var peaks: [(users: Int, bytes: Int)] = []
        for users in sizes {
            let output = directory.appendingPathComponent("load-\(users).json").path
            switch await loadPeak(me, ["load", "--emulator", "--emulator-config", rooms, "--users", String(users)] + common, output: output)
            {
            case .success(let peak): peaks.append((users, peak))
            case .failure(let failure):
                return [BenchFigure(name: "memory: load --users \(users) \(failure.description)", value: .nan, unit: "")]
            }
        }
        var figures = embeddedFigures(peaks)

        // 2. Client only: the emulator in a child of its own, the load driver and the SDK in another.
        var clientPeaks: [(users: Int, bytes: Int, server: Int?)] = []
        for users in sizes {
            switch await clientOnlyPeak(me, users: users, rooms: rooms, common: common, directory: directory) {
            case .success(let peak): clientPeaks.append((users, peak.client, peak.server))
            case .failure(let failure):
                figures.append(
                    BenchFigure(name: "memory (client only): load --users \(users) \(failure.description)", value: .nan, unit: ""))
                return figures
            }
        }
        figures += clientOnlyFigures(clientPeaks)
        return figures
    }

    /// The embedded runs' figures (client, emulator and load driver in one process): each peak,
    /// and the memory per user between the two largest runs and at the largest.
    static func embeddedFigures(_ peaks: [(users: Int, bytes: Int)]) -> [BenchFigure] {
        var figures: [BenchFigure] = []
        for peak in peaks {
            figures.append(
                BenchFigure(
                    name: "memory: peak RSS of load --users \(peak.users)", value: Double(peak.bytes) / 1_048_576, unit: "MiB"))
        }
        let (small, large) = (peaks[peaks.count - 2], peaks[peaks.count - 1])
        let marginal = Double(large.bytes - small.bytes) / Double(large.users - small.users)
        figures.append(
            BenchFigure(
                name: "memory per waiting user, marginal ((peak \(large.users) − peak \(small.users)) / \(large.users - small.users))",
                value: marginal, unit: "bytes", baseline: .init(name: "16 KiB", value: 16384, unit: "bytes"), goal: .value(atMost: 16384),
                note: "client, emulator and load driver in one process"))
        figures.append(
            BenchFigure(
                name: "memory per waiting user, peak RSS / users at \(large.users)", value: Double(large.bytes) / Double(large.users),
                unit: "bytes",
                baseline: .init(name: "16 KiB", value: 16384, unit: "bytes"), goal: .value(atMost: 16384),
                note: "includes the process's fixed cost"))
        return figures
    }

    /// The client-only runs' figures: each run's peaks (load driver and SDK; the emulator's when
    /// known), and the memory per user of each between the two largest runs.
    static func clientOnlyFigures(_ clientPeaks: [(users: Int, bytes: Int, server: Int?)]) -> [BenchFigure] {
        var figures: [BenchFigure] = []
        for peak in clientPeaks {
            figures.append(
                BenchFigure(
                    name: "memory (client only): peak RSS of load --users \(peak.users)", value: Double(peak.bytes) / 1_048_576,
                    unit: "MiB",
                    note: "load driver and SDK; the emulator runs in another process"))
            if let server = peak.server {
                figures.append(
                    BenchFigure(
                        name: "memory (emulator only): peak RSS serving \(peak.users) users", value: Double(server) / 1_048_576, unit: "MiB"
                    ))
            }
        }
        let (clientSmall, clientLarge) = (clientPeaks[clientPeaks.count - 2], clientPeaks[clientPeaks.count - 1])
        let span = Double(clientLarge.users - clientSmall.users)
        figures.append(
            BenchFigure(
                name:
                    "memory per waiting user, client only, marginal ((peak \(clientLarge.users) − peak \(clientSmall.users)) / \(clientLarge.users - clientSmall.users))",
                value: Double(clientLarge.bytes - clientSmall.bytes) / span, unit: "bytes",
                baseline: .init(name: "16 KiB", value: 16384, unit: "bytes"), goal: .value(atMost: 16384),
                note: "load driver and SDK; the emulator runs in another process"))
        if let serverSmall = clientSmall.server, let serverLarge = clientLarge.server {
            figures.append(
                BenchFigure(
                    name:
                        "memory per waiting user, emulator only, marginal ((peak \(clientLarge.users) − peak \(clientSmall.users)) / \(clientLarge.users - clientSmall.users))",
                    value: Double(serverLarge - serverSmall) / span, unit: "bytes",
                    note: "the NetFUNNEL emulator's own process (VmHWM before it is stopped)"))
        }
        return figures
    }

    /// Why a child run gave no figure.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `waitingroom load …` and returns its own peak resident set from its JSON summary.
    static func loadPeak(_ me: String, _ arguments: [String], output: String) async -> Result<Int, Failure> {
        let load = ChildProcess(executable: me, arguments: arguments, outputPath: output)
        do {
            let run = try await load.run()
            guard run.status == 0 else {
                let summary = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                return .failure(Failure(description: "exited with \(run.status) \(summary.prefix(300))"))
            }
            // The child's own VmHWM from its summary: `ru_maxrss` of a spawned child keeps the
            // parent's resident set as a floor (this process can be large after other suites).
            let summary = (try? String(contentsOfFile: output, encoding: .utf8)).flatMap { try? JSONValue.parse($0) }
            let peak =
                summary?.objectValue?["peakResidentBytes"].flatMap { value -> Int? in
                    if case .number(let n) = value { return Int(n) } else { return nil }
                } ?? run.peakResidentBytes
            return .success(peak)
        } catch {
            return .failure(Failure(description: "failed: \(error)"))
        }
    }

    /// Starts `waitingroom emulate --port 0 --json` in a child, runs `load` against it in another,
    /// and returns both peaks (the emulator's from its `VmHWM` just before it is stopped).
    static func clientOnlyPeak(
        _ me: String, users: Int, rooms: String, common: [String], directory: URL
    ) async -> Result<(client: Int, server: Int?), Failure> {
        let emulatorOutput = directory.appendingPathComponent("emulate-\(users).json").path
        let emulate = ChildProcess(
            executable: me, arguments: ["emulate", "--port", "0", "--json", "--config", rooms], outputPath: emulatorOutput)
        let emulator: ChildProcess.Started
        do { emulator = try emulate.start() } catch { return .failure(Failure(description: "emulator: \(error)")) }
        defer {
            emulator.send(SIGTERM)
            _ = try? emulator.waitBlocking()
        }
        // The start-up line: one JSON object with netfunnel.serverUrl and clientId.
        var address: (serverUrl: String, clientId: String)?
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while address == nil, clock.now < deadline {
            if let text = try? String(contentsOfFile: emulatorOutput, encoding: .utf8), text.hasSuffix("\n"),
                let netfunnel = (try? JSONValue.parse(text))?.objectValue?["netfunnel"]?.objectValue,
                case .string(let serverUrl)? = netfunnel["serverUrl"], case .string(let clientId)? = netfunnel["clientId"]
            {
                address = (serverUrl, clientId)
            } else {
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        guard let address else { return .failure(Failure(description: "the emulator printed no address in 60 s")) }
        let output = directory.appendingPathComponent("load-client-\(users).json").path
        let arguments =
            ["load", "--users", String(users), "--set", "serverUrl=\(address.serverUrl)", "--set", "clientId=\(address.clientId)"] + common
        switch await loadPeak(me, arguments, output: output) {
        case .success(let client): return .success((client, emulator.peakResidentBytes))
        case .failure(let failure): return .failure(failure)
        }
    }
}
