#if Vapor
    import Foundation
    import WaitingRoom
    import WaitingRoomEmulators
    import WaitingRoomGate
    import WaitingRoomGateTestSupport
    import WaitingRoomHTTP
    import WaitingRoomGateProxy

    /// One protected app over loopback: the front's name, its port and its upstream counter.
    /// Requests are sent for `http://shop.example` (the `Host`), from a chosen loopback address.
    /// Behind a proxy in auth mode, the 302 to the gate's start route is followed once, with the
    /// same headers and address, as a browser does: what the visitor ends with is compared.
    struct GateApp: Sendable {
        let adapter: String
        let port: Int
        let upstream: UpstreamCounter
        var followsStart = false

        /// Sends one request (no redirect is followed but the one to the start route).
        func send(
            _ path: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil,
            from source: String = "127.0.0.1"
        ) async throws -> WaitingRoom.HTTPResponse {
            let fields = [("Host", "shop.example")] + headers
            let first = try await LoopbackHTTPClient.send(
                port: port, from: source, method: method, target: path, headers: fields, body: body)
            guard followsStart, first.status == 302, let location = first.headers.value(for: "Location"),
                location.hasPrefix("/.waitingroom/start?")
            else { return first }
            return try await LoopbackHTTPClient.send(port: port, from: source, method: "GET", target: location, headers: fields)
        }
    }

    /// The project's emulators on 127.0.0.1 port 0, and the same protected app twice, each on its
    /// own loopback port with its own engine built the same way: once behind the Hummingbird
    /// `GateMiddleware`, once behind `VaporGateMiddleware`. Each engine keeps its own replay ledger,
    /// so one token can be shown to both.
    struct GateAdapterPair: Sendable {
        /// Visitors reach both apps as this origin (triggers match on it).
        static let origin = "http://shop.example"
        static let paths = [
            "/shop/cart", "/api/data", "/static/app.js", "/logout", "/free", "/site/demo-open", "/site/demo-queue",
            "/site/demo-blocked", "/site/free"
        ]

        let server: EmulatorServer
        let hummingbird: GateApp
        let vapor: GateApp
        var both: [GateApp] { [hummingbird, vapor] }

        /// Runs `body` with the emulators and both apps up; everything is stopped however it ends.
        static func run(
            limits: GateLimits = GateLimits(maxBodyBytes: 64 * 1024),
            makeEngine: @escaping @Sendable (EmulatorServer) async throws -> any GateEngine,
            _ body: @Sendable (GateAdapterPair) async throws -> Void
        ) async throws {
            let server = try await EmulatorSuite.demo().start()
            do {
                let hbCounter = UpstreamCounter()
                let vaporCounter = UpstreamCounter()
                let hbEngine = try await makeEngine(server)
                let vaporEngine = try await makeEngine(server)
                try await HummingbirdGateServer.run(engine: hbEngine, limits: limits, counter: hbCounter) { hbPort in
                    try await VaporGateServer.run(engine: vaporEngine, limits: limits, counter: vaporCounter) { vaporPort in
                        try await body(
                            GateAdapterPair(
                                server: server, hummingbird: GateApp(adapter: "hummingbird", port: hbPort, upstream: hbCounter),
                                vapor: GateApp(adapter: "vapor", port: vaporPort, upstream: vaporCounter)))
                    }
                }
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }
    }
#endif
