import ArgumentParser
import Foundation
import WaitingRoom

/// `waitingroom bench`: the benchmarks, rerunnable (build with `-c release`).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run the benchmarks (use a release build: swift run -c release waitingroom bench).",
        discussion: """
            Suites: core (event fan-out, idle session memory), lua (pcall vs full event dispatch,
            idle runtime memory), netfunnel (replies parsed per second), crowdhandler (answers decoded and signatures validated per second), queueit (tokens validated per
            second), all. Figures are compared within one run (ratios), because machines are noisy.

            Examples:
              swift run -c release waitingroom bench core
              swift run -c release waitingroom bench all --json
            """
    )

    @Argument(help: "core, lua, netfunnel, queueit, crowdhandler or all.") var suite = "all"
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
            let figures = await BenchSuites.run(name)
            for figure in figures {
                if json {
                    all.append(.object(["suite": .string(name), "name": .string(figure.name), "value": .number(figure.value), "unit": .string(figure.unit)]))
                } else {
                    terminal.line("[\(name)] \(figure)")
                }
            }
        }
        if json { terminal.line(JSONValue.array(all).jsonText) }
    }
}
