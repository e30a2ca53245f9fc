import Foundation
import Synchronization
import Testing

/// How `waitingroom gate` passes on answers an upstream frames in every way HTTP/1.1 allows
/// (RFC 9112 §6.3, §7): chunks with trailers, a body ended by closing, interim answers, fields
/// that stop at the proxy, and answers that are not valid HTTP. The upstream is a scripted
/// loopback server (``ScriptedUpstream``) that writes exact bytes; the visitor is a raw socket.
@Suite("waitingroom gate framing", .serialized, .timeLimit(.minutes(3)))
struct GateProxyFramingTests {
    static let chunkedBody = "5\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
    static let answers: [String: (answer: String, thenClose: Bool)] = [
        "/static/chunked": ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Up: 1\r\n\r\n" + chunkedBody, false),
        "/static/close": ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close", true),
        "/static/interim": (
            "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
        ),
        "/static/hop": (
            "HTTP/1.1 200 OK\r\nConnection: X-Secret\r\nX-Secret: s\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok", false
        ),
        "/static/split": ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged", false),
        "/static/garbage": ("NOT HTTP AT ALL\r\n\r\n", true),
        "/static/upgrade": ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n", false),
        "/static/length": ("HTTP/1.1 200 OK\r\nContent-Length: 5, 7\r\n\r\nhello", true),
        // a malformed chunk in the same write as the head: nothing has reached the visitor yet
        "/static/bad-chunk": ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n0\r\n\r\n", true),
        // framing fields a 204 and an interim answer must not carry (RFC 9110 §8.6)
        // an HTTP/1.0 answer with Transfer-Encoding: faulty framing (RFC 9112 §6.1)
        "/static/old-chunked": ("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunkedBody, true),
        "/static/no-content": ("HTTP/1.1 204 No Content\r\nContent-Length: 3\r\nX-A: 1\r\n\r\n", false),
        "/static/interim-length": (
            "HTTP/1.1 103 Early Hints\r\nContent-Length: 0\r\nLink: </b.css>; rel=preload\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
        ),
        "/static/big-length": ("HTTP/1.1 200 OK\r\nContent-Length: \(bigBody.utf8.count)\r\n\r\n" + bigBody, false),
        "/static/big-chunked": ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks(of: bigBody) + "0\r\n\r\n", false)
    ]
    /// 2 MiB of varied text (built from bytes: Character-wise work on megabytes is slow in debug
    /// builds, and this suite runs beside timing-sensitive ones).
    static let bigBody: String = {
        var bytes = [UInt8](repeating: 0, count: 2 * 1024 * 1024)
        for index in bytes.indices {
            let code: Int = 33 + (index * 7 + index / 1000) % 90
            bytes[index] = UInt8(code)
        }
        return String(decoding: bytes, as: UTF8.self)
    }()

