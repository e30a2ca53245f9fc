import Foundation
import Testing
import WaitingRoomTesting
import WebDriver

@Suite("waitingroom CLI", .serialized, .timeLimit(.minutes(3)))
struct CLITests {
    @Test func helpHasExamplesForEveryCommand() async throws {
        let top = try await CLIProcess.run(["--help"])
        #expect(top.status == 0)
        #expect(top.stdout.contains("Examples:"))
        for command in ["run", "repl", "check", "emulate", "demo", "load", "bench"] {
            let help = try await CLIProcess.run([command, "--help"])
            #expect(help.status == 0, "\(command) --help")
            #expect(help.stdout.contains("Example"), "\(command) --help has an example")
        }
    }

    /// Help and completion scripts are answered on the main thread, and the process exits
    /// without starting the task a command runs in.
    @Test func helpAndCompletionScriptsRunAndExit() async throws {
        let help = try await CLIProcess.run(["help", "check"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("OVERVIEW: Check a room once"))
        #expect(help.stdout.contains("--enqueue-token <enqueue-token>"))
        let script = try await CLIProcess.run(["--generate-completion-script", "bash"])
        #expect(script.status == 0)
        #expect(script.stdout.hasPrefix("#!/bin/bash"))
        #expect(script.stdout.contains("emulate"))
        let fish = try await CLIProcess.run(["--generate-completion-script=fish"])
        #expect(fish.status == 0)
        #expect(fish.stdout.contains("complete -c waitingroom -n '__fish_seen_subcommand_from check' -l control -x -a 'basic section'"))
        let unknownShell = try await CLIProcess.run(["--generate-completion-script", "tcsh"])
        #expect(unknownShell.status == 64)
        #expect(unknownShell.stderr.contains("tcsh"))
    }

    @Test func unknownFlagsAndBadValuesExit64() async throws {
        let unknown = try await CLIProcess.run(["run", "--frobnicate"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("Usage") || unknown.stderr.contains("usage"))
        let bad = try await CLIProcess.run(["emulate", "--port", "seventy"])
        #expect(bad.status == 64)
        let range = try await CLIProcess.run(["emulate", "--port", "70000"])
        #expect(range.status == 64)
        let subcommand = try await CLIProcess.run(["fly"])
        #expect(subcommand.status == 64)
        #expect(subcommand.stderr.contains("Unknown subcommand 'fly'"))
        let missing = try await CLIProcess.run(["check", "--scope", "s", "--room", "r"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--vendor <vendor>"))
        let noValue = try await CLIProcess.run(["demo", "--crowd"])
        #expect(noValue.status == 64)
        #expect(noValue.stderr.contains("Missing value for '--crowd <crowd>'"))
    }

    @Test func pipedREPLEvaluatesExpressionsFunctionsAndReportsErrors() async throws {
        let input = """
            1 + 1
            t = {a = 1, b = {2, 3}}
            t
            function f(a)
              return a + 1
            end
            f(41)
            error("boom")
            "still here"
            """
        let result = try await CLIProcess.repl(input)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("2"))
        #expect(lines.contains("42"))
        #expect(result.stdout.contains("still here"))
        #expect(result.stdout.contains("a = 1") || result.stdout.contains("a=1"))
        #expect(result.stderr.contains("boom"))
        #expect(!result.stdout.contains("> "), "no prompts when stdin is not a terminal")
    }

    @Test func badConfigFileIsReportedWithTheFieldNamed() async throws {
        let dir = CLIProcess.temporaryDirectory()
        let path = dir + "/emulator.json"
        try Data(#"{"netfunnel": {"projects": {"p": {"segments": {"s": {"limit": "many"}}}}}}"#.utf8).write(to: URL(fileURLWithPath: path))
        let result = try await CLIProcess.run(["emulate", "--port", "0", "--config", path])
        #expect(result.status == 64)
        #expect(result.stderr.contains("limit"))
        let missing = try await CLIProcess.run(["emulate", "--port", "0", "--config", dir + "/nope.json"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("nope.json"))
    }

    @Test func emulateServesAndStopsOnSIGTERM() async throws {
        let process = try CLIProcess.start(["emulate", "--port", "0", "--json"])
        let watchdog = Task.detached {
            try await Task.sleep(for: .seconds(30))
            if process.isRunning { process.interrupt() }
        }
        defer { watchdog.cancel() }
        let line = await CLIProcess.read(process) { $0.contains("\n") }
        #expect(line.contains("http://127.0.0.1:"))
        process.terminate()  // SIGTERM
        let status = await DedicatedThread.run(name: "cli.wait") { process.waitForExit() }
        #expect(status == 0)
    }
}
