import Foundation
import WaitingRoom
import WaitingRoomBench

/// `waitingroom bench`: the benchmarks, rerunnable (build with `-c release`).
struct BenchCommand: CLICommand {
    static let about = CommandDescription(
        name: "bench",
        abstract: "Run the benchmarks (use a release build: swift run -c release waitingroom bench).",
        discussion: """
            Suites (each line one suite; `all` runs them in this order):
              core          event fan-out, idle session memory
              lua           pcall vs full event dispatch, idle runtime memory
              netfunnel     replies parsed per second
              queueit       tokens validated, and the gate's cookie check decided, per
                            second vs bare HMAC-SHA256
              crowdhandler  answers decoded, signatures validated per second
              emulators     the emulators' requests per second under wrk, next to nginx
                            and a Hummingbird static route serving the same bytes (needs
                            wrk and nginx: apt-get install wrk nginx-light;
                            WR_BENCH_SECONDS sets each run, default 5)
              state         journal writes per second of the SQLite and PostgreSQL stores vs
                            a bare INSERT, memory per waiting user with --state (PostgreSQL:
                            WR_BENCH_POSTGRES, or a throwaway cluster when it is installed)
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

    var suite = "all"
    var json = false
    var markdown = false
    /// The folder `bench emulators` has a child process serve over Hummingbird's static route.
    var serveStatic: String?
    /// With `--serve-static`: also serve it on this Unix-domain socket (`bench/wrk.sh`'s gate rows).
    var unixSocket: String?

    static var arguments: [CLIArgument<Self>] {
        [
            .positional(
                "suite", \.suite, help: "core, lua, netfunnel, queueit, crowdhandler, emulators, state, events, startup, memory or all.",
                isRequired: false, completion: .choices(BenchSuites.names + ["all"])),
            .flag("json", \.json, help: "Print figures as JSON."),
            .flag(
                "markdown", \.markdown,
                help: "Print figures as one Markdown table (suite, figure, value, baseline, ratio, goal, met), as README's."),
            .option("serve-static", \.serveStatic, help: "", isHidden: true),
            .option("unix-socket", \.unixSocket, help: "", isHidden: true)
        ]
    }

    /// Only the bench's static-reply child serves HTTP.
    var servesOnEventLoops: Bool { serveStatic != nil }

    func validate() throws(UsageError) {
        guard BenchSuites.names.contains(suite) || suite == "all" else {
            throw UsageError("unknown suite \(suite); expected \(BenchSuites.names.joined(separator: ", ")) or all")
        }
        guard !(json && markdown) else { throw UsageError("--json and --markdown: pick one") }
    }

    func run() async throws {
        let terminal = Terminal()
        if let serveStatic {
            try await EmulatorBenchmarks.serveStatic(folder: serveStatic, unixSocket: unixSocket, announce: terminal.line)
            return
        }
        let names = suite == "all" ? BenchSuites.names : [suite]
        var all: [JSONValue] = []
        var rows: [String] = []
        for name in names {
            let figures = await BenchSuites.run(name)
            for figure in figures {
                if json {
                    all.append(figure.json(suite: name))
                } else if markdown {
                    rows.append(figure.markdownRow(suite: name))
                } else {
                    terminal.line("[\(name)] \(figure)")
                }
            }
        }
        if json { terminal.line(JSONValue.array(all).jsonText) }
        if markdown {
            terminal.line("| suite | figure | value | baseline | ratio | goal | met |")
            terminal.line("|---|---|---|---|---|---|---|")
            for row in rows { terminal.line(row) }
        }
    }
}
