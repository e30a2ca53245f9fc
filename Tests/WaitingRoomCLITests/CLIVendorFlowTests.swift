import Foundation
import Testing

/// Cloudflare's and CrowdHandler's example flows and a REPL session through the CLI against the
/// embedded emulator.
@Suite("waitingroom flows and REPL per vendor", .serialized, .timeLimit(.minutes(3)))
struct CLIVendorFlowTests {
    /// `Scripts/flows/<vendor>-checkout.lua` on the embedded emulator: exits 0 and navigates.
    @Test(arguments: ["cloudflare", "crowdhandler"])
    func exampleFlowPassesOnTheEmulator(vendor: String) async throws {
        let result = try await CLIProcess.run(["run", "Scripts/flows/\(vendor)-checkout.lua", "--emulator", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("navigate"))
    }

    /// The REPL opens the vendor on the embedded emulator and one user passes its room
    /// `demo-open` (scope `site`).
    @Test(arguments: ["cloudflare", "crowdhandler"])
    func replOpensTheVendor(vendor: String) async throws {
        let input = CLIProcess.replWaitLines(vendor, scope: "site", room: "demo-open") + "\n:emulator stop"
        let result = try await CLIProcess.repl(input)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").contains("passed"), "\(result.stdout)\n\(result.stderr)")
    }
}
