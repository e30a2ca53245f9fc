import Foundation
import Testing
import WaitingRoomEmulators

/// Every subcommand end to end against the embedded emulator, with its exit statuses.
@Suite("waitingroom end to end", .serialized, .timeLimit(.minutes(3)))
struct CLIEndToEndTests {
    func write(_ text: String, name: String) throws -> String {
        let path = CLIProcess.temporaryDirectory() + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func checkExitsByOutcome() async throws {
        let json = try await CLIProcess.expectCheckPasses("netfunnel", "service_1", "segKey_basic")
        #expect(json?["code"] as? Int == 200)

        let blocked = try await CLIProcess.check("netfunnel", "service_1", "segKey_block")
        #expect(blocked.status == 2)
        #expect(blocked.stdout.contains("301"))

        let queue = try await CLIProcess.check("queueit", "demo", "sale")
        #expect(queue.status == 6)
        let safetynet = try await CLIProcess.check("queueit", "demo", "open")
        #expect(safetynet.status == 0)

        let unknown = try await CLIProcess.check("nobody", "a", "b", emulator: false)
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("vendor"))
        let badSetting = try await CLIProcess.check("netfunnel", "service_1", "segKey_basic", ["--set", "retryCount=99"])
        #expect(badSetting.status == 64)
        #expect(badSetting.stderr.contains("retryCount"))
    }

