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

    /// X-Forwarded-For read as one list: every field in order, each comma list split, spaces and
    /// tabs around an item dropped, empty items skipped; the nearest untrusted hop wins, and a
    /// chain of trusted hops only gives the peer back.
    @Test(arguments: [
        (["198.51.100.7", "203.0.113.1, 10.0.0.2"], "203.0.113.1"),
        ([" 198.51.100.7 ,\t203.0.113.1\t, "], "203.0.113.1"),
        (["198.51.100.7,,  ,"], "198.51.100.7"),
        (["10.0.0.2, ::1", "0:0::1"], "::1"),
        ([], "::1"),
        (["", " , "], "::1"),
        (["2001:DB8::7, 10.0.0.2"], "2001:DB8::7")
    ])
    func forwardedForIsReadNearestHopFirst(fields: [String], expected: String) {
        let origin = GateOrigin(trustedProxies: ["::1", "10.0.0.2"])
        #expect(origin.clientIP(peer: "::1", forwardedFor: fields) == expected, "\(fields)")
    }

    /// A Host is host[:port]: nothing that ends or changes a URL's authority.
    @Test func aHostIsHostAndPortOnly() throws {
        for good in [
            "shop.example", "shop.example:8080", "127.0.0.1", "[::1]", "[::1]:8443", "xn--bcher-kva.example", "a_b.example", "%41.example"
        ] {
            #expect(GateOrigin.isAuthority(good), "\(good)")
        }
        for bad in ["", "x?", "x#", "x/static/", "u@x", "x y", "x:port", "x:123456", "[::1", "[]", "[::1]x", ":80", "x\t", "é.example"] {
            #expect(!GateOrigin.isAuthority(bad), "\(bad)")
        }
        let origin = GateOrigin()
        #expect(throws: GateOrigin.HeadRefusal.self) {
            try origin.request(method: "GET", target: "/secret", authority: "x?", headers: [], peer: nil)
        }
        #expect(try origin.request(method: "GET", target: "/secret", authority: "x", headers: [], peer: nil).url == "http://x/secret")
        // behind a public URL the Host is not used
        #expect(
            try GateOrigin(publicBaseURL: "https://shop.example").request(
                method: "GET", target: "/a", authority: "x?", headers: [], peer: nil
            ).url == "https://shop.example/a")
    }

    @Test func onlyTheAllowedHostsAreServedWithoutAPublicURL() throws {
        let origin = GateOrigin(allowedHosts: ["Shop.Example", "shop.example:8443"])
        #expect(
            try origin.request(method: "GET", target: "/", authority: "SHOP.example", headers: [], peer: nil).url == "http://SHOP.example/")
        #expect(
            try origin.request(method: "GET", target: "/", authority: "shop.example:8443", headers: [], peer: nil).url
                == "http://shop.example:8443/")
        for host in ["evil.example", "shop.example:80", "shop.example.evil.example"] {
            #expect(throws: GateOrigin.HeadRefusal.self, "\(host)") {
                try origin.request(method: "GET", target: "/", authority: host, headers: [], peer: nil)
            }
        }
    }

    /// The canonical target, from rules written here (RFC 3986 §2.3, §5.2.4, §6.2.2), not read off the code.
    @Test func targetsAreDecidedInTheirCanonicalForm() throws {
        let same: [(String, String)] = [
            ("/sale", "/sale"), ("/", "/"), ("/a/b?x=1", "/a/b?x=1"),
            ("/static/../sale", "/sale"), ("/static/%2e%2e/sale", "/sale"), ("/static/%2E%2E/sale", "/sale"),
            ("/%73ale", "/sale"), ("/sa%6Ce", "/sale"), ("/sa%6ce/", "/sale/"), ("//sale", "/sale"), ("/a//b///c", "/a/b/c"),
            ("/./sale", "/sale"), ("/sale/.", "/sale/"), ("/sale/..", "/"), ("/../../sale", "/sale"), ("/a/b/../../sale/x", "/sale/x"),
            ("/a/.b/c", "/a/.b/c"), ("/a/..b/c", "/a/..b/c"), ("/a/b..", "/a/b.."), ("/.well-known/x", "/.well-known/x"),
            ("/a%20b", "/a%20b"), ("/a%3fb", "/a%3Fb"), ("/%7euser", "/~user"), ("/%E2%82%AC", "/%E2%82%AC"), ("/%e2%82%ac", "/%E2%82%AC"),
            ("/sale?q=%73&r=%2F", "/sale?q=%73&r=%2F"), ("/%73ale?q=%7e", "/sale?q=%7e"), ("/sale?next=/../x", "/sale?next=/../x"),
            ("/sale#queueittoken=x", "/sale"),
            ("/sale?a=1#frag", "/sale?a=1"), ("/100%25", "/100%25"), ("/100%25-off", "/100%25-off"), ("/a?b=%252e", "/a?b=%252e")
        ]
        for (raw, canonical) in same {
            #expect(GateTarget.canonical(raw) == .success(canonical), "\(raw)")
        }
        let refused: [(String, GateTarget.Refusal)] = [
            ("/static/..%2fsale", .encodedSeparator("%2F")), ("/static/..%2Fsale", .encodedSeparator("%2F")),
            ("/static/..%5csale", .encodedSeparator("%5C")), ("/sale%00.html", .encodedSeparator("%00")),
            ("/static\\..\\sale", .backslash), ("/sa%6", .malformedEscape), ("/%252e%252e/sale", .doubleEncoded),
            ("/%2573ale", .doubleEncoded), ("/sa%zz", .malformedEscape), ("/sa%", .malformedEscape),
            ("sale", .notAPath), ("", .notAPath)
        ]
        for (raw, refusal) in refused {
            #expect(GateTarget.canonical(raw) == .failure(refusal), "\(raw)")
        }
    }
}
