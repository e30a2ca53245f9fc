import Foundation
import QueueIt
import QueueItGateEngine
import Testing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateTestSupport

/// Issue 29 §4 for Queue-it: every abusive request is refused (sent to the queue or answered
/// 4xx) and never reaches the protected handler.
@Suite struct QueueItAbuseTests {
    func run(_ body: @Sendable (EmulatorServerRef, AppClient, UpstreamCounter) async throws -> Void) async throws {
        try await GateTestApp.run(makeEngine: { try QueueItGateFixture.gate($0) }) { server, app, upstream in
            try await body(EmulatorServerRef(server: server), app, upstream)
        }
    }

    @Test func tamperedTokenIsSentToTheErrorPage() async throws {
        try await run { s, app, upstream in
            let token = try await QueueItGateFixture.token(s.server)
            // Another queue id, the hash kept: the HMAC no longer matches.
            let queueId = QueueItToken(token).value("q") ?? ""
            let forged = token.replacingOccurrences(
                of: "~q_" + queueId, with: "~q_" + queueId.dropLast() + (queueId.hasSuffix("0") ? "1" : "0"))
            #expect(forged != token)
            let r = try await app.send("/shop/cart?queueittoken=\(QueueItGateFixture.encoded(forged))")
            #expect(r.status == 302 && r.value("Location")?.contains("/error/hash/") == true)
            #expect(upstream.count == 0)
        }
    }

    @Test func expiredTokenIsSentToTheErrorPage() async throws {
        try await run { s, app, upstream in
            let token = try await QueueItGateFixture.token(s.server, expiresIn: -1)
            let r = try await app.send("/shop/cart?queueittoken=\(QueueItGateFixture.encoded(token))")
            #expect(r.value("Location")?.contains("/error/timestamp/") == true)
            #expect(upstream.count == 0)
        }
    }

    @Test func otherRoomTokenIsSentToTheErrorPage() async throws {
        try await run { s, app, upstream in
            let token = try await QueueItGateFixture.token(s.server, room: "open")
            let r = try await app.send("/shop/cart?queueittoken=\(QueueItGateFixture.encoded(token))")
            #expect(r.value("Location")?.contains("/error/eventid/") == true)
            #expect(upstream.count == 0)
        }
    }

    @Test func otherCustomerTokensAreRefused() async throws {
        try await run { s, app, upstream in
            // Signed with another customer's secret key: the hash fails.
            let foreign = try await QueueItGateFixture.token(s.server, secretKey: "another-customer-secret-key-99")
            let r1 = try await app.send("/shop/cart?queueittoken=\(QueueItGateFixture.encoded(foreign))")
            #expect(r1.status == 302 && r1.value("Location")?.contains("/error/hash/") == true)
            // Signed with our key but naming another customer (`c_`): refused before it is trusted.
            let expiry = Int64(Date().timeIntervalSince1970) + 600
            let named = QueueItTokenMinter(secretKey: QueueItGateFixture.secret).sign(
                body: "e_sale~q_q-1~ts_\(expiry)~c_other~ce_false~rt_queue")
            let r2 = try await app.send("/shop/cart?queueittoken=\(QueueItGateFixture.encoded(named))")
            #expect(r2.status == 302 && r2.value("Location")?.hasPrefix(s.server.baseURL + "/?c=demo&e=sale") == true)
            #expect(cookiePair(r2, named: QueueItGateFixture.cookieName) == nil)
            #expect(upstream.count == 0)
        }
    }

    @Test func replayedTokenIsSentToTheQueue() async throws {
        try await run { s, app, upstream in
            let token = try await QueueItGateFixture.token(s.server)
            let path = "/shop/cart?queueittoken=\(QueueItGateFixture.encoded(token))"
            let first = try await app.send(path)
            #expect(first.status == 302 && first.value("Location") == GateTestApp.origin + "/shop/cart")
            #expect(cookiePair(first, named: QueueItGateFixture.cookieName) != nil)
            // The same token again, from a visitor without the cookie (copied out of a URL).
            let replay = try await app.send(path)
            #expect(replay.status == 302 && replay.value("Location")?.hasPrefix(s.server.baseURL + "/?c=demo&e=sale") == true)
            #expect(cookiePair(replay, named: QueueItGateFixture.cookieName) == nil)
            // The AJAX form too.
            let ajax = try await app.send(
                "/api/data?queueittoken=\(QueueItGateFixture.encoded(token))",
                headers: [("x-queueit-ajaxpageurl", QueueItGateFixture.encoded(GateTestApp.origin + "/shop"))])
            #expect(ajax.status == 200 && ajax.value("x-queueit-redirect") != nil)
            #expect(upstream.count == 0)
        }
    }

