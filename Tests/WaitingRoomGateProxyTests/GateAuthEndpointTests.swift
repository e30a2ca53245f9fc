import Foundation
import QueueItGateEngine
import Testing
import WaitingRoomGate
import WaitingRoomGateTestSupport

/// The auth-subrequest endpoint on its own (no server): how it reads a proxy's subrequest, what it
/// answers, and what its start route accepts as `rd`.
struct GateAuthEndpointTests {
    /// A Queue-it engine on the fixture's configuration (`/static/` ignored, `/shop/` queues).
    static func endpoint(origin: GateOrigin = GateOrigin(publicBaseURL: "https://shop.example", trustedProxies: ["127.0.0.1"])) throws
        -> GateAuthEndpoint
    {
        let gate = try QueueItGate(
            customerId: QueueItGateFixture.customer, secretKey: QueueItGateFixture.secret,
            configuration: try QueueItIntegrationConfig(json: QueueItGateFixture.configurationJSON(queueDomain: "queue.example")))
        return GateAuthEndpoint(engine: gate, origin: origin)
    }

    static func ask(
        _ endpoint: GateAuthEndpoint, target: String = "/.waitingroom/auth", _ headers: [(String, String)],
        peer: String = "127.0.0.1"
    ) async -> GateResponse {
        await endpoint.answer(method: "GET", target: target, headers: headers.map { GateHeader($0.0, $0.1) }, peer: peer)
    }

    @Test func theOriginalRequestComesFromEachProxysHeaders() async throws {
        let endpoint = try Self.endpoint()
        // nginx
        #expect(await Self.ask(endpoint, [("X-Original-URI", "/shop/cart"), ("X-Original-Method", "GET")]).status == 401)
        #expect(await Self.ask(endpoint, [("X-Original-URI", "/static/app.js")]).status == 200)
        // ingress-nginx: the absolute URL decides, whatever else came
        #expect(
            await Self.ask(endpoint, [("X-Original-URL", "https://shop.example/static/a.css"), ("X-Original-URI", "/shop/cart")]).status
                == 200)
        // Caddy, Traefik
        #expect(await Self.ask(endpoint, [("X-Forwarded-Uri", "/shop/cart"), ("X-Forwarded-Method", "POST")]).status == 401)
        // Envoy: the original path after /auth
        #expect(await Self.ask(endpoint, target: "/.waitingroom/auth/static/x.png", []).status == 200)
        #expect(await Self.ask(endpoint, target: "/.waitingroom/auth/shop/cart?x=1", []).status == 401)
        // nothing names the original request: refused, never let through
        let nothing = await Self.ask(endpoint, [])
        #expect(nothing.status == 403 && nothing.header(GateAnswer.statusHeader) == "400")
    }

    @Test func onlyTrustedProxiesAreAnswered() async throws {
        let endpoint = try Self.endpoint()
        let stranger = await Self.ask(endpoint, [("X-Original-URI", "/static/app.js")], peer: "10.1.2.3")
        #expect(stranger.status == 403)
        #expect(stranger.body.contains("configured proxies"))
    }

    @Test func aPathThatIsNotCanonicalGoesThroughTheStartRoute() async throws {
        let endpoint = try Self.endpoint()
        // decided on its canonical form: /static/../shop/cart is /shop/cart (queues)
        #expect(await Self.ask(endpoint, [("X-Original-URI", "/static/../shop/cart")]).status == 401)
        // a passing path the app would get in another form: the browser is sent to the canonical one
        #expect(await Self.ask(endpoint, [("X-Original-URI", "/static//app.js")]).status == 401)
        let start = await Self.ask(endpoint, target: "/.waitingroom/start?rd=https://shop.example/static//app.js", [])
        #expect(start.status == 302 && start.header("Location") == "https://shop.example/static/app.js", "\(start)")
        // no canonical form at all: refused
        let encodedSlash = await Self.ask(endpoint, [("X-Original-URI", "/static%2F..%2Fshop/cart")])
        #expect(encodedSlash.status == 403)
    }

    @Test func theStartRouteSendsNoOneToAnotherSite() async throws {
        let endpoint = try Self.endpoint()
        for rd in [
            "https://evil.example/", "https%3A%2F%2Fevil.example%2F", "//evil.example/x", "http://shop.example/",
            "https://shop.example@evil.example/",
            "javascript:alert(1)", "https://shop.example:444/", ""
        ] {
            let r = await Self.ask(endpoint, target: "/.waitingroom/start?rd=\(rd)", [])
            #expect(r.status == 400, "\(rd): \(r.status) \(r.header("Location") ?? "")")
        }
        #expect(await Self.ask(endpoint, target: "/.waitingroom/start", []).status == 400)
        // the raw form (nginx's $request_uri, last parameter): the query comes along whole
        let raw = await Self.ask(endpoint, target: "/.waitingroom/start?rd=https://shop.example/static/a?x=1&y=2", [])
        #expect(raw.status == 302 && raw.header("Location") == "https://shop.example/static/a?x=1&y=2")
        let encoded = await Self.ask(
            endpoint, target: "/.waitingroom/start?rd=https%3A%2F%2Fshop.example%2Fstatic%2Fa%3Fx%3D1%26y%3D2&z=9", [])
        #expect(encoded.status == 302 && encoded.header("Location") == "https://shop.example/static/a?x=1&y=2")
        // a path: on the public URL
        let path = await Self.ask(endpoint, target: "/.waitingroom/start?rd=/shop/cart", [])
        #expect(path.status == 302 && path.header("Location")?.hasPrefix("https://queue.example/?c=demo&e=sale") == true, "\(path)")
        // only GET and HEAD
        let post = await endpoint.answer(method: "POST", target: "/.waitingroom/start?rd=/shop/cart", headers: [], peer: "127.0.0.1")
        #expect(post.status == 405)
    }

    @Test func withoutAPublicURLOnlyAllowedHostsMayBeNamed() async throws {
        let endpoint = try Self.endpoint(origin: GateOrigin(trustedProxies: ["127.0.0.1"], allowedHosts: ["shop.example"]))
        let allowed = await Self.ask(endpoint, target: "/.waitingroom/start?rd=http://shop.example/static/a", [])
        #expect(allowed.status == 302 && allowed.header("Location") == "http://shop.example/static/a")
        #expect(await Self.ask(endpoint, target: "/.waitingroom/start?rd=http://other.example/static/a", []).status == 400)
        // a subrequest for a host not allowed is refused too
        #expect(await Self.ask(endpoint, [("X-Original-URI", "/static/a"), ("X-Forwarded-Host", "other.example")]).status == 403)
    }

    @Test func otherPathsAndThePushWithoutAHandlerAre404() async throws {
        let endpoint = try Self.endpoint()
        #expect(await Self.ask(endpoint, target: "/.waitingroom/", []).status == 404)
        #expect(await Self.ask(endpoint, target: "/.waitingroom/start/../auth", []).status == 404)
        #expect(await Self.ask(endpoint, target: "/shop/cart", []).status == 404)
        #expect(await endpoint.pushConfiguration(Array("{}".utf8)).status == 404)
        #expect(await Self.ask(endpoint, target: "/.waitingroom/healthz", []).status == 200)
    }
}
