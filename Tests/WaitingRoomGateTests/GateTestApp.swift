import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateHummingbird
import WaitingRoomHTTP

/// Counts the requests that reached the protected handlers (none may, when the gate refuses).
final class UpstreamCounter: Sendable {
    let hits = Mutex<[String]>([])
    func hit(_ path: String) { hits.withLock { $0.append(path) } }
    var count: Int { hits.withLock { $0.count } }
}

/// The protected test app: a Hummingbird router with the gate in front of a few handlers, served
/// over loopback (HummingbirdTesting `.live`), and the project's emulators on 127.0.0.1 port 0.
enum GateTestApp {
    /// Visitors reach the app as this origin (triggers match on it).
    static let origin = "http://shop.example"
    static let paths = ["/shop/cart", "/api/data", "/static/app.js", "/logout", "/free", "/site/demo-open", "/site/demo-queue",
                        "/site/demo-blocked", "/site/free"]

    /// Runs `body` with the emulators started, a gate made by `makeEngine` (given the emulator
    /// server) in front of the app, a test client and the upstream counter.
    static func run(limits: GateLimits = GateLimits(maxBodyBytes: 64 * 1024),
                    makeEngine: (EmulatorServer) async throws -> any GateEngine,
                    _ body: @Sendable (EmulatorServer, AppClient, UpstreamCounter) async throws -> Void) async throws {
        let server = try await EmulatorSuite.demo().start()
        do {
            let engine = try await makeEngine(server)
            let counter = UpstreamCounter()
            let router = Router(context: GateRequestContext.self)
            router.add(middleware: GateMiddleware(engine: engine, limits: limits, publicBaseURL: origin, trustedProxies: ["127.0.0.1", "::1"]))
            for path in paths {
                router.get(RouterPath(path)) { _, _ in counter.hit(path); return "upstream \(path)" }
                router.post(RouterPath(path)) { _, _ in counter.hit(path); return "upstream \(path)" }
            }
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

    /// POSTs JSON to an emulator admin route and returns the answer's `token`.
    static func emulatorToken(_ server: EmulatorServer, route: String, _ fields: [String: JSONValue]) async throws -> String {
        let r = try await AsyncHTTPTransport.shared.send(WaitingRoom.HTTPRequest(
            method: "POST", url: server.baseURL + route, headers: [("Content-Type", "application/json")],
            body: Array(JSONValue.object(fields).jsonText.utf8)))
        let json = try JSONValue.parse(Data(r.body))
        guard r.status == 200, let token = json["token"]?.stringValue, !token.isEmpty else {
            throw GateTestError("the emulator minted no token: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        return token
    }

    /// The emulator's state document for `vendor`.
    static func emulatorState(_ server: EmulatorServer, vendor: String) async throws -> JSONValue {
        let r = try await AsyncHTTPTransport.shared.send(WaitingRoom.HTTPRequest(url: server.baseURL + "/_emulator/\(vendor)/state"))
        return try JSONValue.parse(Data(r.body))
    }
}

struct GateTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Sends requests to the protected app over loopback (no redirect is followed).
struct AppClient: Sendable {
    let port: Int

    func send(_ path: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil) async throws -> WaitingRoom.HTTPResponse {
        try await AsyncHTTPTransport.shared.send(WaitingRoom.HTTPRequest(
            method: method, url: "http://localhost:\(port)" + path, headers: HTTPHeaderList(headers), body: body, timeout: .seconds(20)))
    }
}

extension WaitingRoom.HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
    func value(_ name: String) -> String? { headers.value(for: name) }
    func values(_ name: String) -> [String] { headers.values(for: name) }
}

/// `name=value` of the `Set-Cookie` for cookie `name` in `response`, for the next request.
func cookiePair(_ response: WaitingRoom.HTTPResponse, named name: String) -> String? {
    response.values("Set-Cookie").first { $0.hasPrefix(name + "=") }.map { String($0.prefix { $0 != ";" }) }
}
