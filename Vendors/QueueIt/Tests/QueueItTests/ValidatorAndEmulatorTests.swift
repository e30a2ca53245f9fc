import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import QueueIt
@testable import QueueItEmulator

@Suite struct RequestValidatorTests {
    let secret = "validator-secret"
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    var validator: QueueItRequestValidator {
        QueueItRequestValidator(
            settings: QueueItKnownUserSettings(
                customerId: "acme", secretKey: secret, eventId: "sale",
                layoutName: "L", culture: "en-US"))
    }

    @Test func queueRedirectForAjaxAndPage() {
        let ajax = validator.validate(
            url: "https://api.acme.com/cart", headers: [("X-QueueIT-AjaxPageUrl", "https%3A%2F%2Fshop.acme.com%2Fcart")],
            clientIP: nil, now: now)
        #expect(!ajax.isPassed && ajax.isAjax)
        #expect(
            ajax.redirectURL
                == "https://acme.queue-it.net/?c=acme&e=sale&ver=v3-swift-1.0.0&cver=1&man=Queue&cid=en-US&l=L&t=https%3A%2F%2Fshop.acme.com%2Fcart"
        )
        let headers = ajax.responseHeaders
        #expect(headers.contains { $0.0 == "x-queueit-redirect" && $0.1.hasPrefix("https%3A%2F%2Facme.queue-it.net%2F%3Fc%3Dacme") })
        #expect(headers.contains { $0 == ("Access-Control-Expose-Headers", "x-queueit-redirect") })
        let info = QueueItRedirectInfo.parse(headerValue: headers.first { $0.0 == "x-queueit-redirect" }?.1 ?? "")
        #expect(info?.customerId == "acme" && info?.waitingRoomId == "sale" && info?.layoutName == "L" && info?.language == "en-US")
        #expect(info?.waitingRoomDomain == "https://acme.queue-it.net" && info?.pathPrefix == nil)
        let page = validator.validate(url: "https://shop.acme.com/cart?x=1", headers: [], clientIP: nil, now: now)
        #expect(page.responseHeaders.contains { $0.0 == "Location" && $0.1.hasSuffix("&t=https%3A%2F%2Fshop.acme.com%2Fcart%3Fx%3D1") })
    }

    @Test func tokenThenCookieThenExtension() throws {
        let token = try QueueItTokenMinter(secretKey: secret).mint(
            eventId: "sale", queueId: "q-1", expiresAt: 1_700_000_300, redirectType: .queue)
        let first = validator.validate(
            url: "https://api.acme.com/cart?a=1&queueittoken=\(token)", headers: [], clientIP: "1.2.3.4", now: now)
        #expect(first.isPassed && first.queueId == "q-1" && first.redirectType == "queue")
        let setCookie = try #require(first.setCookies.first)
        #expect(
            setCookie.hasPrefix("QueueITAccepted-SDFrts345E-V3_sale=EventId=sale&QueueId=q-1&RedirectType=queue&IssueTime=1700000000&Hash=")
        )
        let value = String(setCookie.split(separator: ";")[0].dropFirst("QueueITAccepted-SDFrts345E-V3_sale=".count))
        let cookieHeader = ("Cookie", "other=1; QueueITAccepted-SDFrts345E-V3_sale=\(value)")
        // Cookie valid for 20 minutes, re-issued (extended) on each request.
        let later = validator.validate(
            url: "https://api.acme.com/cart", headers: [cookieHeader], clientIP: nil, now: now.addingTimeInterval(1000))
        #expect(later.isPassed && later.setCookies.first?.contains("IssueTime=1700001000") == true)
        let expired = validator.validate(
            url: "https://api.acme.com/cart", headers: [cookieHeader], clientIP: nil, now: now.addingTimeInterval(1201))
        #expect(!expired.isPassed)
        #expect(expired.setCookies == ["QueueITAccepted-SDFrts345E-V3_sale=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"])
        // A cookie of another event does not count.
        let other = validator.validate(
            url: "https://api.acme.com/cart", headers: [("Cookie", "QueueITAccepted-SDFrts345E-V3_other=\(value)")],
            clientIP: nil, now: now)
        #expect(!other.isPassed && other.setCookies.isEmpty)
        // A broken token sends the visitor to the error page with its code.
        let bad = validator.validate(url: "https://api.acme.com/cart?queueittoken=garbage", headers: [], clientIP: nil, now: now)
        #expect(bad.rejection == .hash)
        #expect(bad.redirectURL?.hasPrefix("https://acme.queue-it.net/error/hash/?c=acme&e=sale") == true)
        #expect(bad.redirectURL?.contains("&queueittoken=garbage&ts=1700000000&t=https%3A%2F%2Fapi.acme.com%2Fcart") == true)
    }

    @Test func splitTokenAndAppend() {
        #expect(QueueItRequestValidator.splitToken("https://a/b?x=1&queueittoken=t%7E1&y=2#f") == ("https://a/b?x=1&y=2#f", "t~1"))
        #expect(QueueItRequestValidator.splitToken("https://a/b") == ("https://a/b", nil))
        // the URL back as it came when there is nothing to take out; empty pairs dropped otherwise
        for (url, expected) in [
            ("https://a/b?x=1&y=2", "https://a/b?x=1&y=2"), ("https://a/b?x=1#f&g", "https://a/b?x=1#f&g"),
            ("https://a/b?x=queueittoken=1", "https://a/b?x=queueittoken=1"), ("https://a/b?x=1&&y=2", "https://a/b?x=1&y=2"),
            ("https://a/b?", "https://a/b"), ("https://a/b?&x", "https://a/b?x"), ("https://a/b?x&", "https://a/b?x"),
            ("https://a/b?#f", "https://a/b#f"), ("https://a/b?Queueittoken=1", "https://a/b?Queueittoken=1")
        ] {
            #expect(QueueItRequestValidator.splitToken(url) == (expected, nil), "\(url)")
        }
        #expect(QueueItRequestValidator.splitToken("https://a/b?queueittoken=abc&x=1") == ("https://a/b?x=1", "abc"))
        #expect(QueueItRequestValidator.splitToken("https://a/b?x=1&queueittoken=") == ("https://a/b?x=1", nil))
        #expect(QueueItHybridClient.appendingToken("e_a~h_1", to: "https://a/b?x=1#f") == "https://a/b?x=1&queueittoken=e_a~h_1#f")
        #expect(QueueItHybridClient.appendingToken("t", to: "https://a/b?queueittoken=old") == "https://a/b?queueittoken=t")
    }

    @Test func redirectHeadersThatAreNotURLs() {
        for bad in ["", "not a url", "https%3A%2F%2Fx", "ftp://x/?c=a&e=b", "https://x/?c=a", "%%%", String(repeating: "a", count: 20_000)]
        {
            #expect(QueueItRedirectInfo.parse(headerValue: bad) == nil, "\(bad.prefix(20))")
        }
        let proxied = QueueItRedirectInfo.parse(headerValue: "https://shop.com/queue/error/hash/?c=a&e=b&queueittoken=x")
        #expect(proxied?.pathPrefix == "queue" && proxied?.waitingRoomDomain == "https://shop.com")
    }
}

