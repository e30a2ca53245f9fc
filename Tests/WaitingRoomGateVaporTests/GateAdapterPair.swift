#if Vapor
import Foundation
import Synchronization
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomHTTP

/// Counts the requests that reached a protected handler (none may, when the gate refuses).
final class UpstreamCounter: Sendable {
    let hits = Mutex<[String]>([])
    func hit(_ path: String) { hits.withLock { $0.append(path) } }
    var count: Int { hits.withLock { $0.count } }
}

struct GateTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One protected app over loopback: the adapter's name, its port and its upstream counter.
struct GateApp: Sendable {
    let adapter: String
    let port: Int
    let upstream: UpstreamCounter

    /// Sends one request (no redirect is followed).
    func send(_ path: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil) async throws -> WaitingRoom.HTTPResponse {
        try await AsyncHTTPTransport.shared.send(WaitingRoom.HTTPRequest(
            method: method, url: "http://127.0.0.1:\(port)" + path, headers: HTTPHeaderList(headers), body: body, timeout: .seconds(20)))
    }
}

/// The project's emulators on 127.0.0.1 port 0, and the same protected app twice, each on its
/// own loopback port with its own engine built the same way: once behind the Hummingbird
/// `GateMiddleware`, once behind `VaporGateMiddleware`. Each engine keeps its own replay ledger,
/// so one token can be shown to both.
struct GateAdapterPair: Sendable {
    /// Visitors reach both apps as this origin (triggers match on it).
    static let origin = "http://shop.example"
    static let paths = ["/shop/cart", "/api/data", "/static/app.js", "/logout", "/free", "/site/demo-open", "/site/demo-queue",
                        "/site/demo-blocked", "/site/free"]

    let server: EmulatorServer
    let hummingbird: GateApp
    let vapor: GateApp
    var both: [GateApp] { [hummingbird, vapor] }

    /// Runs `body` with the emulators and both apps up; everything is stopped however it ends.
    static func run(limits: GateLimits = GateLimits(maxBodyBytes: 64 * 1024),
                    makeEngine: @escaping @Sendable (EmulatorServer) async throws -> any GateEngine,
                    _ body: @Sendable (GateAdapterPair) async throws -> Void) async throws {
        let server = try await EmulatorSuite.demo().start()
        do {
            let hbCounter = UpstreamCounter(), vaporCounter = UpstreamCounter()
            let hbEngine = try await makeEngine(server), vaporEngine = try await makeEngine(server)
            try await HummingbirdGateServer.run(engine: hbEngine, limits: limits, counter: hbCounter) { hbPort in
                try await VaporGateServer.run(engine: vaporEngine, limits: limits, counter: vaporCounter) { vaporPort in
                    try await body(GateAdapterPair(server: server, hummingbird: GateApp(adapter: "hummingbird", port: hbPort, upstream: hbCounter),
                                                   vapor: GateApp(adapter: "vapor", port: vaporPort, upstream: vaporCounter)))
                }
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
#endif
