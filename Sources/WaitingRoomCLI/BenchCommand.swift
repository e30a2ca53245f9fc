import ArgumentParser
import Foundation
import WaitingRoom
import WaitingRoomTesting

/// `waitingroom bench`: the benchmarks, rerunnable (build with `-c release`).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run the benchmarks (use a release build: swift run -c release waitingroom bench).",
        discussion: """
            Suites: core (event fan-out, idle session memory), lua (pcall vs full event dispatch,
            idle runtime memory), netfunnel (replies parsed per second), queueit (tokens validated per
            second), events (an emit with no subscriber, an event delivered to 3 streams), startup
            (`waitingroom --help` vs `lua5.4 -e ''`, both spawned in turn), memory (peak RSS of
            `load` at 1k and 10k users in child processes; marginal bytes per waiting user), all.
            Figures are compared within one run (ratios to a baseline), because machines are noisy;
            --json gives each figure's name, value, unit, baseline, ratio, goal and whether it is met.

            Examples:
              swift run -c release waitingroom bench core
              swift run -c release waitingroom bench all --json
            """
    )

    @Argument(help: "core, lua, netfunnel, queueit, events, startup, memory or all.") var suite = "all"
    @Flag(help: "Print figures as JSON.") var json = false

    func validate() throws {
        guard BenchSuites.names.contains(suite) || suite == "all" else {
            throw ValidationError("unknown suite \(suite); expected \(BenchSuites.names.joined(separator: ", ")) or all")
        }
    }

    func run() async throws {
        let terminal = Terminal()
        let names = suite == "all" ? BenchSuites.names : [suite]
        var all: [JSONValue] = []
        for name in names {
            let figures = await BenchSuites.rows(name)
            for figure in figures {
                if json {
                    all.append(figure.json(suite: name))
                } else {
                    terminal.line("[\(name)] \(figure)")
                }
            }
        }
        if json { terminal.line(JSONValue.array(all).jsonText) }
    }
}
