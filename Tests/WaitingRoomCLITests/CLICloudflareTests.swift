import Foundation
import Testing

/// Cloudflare Waiting Room (JSON mode) through the CLI against the embedded emulator: check, run,
/// REPL, load with chaos and a report.
@Suite("waitingroom with Cloudflare", .serialized, .timeLimit(.minutes(3)))
struct CLICloudflareTests {
    @Test func checkExitsByOutcome() async throws {
        try await CLIProcess.expectCheckPasses("cloudflare", "site", "demo-open")
        let reject = try await CLIProcess.check("cloudflare", "site", "demo-reject")
        #expect(reject.status == 2, "\(reject.stdout)\(reject.stderr)")
        let suspended = try await CLIProcess.check("cloudflare", "site", "demo-suspended")
        #expect(suspended.status == 0, "\(suspended.stdout)\(suspended.stderr)")
        let noSite = try await CLIProcess.check("cloudflare", "site", "demo-open", emulator: false)
        #expect(noSite.status == 64)
        #expect(noSite.stderr.contains("siteURL"))
    }

    @Test func loadWithChaosAndReport() async throws {
        let report = CLIProcess.temporaryDirectory() + "/cloudflare-report.html"
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "cloudflare", "--emulator", "--scope", "site", "--room", "demo-open", "--users", "8",
                "--hold", "0", "--chaos", "1", "--chaos-delay", "3", "--set", "timeout=1500",
                "--set", "retries=4", "--set", "retryDelay=100", "--json", "--report", report
            ],
            timeout: .seconds(90))
        #expect(result.status == 0, "\(result.stderr)")
        let json = try CLIProcess.jsonObject(result.stdout)
        #expect((json?["outcomes"] as? [String: Any])?["passed"] as? Int == 8, "retries get everyone through 4 faults: \(result.stdout)")
        #expect(json?["faultsInstalled"] as? Int == 4)
        let requests = (json?["requests"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
        let faulted = requests.filter { $0.key.hasSuffix("(faulted)") }.values.reduce(0, +)
        #expect(faulted == json?["faultsInjected"] as? Int, "\(requests)")
        let replies = (json?["replies"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
        #expect((replies["page origin"] ?? 0) >= 8, "\(replies)")
        let html = try String(contentsOfFile: report, encoding: .utf8)
        #expect(html.contains("(protected page) (faulted)") && html.contains("page origin"))
    }
}
