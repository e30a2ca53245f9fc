import Foundation
import Hummingbird
import HummingbirdTesting
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateHummingbird
import WaitingRoomGateTestSupport
import WaitingRoomHTTP

/// The protected test app: a Hummingbird router with the gate in front of a few handlers, served
/// over loopback (HummingbirdTesting `.live`), and the project's emulators on 127.0.0.1 port 0.
enum GateTestApp {
    /// Visitors reach the app as this origin (triggers match on it).
    static let origin = "http://shop.example"
    static let paths = [
        "/shop/cart", "/api/data", "/static/app.js", "/logout", "/free", "/site/demo-open", "/site/demo-queue",
        "/site/demo-blocked", "/site/free"
    ]

    /// Runs `body` with the emulators started, a gate made by `makeEngine` (given the emulator
    /// server) in front of the app, a test client and the upstream counter.
    static func run(
        limits: GateLimits = GateLimits(maxBodyBytes: 64 * 1024),
        makeEngine: (EmulatorServer) async throws -> any GateEngine,
        _ body: @Sendable (EmulatorServer, AppClient, UpstreamCounter) async throws -> Void
    ) async throws {
        let server = try await EmulatorSuite.demo().start()
        do {
            let engine = try await makeEngine(server)
            let counter = UpstreamCounter()
            let router = Router(context: GateRequestContext.self)
            router.add(
                middleware: GateMiddleware(engine: engine, limits: limits, publicBaseURL: origin, trustedProxies: ["127.0.0.1", "::1"]))
            router.addCountedRoutes(paths, counter: counter)
            let app = Application(router: router)
            try await app.test(.live) { client in
                guard let port = client.port else { throw GateTestError("the live test server has no port") }
                try await body(server, AppClient(port: port), counter)
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}

/// Sends requests to the protected app over loopback (no redirect is followed).
struct AppClient: Sendable {
    let port: Int

    func send(_ path: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil) async throws
        -> WaitingRoom.HTTPResponse
    {
        try await AsyncHTTPTransport.shared.send(
            WaitingRoom.HTTPRequest(
                method: method, url: "http://localhost:\(port)" + path, headers: HTTPHeaderList(headers), body: body, timeout: .seconds(20))
        )
    }
}
