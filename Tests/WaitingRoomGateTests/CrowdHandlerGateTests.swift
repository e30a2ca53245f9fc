import CrowdHandler
import CrowdHandlerGateEngine
import Foundation
import Testing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateTestSupport
import WaitingRoomHTTP

/// CrowdHandler through the gate, against the project's CrowdHandler emulator: full mode,
/// hybrid mode, trustOnFail and the safety-net room, the recorded response, and abuse.
@Suite struct CrowdHandlerGateTests {
    static func configuration(
        _ server: EmulatorServer, apiURL: String? = nil, trustOnFail: Bool = true,
        safetyNet: String? = nil
    ) throws -> CrowdHandlerConfiguration {
        try CrowdHandlerConfiguration(
            publicKey: "demo-public-key", privateKey: "emulator-private-key", apiURL: apiURL ?? server.baseURL,
            waitURL: server.baseURL, timeout: .seconds(15), trustOnFail: trustOnFail, safetyNetSlug: safetyNet)
    }

    // (the API check's timeout is long: with `trustOnFail` a check that times out on a loaded
    // machine would let the request in without a session, which these tests do not test)
    static func fullGate(_ server: EmulatorServer, apiURL: String? = nil, trustOnFail: Bool = true, safetyNet: String? = nil) throws
        -> CrowdHandlerGate
    {
        try CrowdHandlerGate(
            configuration: configuration(server, apiURL: apiURL, trustOnFail: trustOnFail, safetyNet: safetyNet),
            transport: AsyncHTTPTransport.shared, mode: .full, options: .init(responseSampleRate: 1))
    }

    static func counter(_ state: JSONValue, _ name: String) -> Int {
        Int(state["counters"]?[name]?.numberValue ?? state[name]?.numberValue ?? -1)
    }

