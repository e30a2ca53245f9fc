import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP

/// A visitor in headless chromium behind `waitingroom gate --emulator`: turned away to the
/// waiting room, waits there, and ends on the upstream's page. Real time; generous deadlines.
@Suite("waitingroom gate in headless chromium", .serialized, .timeLimit(.minutes(4)))
struct GateProxyBrowserTests {
    /// CrowdHandler (full mode): `/demo-queue` is a line (capacity 0, 30 a minute). The gate sends
    /// the browser to the emulator's waiting page; once promoted, the page sends it back with its
    /// token and the gate lets it through to the upstream, and the cookie keeps it through.
    @Test func crowdHandlerRoomQueuesThenTheUpstreamPageOpens() async throws {
        let upstream = try await GateProxyUpstream.start()
        let gate = try await GateProxyTests.RunningGate.start(["--vendor", "crowdhandler", "--emulator", "--upstream", upstream.baseURL])
        let ran = await HeadlessBrowser.run { browser in
            let emulator = try #require(gate.emulatorURL)
            // The line is held shut while the browser arrives (a slow machine could otherwise find
            // a promotion already due), then opened so the visitor is let in.
            func setRate(_ rate: Int) async throws {
                let answer = try await AsyncHTTPTransport.shared.send(
                    HTTPRequest(
                        method: "POST", url: emulator + "/_emulator/crowdhandler/rooms/demo-queue",
                        headers: [("Content-Type", "application/json")], body: Array("{\"rate\": \(rate)}".utf8), timeout: .seconds(30)))
                #expect(answer.status == 200, "\(answer.text)")
            }
            try await setRate(0)
            try await browser.open(gate.baseURL + "/demo-queue")
            var url = try await browser.currentURL()
            // Sent to the waiting room, not to the upstream (unless the room let it in at once).
            let waited = url.hasPrefix(emulator + "/demo-queue?")
            // (The browser's own `/favicon.ico` is no room's URL: it passes, so only `/demo-queue` is counted.)
            func pageLoads() -> Int { upstream.paths.filter { $0.hasPrefix("/demo-queue") }.count }
            if waited { #expect(pageLoads() == 0, "reached upstream while waiting: \(upstream.paths)") }
            try await setRate(60)
            var text = ""
            #expect(
                try await browser.waitUntil(timeout: .seconds(90)) {
                    url = try await browser.currentURL()
                    text = try await browser.run("return document.body ? document.body.innerText : '';").stringValue ?? ""
                    return url.hasPrefix(gate.baseURL + "/demo-queue") && text.contains("upstream /demo-queue")
                }, "still at \(url): \(text.prefix(200))")
            #expect(pageLoads() == 1, "\(upstream.paths)")
            // The cookie the gate set carries the next page load straight through.
            try await browser.open(gate.baseURL + "/demo-queue")
            #expect(try await browser.currentURL() == gate.baseURL + "/demo-queue")
            #expect(pageLoads() == 2, "\(upstream.paths)")
            #expect(waited, "the room let the visitor in at once: \(url)")
        }
        let status = gate.stop()
        if ran { #expect(status == 0) }
        await upstream.stop()
    }

    /// Queue-it (KnownUser): every page but `/static/` queues in the demo room `sale`. The gate
    /// sends the browser to the emulator's queue landing (`/?c=demo&e=sale&t=…`), which puts it in
    /// the line and on the queue page; the room is held shut (0 a second) while the browser
    /// arrives, then opened; on its turn the page goes back to the gate with a `queueittoken`, the
    /// gate sets its `QueueITAccepted` cookie and the upstream's page opens; the cookie carries the
    /// next page load straight through.
    @Test func queueItRoomQueuesThenTheUpstreamPageOpens() async throws {
        let upstream = try await GateProxyUpstream.start()
        let gate = try await GateProxyTests.RunningGate.start(["--vendor", "queueit", "--emulator", "--upstream", upstream.baseURL])
        let ran = await HeadlessBrowser.run { browser in
            let emulator = try #require(gate.emulatorURL)
            func setRate(_ rate: Int) async throws {
                let answer = try await AsyncHTTPTransport.shared.send(
                    HTTPRequest(
                        method: "POST", url: emulator + "/_emulator/queueit/rooms/demo/sale",
                        headers: [("Content-Type", "application/json")], body: Array("{\"admitPerSecond\": \(rate)}".utf8),
                        timeout: .seconds(30)))
                #expect(answer.status == 200, "\(answer.text)")
            }
            func pageLoads() -> Int { upstream.paths.filter { $0.hasPrefix("/shop/tickets") }.count }
            try await setRate(0)
            try await browser.open(gate.baseURL + "/shop/tickets")
            var url = try await browser.currentURL()
            // In the line on the emulator's queue page, the upstream untouched.
            #expect(url.hasPrefix(emulator + "/queueit/queue/demo/sale?"), "\(url)")
            #expect(
                try await browser.waitUntil(timeout: .seconds(30)) { try await browser.text(ofElement: "ahead") == "0" },
                "no position on \(url)")
            #expect(pageLoads() == 0, "reached upstream while waiting: \(upstream.paths)")
            try await setRate(50)
            var text = ""
            #expect(
                try await browser.waitUntil(timeout: .seconds(90)) {
                    url = try await browser.currentURL()
                    text = try await browser.run("return document.body ? document.body.innerText : '';").stringValue ?? ""
                    return url == gate.baseURL + "/shop/tickets" && text.contains("upstream /shop/tickets")
                }, "still at \(url): \(text.prefix(200))")
            #expect(pageLoads() == 1, "\(upstream.paths)")
            let cookies = try await browser.run("return document.cookie;").stringValue ?? ""
            #expect(cookies.contains("QueueITAccepted-SDFrts345E-V3_sale=EventId=sale"), "\(cookies)")
            // The cookie carries the next page load straight through.
            try await browser.open(gate.baseURL + "/shop/tickets")
            #expect(try await browser.currentURL() == gate.baseURL + "/shop/tickets")
            #expect(pageLoads() == 2, "\(upstream.paths)")
        }
        let status = gate.stop()
        if ran { #expect(status == 0) }
        await upstream.stop()
    }
}
