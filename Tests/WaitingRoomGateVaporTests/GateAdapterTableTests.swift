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
    case cookiePresent, cookieExpired, cookieCopiedToAnotherIP, ajaxForm, cancelAction, ignoreAction, noSession
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
        case .cookieCopiedToAnotherIP:
            #expect(seen[0].status == 302 && seen[0].cookies.contains { $0.hasPrefix(cookie + "=(value)") })
            #expect(seen[1].status == 200 && seen[1].reachedHandler, "the visitor's own address (X-Forwarded-For from a trusted peer)")
            #expect(seen[2].status == 302 && seen[2].location?.hasPrefix("\(base)/error/connector/sessionstate/?c=demo&e=sale&") == true, "\(seen[2])")
            #expect(seen[2].cookies.contains { $0.hasPrefix(cookie + "=(empty)") })
            #expect(reached == 1)
        case .ajaxForm:
            #expect(seen[0].status == 200 && !seen[0].reachedHandler && seen[0].location == nil)
            #expect(seen[0].ajaxRedirect.map { QueueItPercent.decode($0).hasPrefix("\(base)/?c=demo&e=sale&") } == true)
            #expect(seen[0].exposeHeaders == "x-queueit-redirect" && seen[0].cacheControl == noCache && seen[0].pragma == "no-cache")
            #expect(reached == 0)
        case .cancelAction:
            #expect(seen[0].status == 200 && seen[0].reachedHandler, "no session: the cancel action lets the request on")
            #expect(seen[1].status == 302 && seen[1].location?.hasPrefix("\(base)/cancel/demo/sale/00000000-0000-4000-8000-000000000077?c=demo&e=sale") == true)
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
            return [GateObservation(try await app.send("/shop/cart?queueittoken=\(t)")),
                    GateObservation(try await app.send("/shop/cart?queueittoken=\(t)"))]
        case .cookiePresent:
            return [GateObservation(try await app.send("/shop/cart", headers: [("Cookie", QueueItGateFixture.cookie(age: 60))]))]
        case .cookieExpired:
            return [GateObservation(try await app.send("/shop/cart", headers: [("Cookie", QueueItGateFixture.cookie(age: 11 * 60))]))]
        case .cookieCopiedToAnotherIP:
            let first = try await app.send("/shop/cart?queueittoken=\(t)", headers: [("X-Forwarded-For", Self.visitor)])
            let cookie = try #require(cookiePair(first, named: QueueItGateFixture.cookieName))
            let own = try await app.send("/shop/cart", headers: [("Cookie", cookie), ("X-Forwarded-For", "10.9.9.9, " + Self.visitor)])
            let copied = try await app.send("/shop/cart", headers: [("Cookie", cookie), ("X-Forwarded-For", "198.51.100.9")])
            return [GateObservation(first), GateObservation(own), GateObservation(copied)]
        case .ajaxForm:
            let page = QueueItGateFixture.encoded(GateAdapterPair.origin + "/shop/list")
            return [GateObservation(try await app.send("/api/data", headers: [("x-queueit-ajaxpageurl", page)]))]
        case .cancelAction:
            return [GateObservation(try await app.send("/logout")),
                    GateObservation(try await app.send("/logout", headers: [("Cookie", QueueItGateFixture.cookie(age: 30, queueId: "00000000-0000-4000-8000-000000000077"))]))]
        case .ignoreAction:
            return [GateObservation(try await app.send("/static/app.js?queueittoken=\(t)", headers: [("Cookie", QueueItGateFixture.cookie(age: 3600))]))]
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

    static let visitor = "203.0.113.7"

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

/// Issue 29 item 2: the Vapor middleware answers as the Hummingbird one does, through the same
/// engine. Every row runs against both apps over real loopback HTTP with the same inputs; their
/// answers must be equal (volatile values blanked) and meet the row.
@Suite struct GateAdapterTableTests {
    @Test(arguments: GateTableRow.allCases)
    func bothAdaptersMeetTheRow(_ row: GateTableRow) async throws {
        try await GateAdapterPair.run(makeEngine: { try QueueItGateFixture.gate($0) }) { pair in
            let token = try await row.token(pair.server)
            let hummingbird = try await row.run(pair.hummingbird, token: token)
            let vapor = try await row.run(pair.vapor, token: token)
            #expect(vapor == hummingbird, "Vapor answered \(vapor); Hummingbird \(hummingbird)")
            for app in pair.both {
                let seen = app.adapter == "vapor" ? vapor : hummingbird
                row.check(seen, reached: app.upstream.count, base: pair.server.baseURL)
            }
        }
    }
}
#endif
