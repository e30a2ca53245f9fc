#if Vapor
    import Foundation
    import Testing
    import Vapor
    import QueueItGateEngine
    import WaitingRoomGate
    import WaitingRoomGateTestSupport
    import WaitingRoomGateVapor

    /// The README's Vapor example ("Protecting a server"), as written there: compiled with the tests so
    /// it keeps building (it reads a file and serves until stopped, so it is not run).
    func readmeVaporExample() async throws {
        let app = try await Application.make(try Environment.detect())
        let queueIt = try QueueItGate(
            customerId: "acme", secretKey: Environment.get("QUEUEIT_SECRET_KEY") ?? "",
            configuration: try QueueItIntegrationConfig(json: String(contentsOfFile: "integrationconfig.json", encoding: .utf8)))
        app.grouped(VaporGateMiddleware(engine: queueIt, publicBaseURL: "https://shop.example", trustedProxies: ["10.0.0.2"]))
            .get("shop", "cart") { _ in "your cart" }
        try await app.execute()
        try await app.asyncShutdown()
    }

    @Suite struct ReadmeVaporExampleTests {
        /// The example's parts that need no network and no file: the gate and the grouped route.
        @Test func theExampleBuildsItsRoute() async throws {
            let gate = try QueueItGate(
                customerId: "acme", secretKey: "k",
                configuration: try QueueItIntegrationConfig(json: QueueItGateFixture.configurationJSON(queueDomain: "acme.queue-it.net")))
            let app = try await Application.make(.testing)
            app.grouped(VaporGateMiddleware(engine: gate, publicBaseURL: "https://shop.example/", trustedProxies: ["10.0.0.2"]))
                .get("shop", "cart") { _ in "your cart" }
            #expect(app.routes.all.map(\.path.string) == ["shop/cart"])
            try await app.asyncShutdown()
        }
    }
#endif