    @Test func fullModePromotesAndRecordsTheResponse() async throws {
        try await GateTestApp.run(makeEngine: { try Self.fullGate($0) }) { server, app, upstream in
            let r = try await app.send("/site/demo-open")
            #expect(r.status == 200 && r.text == "upstream /site/demo-open")
            let cookie = try #require(cookiePair(r, named: "crowdhandler"))
            #expect(cookie.hasPrefix("crowdhandler=tok"))
            #expect(upstream.count == 1)
            // The handler's status and time reach `PUT /v1/responses/{id}` (sampled at 1.0 here).
            var recorded = 0
            for _ in 0..<40 {
                recorded = Self.counter(try await EmulatorAdmin.state(server, vendor: "crowdhandler"), "responsesRecorded")
                if recorded >= 1 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(recorded == 1)
            // The next request keeps the token (GET /v1/requests/{token}).
            let again = try await app.send("/site/demo-open", headers: [("Cookie", cookie)])
            #expect(again.status == 200 && cookiePair(again, named: "crowdhandler")?.hasPrefix(String(cookie.prefix(20))) == true)
        }
    }

    @Test func fullModeSendsWaitingVisitorsToTheRoomWithTheirToken() async throws {
        try await GateTestApp.run(makeEngine: { try Self.fullGate($0) }) { server, app, upstream in
            // The demo line promotes 30 a minute: on a slow machine the first visitor may already
            // be due. Stop it promoting, so the visitor must wait (keys not given keep their values).
            let stop = try await AsyncHTTPTransport.shared.send(
                HTTPRequest(
                    method: "POST", url: server.baseURL + "/_emulator/crowdhandler/rooms/demo-queue",
                    headers: [("Content-Type", "application/json")], body: Array(#"{"rate": 0}"#.utf8), timeout: .seconds(30)))
            #expect(stop.status == 200, "\(stop.text)")
            let r = try await app.send("/site/demo-queue")
            #expect(r.status == 302)
            let location = try #require(r.value("Location"))
            #expect(location.hasPrefix(server.baseURL + "/demo-queue?url="))
            let token = try #require(cookiePair(r, named: "crowdhandler")?.dropFirst("crowdhandler=".count))
            #expect(location.contains("ch-id=\(token)") && location.contains("ch-public-key=demo-public-key"))
            #expect(r.value("Cache-Control") == "no-cache, no-store, must-revalidate")
            let blocked = try await app.send("/site/demo-blocked")
            #expect(blocked.status == 403)
            let free = try await app.send("/site/free")
            #expect(free.status == 200)
            #expect(upstream.count == 1)
        }
    }

    @Test func trustOnFailAndTheSafetyNetRoom() async throws {
        let dead = "http://127.0.0.1:1"
        try await GateTestApp.run(makeEngine: { try Self.fullGate($0, apiURL: dead, trustOnFail: true) }) { _, app, upstream in
            let answer1 = try await app.send("/site/demo-queue")
            #expect(answer1.status == 200)
            #expect(upstream.count == 1)
        }
        try await GateTestApp.run(makeEngine: { try Self.fullGate($0, apiURL: dead, trustOnFail: false, safetyNet: "demo-queue") }) {
            server, app, upstream in
            let r = try await app.send("/site/demo-open")
            #expect(r.status == 302 && r.value("Location")?.hasPrefix(server.baseURL + "/demo-queue?") == true)
            #expect(upstream.count == 0)
        }
        // no trust and no safety net: CrowdHandler's catch-all waiting room (every SDK), no cookie
        try await GateTestApp.run(makeEngine: { try Self.fullGate($0, apiURL: dead, trustOnFail: false) }) { server, app, upstream in
            let answer2 = try await app.send("/site/demo-open", headers: [("Cookie", "crowdhandler=tok-kept")])
            #expect(
                answer2.status == 302
                    && answer2.value("Location")?.hasPrefix(server.baseURL + "/?url=http%3A%2F%2Fshop.example%2Fsite%2Fdemo-open&") == true,
                "\(answer2.value("Location") ?? "")")
            #expect(cookiePair(answer2, named: "crowdhandler") == nil, "a failed check leaves the visitor's cookie alone")
            #expect(upstream.count == 0)
        }
    }

    /// A token that comes back in the URL (`ch-id`, from the waiting room) becomes the cookie, and
    /// a page load is sent on to the URL without the `ch-*` parameters (.NET SDK `GK.cs` after a
    /// validation; JS SDK after a promotion with `ch-requested`); full mode's cookie is the plain
    /// token (the SDKs'), with the `Domain` and `Secure` asked for.
    @Test func aTokenInTheURLBecomesTheCookieAndLeavesTheURL() async throws {
        try await GateTestApp.run(makeEngine: { server in
            try CrowdHandlerGate(
                configuration: Self.configuration(server), transport: AsyncHTTPTransport.shared, mode: .full,
                options: .init(cookieSecure: true, cookieDomain: "shop.example", responseSampleRate: 0))
        }) { _, app, upstream in
            let first = try await app.send("/site/demo-open")
            let token = try #require(cookiePair(first, named: "crowdhandler")).dropFirst("crowdhandler=".count)
            #expect(!token.contains("~"), "full mode keeps the plain token: \(token)")
            #expect(first.values("Set-Cookie").first?.contains("; Domain=shop.example") == true)
            #expect(first.values("Set-Cookie").first?.contains("; Secure") == true)
            let back = try await app.send("/site/demo-open?x=1&ch-id=\(token)&ch-code=&ch-fresh=true")
            #expect(
                back.status == 302 && back.value("Location") == "http://shop.example/site/demo-open?x=1", "\(back.value("Location") ?? "")")
            #expect(cookiePair(back, named: "crowdhandler") == "crowdhandler=\(token)")
            #expect(upstream.count == 1, "the URL with the token never reaches the app")
        }
    }

    @Test func hybridModeChecksTheSignatureLocally() async throws {
        try await GateTestApp.run(makeEngine: { server in
            try await CrowdHandlerGate.withRoomFeed(
                configuration: Self.configuration(server), transport: AsyncHTTPTransport.shared,
                mode: .hybrid, options: .init(responseSampleRate: 0))
        }) { server, app, upstream in
            let first = try await app.send("/site/demo-open")
            #expect(first.status == 200)
            let cookie = try #require(cookiePair(first, named: "crowdhandler"))
            #expect(cookie.split(separator: "~").count == 3, "the cookie keeps the promotion's signature: \(cookie)")
            let checked = Self.counter(try await EmulatorAdmin.state(server, vendor: "crowdhandler"), "sessionsChecked")
            for _ in 0..<3 {
                let answer3 = try await app.send("/site/demo-open", headers: [("Cookie", cookie)])
                #expect(answer3.status == 200)
            }
            let after = Self.counter(try await EmulatorAdmin.state(server, vendor: "crowdhandler"), "sessionsChecked")
            #expect(after == checked, "a valid signature needs no API call")
            #expect(upstream.count == 4)
            // A promotion signed for demo-open vouches for demo-open only: on a URL another room
            // guards, the API decides (and the blocked room lets no one in).
            let crossRoom = try await app.send("/site/demo-blocked", headers: [("Cookie", cookie)])
            #expect(crossRoom.status != 200, "a signature for another room of the feed opens nothing here")
            #expect(upstream.count == 4)
            // A tampered signature is not trusted locally: the API decides, and the blocked room
            // never lets anyone in (the queue room promotes over time, so it could let a slow run in).
            let parts = cookie.dropFirst("crowdhandler=".count).split(separator: "~").map(String.init)
            let tampered = "crowdhandler=\(parts[0])~\(parts[1])~\(String(repeating: "0", count: 64))"
            let r = try await app.send("/site/demo-blocked", headers: [("Cookie", tampered)])
            #expect(r.status != 200, "a tampered signature reaches the API, which refuses")
            let forged = try await app.send(
                "/site/demo-blocked?ch-id=\(parts[0])&ch-id-signature=\(parts[2])&ch-requested=2099-01-01T00:00:00Z")
            #expect(forged.status != 200, "a forged signature reaches the API, which refuses")
            #expect(upstream.count == 4)
        }
    }

    @Test func malformedTokensAndOversizeRequestsAreRefused() async throws {
        try await GateTestApp.run(makeEngine: { try Self.fullGate($0) }) { _, app, upstream in
            let answer4 = try await app.send("/site/demo-open?ch-id=a%3Bb")
            #expect(answer4.status == 400)
            let answer5 = try await app.send("/site/demo-open", headers: [("Cookie", "crowdhandler=" + String(repeating: "t", count: 600))])
            #expect(answer5.status == 400)
            let answer6 = try await app.send("/site/demo-open", headers: [("X-Big", String(repeating: "b", count: 9000))])
            #expect(answer6.status == 431)
            let answer7 = try await app.send("/site/demo-open", method: "POST", body: [UInt8](repeating: 1, count: 70 * 1024))
            #expect(answer7.status == 413)
            #expect(upstream.count == 0)
        }
    }

    /// Where the gate follows CrowdHandler's SDKs (Vendors/CrowdHandler/README.md, "The gate and
    /// the SDKs"): static assets pass without an API call, `+` in the visitor's URL comes back as
    /// `+` (`%2B` in the waiting room's `url`), no empty `ch-id=`, and the PHP SDK's `ch-id`
    /// cookie keeps the visitor's token.
    @Test func staticAssetsPlusSignsAndThePHPCookieAsTheSDKsHaveThem() async throws {
        try await GateTestApp.run(makeEngine: { try Self.fullGate($0) }) { server, app, upstream in
            let calls = { () async throws -> Int in
                let state = try await EmulatorAdmin.state(server, vendor: "crowdhandler")
                return Self.counter(state, "sessionsChecked") + Self.counter(state, "sessionsCreated")
            }
            let before = try await calls()
            let asset = try await app.send("/static/app.js")
            #expect(asset.status == 200 && cookiePair(asset, named: "crowdhandler") == nil)
            let after = try await calls()
            #expect(after == before, "a static asset costs no API call")
            let versioned = try await app.send("/static/app.js?v=3")
            #expect(versioned.status == 200)
            let checked = try await calls()
            #expect(checked > after, "with a query it is no static asset to the SDKs: the API is asked")
            let stop = try await AsyncHTTPTransport.shared.send(
                HTTPRequest(
                    method: "POST", url: server.baseURL + "/_emulator/crowdhandler/rooms/demo-queue",
                    headers: [("Content-Type", "application/json")], body: Array(#"{"rate": 0}"#.utf8), timeout: .seconds(30)))
            #expect(stop.status == 200)
            let waiting = try await app.send("/site/demo-queue?q=a+b")
            let location = try #require(waiting.value("Location"))
            #expect(location.contains("url=http%3A%2F%2Fshop.example%2Fsite%2Fdemo-queue%3Fq%3Da%2Bb&"), "\(location)")
            let first = try await app.send("/site/demo-open")
            let token = try #require(cookiePair(first, named: "crowdhandler")).dropFirst("crowdhandler=".count)
            let viaPHPCookie = try await app.send("/site/demo-open", headers: [("Cookie", "ch-id=\(token)")])
            #expect(cookiePair(viaPHPCookie, named: "crowdhandler") == "crowdhandler=\(token)", "the same token, kept")
            #expect(upstream.count == 4)
        }
    }
}
