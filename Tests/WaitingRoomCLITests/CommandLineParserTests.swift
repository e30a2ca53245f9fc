import Foundation
import Testing
import WaitingRoom
import WebDriver

@testable import WaitingRoomCLI

/// `waitingroom`'s command line, parsed in process: values into the commands' properties, the
/// usage errors a person meets, help pages, and the completion scripts run in a real bash.
@Suite("command-line parser")
struct CommandLineParserTests {
    let parser = WaitingRoomCommand.parser

    func command<C: CLICommand>(_ words: [String], as _: C.Type = C.self) throws -> C {
        guard case .run(let parsed) = try parser.parse(words) else {
            Issue.record("\(words) printed instead of running")
            throw UsageError("not a command")
        }
        return try #require(parsed as? C)
    }

    func usageError(_ words: [String]) -> UsageError? {
        do {
            _ = try parser.parse(words)
            return nil
        } catch {
            return error
        }
    }

    func printed(_ words: [String]) throws -> String? {
        guard case .output(let text) = try parser.parse(words) else { return nil }
        return text
    }

    @Test func valuesLandInTheirProperties() throws {
        let run: RunCommand = try command([
            "run", "flow.lua", "--config", "c.json", "--set", "netfunnel.retryCount=3", "--set=queueit.x=1",
            "--drain-timeout=2.5", "--emulator", "--json", "--emulator-config", "e.json"
        ])
        #expect(run.flow == "flow.lua")
        #expect(run.config == "c.json")
        #expect(run.settings == ["netfunnel.retryCount=3", "queueit.x=1"])
        #expect(run.drainTimeout == 2.5)
        #expect(run.emulator && run.json)
        #expect(run.emulatorConfig == "e.json")

        let defaults: RunCommand = try command(["run", "f.lua"])
        #expect(defaults.drainTimeout == 30 && !defaults.emulator && !defaults.json && defaults.settings.isEmpty && defaults.config == nil)

        let load: LoadCommand = try command([
            "load", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "segKey_basic",
            "--control", "section", "--user-id", "u1", "--users", "7", "--hold", "0", "--chaos", "2", "--chaos-delay", "3",
            "--faults", "f.json", "--report", "r.html", "--set", "retryCount=3"
        ])
        #expect(load.vendorOptions.vendor == "netfunnel" && load.vendorOptions.emulator && load.vendorOptions.settings == ["retryCount=3"])
        #expect(
            load.room.scope == "service_1" && load.room.room == "segKey_basic" && load.room.control == .section && load.room.userId == "u1")
        #expect(load.users == 7 && load.hold == 0 && load.chaos == 2 && load.chaosDelay == 3)
        #expect(load.faults == "f.json" && load.report == "r.html")