    @Test func runPassesAFlowAgainstTheEmulatorWithJSONEvents() async throws {
        let result = try await CLIProcess.run(["run", "Scripts/flows/demo.lua", "--emulator", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let objects = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.contains { $0["event"] as? String == "progress" || $0["event"] as? String == "passed" })
        let last = objects.last
        #expect(last?["event"] as? String == "result")
        #expect(last?["outcome"] as? String == "passed")
        #expect((last?["completion"] as? [String: Any])?["code"] as? Int == 200)
    }

    /// `run --emulator` points every vendor at the emulator even when the flow names its own
    /// servers: a flow written for the real service must not reach it (here: port 9 on loopback,
    /// where nothing listens; before, the flow went there and failed, and both Queue-it example
    /// flows, which name `wr emulate`'s 127.0.0.1:8080, failed unless one ran there).
    @Test func runWithTheEmulatorReplacesTheFlowsOwnServerAddresses() async throws {
        let flows: [(vendor: String, config: String, entry: String)] = [
            (
                "netfunnel",
                #"clientId = "emulator-0000", serverUrl = "http://127.0.0.1:9", settingUrl = "http://127.0.0.1:9/x/nf-setting.json""#,
                #"scope = "service_1", room = "segKey_basic""#
            ),
            (
                "queueit", #"customerId = "demo", waitingRoomDomain = "http://127.0.0.1:9", queuePage = "follow", pollIntervalSeconds = 1"#,
                #"scope = "demo", room = "open""#
            ),
            (
                "crowdhandler",
                #"publicKey = "demo-public-key", apiURL = "http://127.0.0.1:9", waitURL = "http://127.0.0.1:9", siteURL = "http://127.0.0.1:9/site""#,
                #"scope = "site", room = "demo-open""#
            ),
            ("cloudflare", #"siteURL = "http://127.0.0.1:9/cf""#, #"scope = "site", room = "demo-open""#)
        ]
        for flow in flows {
            let path = try write(
                """
                return { vendor = "\(flow.vendor)", config = { \(flow.config) }, entry = { \(flow.entry) } }
                """, name: "elsewhere-\(flow.vendor).lua")
            let result = try await CLIProcess.run(["run", path, "--emulator"])
            #expect(result.status == 0, "\(flow.vendor): \(result.stdout) \(result.stderr)")
            #expect(
                !(result.stdout + result.stderr).contains("127.0.0.1:9/") && !(result.stdout + result.stderr).contains("127.0.0.1:9 "),
                "\(flow.vendor) still reached the flow's own address: \(result.stdout) \(result.stderr)")
        }
        // --set still chooses: the flow's address replaced by the one given on the command line
        let path = try write(
            """
            return { vendor = "queueit", config = { customerId = "demo", waitingRoomDomain = "http://127.0.0.1:9" }, entry = { scope = "demo", room = "open" } }
            """, name: "elsewhere-set.lua")
        let chosen = try await CLIProcess.run([
            "run", path, "--emulator", "--set", "queueit.waitingRoomDomain=http://127.0.0.1:7", "--set", "queueit.requestTimeoutSeconds=2"
        ])
        #expect(chosen.status == 4, "\(chosen.stdout) \(chosen.stderr)")
        #expect((chosen.stdout + chosen.stderr).contains("127.0.0.1:7"), "\(chosen.stdout) \(chosen.stderr)")
        // the README's and the flows' own commands
        for name in ["queueit-token", "hybrid-api"] {
            let result = try await CLIProcess.run(["run", "Scripts/flows/\(name).lua", "--emulator"])
            #expect(result.status == 0, "\(name): \(result.stdout) \(result.stderr)")
            #expect(!result.stdout.contains("127.0.0.1:8080"), "\(name) went to 8080: \(result.stdout)")
        }
    }

    /// `--set` gives only part of a flow's vendor options; the flow's `config` gives the rest.
    /// The options were checked by making a provider from the command line's part alone, which
    /// logged "no clientId: bypass mode, … never contacted" for a flow that has a clientId and
    /// did contact the server (and began a settings fetch from that half-made provider).
    @Test func runWithServerAddressesOnTheCommandLineKeepsTheFlowsOwnOptions() async throws {
        let suite = try EmulatorSuite(document: .object([:]))
        let server = try await suite.start(host: "127.0.0.1", port: 0)
        let serverURL = try #require(EmulatorSuite.clientDefaults(for: server)["netfunnel"]?.objectValue?["serverUrl"]?.stringValue)
        let path = try write(
            """
            return { vendor = "netfunnel", config = { clientId = "emulator-0000" },
                     entry = { scope = "service_1", room = "segKey_basic" },
                     on_success = function(event, session) wr.emit("held", { code = event.code }) end }
            """, name: "half-on-the-command-line.lua")
        let result = try await CLIProcess.run(["run", path, "--set", "netfunnel.serverUrl=\(serverURL)", "--json"])
        await server.stop()
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains(#""name":"held""#), "\(result.stdout)")
        #expect(!result.stderr.contains("bypass mode"), "\(result.stderr)")
        // a bad option on the command line is still a usage error naming it
        let bad = try await CLIProcess.run(["run", path, "--set", "netfunnel.networkTimeout=50"])
        #expect(bad.status == 64, "\(bad.stdout) \(bad.stderr)")
        #expect(bad.stderr.contains("networkTimeout"), "\(bad.stderr)")
    }

    /// `--state` naming a file that is not a store file is a usage error and the file is left
    /// as it is (it was moved aside as damage and a store written in its place).
    @Test func stateNamingSomeoneElsesFileIsRefusedAndLeftAsItIs() async throws {
        let folder = CLIProcess.temporaryDirectory() + "/foreign-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, content) in [("passwd", "root:x:0:0:root:/root:/bin/bash\n"), ("package.json", #"{"name": "my-app"}"#)] {
            let path = folder + "/" + name
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            let result = try await CLIProcess.run([
                "check", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "segKey_basic", "--state", path
            ])
            #expect(result.status == 64, "\(name): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("is not a store file") && result.stderr.contains("nothing was changed"), "\(result.stderr)")
            #expect(try String(contentsOfFile: path, encoding: .utf8) == content)
            let siblings = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
            #expect(!siblings.contains { $0.hasPrefix(name + ".corrupt-") || $0 == name + "-wal" }, "\(siblings)")
        }
    }

    @Test func runExitStatusesTellTheOutcome() async throws {
        let blocked = try write(
            """
            return { vendor = "netfunnel", entry = { scope = "service_1", room = "segKey_block" } }
            """, name: "blocked.lua")
        let result = try await CLIProcess.run(["run", blocked, "--emulator"])
        #expect(result.status == 2, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("blocked"))

        let aborted = try write(
            """
            return { vendor = "netfunnel", entry = { scope = "service_1", room = "segKey_block" },
                     on_block = function(e) return wr.abort("not today") end }
            """, name: "abort.lua")
        #expect(try await CLIProcess.run(["run", aborted, "--emulator"]).status == 3)

        // a handler that fails ends with 5 whatever the outcome, which is still printed
        let failing = try write(
            """
            return { vendor = "netfunnel", entry = { scope = "service_1", room = "segKey_basic" },
                     on_success = function(e) error("boom") end }
            """, name: "failing-handler.lua")
        let failed = try await CLIProcess.run(["run", failing, "--emulator", "--json"])
        #expect(failed.status == 5, "\(failed.stdout) \(failed.stderr)")
        #expect(failed.stdout.contains(#""outcome":"passed""#) && failed.stdout.contains(#""handler_errors":1"#), "\(failed.stdout)")
        #expect(failed.stderr.contains("boom"))

        let broken = try write("return {", name: "broken.lua")
        let syntax = try await CLIProcess.run(["run", broken])
        #expect(syntax.status == 5)
        #expect(syntax.stderr.contains("broken.lua:1"))

        let missing = try await CLIProcess.run(["run", "/nonexistent/flow.lua"])
        #expect(missing.status == 5)
        #expect(missing.stderr.contains("/nonexistent/flow.lua"))
    }

    @Test func runReportsABadConfigFileWithTheFieldNamed() async throws {
        let config = try write(#"{"netfunnel": {"networkTimeout": 50}}"#, name: "bad.json")
        let result = try await CLIProcess.run(["run", "Scripts/flows/demo.lua", "--emulator", "--config", config])
        #expect(result.status == 64, "\(result.stdout) \(result.stderr)")
        #expect((result.stdout + result.stderr).contains("networkTimeout"))
        let notJSON = try write("{nope", name: "nope.json")
        let unreadable = try await CLIProcess.run(["run", "Scripts/flows/demo.lua", "--config", notJSON])
        #expect(unreadable.status == 64)
        #expect(unreadable.stderr.contains("nope.json"))
    }

    @Test func replWaitsOnTheEmulatorAtThePrompt() async throws {
        // then the pass is completed, and the emulator stopped twice
        let input =
            CLIProcess.replWaitLines("netfunnel", scope: "service_1", room: "segKey_basic")
            + "\ns:complete().code\n:emulator stop\n:emulator stop"
        let result = try await CLIProcess.repl(input)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("passed"), "\(result.stdout)\n\(result.stderr)")
        #expect(lines.contains("200"))
        // the first stop stops it; a second says there is none to stop
        #expect(
            lines.filter { $0 == "emulator stopped" }.count == 1 && lines.contains { $0.hasPrefix("no emulator is running") },
            "\(result.stdout)")
    }

