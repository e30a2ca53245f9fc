import Foundation
import QueueIt
import QueueItGateEngine
import Testing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateTestSupport
import WaitingRoomHTTP

/// The Queue-it emulator's queue landing (`{queueDomain}/?c=&e=&t=…`, where the gate redirects a
/// browser), over HTTP without a browser: it queues the visitor in the event, the queue page holds
/// it while the room is shut, and on its turn sends it back to `t` with a `queueittoken` the gate
/// accepts.
@Suite struct QueueItLandingTests {
    static func get(_ url: String) async throws -> WaitingRoom.HTTPResponse {
        try await AsyncHTTPTransport.shared.send(WaitingRoom.HTTPRequest(url: url, timeout: .seconds(20)))
    }

    static func post(_ server: EmulatorServer, _ route: String, _ json: String = "{}") async throws {
        let r = try await AsyncHTTPTransport.shared.send(
            WaitingRoom.HTTPRequest(
                method: "POST", url: server.baseURL + route, headers: [("Content-Type", "application/json")], body: Array(json.utf8),
                timeout: .seconds(30)))
        #expect(r.status == 200, "\(route): \(r.text)")
    }

    @Test func theGatesRedirectQueuesTheVisitorAndItsTurnBringsAValidToken() async throws {
        try await GateTestApp.run(makeEngine: { try QueueItGateFixture.gate($0) }) { server, app, upstream in
            try await Self.post(server, "/_emulator/queueit/rooms/demo/sale", #"{"admitPerSecond": 0}"#)
            let queued = try await app.send("/shop/cart?item=7")
            #expect(queued.status == 302)
            let landing = try #require(queued.value("Location"))
            #expect(landing.hasPrefix(server.baseURL + "/?c=demo&e=sale&"))
            // The landing puts the visitor in the line and on the queue page.
            let arrived = try await Self.get(landing)
            #expect(arrived.status == 302 && arrived.value("Cache-Control") == "no-store")
            let page = try #require(arrived.value("Location"))
            #expect(page.hasPrefix(server.baseURL + "/queueit/queue/demo/sale?c=demo&e=sale&q="))
            let state = try await EmulatorAdmin.state(server, vendor: "queueit")
            #expect(state["customers"]?["demo"]?["rooms"]?["sale"]?["waiting"]?.numberValue == 1)
            // Held shut: the page shows the position and refreshes itself.
            let waiting = try await Self.get(page)
            #expect(waiting.status == 200 && waiting.text.contains(#"<meta name="queueit-ahead" content="0">"#))
            #expect(waiting.text.contains(#"http-equiv="refresh""#) && waiting.text.contains("data-status-url="))
            #expect(upstream.count == 0)
            // Its turn: back to the protected URL with a token signed with the event's secret key.
            try await Self.post(server, "/_emulator/queueit/rooms/demo/sale/admit?count=1")
            let turn = try await Self.get(page)
            #expect(turn.status == 302)
            let back = try #require(turn.value("Location"))
            #expect(back.hasPrefix(GateTestApp.origin + "/shop/cart?item=7&queueittoken="))
            let token = try #require(QueueItRequestValidator.splitToken(back).1)
            let checked = try QueueItTokenValidator(secretKey: QueueItGateFixture.secret, eventId: "sale").validate(token, now: Date())
            #expect(checked.redirectTypeField == "queue")
            // The gate accepts it: the cookie, then the page.
            let path = String(back.dropFirst(GateTestApp.origin.count))
            let accepted = try await app.send(path)
            #expect(accepted.status == 302 && accepted.value("Location") == GateTestApp.origin + "/shop/cart?item=7")
            let cookie = try #require(cookiePair(accepted, named: QueueItGateFixture.cookieName))
            let served = try await app.send("/shop/cart?item=7", headers: [("Cookie", cookie)])
            #expect(served.status == 200 && served.text == "upstream /shop/cart")
            #expect(upstream.count == 1)
        }
    }

    @Test func anEventThatDoesNotQueueSendsTheVisitorOnAtOnceWithItsToken() async throws {
        let server = try await EmulatorSuite.demo().start()
        do {
            let target = "http://shop.example/x?y=1#top"
            let r = try await Self.get(server.baseURL + "/?c=demo&e=closed&t=" + QueueItPercent.encodeComponent(target))
            #expect(r.status == 302)
            let location = try #require(r.value("Location"))
            #expect(location.hasPrefix("http://shop.example/x?y=1&queueittoken=") && location.hasSuffix("#top"))
            let token = try #require(QueueItRequestValidator.splitToken(String(location.dropLast(4))).1)
            let checked = try QueueItTokenValidator(secretKey: QueueItGateFixture.secret, eventId: "closed").validate(token, now: Date())
            #expect(checked.redirectTypeField == "disabled")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test func aLandingThatCannotQueueSaysWhy() async throws {
        let server = try await EmulatorSuite.demo().start()
        do {
            let base = server.baseURL
            let missing = try await Self.get(base + "/?c=demo")
            #expect(missing.status == 400 && missing.text.contains("No waiting room named"))
            let unknown = try await Self.get(base + "/?c=demo&e=nope")
            #expect(unknown.status == 404 && unknown.text.contains("has no waiting room nope"))
            let badTarget = try await Self.get(base + "/?c=demo&e=sale&t=" + QueueItPercent.encodeComponent("javascript:alert(1)"))
            #expect(badTarget.status == 400 && !badTarget.text.contains("<script"))
            // `members` needs an enqueue token (or key): without one it refuses; with one it queues.
            let refused = try await Self.get(base + "/?c=demo&e=members")
            #expect(refused.status == 403 && refused.text.contains("requires a valid enqueue token"))
            let invitation = try await EmulatorAdmin.token(
                server, route: "/_emulator/queueit/enqueuetokens",
                ["customerId": .string("demo"), "waitingRoomId": .string("members")])
            let invited = try await Self.get(base + "/?c=demo&e=members&enqueuetoken=" + QueueItPercent.encodeComponent(invitation))
            #expect(invited.status == 302 && invited.value("Location")?.contains("/queueit/queue/demo/members?") == true)
            // A refused token's error address queues again; the cancel address goes back to `r`.
            let error = try await Self.get(
                base + "/error/hash/?c=demo&e=sale&queueittoken=x&ts=1&t=" + QueueItPercent.encodeComponent("http://shop.example/a"))
            #expect(error.status == 302 && error.value("Location")?.contains("/queueit/queue/demo/sale?") == true)
            let session = try await Self.get(base + "/error/connector/sessionstate/?c=demo&e=sale")
            #expect(session.status == 302)
            let cancel = try await Self.get(
                base + "/cancel/demo/sale/q1/?c=demo&e=sale&r=" + QueueItPercent.encodeComponent("http://shop.example/a"))
            #expect(cancel.status == 302 && cancel.value("Location") == "http://shop.example/a")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
