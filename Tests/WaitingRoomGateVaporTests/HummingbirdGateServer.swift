#if Vapor
    import Hummingbird
    import HummingbirdTesting
    import WaitingRoomGate
    import WaitingRoomGateHummingbird
    import WaitingRoomGateTestSupport

    /// The same protected app on Hummingbird: `GateMiddleware` in front of the same paths, served
    /// over real loopback HTTP (HummingbirdTesting `.live`, 127.0.0.1 port 0).
    enum HummingbirdGateServer {
        /// Runs `body` with the app listening; its port is passed in.
        /// Without `engine`, the same app ungated (what a proxy in front of it protects).
        static func run(
            engine: (any GateEngine)?, limits: GateLimits, counter: UpstreamCounter,
            _ body: @Sendable (Int) async throws -> Void
        ) async throws {
            let router = Router(context: GateRequestContext.self)
            if let engine {
                router.add(
                    middleware: GateMiddleware(
                        engine: engine, limits: limits, publicBaseURL: GateAdapterPair.origin,
                        trustedProxies: ["127.0.0.1", "::1"]))
            }
            router.addCountedRoutes(GateAdapterPair.paths, counter: counter)
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { client in
                guard let port = client.port else { throw GateTestError("the live Hummingbird server has no port") }
                try await body(port)
            }
        }
    }
#endif