    /// `text` in chunks of sizes from 1 byte to 64 KiB.
    static func chunks(of text: String) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 4096)
        var offset = 0
        var size = 1
        while offset < bytes.count {
            let end = min(offset + size, bytes.count)
            out += Array((String(end - offset, radix: 16) + "\r\n").utf8)
            out += bytes[offset..<end]
            out += [13, 10]
            offset = end
            size = size >= 65_536 ? 1 : size * 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    @Test func answersPassAsTheUpstreamFramedThem() async throws {
        let upstream = try ScriptedUpstream(answers: Self.answers)
        defer { upstream.stop() }
        let gate = try await GateProxyTests.RunningGate.start([
            "--vendor", "queueit", "--emulator", "--upstream", "http://127.0.0.1:\(upstream.port)"
        ])
        defer { _ = gate.stop() }
        let port = try #require(URL(string: gate.baseURL)?.port)
        let request: @Sendable (String) -> [UInt8] = { path in KeepAliveConnection.request("GET \(path)", port: port) }
        try await OffPool.run {
            let visitor = try KeepAliveConnection(port: port)
            // chunks and trailers pass byte for byte; the connection is kept
            try visitor.send(request("/static/chunked"))
            let chunked = try visitor.readRaw { $0.hasSuffix("0\r\nX-Trailer: t\r\n\r\n") }
            #expect(
                chunked.hasPrefix("HTTP/1.1 200 OK\r\n") && chunked.contains("Transfer-Encoding: chunked\r\n")
                    && chunked.contains("X-Up: 1\r\n"))
            #expect(chunked.hasSuffix("\r\n\r\n" + Self.chunkedBody), "\(chunked)")
            #expect(try visitor.exchange("GET /static/next").body == Array("default /static/next".utf8))

            // an answer ended by the upstream's close reaches an HTTP/1.1 visitor in chunks the gate makes, the connection kept
            try visitor.send(request("/static/close"))
            let closing = try visitor.readRaw { $0.hasSuffix("\r\n0\r\n\r\n") }
            #expect(
                closing.contains("Transfer-Encoding: chunked\r\n") && closing.hasSuffix("\r\n\r\nb\r\nuntil close\r\n0\r\n\r\n"),
                "\(closing)")
            #expect(try visitor.exchange("GET /static/after-close").status == 200)

            // interim answers go first
            try visitor.send(request("/static/interim"))
            let interim = try visitor.readRaw { $0.hasSuffix("\r\n\r\nok") }
            #expect(interim.hasPrefix("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\n"), "\(interim)")

            // fields for this hop only stop at the gate, and those `Connection` names
            let hop = try visitor.exchange("GET /static/hop")
            #expect(hop.status == 200 && hop.body == Array("ok".utf8))
            #expect(!hop.headerNames.contains("x-secret") && !hop.headerNames.contains("keep-alive"), "\(hop.headerNames)")
        }

        // Bytes after an answer (a forged second answer) never reach anyone: the connection is dropped.
        let split = try await gate.send("/static/split")
        #expect(split.status == 200 && split.text == "ok")
        for i in 0..<3 {
            let after = try await gate.send("/static/after-split-\(i)")
            #expect(after.text == "default /static/after-split-\(i)", "\(after.text)")
        }

        // Big bodies stream through whole, by length and in chunks (the gate reads the upstream
        // only as fast as the visitor takes the bytes).
        for path in ["/static/big-length", "/static/big-chunked"] {
            let big = try await gate.send(path)
            #expect(
                big.status == 200 && big.body.count == Self.bigBody.utf8.count && big.body.elementsEqual(Self.bigBody.utf8),
                "\(path): \(big.body.count) bytes")
        }

        // An answer of the gate's own to HEAD has no body: the next answer on the connection is read whole.
        try await OffPool.run {
            let visitor = try KeepAliveConnection(port: port)
            try visitor.send(Array("HEAD /shop/cart HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
            let head = try visitor.readRaw { $0.contains("\r\n\r\n") }
            #expect(head.hasPrefix("HTTP/1.1 302 ") && head.hasSuffix("\r\n\r\n"), "\(head)")
            let next = try visitor.exchange("GET /static/after-head")
            #expect(next.status == 200 && next.body == Array("default /static/after-head".utf8))
        }

        // Answers that are not HTTP/1.1 are 502s that say so.
        for path in ["/static/garbage", "/static/upgrade", "/static/length", "/static/bad-chunk", "/static/old-chunked"] {
            let bad = try await gate.send(path)
            #expect(bad.status == 502 && bad.text.contains("not valid HTTP"), "\(path): \(bad.status) \(bad.text)")
            // an answer that is not HTTP is not a dropped connection: the request is not sent again
            #expect(upstream.requests.filter { $0.hasPrefix("GET \(path) ") }.count == 1, "\(path) sent twice")
        }
        #expect(try await gate.send("/static/still-serving").status == 200)

        // Bytes after a request that ends the connection, or after pipelined requests, that are
        // not HTTP: the whole requests before them are answered, in order, then the connection
        // ends (a 400 when it was to be kept). It closed with no answer at all.
        let afterClose = try await OffPool.run { () -> [String] in
            var replies: [String] = []
            for bytes in [
                "GET /static/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nx",
                "GET /static/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /static/b HTTP/1.1\r\nHost: x\r\n\r\n",
                "GET /static/a HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\nGET /static/b HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"
                    + "GET /static/c HTTP/1.0\r\nHost: x\r\n\r\nGET /static/d HTTP/1.0\r\nHost: x\r\n\r\n",
                "GET /static/a HTTP/1.1\r\nHost: x\r\n\r\nGET /static/b HTTP/1.1\r\nHost: x\r\n\r\nNOT HTTP\r\n\r\n"
            ] {
                let visitor = try KeepAliveConnection(port: port)
                try visitor.send(Array(bytes.utf8))
                replies.append(try visitor.readRaw(orClose: true) { _ in false })
            }
            return replies
        }
        func answers(_ text: String) -> [String] {
            text.components(separatedBy: "\r\n\r\n").compactMap { part in
                part.hasPrefix("default ") ? String(part.prefix(while: { $0 != "H" })) : nil
            }
        }
        #expect(afterClose[0].hasPrefix("HTTP/1.1 200 OK\r\n") && afterClose[0].hasSuffix("default /static/a"), "\(afterClose[0])")
        #expect(afterClose[1].hasPrefix("HTTP/1.1 200 OK\r\n") && afterClose[1].hasSuffix("default /static/a"), "\(afterClose[1])")
        #expect(answers(afterClose[2]) == ["default /static/a", "default /static/b", "default /static/c"], "\(afterClose[2])")
        #expect(answers(afterClose[3]) == ["default /static/a", "default /static/b"], "\(afterClose[3])")
        #expect(afterClose[3].hasSuffix("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"), "\(afterClose[3])")

        // An HTTP/1.0 visitor gets the chunks' data, without chunked coding, and the connection ends.
        let old = try await OffPool.run { () -> String in
            let visitor = try KeepAliveConnection(port: port)
            try visitor.send(Array("GET /static/chunked HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nConnection: keep-alive\r\n\r\n".utf8))
            return try visitor.readRaw(orClose: true) { _ in false }
        }
        #expect(old.hasPrefix("HTTP/1.0 200 OK\r\n") && old.hasSuffix("\r\n\r\nhello world"), "\(old)")
        #expect(!old.lowercased().contains("transfer-encoding") && old.contains("Connection: close\r\n"), "\(old)")

        // A request body in `gzip, chunked` keeps its codings: the gate re-makes the chunks only.
        let echoed = try await OffPool.run { () -> KeepAliveConnection.Reply in
            let visitor = try KeepAliveConnection(port: port)
            try visitor.send(
                Array(
                    "POST /static/upload HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                        .utf8))
            return try visitor.readReply()
        }
        #expect(echoed.status == 200)
        let upload = try #require(upstream.requests.first { $0.hasPrefix("POST /static/upload ") })
        #expect(
            upload.contains("\r\nTransfer-Encoding: gzip, chunked\r\n") && upload.hasSuffix("\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), "\(upload)")

        // A 204 and an interim answer reach the visitor without the framing fields the upstream
        // gave them (they have no body; a length there misleads a client); the connection goes on.
        try await OffPool.run {
            let visitor = try KeepAliveConnection(port: port)
            try visitor.send(request("/static/no-content"))
            let none = try visitor.readRaw { $0.hasSuffix("\r\n\r\n") }
            #expect(none.hasPrefix("HTTP/1.1 204 No Content\r\n") && none.contains("X-A: 1\r\n"), "\(none)")
            #expect(!none.lowercased().contains("content-length"), "\(none)")
            try visitor.send(request("/static/interim-length"))
            let interim = try visitor.readRaw { $0.hasSuffix("\r\n\r\nok") }
            #expect(interim.hasPrefix("HTTP/1.1 103 Early Hints\r\nLink: </b.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\n"), "\(interim)")
            #expect(try visitor.exchange("GET /static/after-no-content").status == 200)
        }

        // A request body with a malformed chunk, before any answer to it began: 400, and the
        // connection ends (it closed without a word).
        let badBody = try await OffPool.run { () -> String in
            let visitor = try KeepAliveConnection(port: port)
            try visitor.send(
                Array(
                    "POST /static/bad-upload HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"
                        .utf8))
            return try visitor.readRaw(orClose: true) { _ in false }
        }
        #expect(badBody == "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", "\(badBody)")
        #expect(try await gate.send("/static/after-bad-upload").status == 200)
    }
}

/// A loopback HTTP/1.1 server, a thread per connection, that answers each request with the exact
/// bytes scripted for its path (`default PATH`, with a length, otherwise), keeps the connection
/// unless the script closes it, and keeps every request it read (head and body, as sent).
final class ScriptedUpstream: Sendable {
    let port: Int
    private let fd: Int32
    private let log = RequestLineLog()

    /// The requests read so far, as sent.
    var requests: [String] { log.lines.withLock { $0 } }

    init(answers: [String: (answer: String, thenClose: Bool)]) throws {
        let (listener, port) = try OneShotUpstream.listenOnLoopback()
        self.port = port
        fd = listener
        let log = self.log
        OneShotUpstream.acceptEach(on: listener) { client in
            Thread { Self.serve(client, answers: answers, log: log) }.start()
        }
    }

    private static func serve(_ client: Int32, answers: [String: (answer: String, thenClose: Bool)], log: RequestLineLog) {
        defer { close(client) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        func fill() -> Bool {
            let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return false }
            received += buffer[0..<n]
            return true
        }
        while true {
            // the head, then a body by Content-Length or chunks
            var headEnd: Int?
            while headEnd == nil {
                if let range = String(decoding: received, as: UTF8.self).range(of: "\r\n\r\n") {
                    headEnd = String(decoding: received, as: UTF8.self)[..<range.upperBound].utf8.count
                } else if !fill() {
                    return
                }
            }
            guard let headEnd else { return }
            let head = String(decoding: received[..<headEnd], as: UTF8.self)
            var requestEnd = headEnd
            if head.lowercased().contains("transfer-encoding:") {
                while !String(decoding: received[headEnd...], as: UTF8.self).contains("0\r\n\r\n") {
                    guard fill() else { return }
                }
                let rest = String(decoding: received[headEnd...], as: UTF8.self)
                requestEnd = headEnd + (rest.range(of: "0\r\n\r\n").map { rest[..<$0.upperBound].utf8.count } ?? 0)
            } else if let line = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
                let length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces))
            {
                while received.count < headEnd + length {
                    guard fill() else { return }
                }
                requestEnd = headEnd + length
            }
            log.lines.withLock { $0.append(String(decoding: received[..<requestEnd], as: UTF8.self)) }
            received.removeFirst(requestEnd)
            let path = head.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            let script =
                answers[path] ?? ("HTTP/1.1 200 OK\r\nContent-Length: \("default \(path)".utf8.count)\r\n\r\ndefault \(path)", false)
            let bytes = Array(script.answer.utf8)
            _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if script.thenClose { return }
        }
    }

    /// Stops accepting (connections open now are served until their peer closes).
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
