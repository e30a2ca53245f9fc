import Foundation
import Testing

/// CrowdHandler through the CLI against the embedded emulator: check, run, REPL, load.
@Suite("waitingroom with CrowdHandler", .serialized, .timeLimit(.minutes(3)))
struct CLICrowdHandlerTests {
    @Test func checkExitsByOutcome() async throws {
        try await CLIProcess.expectCheckPasses("crowdhandler", "site", "demo-open")
        let queue = try await CLIProcess.check("crowdhandler", "site", "demo-queue")
        #expect(queue.status == 6, "\(queue.stdout)\(queue.stderr)")
        let blocked = try await CLIProcess.check("crowdhandler", "site", "demo-blocked")
        #expect(blocked.status == 2)
        #expect(blocked.stdout.contains("403"))
        let closed = try await CLIProcess.check("crowdhandler", "site", "demo-closed")
        #expect(closed.status == 0)
        let noKey = try await CLIProcess.check("crowdhandler", "site", "demo-open", emulator: false)
        #expect(noKey.status == 64)
        #expect(noKey.stderr.contains("publicKey"))
    }

    @Test func loadWithChaosCountsSessions() async throws {
        let report = CLIProcess.temporaryDirectory() + "/crowdhandler-report.html"
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "crowdhandler", "--emulator", "--scope", "site", "--room", "demo-open", "--users", "8",
                "--hold", "0", "--chaos", "1", "--chaos-delay", "6", "--set", "timeout=2000", "--json",
                "--report", report
            ],
            timeout: .seconds(90))
        #expect(result.status == 0, "\(result.stderr)")
        let json = try CLIProcess.jsonObject(result.stdout)
        #expect((json?["outcomes"] as? [String: Any])?["passed"] as? Int == 8, "trustOnFail lets everyone in")
        #expect(json?["faultsInstalled"] as? Int == 8)
        #expect((json?["sessionsCreated"] as? Int ?? 0) >= 1)
        // Requests per kind: served and faulted; the faulted ones add up to the faults injected.
        let requests = (json?["requests"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
        #expect((requests["POST /v1/requests (served)"] ?? 0) >= 1, "\(requests)")
        let faulted = requests.filter { $0.key.hasSuffix("(faulted)") }.values.reduce(0, +)
        #expect(faulted == json?["faultsInjected"] as? Int, "\(requests)")
        #expect(faulted >= 1, "\(requests)")
        let replies = (json?["replies"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
        #expect((replies["/v1/requests promoted"] ?? 0) >= 1, "\(replies)")
        let html = try String(contentsOfFile: report, encoding: .utf8)
        #expect(html.contains("POST /v1/requests (faulted)") && html.contains("/v1/requests promoted"))
    }

    @Test func benchRunsTheCrowdHandlerSuite() async throws {
        let result = try await CLIProcess.run(["bench", "crowdhandler", "--json"], timeout: .seconds(120))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("signatures/s"))
    }
}
