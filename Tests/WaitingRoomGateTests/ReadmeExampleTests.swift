import CrowdHandler
import CrowdHandlerGateEngine
import Foundation
import Hummingbird
import QueueItGateEngine
import Testing
import WaitingRoomGate
import WaitingRoomGateHummingbird
import WaitingRoomGateTestSupport
import WaitingRoomHTTP

/// The README's "Protecting a server" example, as written there: compiled with the tests so it
/// keeps building (it reads a file and talks to CrowdHandler, so it is not run).
func readmeProtectingAServerExample() async throws {
    let published = try String(contentsOfFile: "integrationconfig.json", encoding: .utf8)
    let queueIt = try QueueItGate(
        customerId: "acme", secretKey: ProcessInfo.processInfo.environment["QUEUEIT_SECRET_KEY"] ?? "",
        configuration: try QueueItIntegrationConfig(json: published))
    let crowdHandler = try await CrowdHandlerGate.withRoomFeed(
        configuration: try CrowdHandlerConfiguration(publicKey: "your-public-key", privateKey: "your-private-key", trustOnFail: true),
        transport: AsyncHTTPTransport.shared, mode: .hybrid)

    let router = Router(context: GateRequestContext.self)
    router.group("shop")
        .add(middleware: GateMiddleware(engine: queueIt, publicBaseURL: "https://shop.example", trustedProxies: ["10.0.0.2"]))
        .get("cart") { _, _ in "your cart" }
    router.group("tickets")
        .add(middleware: GateMiddleware(engine: crowdHandler, publicBaseURL: "https://shop.example"))
        .get("buy") { _, _ in "buy tickets" }
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 8081)))
    try await app.runService()
}

@Suite struct ReadmeExampleTests {
    /// The example's parts that need no network: the configuration is read and the router built.
    @Test func theExampleBuildsItsGate() throws {
        let json = QueueItGateFixture.configurationJSON(queueDomain: "acme.queue-it.net")
        let gate = try QueueItGate(customerId: "acme", secretKey: "k", configuration: try QueueItIntegrationConfig(json: json))
        #expect(gate.configuration.integrations.map(\.actionType) == [.ignore, .cancel, .queue])
        #expect(gate.configuration.integrations[2].queueBaseURL == "https://acme.queue-it.net")
        let router = Router(context: GateRequestContext.self)
        router.group("shop").add(middleware: GateMiddleware(engine: gate, publicBaseURL: "https://shop.example/")).get("cart") { _, _ in
            "cart"
        }
    }
}
