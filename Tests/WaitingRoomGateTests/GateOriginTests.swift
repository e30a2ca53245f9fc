import Testing
import WaitingRoomGate

/// `GateOrigin`: the visitor's address behind trusted proxies, whatever spelling of an address
/// the list uses.
@Suite struct GateOriginTests {
    @Test func addressesAreWrittenAsTheSystemWritesPeers() {
        #expect(GateOrigin.canonicalIPAddress("10.0.0.2") == "10.0.0.2")
        #expect(GateOrigin.canonicalIPAddress("0:0:0:0:0:0:0:1") == "::1")
        #expect(GateOrigin.canonicalIPAddress("2001:DB8:0:0:0:0:0:7") == "2001:db8::7")
        #expect(GateOrigin.canonicalIPAddress("::ffff:192.0.2.1") == "::ffff:192.0.2.1")
        for text in ["300.1.1.1", "10.0.0.0/8", "proxy.internal", "", " 10.0.0.2", "[::1]", "10.0.0.2:80"] {
            #expect(GateOrigin.canonicalIPAddress(text) == nil, "\(text)")
        }
    }

    /// A trusted proxy listed as `0:0:0:0:0:0:0:1` matches the peer `::1` (the system's form);
    /// before, the list was compared as text and such a proxy was never trusted.
    @Test func aTrustedProxyMatchesWhateverSpellingTheListUses() {
        let origin = GateOrigin(trustedProxies: ["0:0:0:0:0:0:0:1", "10.0.0.2"])
        #expect(origin.trustedProxies == ["::1", "10.0.0.2"])
        #expect(origin.clientIP(peer: "::1", forwardedFor: ["198.51.100.7"]) == "198.51.100.7")
        // the nearest untrusted hop, with a trusted one spelled otherwise skipped
        #expect(origin.clientIP(peer: "10.0.0.2", forwardedFor: ["198.51.100.7, 0:0::1"]) == "198.51.100.7")
        // an untrusted peer is the visitor, whatever it forwards
        #expect(origin.clientIP(peer: "203.0.113.9", forwardedFor: ["198.51.100.7"]) == "203.0.113.9")
        // no proxies: the peer
        #expect(GateOrigin().clientIP(peer: "::1", forwardedFor: ["198.51.100.7"]) == "::1")
    }

    /// A Host is host[:port]: nothing that ends or changes a URL's authority.
    @Test func aHostIsHostAndPortOnly() {
        for good in ["shop.example", "shop.example:8080", "127.0.0.1", "[::1]", "[::1]:8443", "xn--bcher-kva.example", "a_b.example", "%41.example"] {
            #expect(GateOrigin.isAuthority(good), "\(good)")
        }
        for bad in ["", "x?", "x#", "x/static/", "u@x", "x y", "x:port", "x:123456", "[::1", "[]", "[::1]x", ":80", "x\t", "é.example"] {
            #expect(!GateOrigin.isAuthority(bad), "\(bad)")
        }
        let origin = GateOrigin()
        #expect(origin.request(method: "GET", target: "/secret", authority: "x?", headers: [], peer: nil) == nil)
        #expect(origin.request(method: "GET", target: "/secret", authority: "x", headers: [], peer: nil)?.url == "http://x/secret")
        // behind a public URL the Host is not used
        #expect(GateOrigin(publicBaseURL: "https://shop.example").request(method: "GET", target: "/a", authority: "x?", headers: [], peer: nil)?.url == "https://shop.example/a")
    }
}
