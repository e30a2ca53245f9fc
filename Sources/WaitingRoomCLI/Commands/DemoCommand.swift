import Foundation
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomHTTP
import WaitingRoomLoad
import WaitingRoomLua
import WaitingRoomVendors

/// `waitingroom demo`: a crowd and you, through a NetFUNNEL segment and a Queue-it room, on the
/// embedded emulator.
struct DemoCommand: CLICommand {
    static let about = CommandDescription(
        name: "demo",
        abstract: "Watch a waiting room work: a crowd and you, NetFUNNEL, Queue-it, CrowdHandler and Cloudflare, on the embedded emulator.",
        discussion: """
            Starts the emulator on a free loopback port, sends a crowd of virtual users into a small
            NetFUNNEL segment, runs Scripts/flows/demo.lua for "you" with a live progress line, returns
            the key, then does the same through a Queue-it room, a CrowdHandler room and a Cloudflare room, and prints a summary.

            Examples:
              waitingroom demo
              waitingroom demo --crowd 40 --json
            """
    )

    var crowd = 20
    var flow: String?
    var json = false
    var stateOptions = StateOptions()
    var metricsOptions = MetricsOptions()

    static var arguments: [CLIArgument<Self>] {
        CLIArgument.group(\.stateOptions) + CLIArgument.group(\.metricsOptions) + [
            .option("crowd", \.crowd, help: "Virtual users in front of you."),
            .option("flow", \.flow, help: "The demo flow.", completion: .files),
            .flag("json", \.json, help: "One JSON object per event.")
        ]
    }

    func validate() throws(UsageError) {
        guard (0...500).contains(crowd) else { throw UsageError("--crowd must be 0…500") }
        try stateOptions.validate()
        try metricsOptions.validate()
    }

    func run() async throws {
        try await metricsOptions.serving(command: "demo") { try await runDemo() }
    }

    /// The command's work; ``run()`` serves `--metrics-port` around it.
    private func runDemo() async throws {
        let terminal = Terminal()
        let started = ContinuousClock.now
        guard let flowPath = flow ?? DemoCommand.locateDemoFlow() else {
            terminal.error("waitingroom demo: cannot find Scripts/flows/demo.lua; run from the repository root or pass --flow")
            throw ExitStatus.usage
        }
        let store: (any StateStore)?
        do { store = try await stateOptions.openStore() } catch {
            terminal.error("waitingroom demo: \(error)")
            throw ExitStatus.usage
        }
        let environment = stateOptions.environment(store: store)
        // The crowd are other visitors: they keep no pass (in your store or one they share), so
        // you never pass on one of theirs; their keys are journaled with yours.
        let crowdEnvironment = stateOptions.environment(store: CrowdStore(inner: store ?? MemoryPassStore()))
        let suite = DemoRooms.suite()
        let server: EmulatorServer
        do { server = try await suite.start() } catch {
            terminal.error("waitingroom demo: \(error)")
            throw ExitStatus.error
        }
        terminal.line("Emulator on \(server.baseURL) (NetFUNNEL + Queue-it + CrowdHandler + Cloudflare). Crowd: \(crowd) virtual users.")
        let defaults = EmulatorSuite.clientDefaults(for: server)
        let registry = VendorRegistry.standard
        var lines: [String] = []
        var worst = ExitStatus.passed

        for leg in DemoRooms.legs {
            let legStart = ContinuousClock.now
            terminal.line("")
            terminal.line("== \(leg.title)")
            let config = defaults[leg.vendor] ?? .object([:])
            let provider: any WaitingRoomProvider
            do { provider = try registry.makeProvider(vendor: leg.vendor, configuration: config, environment: crowdEnvironment) } catch {
                terminal.error("waitingroom demo: \(error)")
                throw ExitStatus.error
            }
            let crowdRun = Task {
                await Crowd(provider: provider, room: leg.room, control: .basic, hold: leg.hold).run(count: crowd)
            }
            try? await Task.sleep(for: .milliseconds(Int64(crowd) * 20 + 300))  // let the crowd line up first
            let printer = EventPrinter(json: json, terminal: terminal, label: "you")
            let status = await FlowRunner(
                path: flowPath,
                registry: registry,
                printer: printer,
                terminal: terminal,
                options: { options in
                    options.environment = environment
                    options.vendor = leg.vendor
                    options.config = config
                    options.entry = Entry(room: leg.room, userId: "you")
                }
            ).run()
            let visits = await crowdRun.value
            let passed = visits.filter { $0.outcome == "passed" }.count
            let leaked = suite.keysNotReturned()
            let seconds = (ContinuousClock.now - legStart).seconds
            lines.append(
                String(
                    format: "%@: you %@ · crowd %d/%d passed · keys not returned: %d · %.1f s",
                    leg.title, status == .passed ? "passed" : "ended with exit \(status.rawValue)",
                    passed, visits.count, leaked, seconds))
            if status != .passed { worst = status }
        }
        await server.stop()
        try? await store?.close()
        terminal.line("")
        terminal.line("== Summary")
        for line in lines { terminal.line(line) }
        terminal.line(String(format: "total %.1f s", (ContinuousClock.now - started).seconds))
        throw worst
    }

    /// `Scripts/flows/demo.lua` from the working directory or above the executable.
    static func locateDemoFlow() -> String? {
        let relative = "Scripts/flows/demo.lua"
        var candidates = [FileManager.default.currentDirectoryPath + "/" + relative]
        var dir = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").deletingLastPathComponent()
        for _ in 0..<6 {
            candidates.append(dir.appendingPathComponent(relative).path)
            dir = dir.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }
}
