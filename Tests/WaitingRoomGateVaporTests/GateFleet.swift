#if Vapor
    import Foundation
    import WaitingRoom
    import WaitingRoomEmulators
    import WaitingRoomGate
    import WaitingRoomGateTestSupport

    /// Every way the gate stands in front of an app, each over loopback with its own engine built the
    /// same way, in front of the same emulators: the Hummingbird and Vapor middlewares, the reverse
    /// proxy (`GateProxyServer`), and the auth-subrequest server behind Debian's nginx and behind
    /// Caddy, each started with the file `deploy/` ships.
    struct GateFleet: Sendable {
        enum Front: String, CaseIterable, Sendable, CustomStringConvertible {
            case hummingbird, vapor, proxy, nginx, caddy
            var description: String { rawValue }
        }

        let server: EmulatorServer
        let apps: [GateApp]

        /// Runs `body` with every front up (nginx and Caddy when installed; `Scripts/setup` installs
        /// them); everything is stopped however it ends.
        static func run(
            limits: GateLimits = GateLimits(maxBodyBytes: 64 * 1024), fronts: [Front] = Front.allCases,
            makeEngine: @escaping @Sendable (EmulatorServer) async throws -> any GateEngine,
            _ body: @escaping @Sendable (GateFleet) async throws -> Void
        ) async throws {
            let server = try await EmulatorSuite.demo().start()
            do {
                let fronts = fronts.filter { front in
                    switch front {
                    case .nginx: DeployedProxy.isInstalled(.nginx)
                    case .caddy: DeployedProxy.isInstalled(.caddy)
                    default: true
                    }
                }
                try await start(fronts[...], server: server, limits: limits, makeEngine: makeEngine, started: []) { apps in
                    try await body(GateFleet(server: server, apps: apps))
                }
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }

        static let origin = GateOrigin(publicBaseURL: GateAdapterPair.origin, trustedProxies: ["127.0.0.1", "::1"])

        /// Starts the first of `fronts`, then the rest inside it.
        private static func start(
            _ fronts: ArraySlice<Front>, server: EmulatorServer, limits: GateLimits,
            makeEngine: @escaping @Sendable (EmulatorServer) async throws -> any GateEngine, started: [GateApp],
            _ body: @escaping @Sendable ([GateApp]) async throws -> Void
        ) async throws {
            guard let front = fronts.first else { return try await body(started) }
            let rest = fronts.dropFirst()
            let counter = UpstreamCounter()
            let engine = try await makeEngine(server)
            let next: @Sendable (GateApp) async throws -> Void = { app in
                try await start(rest, server: server, limits: limits, makeEngine: makeEngine, started: started + [app], body)
            }
            switch front {
            case .hummingbird:
                try await HummingbirdGateServer.run(engine: engine, limits: limits, counter: counter) { port in
                    try await next(GateApp(adapter: "hummingbird", port: port, upstream: counter))
                }
            case .vapor:
                try await VaporGateServer.run(engine: engine, limits: limits, counter: counter) { port in
                    try await next(GateApp(adapter: "vapor", port: port, upstream: counter))
                }
            case .proxy:
                try await HummingbirdGateServer.run(engine: nil, limits: limits, counter: counter) { appPort in
                    try await GateServers.withProxy(engine: engine, limits: limits, origin: origin, upstreamPort: appPort) { port in
                        try await next(GateApp(adapter: "proxy", port: port, upstream: counter))
                    }
                }
            case .nginx, .caddy:
                let kind: DeployedProxy.Kind = front == .nginx ? .nginx : .caddy
                try await HummingbirdGateServer.run(engine: nil, limits: limits, counter: counter) { appPort in
                    let endpoint = GateAuthEndpoint(engine: engine, limits: limits, origin: origin)
                    try await GateServers.withAuth(endpoint) { gatePort in
                        try await DeployedProxy.with(kind, upstreamPort: appPort, gatePort: gatePort) { proxy in
                            try await next(GateApp(adapter: "\(kind)+authz", port: proxy.port, upstream: counter, followsStart: true))
                        }
                    }
                }
            }
        }
    }
#endif