        let bench: BenchCommand = try command(["bench"])
        #expect(bench.suite == "all")
        let hidden: BenchCommand = try command(["bench", "--serve-static", "/tmp/x"])
        #expect(hidden.serveStatic == "/tmp/x" && hidden.servesOnEventLoops)
        let emulate: EmulateCommand = try command(["emulate", "--port", "0", "--host", "::1"])
        #expect(emulate.port == 0 && emulate.host == "::1" && emulate.servesOnEventLoops)
    }

    @Test func lastValueWinsAndDoubleDashEndsOptions() throws {
        let demo: DemoCommand = try command(["demo", "--crowd", "3", "--crowd", "4"])
        #expect(demo.crowd == 4)
        let run: RunCommand = try command(["run", "--json", "--", "--odd-name.lua"])
        #expect(run.flow == "--odd-name.lua" && run.json)
        let negative = usageError(["load", "--vendor", "scripted", "--hold", "-1"])
        #expect(negative?.message == "--hold must be 0…600 seconds", "a negative number is a value, and validate refuses it")
        // a report path that cannot be written is refused before the run, not after it
        let folder = CLIProcess.temporaryDirectory()
        #expect(usageError(["load", "--vendor", "scripted", "--report", folder])?.message.contains("is a directory") == true)
        #expect(
            usageError(["load", "--vendor", "scripted", "--report", folder + "/missing/r.html"])?.message.contains("does not exist") == true
        )
        #expect(usageError(["load", "--vendor", "scripted", "--report", folder + "/r.html"]) == nil)
    }

    @Test func badCommandLinesAreTypedUsageErrorsNamingTheWord() {
        let cases: [([String], String)] = [
            (["fly"], "Unknown subcommand 'fly'"),
            (["--fly"], "Unknown option '--fly'"),
            (["run", "f.lua", "--frobnicate"], "Unknown option '--frobnicate'"),
            (["run", "f.lua", "-x"], "Unknown option '-x'"),
            (["run"], "Missing expected argument '<flow>'"),
            (["run", "a.lua", "b.lua"], "Unexpected argument 'b.lua'"),
            (["run", "f.lua", "--json=yes"], "'--json' takes no value"),
            (["run", "f.lua", "--config"], "Missing value for '--config <config>'"),
            (["run", "f.lua", "--config", "--json"], "Missing value for '--config <config>'"),
            (["emulate", "--port", "seventy"], "The value 'seventy' is invalid for '--port <port>'"),
            (["emulate", "--port", "70000"], "--port must be 0…65535"),
            (["run", "f.lua", "--drain-timeout", "nan"], "The value 'nan' is invalid for '--drain-timeout <drain-timeout>'"),
            (
                ["check", "--vendor", "netfunnel", "--control", "sideways"],
                "The value 'sideways' is invalid for '--control <control>'; expected basic, section"
            ),
            (["check", "--scope", "s"], "Missing expected argument '--vendor <vendor>'"),
            (
                ["check", "--vendor", "queueit", "--enqueue-token", "t", "--enqueue-key", "k"],
                "give --enqueue-token or --enqueue-key, not both"
            ),
            (
                ["load", "--vendor", "netfunnel", "--chaos", "1"],
                "--chaos and --faults need --emulator (faults are injected into the embedded emulator)"
            ),
            (["bench", "everything"], "unknown suite everything"),
            (["bench", "--json", "--markdown"], "--json and --markdown: pick one"),
            (["help", "fly"], "Unknown subcommand 'fly'"),
            (["--generate-completion-script="], "Unknown shell ''"),
            (["--generate-completion-script=tcsh"], "Unknown shell 'tcsh'")
        ]
        for (words, message) in cases {
            let error = usageError(words)
            #expect(error?.message.hasPrefix(message) == true, "\(words): \(error?.message ?? "parsed")")
        }
        let report = usageError(["emulate", "--port", "x"])?.report ?? ""
        #expect(report.contains("Usage: waitingroom emulate [--config <config>] [--host <host>] [--port <port>] [--json]"))
        #expect(report.contains("See 'waitingroom help emulate' for more information."))
    }

    @Test func helpPagesListEveryVisibleArgument() throws {
        for words in [[], ["--help"], ["-h"], ["help"]] {
            let root = try #require(try printed(words), "\(words)")
            #expect(root.hasPrefix("OVERVIEW: Wait in any vendor's virtual waiting room"))
            for subcommand in WaitingRoomCommand.subcommands {
                #expect(root.contains("\n  \(subcommand.about.name) "), "root help lists \(subcommand.about.name)")
            }
        }
        for subcommand in WaitingRoomCommand.subcommands {
            try check(subcommand)
        }
        let page = try #require(try printed(["run", "x.lua", "--json", "--help"]))
        #expect(page.hasPrefix("OVERVIEW: Run a Lua flow"), "--help anywhere after the subcommand")
        #expect(page.contains("(default: 30.0)"))
        let bench = try #require(try printed(["help", "bench"]))
        #expect(!bench.contains("serve-static"), "hidden options stay out of help")
        #expect(bench.contains("[<suite>]"))
    }

    func check<C: CLICommand>(_: C.Type) throws {
        let page = try #require(try printed([C.about.name, "--help"]))
        #expect(page.contains("OVERVIEW: \(C.about.abstract)"))
        #expect(page.contains("USAGE: waitingroom \(C.about.name)"))
        for argument in C.arguments where !argument.isHidden {
            #expect(page.contains("  \(argument.synopsis)"), "\(C.about.name) --help shows \(argument.synopsis)")
        }
        #expect(try printed(["help", C.about.name]) == page)
    }

    @Test func helpRowsWrapAtEightyColumns() {
        let row = HelpText.row("--drain-timeout <drain-timeout>", String(repeating: "word ", count: 40))
        for line in row.split(separator: "\n") { #expect(line.count <= HelpText.width) }
        #expect(row.hasPrefix("  --drain-timeout <drain-timeout>\n" + String(repeating: " ", count: HelpText.column) + "word"))
        #expect(HelpText.wrap("", width: 10) == [""])
        #expect(HelpText.wrap("averyveryverylongword b", width: 5) == ["averyveryverylongword", "b"])
    }

    /// The bash script in a real bash: completions for a subcommand, its options and their values.
    @Test func bashCompletionCompletes() async throws {
        let script = try #require(try printed(["--generate-completion-script", "bash"]))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wr-completion-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("waitingroom.bash")
        try Data(script.utf8).write(to: file)
        func complete(_ words: [String]) throws -> [String] {
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            let probe =
                "source '\(file.path)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _waitingroom; printf '%s\\n' \"${COMPREPLY[@]}\""
            let (_, data) = try SpawnedProcess.run(
                "/bin/bash", arguments: ["--norc", "--noprofile", "-c", probe], directory: dir.path, stderr: .discard)
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        #expect(try complete(["waitingroom", "ch"]) == ["check"])
        #expect(try complete(["waitingroom", "check", "--con"]) == ["--config", "--control"])
        #expect(try complete(["waitingroom", "check", "--control", ""]) == ["basic", "section"])
        #expect(try complete(["waitingroom", "bench", "st"]).sorted() == ["startup", "state"])
        #expect(try complete(["waitingroom", "help", "lo"]) == ["load"])
        #expect(try complete(["waitingroom", "run", "waiting"]) == ["waitingroom.bash"], "a flow is a path")
        #expect(try complete(["waitingroom", "--generate-completion-script", "z"]) == ["zsh"])
        let zsh = try #require(try printed(["--generate-completion-script", "zsh"]))
        #expect(
            zsh.hasPrefix("#compdef waitingroom") && zsh.contains("bashcompinit") && zsh.contains("complete -F _waitingroom waitingroom"))
    }
}
