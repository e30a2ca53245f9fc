#if Vapor
    import Vapor
    import WaitingRoomGate
    import WaitingRoomGateTestSupport
    import WaitingRoomGateVapor

    /// The protected app on Vapor: `VaporGateMiddleware` in front of the test paths, served over
    /// real loopback HTTP on 127.0.0.1 port 0.
    enum VaporGateServer {
        /// Runs `body` with the app listening; its port is passed in. The app is shut down however
        /// `body` ends.
        static func run(
            engine: any GateEngine, limits: GateLimits, counter: UpstreamCounter,
            _ body: @Sendable (Int) async throws -> Void
        ) async throws {
            let app = try await Application.make(.testing)
            app.logger.logLevel = .warning
            do {
                let gated = app.grouped(
                    VaporGateMiddleware(
                        engine: engine, limits: limits, publicBaseURL: GateAdapterPair.origin,
                        trustedProxies: ["127.0.0.1", "::1"]))
                for path in GateAdapterPair.paths {
                    for method in [HTTPMethod.GET, .POST] {
                        gated.on(method, path.pathComponents) { _ in
                            counter.hit(path)
                            return "upstream \(path)"
                        }
                    }
                }
                try await app.server.start(address: .hostname("127.0.0.1", port: 0))
                guard let port = app.http.server.shared.localAddress?.port else {
                    throw GateTestError("the Vapor server has no local port after it started")
                }
                try await body(port)
            } catch {
                await app.server.shutdown()
                try await app.asyncShutdown()
                throw error
            }
            await app.server.shutdown()
            try await app.asyncShutdown()
        }
    }
#endif
