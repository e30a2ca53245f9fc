import Foundation
import QueueItGateEngine
import Testing
import WaitingRoomGate
import WaitingRoomGateTestSupport

/// The auth server's own HTTP/1.1, sent as raw bytes: answers in the order of pipelined requests
/// (also when one of them is decided off the event loop), no body for HEAD, `Connection: close`
/// kept, unparsable input answered 400 and the connection closed, a body over the bound 413.
struct GateAuthServerWireTests {
    /// A Queue-it engine that decides `/slow/…` off the loop (after a short wait): it stands in for
    /// a shared ledger or CrowdHandler's API, so pipelined requests queue behind an awaited one.
    struct SlowPaths: GateEngine {
        let inner: QueueItGate
        var vendorID: String { inner.vendorID }
        func decide(_ request: GateRequest) async -> GateDecision {
            if (request.target ?? "").hasPrefix("/slow/") {
                try? await Task.sleep(for: .milliseconds(150))
                return .pass("slow path")
            }
            return await inner.decide(request)
        }
        func immediateDecision(_ request: GateRequest) -> GateDecision? {
            (request.target ?? "").hasPrefix("/slow/") ? nil : inner.immediateDecision(request)
        }
    }

    static func endpoint() throws -> GateAuthEndpoint {
        let gate = try QueueItGate(
            customerId: QueueItGateFixture.customer, secretKey: QueueItGateFixture.secret,
            configuration: try QueueItIntegrationConfig(json: QueueItGateFixture.configurationJSON(queueDomain: "queue.example")))
        return GateAuthEndpoint(
            engine: SlowPaths(inner: gate), origin: GateOrigin(publicBaseURL: "https://shop.example", trustedProxies: ["127.0.0.1"]))
    }

    static func subrequest(_ uri: String, method: String = "GET", close: Bool = false) -> String {
        "\(method) /.waitingroom/auth HTTP/1.1\r\nHost: gate\r\nX-Original-URI: \(uri)\r\nX-Original-Method: GET\r\n"
            + (close ? "Connection: close\r\n" : "") + "\r\n"
    }

    /// The status codes of the answers in `bytes`, in order (a line that starts with `HTTP/1.`;
    /// the bodies here are short texts that end in LF).
    static func statuses(_ bytes: [UInt8]) -> [Int] {
        bytes.split(separator: 10).compactMap { lineBytes -> Int? in
            let line = String(decoding: lineBytes, as: UTF8.self)
            guard line.hasPrefix("HTTP/1."), line.count >= 12 else { return nil }
            return Int(line.dropFirst(9).prefix(3))
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrderAroundAnAwaitedDecision() async throws {
        try await GateServers.withAuth(try Self.endpoint()) { port in
            let request =
                Self.subrequest("/static/a.js") + Self.subrequest("/slow/b") + Self.subrequest("/shop/cart")
                + "GET /.waitingroom/healthz HTTP/1.1\r\nHost: gate\r\n\r\n" + Self.subrequest("/static/c.js", close: true)
            let (bytes, closed) = try await LoopbackHTTPClient.exchangeRaw(port: port, Array(request.utf8))
            #expect(Self.statuses(bytes) == [200, 200, 401, 200, 200], "\(String(decoding: bytes, as: UTF8.self))")
            #expect(closed)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.components(separatedBy: "Connection: close").count == 2, "only the last answer says close")
            #expect(text.contains("\r\n\r\nok\n"), "the health answer's body is there")
        }
    }

    @Test func aHeadRequestGetsTheLengthButNoBody() async throws {
        try await GateServers.withAuth(try Self.endpoint()) { port in
            let request =
                "HEAD /.waitingroom/healthz HTTP/1.1\r\nHost: gate\r\n\r\n"
                + "GET /.waitingroom/healthz HTTP/1.1\r\nHost: gate\r\nConnection: close\r\n\r\n"
            let (bytes, closed) = try await LoopbackHTTPClient.exchangeRaw(port: port, Array(request.utf8))
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(Self.statuses(bytes) == [200, 200], "\(text)")
            #expect(closed)
            // the HEAD answer is followed directly by the GET's status line: no body between them
            #expect(text.contains("Content-Length: 3\r\n\r\nHTTP/1.1 200"), "\(text)")
            #expect(text.hasSuffix("\r\n\r\nok\n"))
        }
    }

    @Test func http10ClosesUnlessItAsksToKeepAlive() async throws {
        try await GateServers.withAuth(try Self.endpoint()) { port in
            let plain = try await LoopbackHTTPClient.exchangeRaw(port: port, Array("GET /.waitingroom/healthz HTTP/1.0\r\n\r\n".utf8))
            #expect(Self.statuses(plain.bytes) == [200] && plain.closed)
            #expect(String(decoding: plain.bytes, as: UTF8.self).hasPrefix("HTTP/1.0 200 OK\r\n"))
            // kept alive: a second request on the same connection is answered, then it closes
            let kept = try await LoopbackHTTPClient.exchangeRaw(
                port: port,
                Array("GET /.waitingroom/healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /.waitingroom/healthz HTTP/1.0\r\n\r\n".utf8)
            )
            #expect(Self.statuses(kept.bytes) == [200, 200] && kept.closed)
            #expect(String(decoding: kept.bytes, as: UTF8.self).contains("Connection: keep-alive\r\n"))
        }
    }

    @Test(arguments: [
        "GARBAGE\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy",
        "GET / HTTP/1.1\r\nHo st: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "GET /\u{0}x HTTP/1.1\r\n\r\n"
    ])
    func unparsableInputIsAnswered400AndClosed(_ input: String) async throws {
        try await GateServers.withAuth(try Self.endpoint()) { port in
            let (bytes, closed) = try await LoopbackHTTPClient.exchangeRaw(port: port, Array(input.utf8))
            #expect(Self.statuses(bytes).last == 400, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(closed)
        }
    }

    @Test func aBodyOverTheBoundIsRefused() async throws {
        try await GateServers.withAuth(try Self.endpoint()) { port in
            let body = [UInt8](repeating: 0x61, count: 70_000)
            let head =
                "POST /.waitingroom/auth HTTP/1.1\r\nHost: gate\r\nX-Original-URI: /static/a\r\nContent-Length: \(body.count)\r\n\r\n"
            let (bytes, closed) = try await LoopbackHTTPClient.exchangeRaw(port: port, Array(head.utf8) + body)
            #expect(Self.statuses(bytes) == [413], "\(String(decoding: bytes.prefix(300), as: UTF8.self))")
            #expect(closed)
        }
    }

    @Test func tooManyPipelinedRequestsBehindAnAwaitedOneCloseTheConnection() async throws {
        try await GateServers.withAuth(try Self.endpoint()) { port in
            let request = Self.subrequest("/slow/a") + String(repeating: Self.subrequest("/static/b"), count: 100)
            let (bytes, closed) = try await LoopbackHTTPClient.exchangeRaw(port: port, Array(request.utf8))
            let statuses = Self.statuses(bytes)
            #expect(closed)
            #expect(statuses.first == 200 && statuses.count <= 1 + 64, "\(statuses.count) answers")
        }
    }
}
