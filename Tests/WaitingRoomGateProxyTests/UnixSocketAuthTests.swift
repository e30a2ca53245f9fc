import Foundation
import Testing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateTestSupport

/// Issue 49: the gate in auth mode on a Unix-domain socket file (`--listen unix:PATH`), with
/// Debian's nginx (`WAITINGROOM_GATE=unix:PATH`, the shipped template as it is) and Caddy
/// (`unix//PATH`, the shipped Caddyfile) in front. The gate trusts only the socket's peer here,
/// so each check also proves that a connection over the file counts as the proxy: a subrequest
/// from anyone else is refused, and the visitor's address is read from the proxy's
/// `X-Forwarded-For` (a token bound to 127.0.0.1, nginx's and Caddy's `remote_addr`, is taken;
/// one bound to another address is not).
@Suite("the gate on a socket file behind nginx and Caddy", .serialized, .timeLimit(.minutes(3)))
struct UnixSocketAuthTests {
    @Test(arguments: DeployedProxy.Kind.allCases)
    func aVisitorPassesWithTheCookieAndNotWithout(_ kind: DeployedProxy.Kind) async throws {
        try #require(DeployedProxy.isInstalled(kind), "\(kind) is not installed: run Scripts/setup")
        let server = try await EmulatorSuite.demo().start()
        let counter = UpstreamCounter()
        let socket = NSTemporaryDirectory() + "wr-gate-\(UUID().uuidString.prefix(8)).sock"
        do {
            try await UngatedApp.serve(counter: counter) { appPort in
                let port = try LoopbackHTTPClient.freePort()
                let endpoint = GateAuthEndpoint(
                    engine: try QueueItGateFixture.gate(server),
                    origin: GateOrigin(trustedProxies: ["unix"], allowedHosts: ["127.0.0.1:\(port)"]))
                try await GateServers.withAuth(endpoint, unixSocket: socket) {
                    let gate = kind == .nginx ? "unix:\(socket)" : "unix//\(socket)"
                    try await DeployedProxy.with(kind, upstreamPort: appPort, gatePort: 0, gateAddress: gate, port: port) { proxy in
                        try await Self.check(kind, port: port, server: server, counter: counter, proxy: proxy)
                    }
                }
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func check(_ kind: DeployedProxy.Kind, port: Int, server: EmulatorServer, counter: UpstreamCounter, proxy: DeployedProxy)
        async throws
    {
        // no cookie: the visitor is sent to the start route, the app sees nothing
        let bare = try await LoopbackHTTPClient.send(port: port, target: "/shop/a")
        #expect(bare.status == 302, "\(kind): \(bare.status) \(proxy.log)")
        #expect(bare.headers.value(for: "Location")?.hasPrefix("/.waitingroom/start?rd=") == true, "\(kind): \(bare.headers)")
        #expect(counter.paths.isEmpty, "\(kind): \(counter.paths)")

        // a token bound to another address buys no cookie (the client address is the proxy's X-Forwarded-For)
        let elsewhere = try await QueueItGateFixture.token(server, clientIP: "198.51.100.9")
        let refused = try await start(port: port, token: elsewhere)
        #expect(
            refused.headers.values(for: "Set-Cookie").allSatisfy { !$0.hasPrefix(QueueItGateFixture.cookieName + "=") },
            "\(kind): \(refused.headers)")

        // a token bound to 127.0.0.1 does; with the cookie the visitor reaches the app
        let token = try await QueueItGateFixture.token(server, clientIP: "127.0.0.1")
        let started = try await start(port: port, token: token)
        #expect(started.status == 302, "\(kind): \(started.status) \(proxy.log)")
        let cookie = try #require(
            started.headers.values(for: "Set-Cookie").first { $0.hasPrefix(QueueItGateFixture.cookieName + "=") }?.split(separator: ";")
                .first,
            "\(kind): no cookie in \(started.headers)")
        let passed = try await LoopbackHTTPClient.send(port: port, target: "/shop/a", headers: [("Cookie", String(cookie))])
        #expect(passed.status == 200, "\(kind): \(passed.status) \(proxy.log)")
        #expect(String(decoding: passed.body, as: UTF8.self) == "upstream /shop/a", "\(kind)")
        #expect(counter.paths == ["/shop/a"], "\(kind): \(counter.paths)")
    }

    /// The start route with `rd` naming a page of the protected site and `queueittoken` in it.
    static func start(port: Int, token: String) async throws -> HTTPResponse {
        let rd = "http://127.0.0.1:\(port)/shop/a?queueittoken=\(token)"
        return try await LoopbackHTTPClient.send(port: port, target: "/.waitingroom/start?rd=\(rd)")
    }
}
