import Foundation
import QueueIt
import QueueItGateEngine
import Testing
import WaitingRoom
import WaitingRoomGate
import WaitingRoomGateTestSupport

/// Queue-it's published KnownUser behaviour as a decision table (issue 29, "Done when" bullet 2).
/// Every row names where the behaviour is published; the gate, in front of a Hummingbird app,
/// with tokens minted by the project's Queue-it emulator, meets each one.
enum KnownUserRow: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case validToken, expiredToken, tamperedToken, otherRoomToken, cookiePresent, cookieExpired, ajaxForm, cancelAction, ignoreAction
    case noSession

    /// Where Queue-it publishes the behaviour the row checks.
    var source: String {
        switch self {
        case .validToken:
            return
                "../shared/reference/queueit-protocol.md §7.4 (valid token ⇒ cookie stored, request passes; the sample then redirects page loads to the URL without queueittoken); https://github.com/queueit/KnownUser.V3.Javascript README (\"we remove queueittoken form querystring parameter\")"
        case .expiredToken:
            return
                "../shared/reference/queueit-protocol.md §7.3 (ts ≥ now, failure code timestamp) and §7.2 (error redirect {queueDomain}/error/{code}/)"
        case .tamperedToken:
            return "../shared/reference/queueit-protocol.md §7.3 (hash = HMAC-SHA256 of the token without ~h_, failure code hash) and §7.2"
        case .otherRoomToken:
            return "../shared/reference/queueit-protocol.md §7.3 (e equals the configured eventId, failure code eventid) and §7.2"
        case .cookiePresent:
            return
                "../shared/reference/queueit-protocol.md §7.4 (valid QueueITAccepted cookie passes; re-issued with a fresh IssueTime when ExtendCookieValidity)"
        case .cookieExpired:
            return
                "../shared/reference/queueit-protocol.md §7.4 (IssueTime + validity × 60 ≥ now; a found but invalid cookie is cancelled: empty value, expiry 0) and §7.2 (queue redirect)"
        case .ajaxForm:
            return
                "../shared/reference/queueit-protocol.md §7.1 steps 1–2 (x-queueit-ajaxpageurl ⇒ 200 with x-queueit-redirect, encodeURIComponent, Access-Control-Expose-Headers, no-cache)"
        case .cancelAction:
            return
                "../shared/reference/queueit-protocol.md §7.2 (cancel redirect {queueDomain}/cancel/{c}/{e}[/{queueId}]?…&r={target}; KU-JS, KU-Java, KU-.NET, KU-PHP, KU-Python validateCancelRequest and its unit test: no / before ?); https://github.com/queueit/KnownUser.V3.Javascript/blob/master/src/UserInQueueService.ts (validateCancelRequest cancels the cookie)"
        case .ignoreAction:
            return
                "https://github.com/queueit/KnownUser.V3.Javascript/blob/master/src/KnownUser.ts (handleIgnoreAction: getIgnoreResult, no redirect, no cookie); src/IntegrationConfig/IntegrationConfigModel.ts (ActionType Ignore)"
        case .noSession:
            return
                "../shared/reference/queueit-protocol.md §7.2 (queue redirect ?c=&e=&ver=&cver=&man=[&cid][&l][&t=]); https://github.com/queueit/KnownUser.V3.Javascript README (302 with Cache-Control no-cache, no-store, must-revalidate, Pragma, Expires)"
        }
    }

    var testDescription: String { rawValue }
}

