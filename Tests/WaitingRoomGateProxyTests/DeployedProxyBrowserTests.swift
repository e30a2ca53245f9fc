import Foundation
import Hummingbird
import QueueIt
import QueueItBrowser
import Testing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateTestSupport
import WaitingRoomHTTP
import WebDriver

/// Issue 49, "Done when" bullet 1: headless Chromium in front of Debian's nginx and Caddy, each
/// started with the file `deploy/` ships (the nginx template rendered by `envsubst`), with the gate
/// in auth mode and an app that records what reached it. The browser asks for a protected page,
/// is sent to the start route and on to the emulator's Queue-it room, waits there while the room
/// is held shut, and ends on the app's page once it opens; the cookie carries the next load
/// straight through. Real time on loopback; generous deadlines that only prove "no hang".
@Suite("nginx and Caddy in front of the gate, in headless chromium", .serialized, .timeLimit(.minutes(6)))
struct DeployedProxyBrowserTests {
    @Test(arguments: DeployedProxy.Kind.allCases)
    func aQueueingRoomEndsOnTheAppsPage(_ kind: DeployedProxy.Kind) async throws {
        try #require(DeployedProxy.isInstalled(kind), "\(kind) is not installed: run Scripts/setup")
        let server = try await EmulatorSuite.demo().start()
        let counter = UpstreamCounter()
        do {
            try await UngatedApp.serve(counter: counter) { appPort in
                let port = try LoopbackHTTPClient.freePort()
                let base = "http://127.0.0.1:\(port)"
                let endpoint = GateAuthEndpoint(
                    engine: try QueueItGateFixture.gate(server),
                    origin: GateOrigin(trustedProxies: ["127.0.0.1"], allowedHosts: ["127.0.0.1:\(port)"]))
                try await GateServers.withAuth(endpoint) { gatePort in
                    try await DeployedProxy.with(kind, upstreamPort: appPort, gatePort: gatePort, port: port) { proxy in
                        guard let browser = await GateTestBrowser.start() else { return }
                        do {
                            try await Self.waitThrough(browser: browser, base: base, server: server, counter: counter, proxy: proxy)
                        } catch {
                            Issue.record("\(kind): \(error); proxy log: \(proxy.log)")
                        }
                        await browser.close()
                    }
                }
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func waitThrough(
        browser: HeadlessChromium, base: String, server: EmulatorServer, counter: UpstreamCounter,
        proxy: DeployedProxy
    ) async throws {
        try await patchRoom(server, "queueit/rooms/demo/sale", #"{"admitPerSecond": 0}"#)
        try await browser.open(base + "/shop/tickets?size=2&colour=red")
        var url = try await browser.currentURL()
        #expect(url.hasPrefix(server.baseURL + "/queueit/queue/demo/sale?"), "\(proxy.kind): \(url)")
        #expect(
            try await browser.waitUntil(timeout: .seconds(30)) {
                try await browser.run("var e = document.getElementById('ahead'); return e ? e.textContent : null;").stringValue == "0"
            }, "no position on \(url)")
        #expect(counter.paths.filter { $0.hasPrefix("/shop/") }.isEmpty, "reached the app while waiting")
        try await patchRoom(server, "queueit/rooms/demo/sale", #"{"admitPerSecond": 50}"#)
        var text = ""
        let wanted = base + "/shop/tickets?size=2&colour=red"
        #expect(
            try await browser.waitUntil(timeout: .seconds(90)) {
                url = try await browser.currentURL()
                text = try await browser.bodyText()
                return url == wanted && text.contains("upstream /shop/tickets")
            }, "\(proxy.kind): still at \(url): \(text.prefix(200))")
        // (the browser's /favicon.ico queues too, in the same session: it reaches the app with the cookie)
        #expect(counter.paths.filter { $0.hasPrefix("/shop/") } == ["/shop/tickets"], "\(counter.paths)")
        let cookies = try await browser.run("return document.cookie;").stringValue ?? ""
        #expect(cookies.contains(QueueItGateFixture.cookieName + "=EventId=sale"), "\(cookies)")
        // the cookie carries the next load straight to the app (and the gate extends it on the way)
        try await browser.open(base + "/shop/tickets")
        #expect(try await browser.currentURL() == base + "/shop/tickets")
        #expect(counter.paths.filter { $0.hasPrefix("/shop/") }.count == 2)
    }

    static func patchRoom(_ server: EmulatorServer, _ route: String, _ json: String) async throws {
        let answer = try await AsyncHTTPTransport.shared.send(
            WaitingRoom.HTTPRequest(
                method: "POST", url: server.baseURL + "/_emulator/" + route, headers: [("Content-Type", "application/json")],
                body: Array(json.utf8), timeout: .seconds(30)))
        #expect(answer.status == 200, "\(route): \(answer.text)")
    }
}

/// The app behind the proxies: a Hummingbird server on 127.0.0.1 port 0 whose every GET answers
/// `upstream {path}` and is counted; no gate of its own.
enum UngatedApp {
    static func serve(counter: UpstreamCounter, _ body: @Sendable (Int) async throws -> Void) async throws {
        let router = Router()
        router.get("**") { request, _ -> String in
            counter.hit(request.uri.path)
            return "upstream \(request.uri.path)"
        }
        try await LoopbackApp.serve(router, logger: EmulatorServer.quietLogger, body)
    }
}