@Suite struct EmulatorHTTPTests {
    @Test func queuePageAndAdmin() async throws {
        let h = try await Harness.start(autoAdvance: false)
        defer { Task { await h.stop() } }
        let t = AsyncHTTPTransport.shared
        let base = h.server.baseURL
        let r = try await h.provider(room: "flash").tryPass(h.entry("flash"))
        let queueURL = try #require(r.queuePage?.queueURL)
        let page = try await t.send(HTTPRequest(url: queueURL))
        #expect(page.status == 200)
        for needle in [
            "queueit://close", "queueit://restartSession", "http-equiv=\"refresh\"", "name=\"queueit-ahead\" content=\"0\"",
            "/what-is-this.html"
        ] {
            #expect(page.text.contains(needle), "\(needle)")
        }
        // Admit via admin, then the page redirects to the target with a token.
        let admit = try await t.send(HTTPRequest(method: "POST", url: base + "/_emulator/queueit/rooms/demo/flash/admit?count=1"))
        #expect(admit.status == 200)
        let through = try await t.send(HTTPRequest(url: queueURL))
        #expect(through.status == 302)
        let location = try #require(through.headers.value(for: "Location"))
        #expect(location.hasPrefix(base + "/queueit/target/demo/flash?queueittoken=e_flash~"))
        // State, room patch, faults.
        let state = try await t.send(HTTPRequest(url: base + "/_emulator/queueit/state"))
        #expect(state.text.contains("\"flash\":{\"admitPerSecond\":0,\"admitted\":1,\"arrivals\":1"))
        let patch = try await t.send(
            HTTPRequest(
                method: "POST", url: base + "/_emulator/queueit/rooms/demo/flash",
                headers: [("Content-Type", "application/json")], body: Array(#"{"state":"safetynet"}"#.utf8)))
        #expect(patch.status == 200)
        #expect(try await h.provider(room: "flash").tryPass(h.entry("flash")).disposition == .passed)
        let badPatch = try await t.send(
            HTTPRequest(
                method: "POST", url: base + "/_emulator/queueit/rooms/demo/flash",
                body: Array(#"{"admitPerSecond":"fast"}"#.utf8)))
        #expect(badPatch.status == 400 && badPatch.text.contains("admitPerSecond"))
        #expect(
            try await t.send(HTTPRequest(method: "POST", url: base + "/_emulator/queueit/rooms/demo/none", body: Array("{}".utf8))).status
                == 404)
        let badFault = try await t.send(
            HTTPRequest(method: "POST", url: base + "/_emulator/queueit/faults", body: Array(#"{"kind":"meteor"}"#.utf8)))
        #expect(badFault.status == 400)
        let fault = try await t.send(
            HTTPRequest(method: "POST", url: base + "/_emulator/queueit/faults", body: Array(#"{"kind":"status","status":418}"#.utf8)))
        #expect(fault.status == 200)
        _ = try await t.send(HTTPRequest(method: "DELETE", url: base + "/_emulator/queueit/faults"))
        #expect(try await h.provider(room: "open").tryPass(h.entry("open")).disposition == .passed)
        let reset = try await t.send(HTTPRequest(method: "POST", url: base + "/_emulator/queueit/reset"))
        #expect(reset.status == 200)
        #expect(try await t.send(HTTPRequest(url: queueURL)).status == 404)
        // Bad enqueue bodies are 400, never a crash.
        let junk = try await t.send(
            HTTPRequest(method: "POST", url: base + "/api/mobileapp/queue/demo/sale/enqueue", body: Array("{\"userId\":".utf8)))
        #expect(junk.status == 400)
    }

    @Test func providerConfigurationFromJSON() throws {
        let c = try QueueItConfiguration(
            json: .object([
                "customerId": .string("demo"), "waitingRoomId": .string("sale"),
                "waitingRoomDomain": .string("127.0.0.1:9"), "pollIntervalSeconds": .number(2)
            ]))
        #expect(c.pollInterval == .seconds(2))
        func field(_ obj: [String: JSONValue]) -> String? {
            do {
                _ = try QueueItConfiguration(json: .object(obj))
                return nil
            } catch let e as WaitingRoomError { return e.field } catch { return "?" }
        }
        #expect(field([:]) == "customerId")
        #expect(field(["customerId": .string("demo"), "waitingRoomDomain": .string("http://example.com")]) == "waitingRoomDomain")
        #expect(field(["customerId": .string("demo"), "requestTimeoutSeconds": .number(500)]) == "requestTimeoutSeconds")
        #expect(field(["customerId": .string("demo"), "queuePage": .string("web")]) == "queuePage")
        #expect(field(["customerId": .string("demo"), "colour": .string("red")]) == "colour")
        #expect(field(["customerId": .number(1)]) == "customerId")
        #expect(QueueItConfiguration.vendorID == "queueit")
    }
}
