#if Vapor
    import Foundation
    import QueueIt
    import Testing
    import WaitingRoom
    import WaitingRoomEmulators
    import QueueItGateEngine
    import WaitingRoomGate
    import WaitingRoomGateTestSupport

    /// One row of the table both adapters are held to: Queue-it's KnownUser rows (their sources are
    /// cited in WaitingRoomGateTests/QueueItDecisionTableTests.swift and docs/queueit-protocol.md
    /// §7) and the abuse cases of issue 29 §4.
    enum GateTableRow: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case validToken, expiredToken, tamperedToken, otherRoomToken, otherCustomerToken, junkToken, replayedToken
        case cookiePresent, cookieExpired, forgedCookie, cookieCopiedToAnotherIP, ajaxForm, cancelAction, ignoreAction, noSession
        case oversizeHeader, oversizeDeclaredBody, malformedAjaxPageURL

        var testDescription: String { rawValue }

        /// What both apps must answer, in request order, and how many requests reach the handler.
        func check(_ seen: [GateObservation], reached: Int, base: String) {
            let cart = QueueItGateFixture.encoded(GateAdapterPair.origin + "/shop/cart")
            let queue = "\(base)/?c=demo&e=sale&ver=v3-swift-1.0.0&cver=7&man=shop"
            let noCache = "no-cache, no-store, must-revalidate"
            let cookie = QueueItGateFixture.cookieName
            switch self {
            case .validToken:
                #expect(seen[0].status == 302 && seen[0].location == GateAdapterPair.origin + "/shop/cart")
                #expect(seen[0].cookies.contains { $0.hasPrefix(cookie + "=(value)") })
                #expect(seen[1].status == 200 && seen[1].reachedHandler)
                #expect(reached == 1)
            case .expiredToken, .tamperedToken, .otherRoomToken, .otherCustomerToken, .junkToken:
                let code = self == .expiredToken ? "timestamp" : self == .otherRoomToken ? "eventid" : "hash"
                #expect(seen[0].status == 302)
                #expect(seen[0].location?.hasPrefix("\(base)/error/\(code)/?c=demo&e=sale") == true, "\(seen[0])")
                #expect(seen[0].location?.hasSuffix("&t=\(cart)") == true)
                #expect(seen[0].cacheControl == noCache && seen[0].cookies.isEmpty)
                #expect(reached == 0)
            case .replayedToken:
                #expect(seen[0].status == 302 && seen[0].location == GateAdapterPair.origin + "/shop/cart")
                #expect(seen[1].status == 302 && seen[1].location?.hasPrefix(queue) == true && seen[1].cookies.isEmpty)
                #expect(reached == 0)
            case .cookiePresent:
                #expect(seen[0].status == 200 && seen[0].reachedHandler)
                #expect(seen[0].cookies.contains { $0.hasPrefix(cookie + "=(value)") }, "extended (ExtendCookieValidity)")
                #expect(reached == 1)
            case .cookieExpired:
                #expect(seen[0].status == 302 && seen[0].location?.hasPrefix("\(queue)&t=\(cart)") == true)
                #expect(seen[0].cookies.contains { $0.hasPrefix(cookie + "=(empty)") })
                #expect(reached == 0)
            case .forgedCookie:
                #expect(seen[0].status == 302 && seen[0].location?.hasPrefix("\(queue)&t=\(cart)") == true, "\(seen[0])")
                #expect(!seen[0].reachedHandler)
                #expect(reached == 0)
            case .cookieCopiedToAnotherIP:
                #expect(seen[0].status == 302 && seen[0].cookies.contains { $0.hasPrefix(cookie + "=(value)") })
                #expect(seen[1].status == 200 && seen[1].reachedHandler, "the visitor's own address")
                #expect(
                    seen[2].status == 302 && seen[2].location?.hasPrefix("\(base)/error/connector/sessionstate/?c=demo&e=sale&") == true,
                    "\(seen[2])")
                #expect(seen[2].cookies.contains { $0.hasPrefix(cookie + "=(empty)") })
                #expect(reached == 1)
            case .ajaxForm:
                #expect(seen[0].status == 200 && !seen[0].reachedHandler && seen[0].location == nil)
                #expect(seen[0].ajaxRedirect.map { QueueItPercent.decode($0).hasPrefix("\(base)/?c=demo&e=sale&") } == true)
                #expect(seen[0].exposeHeaders == "x-queueit-redirect" && seen[0].cacheControl == noCache && seen[0].pragma == "no-cache")
                #expect(reached == 0)
            case .cancelAction:
                #expect(seen[0].status == 200 && seen[0].reachedHandler, "no session: the cancel action lets the request on")
                #expect(
                    seen[1].status == 302
                        && seen[1].location?.hasPrefix("\(base)/cancel/demo/sale/00000000-0000-4000-8000-000000000077?c=demo&e=sale")
                            == true
                )
                #expect(seen[1].cookies.contains { $0.hasPrefix(cookie + "=(empty)") })
                #expect(reached == 1)
            case .ignoreAction:
                #expect(seen[0].status == 200 && seen[0].reachedHandler && seen[0].cookies.isEmpty)
                #expect(reached == 1)
            case .noSession:
                #expect(seen[0].status == 302)
                #expect(seen[0].location == "\(queue)&t=\(cart)&kupver=\(QueueItGate.defaultPlatformVersion)")
                #expect(seen[0].cacheControl == noCache && seen[0].pragma == "no-cache")
                #expect(reached == 0)
            case .oversizeHeader:
                #expect(seen[0].status == 431 && seen[0].gateText?.contains("at most") == true, "\(seen[0])")
                #expect(reached == 0)
            case .oversizeDeclaredBody:
                #expect(seen[0].status == 413, "\(seen[0])")
                #expect(reached == 0)
            case .malformedAjaxPageURL:
                #expect(seen[0].status == 400, "\(seen[0])")
                #expect(reached == 0)
            }
        }

        /// Sends the row's requests to `app`; `token` is minted once for both apps.
        func run(_ app: GateApp, token: String) async throws -> [GateObservation] {
            let t = QueueItGateFixture.encoded(token)
            switch self {
            case .validToken:
                let r = try await app.send("/shop/cart?queueittoken=\(t)")
                let cookie = try #require(cookiePair(r, named: QueueItGateFixture.cookieName))
                return [GateObservation(r), GateObservation(try await app.send("/shop/cart", headers: [("Cookie", cookie)]))]
            case .expiredToken, .tamperedToken, .otherRoomToken, .otherCustomerToken, .junkToken:
                return [GateObservation(try await app.send("/shop/cart?queueittoken=\(t)"))]
            case .replayedToken:
                return [
                    GateObservation(try await app.send("/shop/cart?queueittoken=\(t)")),
                    GateObservation(try await app.send("/shop/cart?queueittoken=\(t)"))
                ]
            case .cookiePresent:
                return [GateObservation(try await app.send("/shop/cart", headers: [("Cookie", QueueItGateFixture.cookie(age: 60))]))]
            case .cookieExpired:
                return [GateObservation(try await app.send("/shop/cart", headers: [("Cookie", QueueItGateFixture.cookie(age: 11 * 60))]))]
            case .forgedCookie:
                // a valid cookie's queue id changed: its hash no longer holds
                let forged = QueueItGateFixture.cookie(age: 30).replacingOccurrences(of: "QueueId=00000000", with: "QueueId=11111111")
                return [GateObservation(try await app.send("/shop/cart", headers: [("Cookie", forged)]))]
            case .cookieCopiedToAnotherIP:
                // two visitors on two loopback addresses: the peer of a middleware and of the proxy,
                // the X-Forwarded-For nginx and Caddy give the gate
                let first = try await app.send("/shop/cart?queueittoken=\(t)", from: Self.visitor)
                let cookie = try #require(cookiePair(first, named: QueueItGateFixture.cookieName))
                let own = try await app.send("/shop/cart", headers: [("Cookie", cookie)], from: Self.visitor)
                let copied = try await app.send("/shop/cart", headers: [("Cookie", cookie)], from: Self.copier)
                return [GateObservation(first), GateObservation(own), GateObservation(copied)]
            case .ajaxForm:
                let page = QueueItGateFixture.encoded(GateAdapterPair.origin + "/shop/list")
                return [GateObservation(try await app.send("/api/data", headers: [("x-queueit-ajaxpageurl", page)]))]
            case .cancelAction:
                return [
                    GateObservation(try await app.send("/logout")),
                    GateObservation(
                        try await app.send(
                            "/logout",
                            headers: [("Cookie", QueueItGateFixture.cookie(age: 30, queueId: "00000000-0000-4000-8000-000000000077"))]))
                ]
            case .ignoreAction:
                return [
                    GateObservation(
                        try await app.send("/static/app.js?queueittoken=\(t)", headers: [("Cookie", QueueItGateFixture.cookie(age: 3600))]))
                ]
            case .noSession:
                return [GateObservation(try await app.send("/shop/cart"))]
            case .oversizeHeader:
                return [GateObservation(try await app.send("/free", headers: [("X-Padding", String(repeating: "a", count: 9 * 1024))]))]
            case .oversizeDeclaredBody:
                return [GateObservation(try await app.send("/shop/cart", method: "POST", body: Array(repeating: 0x61, count: 65 * 1024)))]
            case .malformedAjaxPageURL:
                return [GateObservation(try await app.send("/api/data", headers: [("x-queueit-ajaxpageurl", "javascript%3Aalert(1)")]))]
            }
        }

        static let visitor = "127.0.0.7"
        static let copier = "127.0.0.9"

        /// The gate's own refusals (4xx before the engine is asked). Behind a proxy in auth mode the
        /// bounds on bodies and headers are the proxy's, and a refusal is the proxy's 403 (or its 400).
        var isGateRefusal: Bool { [.oversizeHeader, .oversizeDeclaredBody, .malformedAjaxPageURL].contains(self) }

        /// The row's `queueittoken`, minted by the emulator (or forged from one).
        func token(_ server: EmulatorServer) async throws -> String {
            switch self {
            case .expiredToken: return try await QueueItGateFixture.token(server, expiresIn: -60)
            case .otherRoomToken: return try await QueueItGateFixture.token(server, room: "open")
            case .otherCustomerToken: return try await QueueItGateFixture.token(server, secretKey: "another-customer-secret-key-99")
            case .tamperedToken: return try await QueueItGateFixture.token(server).replacingOccurrences(of: "~ts_", with: "~ts_9")
            case .junkToken: return "~~~_"
            case .cookieCopiedToAnotherIP: return try await QueueItGateFixture.token(server, clientIP: Self.visitor)
            default: return try await QueueItGateFixture.token(server)
            }
        }
    }

    /// Issue 29 item 2 and issue 49: every front answers as the Hummingbird middleware does, through
    /// the same engine: the Vapor middleware, the reverse proxy, and the auth-subrequest mode behind
    /// nginx and behind Caddy (each started with the file `deploy/` ships). Every row runs against
    /// every front over real loopback HTTP with the same inputs; their answers must be equal
    /// (volatile values blanked) and meet the row.
    @Suite struct GateAdapterTableTests {
        @Test(arguments: GateTableRow.allCases.filter { !$0.isGateRefusal })
        func everyFrontMeetsTheRow(_ row: GateTableRow) async throws {
            try await GateFleet.run(makeEngine: { try QueueItGateFixture.gate($0) }) { fleet in
                #expect(fleet.apps.map(\.adapter) == ["hummingbird", "vapor", "proxy", "nginx+authz", "caddy+authz"])
                let token = try await row.token(fleet.server)
                var answers: [[GateObservation]] = []
                for app in fleet.apps {
                    let seen = try await row.run(app, token: token)
                    row.check(seen, reached: app.upstream.count, base: fleet.server.baseURL)
                    answers.append(seen)
                }
                for (app, seen) in zip(fleet.apps, answers).dropFirst() {
                    #expect(seen == answers[0], "\(app.adapter) answered \(seen); \(fleet.apps[0].adapter) \(answers[0])")
                }
            }
        }

        /// The gate's own refusals: the middlewares and the reverse proxy answer alike; behind nginx or
        /// Caddy the request is refused too (the gate's 403, or the proxy's own 400 for a header over
        /// its buffer) and never reaches the app. A declared body over the gate's bound is the
        /// proxy's to refuse (`client_max_body_size`): not asked of the auth fronts.
        @Test(arguments: GateTableRow.allCases.filter(\.isGateRefusal))
        func everyFrontRefuses(_ row: GateTableRow) async throws {
            try await GateFleet.run(makeEngine: { try QueueItGateFixture.gate($0) }) { fleet in
                let token = try await row.token(fleet.server)
                var answers: [[GateObservation]] = []
                for app in fleet.apps where !app.followsStart {
                    let seen = try await row.run(app, token: token)
                    row.check(seen, reached: app.upstream.count, base: fleet.server.baseURL)
                    answers.append(seen)
                }
                #expect(answers.dropFirst().allSatisfy { $0 == answers[0] }, "\(answers)")
                for app in fleet.apps where app.followsStart && row != .oversizeDeclaredBody {
                    let seen = try await row.run(app, token: token)
                    #expect(seen.allSatisfy { [400, 403].contains($0.status) }, "\(app.adapter): \(seen)")
                    #expect(app.upstream.count == 0, "\(app.adapter)")
                }
            }
        }
    }
#endif
