import Foundation
import NetFUNNEL
import QueueIt
import Testing
import WaitingRoom

@testable import WaitingRoomLua

/// The example flows in Scripts/flows compile and satisfy the flow contract (known vendor,
/// known handlers, a valid entry). Running them against the emulators is wired by the CLI tests.
@Suite("Example flows")
struct ExampleFlowTests {
    static let flowsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scripts/flows")

    static let flows = ["netfunnel-checkout", "netfunnel-section", "queueit-token", "fail-open", "hybrid-api", "demo"]

    @Test("example flow loads and passes the contract", arguments: flows)
    func exampleFlow(_ name: String) async throws {
        let path = Self.flowsDirectory.appendingPathComponent(name + ".lua").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("--"), "\(name) must start with a comment")
        #expect(text.contains("waitingroom run Scripts/flows/\(name).lua --emulator") || name == "demo")
        let registry = VendorRegistry()
        registry.register(NetFUNNELConfiguration.self)
        registry.register(QueueItConfiguration.self)
        let runtime = try FlowRuntime(path: path, options: FlowOptions(registry: registry))
        try await runtime.prepareHandlers()
    }
}
