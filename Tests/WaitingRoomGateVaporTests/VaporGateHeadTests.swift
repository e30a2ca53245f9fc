#if Vapor
import Foundation
import Testing
import WaitingRoom
import WaitingRoomGate
import WaitingRoomGateTestSupport
import WaitingRoomGateVapor

/// The request head as `VaporGateMiddleware` hands it to the engine, seen over real loopback HTTP
/// by a recording engine: the URL on the public origin, `Host` kept out of the headers (as
/// Hummingbird's codec does), the client address from the peer or a trusted proxy's
/// `X-Forwarded-For`, and the pass headers added to the handler's answer.
@Suite struct VaporGateHeadTests {
    @Test func theEngineSeesTheSameRequestFromBothAdapters() async throws {
        let recorder = RecordingGate()
        try await GateAdapterPair.run(makeEngine: { _ in recorder }) { pair in
            let headers = [("X-Forwarded-For", "198.51.100.4, 203.0.113.9"), ("Cookie", "a=1"), ("x-custom", "Value")]
            for app in pair.both {
                let r = try await app.send("/shop/cart?x=1&queueittoken=t%7E1", headers: headers)
                #expect(r.status == 200 && r.text == "upstream /shop/cart", "\(app.adapter)")
                #expect(r.values("Set-Cookie") == ["gate=1; Path=/"], "\(app.adapter): the pass headers reach the answer")
                #expect(r.value("Cache-Control") == nil)
            }
            let seen = recorder.requests
            try #require(seen.count == 2)
            let (hummingbird, vapor) = (seen[0], seen[1])
            #expect(vapor.url == "http://shop.example/shop/cart?x=1&queueittoken=t%7E1")
            #expect(vapor.clientIP == "203.0.113.9", "the nearest address the trusted peer (127.0.0.1) names")
            #expect(vapor.header("Host") == nil)
            #expect(vapor.header("x-custom") == "Value" && vapor.cookie("a") == "1")
            #expect(vapor.method == hummingbird.method && vapor.url == hummingbird.url && vapor.clientIP == hummingbird.clientIP)
            #expect(vapor.bodyLength == hummingbird.bodyLength)
            let names = { (r: GateRequest) in r.headers.map { $0.name.lowercased() }.sorted() }
            #expect(names(vapor) == names(hummingbird), "the same header fields")
        }
    }

    @Test func anUntrustedPeerIsTheVisitor() {
        let origin = GateOrigin(publicBaseURL: "https://shop.example///", trustedProxies: ["10.0.0.2"])
        #expect(origin.publicBaseURL == "https://shop.example")
        #expect(origin.clientIP(peer: "192.0.2.1", forwardedFor: ["203.0.113.9"]) == "192.0.2.1")
        #expect(origin.clientIP(peer: "10.0.0.2", forwardedFor: ["203.0.113.9, 10.0.0.2"]) == "203.0.113.9")
        #expect(origin.clientIP(peer: "10.0.0.2", forwardedFor: []) == "10.0.0.2")
        let request = origin.request(method: "POST", target: "/a?b=1", authority: nil,
                                     headers: [GateHeader("Content-Length", "12")], peer: "192.0.2.1")
        #expect(request?.url == "https://shop.example/a?b=1" && request?.bodyLength == 12)
        let twice = origin.request(method: "POST", target: "/", authority: nil,
                                   headers: [GateHeader("Content-Length", "1"), GateHeader("content-length", "1")], peer: nil)
        #expect(twice?.bodyLength == nil, "repeated lengths are GateLimits' to refuse (400)")
        #expect(GateOrigin().request(method: "GET", target: "/", authority: nil, headers: [], peer: nil) == nil)
    }
}
#endif