    @Test func cookieCopiedToAnotherIPIsRefused() async throws {
        try await run { s, app, upstream in
            let visitor = "203.0.113.7"
            let token = try await QueueItGateFixture.token(s.server, clientIP: visitor)
            let first = try await app.send(
                "/shop/cart?queueittoken=\(QueueItGateFixture.encoded(token))", headers: [("X-Forwarded-For", visitor)])
            let cookie = try #require(cookiePair(first, named: QueueItGateFixture.cookieName))
            #expect(cookie.contains("&Hip="))
            let own = try await app.send("/shop/cart", headers: [("Cookie", cookie), ("X-Forwarded-For", visitor)])
            #expect(own.status == 200)
            #expect(upstream.count == 1)
            let copied = try await app.send("/shop/cart", headers: [("Cookie", cookie), ("X-Forwarded-For", "198.51.100.9")])
            // KU-JS `validateQueueRequest`: Queue-it's session-state error page, with the binding in `icr`
            #expect(
                copied.status == 302
                    && copied.value("Location")?.hasPrefix(s.server.baseURL + "/error/connector/sessionstate/?c=demo&e=sale") == true)
            #expect(
                copied.value("Location")?.contains("&icr=ip%2Ccip%3A3139382e35312e3130302e39%2Chip%3A") == true,
                "\(copied.value("Location") ?? "")")
            #expect(copied.values("Set-Cookie").contains { $0.hasPrefix(QueueItGateFixture.cookieName + "=;") })
            // The token itself, from the other address.
            let other = try await QueueItGateFixture.token(s.server, clientIP: visitor)
            let moved = try await app.send(
                "/shop/cart?queueittoken=\(QueueItGateFixture.encoded(other))", headers: [("X-Forwarded-For", "198.51.100.9")])
            #expect(moved.value("Location")?.contains("/error/ip/") == true)
            #expect(upstream.count == 1)
        }
    }

    @Test func enqueueTokenIdUsedTwiceIsRefused() async throws {
        try await run { s, app, upstream in
            func invitation() async throws -> String {
                try await EmulatorAdmin.token(
                    s.server, route: "/_emulator/queueit/enqueuetokens",
                    [
                        "customerId": .string("demo"), "waitingRoomId": .string("sale"), "expiresIn": .number(600),
                        "tokenIdentifier": .string("invite-0001")
                    ])
            }
            let token = try await invitation()
            let first = try await app.send("/shop/cart?enqueuetoken=\(QueueItGateFixture.encoded(token))")
            #expect(first.status == 302)
            #expect(first.value("Location")?.contains("&enqueuetoken=\(QueueItGateFixture.encoded(token))") == true)
            let again = try await app.send("/shop/cart?enqueuetoken=\(QueueItGateFixture.encoded(token))")
            #expect(again.status == 403 && again.text.contains("already used"))
            // Minted again with the same id (another signature, same `ti`): still used.
            let remint = try await invitation()
            let third = try await app.send("/shop/cart?enqueuetoken=\(QueueItGateFixture.encoded(remint))")
            #expect(third.status == 403)
            // Not one of ours.
            let bad = try await app.send("/shop/cart?enqueuetoken=" + QueueItGateFixture.encoded(token.dropLast(3) + "abc"))
            #expect(bad.status == 403)
            #expect(upstream.count == 0)
        }
    }

    @Test func missingAndMalformedHeadersAreRefused() async throws {
        try await run { _, app, upstream in
            let notURL = try await app.send("/api/data", headers: [("x-queueit-ajaxpageurl", "javascript%3Aalert(1)")])
            #expect(notURL.status == 400)
            let garbage = try await app.send("/shop/cart", headers: [("Cookie", QueueItGateFixture.cookieName + "=EventId=sale&Hash=zz")])
            #expect(garbage.status == 302)
            #expect(garbage.values("Set-Cookie").contains { $0.hasPrefix(QueueItGateFixture.cookieName + "=;") })
            let empty = try await app.send("/shop/cart", headers: [("Cookie", QueueItGateFixture.cookieName + "=")])
            #expect(empty.status == 302)
            let noToken = try await app.send("/shop/cart?queueittoken=")
            #expect(noToken.status == 302)
            let junkToken = try await app.send("/shop/cart?queueittoken=%7E%7E%7E_")
            #expect(junkToken.status == 302 && junkToken.value("Location")?.contains("/error/hash/") == true)
            #expect(upstream.count == 0)
        }
    }

    @Test func oversizeHeadersAndBodiesAreRefused() async throws {
        try await run { _, app, upstream in
            let valid = QueueItGateFixture.cookie(age: 10)
            let many = (0..<70).map { ("X-Filler-\($0)", "v") } + [("Cookie", valid)]
            let answer1 = try await app.send("/shop/cart", headers: many)
            #expect(answer1.status == 431)
            let huge = try await app.send("/shop/cart", headers: [("Cookie", valid + "; pad=" + String(repeating: "p", count: 9000))])
            #expect(huge.status == 431)
            let longURL = try await app.send("/shop/cart?x=" + String(repeating: "u", count: 9000), headers: [("Cookie", valid)])
            #expect(longURL.status == 414)
            let body = [UInt8](repeating: 65, count: 100 * 1024)
            let big = try await app.send(
                "/shop/cart", method: "POST", headers: [("Cookie", valid), ("Content-Type", "text/plain")], body: body)
            #expect(big.status == 413)
            #expect(upstream.count == 0)
            // Within bounds, the same cookie passes.
            let answer2 = try await app.send("/shop/cart", method: "POST", headers: [("Cookie", valid)], body: [65])
            #expect(answer2.status == 200)
            #expect(upstream.count == 1)
        }
    }
}

/// The emulator server, wrapped so closures can name it.
struct EmulatorServerRef: Sendable {
    let server: EmulatorServer
}
