import Foundation
import QueueItGateEngine
import Testing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateTestSupport
import WaitingRoomHTTP
import WebDriver

/// A visitor in headless chromium in front of a Hummingbird app protected by ``GateMiddleware``
/// (issue 29, "Done when" bullet 1): turned away to the emulator's waiting room, waits there while
/// the room is held shut, and ends on the app's page once it opens; the gate's cookie carries the
/// next page load straight through. Real time on loopback; generous deadlines that only prove "no hang".
@Suite("GateMiddleware in headless chromium", .serialized, .timeLimit(.minutes(4)))
struct GateMiddlewareBrowserTests {
    /// POSTs a room patch to the emulator (`/_emulator/{vendor}/rooms/{room}`).
    static func patchRoom(_ server: EmulatorServer, _ route: String, _ json: String) async throws {
        let answer = try await AsyncHTTPTransport.shared.send(
            HTTPRequest(
                method: "POST", url: server.baseURL + "/_emulator/" + route, headers: [("Content-Type", "application/json")],
                body: Array(json.utf8), timeout: .seconds(30)))
        #expect(answer.status == 200, "\(route): \(answer.text)")
    }

    /// Queue-it (KnownUser): `/shop/` queues in `sale`. The gate sends the browser to the
    /// emulator's queue landing (`/?c=demo&e=sale&t=…`), which puts it on the queue page; once the
    /// room opens, the page brings it back with a `queueittoken`, and the gate sets its cookie.
    @Test func queueItRoomQueuesThenTheProtectedPageOpens() async throws {
        let server = try await EmulatorSuite.demo().start()
        let app = try await GateBrowserApp.start(engine: QueueItGateFixture.gate(server))
        guard let browser = await GateTestBrowser.start() else {
            await app.stop()
            await server.stop()
            return
        }
        do {
            try await Self.patchRoom(server, "queueit/rooms/demo/sale", #"{"admitPerSecond": 0}"#)
            try await browser.open(app.baseURL + "/shop/tickets")
            var url = try await browser.currentURL()
            #expect(url.hasPrefix(server.baseURL + "/queueit/queue/demo/sale?"), "\(url)")
            #expect(
                try await browser.waitUntil(timeout: .seconds(30)) {
                    try await browser.run("var e = document.getElementById('ahead'); return e ? e.textContent : null;").stringValue == "0"
                }, "no position on \(url)")
            #expect(app.hits("/shop/") == 0, "reached the app while waiting")
            try await Self.patchRoom(server, "queueit/rooms/demo/sale", #"{"admitPerSecond": 50}"#)
            var text = ""
            #expect(
                try await browser.waitUntil(timeout: .seconds(90)) {
                    url = try await browser.currentURL()
                    text = try await browser.bodyText()
                    return url == app.baseURL + "/shop/tickets" && text.contains("upstream /shop/tickets")
                }, "still at \(url): \(text.prefix(200))")
            #expect(app.hits("/shop/") == 1)
            let cookies = try await browser.run("return document.cookie;").stringValue ?? ""
            #expect(cookies.contains(QueueItGateFixture.cookieName + "=EventId=sale"), "\(cookies)")
            try await browser.open(app.baseURL + "/shop/tickets")
            #expect(try await browser.currentURL() == app.baseURL + "/shop/tickets")
            #expect(app.hits("/shop/") == 2)
        } catch {
            Issue.record("\(error)")
        }
        await browser.close()
        await app.stop()
        await server.stop()
    }

    /// CrowdHandler (full mode): `/site/demo-queue` is guarded by the emulator's `demo-queue` line.
    /// The gate sends the browser to the emulator's waiting page with its token; once the line
    /// promotes, the page brings it back with `ch-id`, and the gate sets its `crowdhandler` cookie.
    @Test func crowdHandlerRoomQueuesThenTheProtectedPageOpens() async throws {
        let server = try await EmulatorSuite.demo().start()
        let app = try await GateBrowserApp.start(engine: CrowdHandlerGateTests.fullGate(server))
        guard let browser = await GateTestBrowser.start() else {
            await app.stop()
            await server.stop()
            return
        }
        do {
            try await Self.patchRoom(server, "crowdhandler/rooms/demo-queue", #"{"rate": 0}"#)
            try await browser.open(app.baseURL + "/site/demo-queue")
            var url = try await browser.currentURL()
            #expect(url.hasPrefix(server.baseURL + "/demo-queue?"), "\(url)")
            #expect(app.hits("/site/") == 0, "reached the app while waiting")
            try await Self.patchRoom(server, "crowdhandler/rooms/demo-queue", #"{"rate": 60}"#)
            var text = ""
            #expect(
                try await browser.waitUntil(timeout: .seconds(90)) {
                    url = try await browser.currentURL()
                    text = try await browser.bodyText()
                    return url.hasPrefix(app.baseURL + "/site/demo-queue") && text.contains("upstream /site/demo-queue")
                }, "still at \(url): \(text.prefix(200))")
            #expect(app.hits("/site/") == 1)
            let cookies = try await browser.run("return document.cookie;").stringValue ?? ""
            #expect(cookies.contains("crowdhandler="), "\(cookies)")
            try await browser.open(app.baseURL + "/site/demo-queue")
            #expect(try await browser.currentURL() == app.baseURL + "/site/demo-queue")
            #expect(app.hits("/site/") == 2)
        } catch {
            Issue.record("\(error)")
        }
        await browser.close()
        await app.stop()
        await server.stop()
    }
}
