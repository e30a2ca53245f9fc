import Foundation
import Testing
import WaitingRoomTesting

/// `load` with faults injected into the embedded emulator, `run --set`, and the paths the help
/// texts and READMEs name.
@Suite("waitingroom faults, settings and paths", .serialized, .timeLimit(.minutes(3)))
struct CLIFaultsAndPathsTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    @Test func loadWithChaosPassesEveryUserAndLosesNoKey() async throws {
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "netfunnel", "--emulator", "--emulator-config", "Scripts/load/emulator-rooms.json",
                "--scope", "service_1", "--room", "segKey_load", "--users", "120", "--hold", "0.2",
                // 3 s timeouts and 6 s delays: a loaded machine answering late cannot pass for a fault
                // (a request answered after its client gave up leaves a key nobody receives)
                "--set", "retryCount=3", "--set", "networkTimeout=3000", "--chaos", "2", "--chaos-delay", "6", "--json"
            ], timeout: .seconds(120))
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try Self.json(result.stdout)
        #expect((summary["outcomes"] as? [String: Any])?["passed"] as? Int == 120, "\(summary)")
        #expect(summary["faultsInstalled"] as? Int == 24, "2 of 4 kinds on 3 opcodes")
        #expect(summary["faultsInjected"] as? Int == 24, "\(summary)")
        #expect(summary["keysNeverReturned"] as? Int == 0, "\(summary)")
        #expect(summary["keysAutoReturned"] as? Int == 0)
        #expect(summary["waitersDropped"] as? Int == 0)
        #expect(summary["keysIssued"] as? Int == summary["keysReturned"] as? Int)
        for key in ["keysReturnedLate", "backgroundReturnsGivenUp", "p50", "p99", "wall_seconds"] {
            #expect(summary[key] != nil, "\(key) in the JSON summary")
        }
    }

    @Test func queueItLoadWithChaosGivesEveryVisitorItsPass() async throws {
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "queueit", "--emulator", "--emulator-config", "Scripts/load/emulator-rooms.json",
                "--scope", "demo", "--room", "load", "--users", "60", "--hold", "0", "--chaos", "2", "--json"
            ], timeout: .seconds(120))
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try Self.json(result.stdout)
        #expect((summary["outcomes"] as? [String: Any])?["passed"] as? Int == 60, "\(summary)")
        #expect(summary["passedVisitors"] as? Int == 60, "\(summary)")
        #expect(summary["faultsInstalled"] as? Int == 16, "2 of 4 kinds on enqueue and on the queue page")
        #expect(summary["faultsInjectedOnEnqueue"] as? Int == 8, "\(summary)")
    }

    /// Issue 25: NetFUNNEL's error page (`errorUrl`, else the emulator's settings document's)
    /// goes with the error in `--json`.
    @Test func netfunnelErrorsCarryTheErrorPage() async throws {
        let fromSettings = try await CLIProcess.run(
            [
                "check", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "no_such_segment", "--json"
            ], timeout: .seconds(60))
        #expect(fromSettings.status == 4, "\(fromSettings.stderr)")
        let details = (try Self.json(fromSettings.stdout)["error"] as? [String: Any])?["details"] as? [String: Any]
        #expect((details?["errorUrl"] as? String)?.hasSuffix("/_emulator/netfunnel/error.html") == true, "\(fromSettings.stdout)")
        let configured = try await CLIProcess.run(
            [
                "check", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "no_such_segment",
                "--set", "errorUrl=https://errors.example/nf", "--json"
            ], timeout: .seconds(60))
        let mine = (try Self.json(configured.stdout)["error"] as? [String: Any])?["details"] as? [String: Any]
        #expect(mine?["errorUrl"] as? String == "https://errors.example/nf", "\(configured.stdout)")
        let empty = try await CLIProcess.run(
            [
                "check", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "segKey_basic", "--set", "serverUrl="
            ], timeout: .seconds(60))
        #expect(empty.status != 0 && empty.stderr.contains("netfunnel.serverUrl"), "\(empty.stderr)")
    }

    @Test func loadTakesAFaultsFileAndRefusesBadOnes() async throws {
        let ok = try await CLIProcess.run(
            [
                "load", "--vendor", "netfunnel", "--emulator", "--faults", "Scripts/load/faults-netfunnel.json",
                "--scope", "service_1", "--room", "segKey_section", "--users", "6", "--hold", "0",
                "--set", "retryCount=3", "--set", "networkTimeout=3000"
            ], timeout: .seconds(120))
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("keysNeverReturned 0"), "\(ok.stdout)")
        #expect(ok.stdout.contains("faultsInstalled 4"), "\(ok.stdout)")

        let dir = CLIProcess.temporaryDirectory()
        let bad = dir + "/faults.json"
        try Data(#"{"netfunnel": [{"opcode": 5002, "drop": true, "httpStatus": 503}]}"#.utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try await CLIProcess.run([
            "load", "--vendor", "netfunnel", "--emulator", "--faults", bad, "--scope", "service_1", "--room", "segKey_basic"
        ])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("faults.netfunnel[0]"), "\(refused.stderr)")

        // faults only for another vendor: the run goes on, but says it meets none of them (it was silent)
        let other = dir + "/other-vendor.json"
        try Data(#"{"queueit": [{"action": "status", "status": 503, "on": "enqueue"}]}"#.utf8).write(to: URL(fileURLWithPath: other))
        let elsewhere = try await CLIProcess.run(
            [
                "load", "--vendor", "netfunnel", "--emulator", "--faults", other, "--scope", "service_1", "--room", "segKey_basic",
                "--users", "2", "--hold", "0"
            ], timeout: .seconds(120))
        #expect(elsewhere.status == 0, "\(elsewhere.stderr)")
        #expect(elsewhere.stderr.contains("has no faults for netfunnel (only for queueit)"), "\(elsewhere.stderr)")
        #expect(!ok.stderr.contains("has no faults for"), "\(ok.stderr)")

        let noEmulator = try await CLIProcess.run(["load", "--vendor", "netfunnel", "--chaos", "1", "--scope", "s", "--room", "r"])
        #expect(noEmulator.status == 64)
        #expect(noEmulator.stderr.contains("--emulator"))
    }

    @Test func runTakesVendorSettings() async throws {
        let ok = try await CLIProcess.run(
            [
                "run", "Scripts/flows/netfunnel-checkout.lua", "--emulator", "--set", "netfunnel.retryCount=3", "--json"
            ], timeout: .seconds(60))
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains(#""outcome":"passed""#))
        let outOfRange = try await CLIProcess.run([
            "run", "Scripts/flows/netfunnel-checkout.lua", "--emulator", "--set", "netfunnel.retryCount=99"
        ])
        #expect(outOfRange.status == 64)
        #expect(outOfRange.stderr.contains("netfunnel.retryCount"))
        let noVendor = try await CLIProcess.run(["run", "Scripts/flows/netfunnel-checkout.lua", "--set", "retryCount=3"])
        #expect(noVendor.status == 64)
        #expect(noVendor.stderr.contains("VENDOR.KEY=VALUE"))
    }

    /// Every repository path named in `--help` texts, README.md and the vendor READMEs exists.
    @Test func everyPathInHelpAndReadmesExists() async throws {
        let root = URL(fileURLWithPath: CLIProcess.packageRoot)
        var texts: [(source: String, text: String, base: URL)] = []
        let top = try await CLIProcess.run(["--help"])
        texts.append(("waitingroom --help", top.stdout, root))
        for command in ["run", "repl", "check", "emulate", "demo", "load", "bench"] {
            let help = try await CLIProcess.run([command, "--help"])
            texts.append(("waitingroom \(command) --help", help.stdout, root))
        }
        texts.append(("README.md", try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8), root))
        let vendors = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Vendors").path)
        for vendor in vendors {
            let dir = root.appendingPathComponent("Vendors/\(vendor)")
            if let text = try? String(contentsOf: dir.appendingPathComponent("README.md"), encoding: .utf8) {
                texts.append(("Vendors/\(vendor)/README.md", text, dir))
            }
        }
        let pattern = try NSRegularExpression(
            pattern: #"(?<![A-Za-z0-9_./-])(?:Scripts|Vendors|bench|docs|Tests|Sources|Fixtures)/[A-Za-z0-9_./+-]*"#)
        var checked = 0
        for (source, text, base) in texts {
            let range = NSRange(text.startIndex..., in: text)
            for match in pattern.matches(in: text, range: range) {
                guard let r = Range(match.range, in: text) else { continue }
                var path = String(text[r])
                while path.hasSuffix(".") || path.hasSuffix(",") { path.removeLast() }
                let exists =
                    FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path)
                    || FileManager.default.fileExists(atPath: base.appendingPathComponent(path).path)
                #expect(exists, "\(source) names \(path), which does not exist")
                checked += 1
            }
        }
        #expect(checked > 10, "the paths were found (\(checked))")
    }
}