    /// `:load FILE` runs the file in the REPL's globals, and its errors name the file and line
    /// (they read "stdin:1:", with the file's name only in front).
    @Test func replLoadNamesTheFileInErrors() async throws {
        let good = try write("loaded = 41\nreturn loaded + 1\n", name: "good.lua")
        let broken = try write("local x = 1\nx = = 2\n", name: "broken-chunk.lua")
        let failing = try write("local function f() error('boom') end\nf()\n", name: "failing-chunk.lua")
        let input = ":load \(good)\nloaded\n:load \(broken)\n:load \(failing)\n:load /nonexistent/x.lua\n"
        let result = try await CLIProcess.run(["repl", "--history", CLIProcess.temporaryDirectory() + "/h-load"], input: input)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("42") && lines.contains("41"), "\(result.stdout)")
        #expect(result.stderr.contains("broken-chunk.lua:2:"), "\(result.stderr)")
        #expect(result.stderr.contains("failing-chunk.lua:1: boom"), "\(result.stderr)")
        #expect(!result.stderr.contains("stdin:"), "\(result.stderr)")
        #expect(result.stderr.contains(":load: cannot read /nonexistent/x.lua"), "\(result.stderr)")
    }

    @Test func demoFinishesAndSummarises() async throws {
        let result = try await CLIProcess.run(["demo", "--crowd", "6"], timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("== Summary"))
        #expect(result.stdout.contains("keys not returned: 0"))
        // You wait your turn in each room: never on a pass a crowd user stored (CrowdHandler and
        // Cloudflare say "a stored pass is still valid", Queue-it "Pass taken from the pass store").
        #expect(!result.stdout.contains("stored pass"), "\(result.stdout)")
        #expect(!result.stdout.contains("pass store"), "\(result.stdout)")
        for vendor in ["NetFUNNEL", "Queue-it", "CrowdHandler", "Cloudflare"] {
            #expect(result.stdout.contains("== \(vendor)"), "the demo shows \(vendor)")
        }
    }

    @Test func loadDrivesVirtualUsersAndPrintsAHistogram() async throws {
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "segKey_section",
                "--users", "4", "--hold", "0", "--json"
            ], timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        let json = try CLIProcess.jsonObject(result.stdout)
        #expect((json?["outcomes"] as? [String: Any])?["passed"] as? Int == 4)
    }

    @Test func benchRunsTheCoreSuite() async throws {
        let result = try await CLIProcess.run(["bench", "core", "--json"], timeout: .seconds(120))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("ns/event"))
    }
}
