import Foundation
import NetFUNNEL
import NetFUNNELEmulator
import QueueIt
import QueueItEmulator
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import WaitingRoomLua

/// The example flows run against the local emulators (loopback, port 0, virtual time).
@Suite("Example flows on the emulators")
struct EmulatorFlowTests {
    static func registry() -> VendorRegistry {
        let registry = VendorRegistry()
        registry.register(NetFUNNELConfiguration.self)
        registry.register(QueueItConfiguration.self)
        return registry
    }

    static func path(_ name: String) -> String {
        ExampleFlowTests.flowsDirectory.appendingPathComponent(name + ".lua").path
    }

    @Test("NetFUNNEL flows pass and return their key", arguments: ["netfunnel-checkout", "netfunnel-section", "fail-open", "demo"])
    func netfunnel(_ name: String) async throws {
        let clock = VirtualClock(autoAdvance: true)
        let emulator = NetFUNNELEmulator(configuration: .demo, clock: clock)
        let server = try await emulator.start(host: "127.0.0.1", port: 0)
        var options = FlowOptions(
            registry: Self.registry(), environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: clock))
        // a clientId is needed: without one the agent runs in bypass mode (the documented rule)
        // The host's keys win over the flow's: a 5 s deadline, so a loaded machine's late answer is
        // not a network error (fail-open's own 1 s made it bypass once under three parallel builds).
        options.config = .object([
            "clientId": .string("emulator-0000"), "serverUrl": .string(server.baseURL), "networkTimeout": .number(5000)
        ])
        let runtime = try FlowRuntime(path: Self.path(name), options: options)
        let result = await runtime.run()
        await server.shutdown()
        #expect(result.outcome.name == "passed", "\(name): \(result.outcome) \(result.handlerErrors)")
        #expect(result.handlerErrors.isEmpty, "\(result.handlerErrors)")
        #expect(result.completion != nil, "\(name): the key was not returned")
        #expect(emulator.counters().keysHeld == 0)
    }

    @Test("Queue-it flows pass (enqueue token, hybrid protected API)", arguments: ["queueit-token", "hybrid-api"])
    func queueIt(_ name: String) async throws {
        let clock = VirtualClock(autoAdvance: true)
        let emulator = QueueItEmulator(configuration: .demo, now: { clock.now() })
        let server = try await QueueItEmulatorServer.start(emulator)
        var options = FlowOptions(
            registry: Self.registry(), environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: clock))
        options.config = .object(["waitingRoomDomain": .string(server.baseURL)])
        let runtime = try FlowRuntime(path: Self.path(name), options: options)
        let result = await runtime.run()
        await server.shutdown()
        #expect(result.outcome.name == "passed", "\(name): \(result.outcome) \(result.handlerErrors)")
        #expect(result.handlerErrors.isEmpty, "\(result.handlerErrors)")
        if name == "hybrid-api" {
            #expect(result.actions.last?.name == "api_result", "\(result.actions)")
            #expect(result.actions.last?.payload["status"] == .number(200), "\(result.actions)")
        } else {
            #expect(result.actions.contains { $0.name == "navigate" }, "\(result.actions)")
        }
    }
}
