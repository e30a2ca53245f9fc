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

        /// Two `Host` fields (RFC 9112 §3.2) are 400 from both adapters, and the app sees nothing: the
        /// gate would check one host while the app might read the other. One Host still passes. (A
        /// Host that is not host[:port] is refused by `GateOrigin` when no public URL is set:
        /// `GateOriginTests`, and the proxy's `GateProxyTests`; these apps have one.)
        @Test func twoHostsAreRefusedByBothAdapters() async throws {
            let recorder = RecordingGate()
            try await GateAdapterPair.run(makeEngine: { _ in recorder }) { pair in
                for app in pair.both {
                    let two = try await RawExchange.send(
                        "GET /shop/cart HTTP/1.1\r\nHost: shop.example\r\nHost: admin.example\r\nConnection: close\r\n\r\n", port: app.port)
                    #expect(two.hasPrefix("HTTP/1.1 400"), "\(app.adapter): \(two.prefix(200))")
                    let one = try await RawExchange.send(
                        "GET /shop/cart HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n", port: app.port)
                    #expect(one.hasPrefix("HTTP/1.1 200"), "\(app.adapter): \(one.prefix(200))")
                    #expect(app.upstream.count == 1, "\(app.adapter): only the request with one Host reached the app")
                }
                #expect(recorder.requests.count == 2, "the engine saw only the requests with one Host")
            }
        }

        @Test func anUntrustedPeerIsTheVisitor() throws {
            let origin = GateOrigin(publicBaseURL: "https://shop.example///", trustedProxies: ["10.0.0.2"])
            #expect(origin.publicBaseURL == "https://shop.example")
            #expect(origin.clientIP(peer: "192.0.2.1", forwardedFor: ["203.0.113.9"]) == "192.0.2.1")
            #expect(origin.clientIP(peer: "10.0.0.2", forwardedFor: ["203.0.113.9, 10.0.0.2"]) == "203.0.113.9")
            #expect(origin.clientIP(peer: "10.0.0.2", forwardedFor: []) == "10.0.0.2")
            let request = try origin.request(
                method: "POST", target: "/a?b=1", authority: nil,
                headers: [GateHeader("Content-Length", "12")], peer: "192.0.2.1")
            #expect(request.url == "https://shop.example/a?b=1" && request.bodyLength == 12)
            let twice = try origin.request(
                method: "POST", target: "/", authority: nil,
                headers: [GateHeader("Content-Length", "1"), GateHeader("content-length", "1")], peer: nil)
            #expect(twice.bodyLength == nil, "repeated lengths are GateLimits' to refuse (400)")
            #expect(throws: GateOrigin.HeadRefusal.self) {
                try GateOrigin().request(method: "GET", target: "/", authority: nil, headers: [], peer: nil)
            }
        }
    }

    /// One request's bytes written to 127.0.0.1:`port` and everything read back until the server
    /// closes (or 10 s pass), on a thread of its own (the calls block).
    enum RawExchange {
        static func send(_ request: String, port: Int) async throws -> String {
            try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(with: Result { try exchange(Array(request.utf8), port: port) })
                }
            }
        }

        private static func exchange(_ bytes: [UInt8], port: Int) throws -> String {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw GateTestError("socket() failed") }
            defer { close(fd) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard connected else { throw GateTestError("cannot connect to 127.0.0.1:\(port)") }
            guard bytes.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
                throw GateTestError("send failed")
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { break }
                received += buffer[0..<n]
            }
            return String(decoding: received, as: UTF8.self)
        }
    }
#endif
