import ArgumentParser
import Foundation
import WaitingRoom

/// `waitingroom bench`: the benchmarks, rerunnable (build with `-c release`).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run the benchmarks (use a release build: swift run -c release waitingroom bench).",
        discussion: """
            Suites (each line one suite; `all` runs them in this order):
              core          event fan-out, idle session memory
              lua           pcall vs full event dispatch, idle runtime memory
              netfunnel     replies parsed per second
              queueit       tokens validated per second vs bare HMAC-SHA256
              crowdhandler  answers decoded, signatures validated per second
              emulators     the emulators' requests per second under wrk, next to nginx
                            and a Hummingbird static route serving the same bytes (needs
                            wrk and nginx: apt-get install wrk nginx-light;
                            WR_BENCH_SECONDS sets each run, default 5)
              events        an emit with no subscriber, an event delivered to 3 streams
              startup       `waitingroom --help` vs `lua5.4 -e ''`, spawned in turn
              memory        peak RSS of `load` at 1k and 10k users in child processes,
                            bytes per waiting user (WR_BENCH_USERS=1000,10000 picks sizes)
            Figures are compared within one run (ratios), because machines are noisy; with
            --json each figure carries its baseline, ratio and goal when it has them.

            Examples:
              swift run -c release waitingroom bench core
              swift run -c release waitingroom bench all --json
            """
    )

    @Argument(help: "core, lua, netfunnel, queueit, crowdhandler, emulators, events, startup, memory or all.") var suite = "all"
    @Flag(help: "Print figures as JSON.") var json = false
    @Option(help: .hidden) var serveStatic: String?


    func validate() throws {
        guard BenchSuites.names.contains(suite) || suite == "all" else {
            throw ValidationError("unknown suite \(suite); expected \(BenchSuites.names.joined(separator: ", ")) or all")
        }
    }

    func run() async throws {
        let terminal = Terminal()
        if let serveStatic {
            try await EmulatorBenchmarks.serveStatic(folder: serveStatic, terminal: terminal)
            return
        }
        let names = suite == "all" ? BenchSuites.names : [suite]
        var all: [JSONValue] = []
        for name in names {
            let figures = await BenchSuites.run(name)
            for figure in figures {
                if json {
                    all.append(Self.json(figure, suite: name))
                } else {
                    terminal.line("[\(name)] \(figure)")
                }
            }
        }
        if json { terminal.line(JSONValue.array(all).jsonText) }
    }

    /// One figure as JSON: `suite`, `name`, `value`, `unit`, and when known `baseline`, `ratio`,
    /// `goal`, `skipped` (numbers that are not finite are `null`).
    static func json(_ figure: BenchSuites.Figure, suite: String) -> JSONValue {
        func number(_ value: Double) -> JSONValue { value.isFinite ? .number(value) : .null }
        var object: [String: JSONValue] = [
            "suite": .string(suite), "name": .string(figure.name), "value": number(figure.value), "unit": .string(figure.unit),
        ]
        if let baseline = figure.baseline { object["baseline"] = number(baseline) }
        if let ratio = figure.ratio { object["ratio"] = number(ratio) }
        if let goal = figure.goal { object["goal"] = .string(goal) }
        if let skipped = figure.skipped { object["skipped"] = .string(skipped) }
        return .object(object)
    }
}