@Suite struct QueueItDecisionTableTests {
    @Test(arguments: KnownUserRow.allCases)
    func gateMeetsTheRow(_ row: KnownUserRow) async throws {
        #expect(!row.source.isEmpty)
        try await GateTestApp.run(makeEngine: { try QueueItGateFixture.gate($0) }) { server, app, upstream in
            let base = server.baseURL
            let target = QueueItGateFixture.encoded(GateTestApp.origin + "/shop/cart")
            switch row {
            case .validToken:
                let token = try await QueueItGateFixture.token(server)
                let r = try await app.send("/shop/cart?queueittoken=\(QueueItGateFixture.encoded(token))")
                #expect(r.status == 302, "\(row.source)")
                #expect(r.value("Location") == GateTestApp.origin + "/shop/cart")
                let cookie = try #require(cookiePair(r, named: QueueItGateFixture.cookieName))
                #expect(cookie.contains("EventId=sale&QueueId=\(QueueItToken(token).value("q") ?? "?")&"))
                #expect(upstream.count == 0)
                let next = try await app.send("/shop/cart", headers: [("Cookie", cookie)])
                #expect(next.status == 200 && next.text == "upstream /shop/cart")
                #expect(upstream.count == 1)
            case .expiredToken, .tamperedToken, .otherRoomToken:
                var token = try await QueueItGateFixture.token(
                    server, room: row == .otherRoomToken ? "open" : "sale",
                    expiresIn: row == .expiredToken ? -60 : 600)
                if row == .tamperedToken { token = token.replacingOccurrences(of: "~ts_", with: "~ts_9") }
                let code = row == .expiredToken ? "timestamp" : row == .tamperedToken ? "hash" : "eventid"
                let r = try await app.send("/shop/cart?queueittoken=\(QueueItGateFixture.encoded(token))")
                #expect(r.status == 302, "\(row.source)")
                let location = try #require(r.value("Location"))
                #expect(location.hasPrefix("\(base)/error/\(code)/?c=demo&e=sale&ver=v3-swift-1.0.0&cver=7&man=shop"), "\(location)")
                #expect(location.contains("&queueittoken=\(QueueItGateFixture.encoded(token))&ts="))
                #expect(location.hasSuffix("&t=\(target)"))
                #expect(r.value("Cache-Control") == "no-cache, no-store, must-revalidate")
                #expect(cookiePair(r, named: QueueItGateFixture.cookieName) == nil)
                #expect(upstream.count == 0)
            case .cookiePresent:
                let r = try await app.send("/shop/cart", headers: [("Cookie", QueueItGateFixture.cookie(age: 60))])
                #expect(r.status == 200 && r.text == "upstream /shop/cart", "\(row.source)")
                let reissued = try #require(cookiePair(r, named: QueueItGateFixture.cookieName))
                let value = try #require(QueueItAcceptedCookie.parse(String(reissued.dropFirst(QueueItGateFixture.cookieName.count + 1))))
                #expect(value.issueTime >= Int64(Date().timeIntervalSince1970) - 5)
                #expect(upstream.count == 1)
            case .cookieExpired:
                let r = try await app.send("/shop/cart", headers: [("Cookie", QueueItGateFixture.cookie(age: 11 * 60))])
                #expect(r.status == 302, "\(row.source)")
                #expect(r.value("Location")?.hasPrefix("\(base)/?c=demo&e=sale&ver=v3-swift-1.0.0&cver=7&man=shop&t=\(target)") == true)
                #expect(
                    r.values("Set-Cookie").contains {
                        $0.hasPrefix(QueueItGateFixture.cookieName + "=;") && $0.contains("Expires=Thu, 01 Jan 1970")
                    })
                #expect(upstream.count == 0)
            case .ajaxForm:
                let page = GateTestApp.origin + "/shop/list"
                let r = try await app.send("/api/data", headers: [("x-queueit-ajaxpageurl", QueueItGateFixture.encoded(page))])
                #expect(r.status == 200, "\(row.source)")
                #expect(r.value("Location") == nil)
                let header = try #require(r.value("x-queueit-redirect"))
                let url = QueueItPercent.decode(header)
                #expect(url.hasPrefix("\(base)/?c=demo&e=sale&"))
                #expect(url.contains("&t=\(QueueItGateFixture.encoded(page))"))
                #expect(QueueItRedirectInfo.parse(headerValue: header)?.waitingRoomId == "sale")
                #expect(r.value("Access-Control-Expose-Headers") == "x-queueit-redirect")
                #expect(r.value("Cache-Control") == "no-cache, no-store, must-revalidate" && r.value("Pragma") == "no-cache")
                #expect(r.value("Expires") != nil)
                #expect(upstream.count == 0)
            case .cancelAction:
                let none = try await app.send("/logout")
                #expect(none.status == 200, "without a session cookie the cancel action lets the request on")
                let r = try await app.send(
                    "/logout", headers: [("Cookie", QueueItGateFixture.cookie(age: 30, queueId: "00000000-0000-4000-8000-000000000077"))])
                #expect(r.status == 302, "\(row.source)")
                #expect(
                    r.value("Location")?.hasPrefix(
                        "\(base)/cancel/demo/sale/00000000-0000-4000-8000-000000000077?c=demo&e=sale&ver=v3-swift-1.0.0&cver=7&man=logout&r="
                    ) == true)
                #expect(r.values("Set-Cookie").contains { $0.hasPrefix(QueueItGateFixture.cookieName + "=;") })
                #expect(upstream.count == 1)
            case .ignoreAction:
                let token = try await QueueItGateFixture.token(server)
                let r = try await app.send(
                    "/static/app.js?queueittoken=\(QueueItGateFixture.encoded(token))",
                    headers: [("Cookie", QueueItGateFixture.cookie(age: 3600))])
                #expect(r.status == 200 && r.text == "upstream /static/app.js", "\(row.source)")
                #expect(r.values("Set-Cookie").isEmpty)
                #expect(upstream.count == 1)
            case .noSession:
                let r = try await app.send("/shop/cart")
                #expect(r.status == 302, "\(row.source)")
                let location = try #require(r.value("Location"))
                #expect(
                    location
                        == "\(base)/?c=demo&e=sale&ver=v3-swift-1.0.0&cver=7&man=shop&t=\(target)&kupver=\(QueueItGate.defaultPlatformVersion)"
                )
                #expect(r.value("Cache-Control") == "no-cache, no-store, must-revalidate")
                #expect(r.value("Pragma") == "no-cache" && r.value("Expires") == "Fri, 01 Jan 1990 00:00:00 GMT")
                #expect(upstream.count == 0)
            }
        }
    }
}
