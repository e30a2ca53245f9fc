import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting
import WebDriver

/// `waitingroom gate` as a person runs it: the real binary (``CLIProcess``) with `--emulator`, in
/// front of a small Hummingbird app (``GateProxyUpstream``), everything on loopback.
@Suite("waitingroom gate", .serialized, .timeLimit(.minutes(3)))
struct GateProxyTests {
    /// A running `waitingroom gate`: its address and the emulator's.
    struct RunningGate {
        let process: SpawnedProcess
        let baseURL: String
        let emulatorURL: String?

        /// Starts `waitingroom gate arguments… --listen 127.0.0.1:0` and waits for its address.
        static func start(_ arguments: [String]) async throws -> RunningGate {
            try await launch(["gate"] + arguments + ["--listen", "127.0.0.1:0"])
        }

        /// Starts `waitingroom arguments…` (a `gate` command line) and waits for its address.
        static func launch(_ arguments: [String]) async throws -> RunningGate {
            let process = try CLIProcess.start(arguments)
            let watchdog = Task.detached {
                try await Task.sleep(for: .seconds(30))
                if process.isRunning { process.terminate() }
            }
            defer { watchdog.cancel() }
            let text = await CLIProcess.read(process) { $0.contains("listening on") && $0.contains("\n") }
            func url(after marker: String) -> String? {
                guard let range = text.range(of: marker) else { return nil }
                return String(text[range.upperBound...].prefix { !$0.isWhitespace && $0 != "," })
            }
            guard let base = url(after: "listening on ") else {
                if process.isRunning { process.terminate() }
                throw GateProxyTestError("the gate printed no address: \(text)")
            }
            return RunningGate(process: process, baseURL: base, emulatorURL: url(after: "emulator: "))
        }

        /// SIGTERM, and its exit status (stdout is closed).
        func stop() -> Int32 {
            process.terminate()
            let status = process.waitForExit()
            if let out = process.stdout { close(out) }
            return status
        }

        func send(_ path: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8]? = nil) async throws
            -> HTTPResponse
        {
            try await AsyncHTTPTransport.shared.send(
                HTTPRequest(
                    method: method, url: baseURL + path, headers: HTTPHeaderList(headers), body: body, timeout: .seconds(20)))
        }
    }

    /// Starts `waitingroom gate arguments… --upstream` in front of `upstream`, runs `body`, and
    /// stops both whatever happens; a gate that saw `body` through must exit 0 on SIGTERM.
    static func withGate(_ arguments: [String], upstream: GateProxyUpstream, _ body: (RunningGate) async throws -> Void) async throws {
        let gate: RunningGate
        do {
            gate = try await RunningGate.start(arguments + ["--upstream", upstream.baseURL])
        } catch {
            await upstream.stop()
            throw error
        }
        do {
            try await body(gate)
        } catch {
            _ = gate.stop()
            await upstream.stop()
            throw error
        }
        #expect(gate.stop() == 0)
        await upstream.stop()
    }

    @Test func queueItOpenPathsPassWithForwardedHeadersAndProtectedOnesQueue() async throws {
        let upstream = try await GateProxyUpstream.start()
        try await Self.withGate(["--vendor", "queueit", "--emulator"], upstream: upstream) { gate in
            // Ignored by the integration: straight to the upstream, with X-Forwarded-*.
            let open = try await gate.send(
                "/static/app.js?v=1", headers: [("X-Forwarded-For", "203.0.113.9"), ("Connection", "close, X-Secret"), ("X-Secret", "hop")])
            #expect(open.status == 200 && open.text == "upstream /static/app.js")
            let seen = try #require(upstream.requests.last)
            #expect(seen.path == "/static/app.js?v=1")
            // the visitor is no trusted proxy: its X-Forwarded-For is not passed on, the peer is
            #expect(seen.headers["x-forwarded-for"] == "127.0.0.1")
            #expect(seen.headers["x-forwarded-proto"] == "http")
            #expect(seen.headers["x-forwarded-host"] == String(gate.baseURL.dropFirst("http://".count)))
            #expect(seen.headers["x-secret"] == nil)  // named by Connection: hop-by-hop
            // A body streams through (POST to an ignored path), both ways.
            let payload = [UInt8]((0..<300_000).map { UInt8($0 % 251) })
            let echoed = try await gate.send(
                "/static/upload", method: "POST", headers: [("Content-Type", "application/octet-stream")], body: payload)
            #expect(echoed.status == 200 && echoed.body == payload)

            // Protected, no token: to the queue, never cached, never upstream.
            let before = upstream.paths.count
            let queued = try await gate.send("/shop/cart")
            #expect(queued.status == 302)
            let emulator = try #require(gate.emulatorURL)
            #expect(queued.headers.value(for: "Location")?.hasPrefix(emulator + "/?c=demo&e=sale") == true)
            #expect(queued.headers.value(for: "Cache-Control") == "no-cache, no-store, must-revalidate")
            #expect(upstream.paths.count == before)
            // A tampered token: to the queue (an error page), never upstream.
            let tampered = try await gate.send("/shop/cart?queueittoken=e_sale~q_x~ts_9999999999~ce_true~h_00")
            #expect(tampered.status == 302 && upstream.paths.count == before)

            // A token the emulator minted: the cookie, then the page.
            let token = try await Self.mintToken(emulator)
            let withToken = try await gate.send("/shop/cart?queueittoken=" + QueueItTestPercent.encode(token))
            #expect(withToken.status == 302)
            #expect(withToken.headers.value(for: "Location") == gate.baseURL + "/shop/cart")
            let cookie = try #require(
                withToken.headers.values(for: "Set-Cookie").first { $0.hasPrefix("QueueITAccepted") }.map {
                    String($0.prefix { $0 != ";" })
                })
            let page = try await gate.send("/shop/cart", headers: [("Cookie", cookie)])
            #expect(page.status == 200 && page.text == "upstream /shop/cart")
            #expect(upstream.paths.last == "/shop/cart")
        }
    }

    /// HTTP/1.1 on one raw connection (the gate serves it without NIO's pipelining helper):
    /// pipelined requests are answered in order whichever of them the gate answers itself; a
    /// chunked request body streams to the upstream; HEAD gets the head only; an HTTP/1.0 request
    /// without keep-alive is answered and the connection closed.
    @Test func pipeliningChunkedBodiesHeadAndHTTP10() async throws {
        let upstream = try await GateProxyUpstream.start()
        try await Self.withGate(["--vendor", "queueit", "--emulator"], upstream: upstream) { gate in
            let port = try #require(Int(gate.baseURL.split(separator: ":").last ?? ""))
            // Three requests in one write: through, queued by the gate (302), through.
            let replies = try await OffPool.run { () -> [KeepAliveConnection.Reply] in
                let connection = try KeepAliveConnection(port: port)
                try connection.send(
                    KeepAliveConnection.request("GET /static/first", port: port)
                        + KeepAliveConnection.request("GET /shop/cart", port: port)
                        + KeepAliveConnection.request("GET /static/third", port: port))
                return try (0..<3).map { _ in try connection.readReply() }
            }
            #expect(replies.map(\.status) == [200, 302, 200])
            #expect(String(decoding: replies[0].body, as: UTF8.self) == "upstream /static/first")
            #expect(String(decoding: replies[2].body, as: UTF8.self) == "upstream /static/third")
            #expect(!upstream.paths.contains("/shop/cart"), "the queued request never reached the upstream")

            // A chunked body, sent in pieces, comes back whole from the echoing upstream.
            let echoed = try await OffPool.run { () -> KeepAliveConnection.Reply in
                let connection = try KeepAliveConnection(port: port)
                try connection.send(
                    Array("POST /static/upload HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
                for piece in ["hello, ", "chunked ", "world"] {
                    try connection.send(Array((String(piece.utf8.count, radix: 16) + "\r\n" + piece + "\r\n").utf8))
                    usleep(20_000)
                }
                try connection.send(Array("0\r\n\r\n".utf8))
                return try connection.readReply()
            }
            #expect(echoed.status == 200)
            #expect(String(decoding: echoed.body, as: UTF8.self) == "hello, chunked world")

            let head = try await gate.send("/static/page", method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty, "\(head.status) \(head.text)")
            #expect(head.headers.value(for: "Content-Length") == String("upstream /static/page".utf8.count))

            // HTTP/1.0 without keep-alive: one answer, then the gate closes the connection.
            let (old, closed) = try await OffPool.run { () -> (KeepAliveConnection.Reply, Bool) in
                let connection = try KeepAliveConnection(port: port)
                try connection.send(Array("GET /static/old HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
                let reply = try connection.readReply()
                let closed = (try? connection.readReply()) == nil
                return (reply, closed)
            }
            #expect(old.status == 200 && String(decoding: old.body, as: UTF8.self) == "upstream /static/old")
            #expect(closed)

            // Bytes that are not HTTP: 400, then the connection is closed; the gate serves on.
            let (bad, badClosed) = try await OffPool.run { () -> (KeepAliveConnection.Reply, Bool) in
                let connection = try KeepAliveConnection(port: port)
                try connection.send(Array("NOT HTTP AT ALL\r\n\r\n".utf8))
                let reply = try connection.readReply()
                return (reply, (try? connection.readReply()) == nil)
            }
            #expect(bad.status == 400 && badClosed)
            #expect(try await gate.send("/static/after").status == 200)
        }
    }

    /// Request targets other than a path (RFC 9112 §3.2). An absolute URL was checked as
    /// `http://HOSThttp://…` (no trigger matched) and forwarded as it was, CONNECT's `host:port`
    /// and `GET *` went to the app unchecked, and of two Hosts the first was checked.
    @Test func requestTargetsThatAreNotPathsAreCheckedAsPathsOrRefused() async throws {
        let upstream = try await GateProxyUpstream.start()
        try await Self.withGate(["--vendor", "queueit", "--emulator"], upstream: upstream) { gate in
            let port = try #require(Int(gate.baseURL.split(separator: ":").last ?? ""))
            func raw(_ text: String, thenClosed: Bool = false) async throws -> (KeepAliveConnection.Reply, closed: Bool) {
                try await OffPool.run {
                    let connection = try KeepAliveConnection(port: port)
                    try connection.send(Array(text.utf8))
                    let reply = try connection.readReply()
                    return (reply, thenClosed && (try? connection.readReply()) == nil)
                }
            }
            // an absolute URL is the path it names, on the authority it names
            let (queued, _) = try await raw("GET http://shop.example/shop/cart?x=1 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            #expect(queued.status == 302, "\(queued.status)")
            let location = queued.headers.first { $0.name == "location" }?.value ?? ""
            #expect(location.contains("t=http%3A%2F%2Fshop.example%2Fshop%2Fcart%3Fx%3D1"), "\(location)")
            let (open, _) = try await raw("GET http://127.0.0.1:\(port)/static/abs.js HTTP/1.1\r\nHost: elsewhere\r\n\r\n")
            #expect(open.status == 200 && String(decoding: open.body, as: UTF8.self) == "upstream /static/abs.js")
            #expect(upstream.requests.last?.path == "/static/abs.js", "\(String(describing: upstream.requests.last))")
            #expect(upstream.requests.last?.headers["x-forwarded-host"] == "127.0.0.1:\(port)", "the URL's authority, not the Host")
            let before = upstream.paths.count
            for text in [
                "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n", "GET * HTTP/1.1\r\nHost: x\r\n\r\n",
                "GET static/x HTTP/1.1\r\nHost: x\r\n\r\n", "GET /static/x HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n"
            ] {
                let (refused, closed) = try await raw(text, thenClosed: true)
                #expect(refused.status == 400 && closed, "\(text): \(refused.status)")
            }
            #expect(upstream.paths.count == before, "none reached the app: \(upstream.paths.suffix(3))")
            // a Host that is not host[:port] changed the path the triggers saw (`x?` made
            // `/shop/cart` a query, `x/static/` matched the ignore rule) while the app served the
            // request line's path: the waiting room was skipped
            for host in ["x?", "x#", "x/static/", "u@shop.example", "x y", "x:port", "[::1", ""] {
                let (refused, _) = try await raw("GET /shop/cart HTTP/1.1\r\nHost: \(host)\r\n\r\n")
                #expect(refused.status == 400, "Host: \(host): \(refused.status)")
            }
            for host in ["shop.example", "shop.example:8080", "[::1]:8080", "127.0.0.1"] {
                let (queued, _) = try await raw("GET /shop/cart HTTP/1.1\r\nHost: \(host)\r\n\r\n")
                #expect(queued.status == 302, "Host: \(host): \(queued.status)")
            }
            #expect(upstream.paths.count == before, "none reached the app: \(upstream.paths.suffix(3))")
            #expect(try await gate.send("/static/after").status == 200)
        }
    }

    /// A reused upstream connection that closes without answering: a GET is sent again on a new
    /// connection, a POST is not (it was: the upstream got the same POST twice) and gets 502.
    @Test func onlyIdempotentRequestsAreSentAgain() async throws {
        let upstream = try OneShotUpstream(dropsSecondRequest: true)
        let gate = try await RunningGate.start([
            "--vendor", "queueit", "--emulator", "--upstream", "http://127.0.0.1:\(upstream.port)", "--threads", "1"
        ])
        let port = try #require(URL(string: gate.baseURL)?.port)
        let statuses = try await OffPool.run { () throws -> [Int] in
            let connection = try KeepAliveConnection(port: port)
            var statuses: [Int] = []
            // each request first on a fresh pooled connection (answered), then one on it again (dropped)
            for line in ["GET /static/warm-1", "POST /static/post", "GET /static/warm-2", "GET /static/get"] {
                statuses.append(try connection.exchange(line).status)
            }
            return statuses
        }
        #expect(statuses == [200, 502, 200, 200], "\(statuses)")
        let seen = upstream.requestLines
        #expect(seen.filter { $0.hasPrefix("POST /static/post") }.count == 1, "\(seen)")
        #expect(seen.filter { $0.hasPrefix("GET /static/get") }.count == 2, "sent again on a new connection: \(seen)")
        #expect(gate.stop() == 0)
        upstream.stop()
    }

    /// An upstream that closes every connection after one answer without saying so (as one whose
    /// keep-alive timeout ends while the gate holds the connection in its pool): each request
    /// still gets its answer, on a new connection when the pooled one turns out closed.
    @Test func anUpstreamThatDropsKeptConnectionsIsStillAnswered() async throws {
        let upstream = try OneShotUpstream()
        let gate = try await RunningGate.start(["--vendor", "queueit", "--emulator", "--upstream", "http://127.0.0.1:\(upstream.port)"])
        var statuses: [Int] = []
        for i in 0..<20 {
            let r = try await gate.send("/static/\(i)")
            statuses.append(r.status)
            if i % 5 == 0 { try await Task.sleep(for: .milliseconds(50)) }  // some after the close has landed, some before
        }
        #expect(statuses == Array(repeating: 200, count: 20), "\(statuses)")
        #expect(gate.stop() == 0)
        upstream.stop()
    }

    /// `--upstream unix:PATH`: the app listens on a Unix-domain socket; requests the gate lets
    /// through reach it with `Host: localhost` and the visitor's host in `X-Forwarded-Host`, a
    /// cookie-holder's page too, and a socket nobody listens on is a 502 naming it.
    @Test func anUpstreamOnAUnixSocketIsServed() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wr-gate-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appendingPathComponent("app.sock").path
        let upstream = try await GateProxyUpstream.start(unixSocket: socket)
        #expect(upstream.baseURL == "unix:" + socket)
        try await Self.withGate(["--vendor", "queueit", "--emulator"], upstream: upstream) { gate in
            let open = try await gate.send("/static/app.js")
            #expect(open.status == 200 && open.text == "upstream /static/app.js")
            let seen = try #require(upstream.requests.last)
            #expect(seen.headers["host"] == "localhost")
            #expect(seen.headers["x-forwarded-host"] == String(gate.baseURL.dropFirst("http://".count)))
            let payload = [UInt8]((0..<100_000).map { UInt8($0 % 251) })
            let echoed = try await gate.send("/static/upload", method: "POST", body: payload)
            #expect(echoed.status == 200 && echoed.body == payload)
            let before = upstream.paths.count
            #expect(try await gate.send("/shop/cart").status == 302 && upstream.paths.count == before)
            let token = try await Self.mintToken(try #require(gate.emulatorURL))
            let withToken = try await gate.send("/shop/cart?queueittoken=" + QueueItTestPercent.encode(token))
            let cookie = try #require(
                withToken.headers.values(for: "Set-Cookie").first { $0.hasPrefix("QueueITAccepted") }.map {
                    String($0.prefix { $0 != ";" })
                })
            for _ in 0..<3 {
                let page = try await gate.send("/shop/cart", headers: [("Cookie", cookie)])
                #expect(page.status == 200 && page.text == "upstream /shop/cart")
            }
        }

        let nobody = folder.appendingPathComponent("nobody.sock").path
        let down = try await RunningGate.start([
            "--vendor", "queueit", "--emulator", "--upstream", "unix:" + nobody, "--connect-timeout", "2"
        ])
        let r = try await down.send("/static/index.html")
        #expect(r.status == 502 && r.text.contains("unix:" + nobody), "\(r.status) \(r.text)")
        #expect(down.stop() == 0)
    }

    /// SIGTERM stops the gate gracefully: a request in flight is answered, then it exits 0. A
    /// second SIGTERM during that drain stops it at once, the request cut (it used to wait for
    /// the drain whatever came).
    @Test func aSecondSignalCutsTheDrainShort() async throws {
        let upstream = try await GateProxyUpstream.start()
        for signals in [1, 2] {
            let gate = try await RunningGate.start(["--vendor", "queueit", "--emulator", "--upstream", upstream.baseURL])
            let path = "/static/slow/signals-\(signals)"
            let reply = Task { try await gate.send(path) }
            // in flight: the upstream has it (and answers it 5 s later)
            let deadline = ContinuousClock.now + .seconds(15)
            while !upstream.paths.contains(path), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(upstream.paths.contains(path))
            gate.process.terminate()
            if signals == 2 {
                // the first signal has been taken (two at once may be delivered as one)
                let said = await CLIProcess.read(gate.process) { $0.contains("stopping;") }
                #expect(said.contains("a second Ctrl-C stops at once"), "\(said)")
                gate.process.terminate()
            }
            let process = gate.process
            let status = await DedicatedThread.run(name: "gate.wait") { process.waitForExit() }
            if let out = gate.process.stdout { close(out) }
            let answer = try? await reply.value
            #expect(status == 0)
            if signals == 1 {
                #expect(answer?.status == 200 && answer?.text == "upstream \(path)", "the drain let it finish")
            } else {
                #expect(answer?.status != 200, "the second signal cut it: \(String(describing: answer?.status))")
            }
        }
        await upstream.stop()
    }

    @Test func anUpstreamThatIsDownGives502() async throws {
        // Port 1 on loopback: nothing listens, the connection is refused.
        let gate = try await RunningGate.start([
            "--vendor", "queueit", "--emulator", "--upstream", "http://127.0.0.1:1", "--connect-timeout", "2"
        ])
        let r = try await gate.send("/static/index.html")
        #expect(r.status == 502)
        #expect(r.headers.value(for: "Content-Type")?.hasPrefix("text/html") == true)
        #expect(r.text.contains("502 Bad Gateway") && r.text.contains("http://127.0.0.1:1"))
        #expect(gate.stop() == 0)
    }

    @Test func anUpstreamThatDoesNotAnswerInTimeGives502() async throws {
        let upstream = try await GateProxyUpstream.start()
        let gate = try await RunningGate.start(["--vendor", "queueit", "--emulator", "--upstream", upstream.baseURL, "--timeout", "1"])
        let started = ContinuousClock.now
        let r = try await gate.send("/static/slow/page")
        #expect(r.status == 502 && r.text.contains("did not answer in time"), "\(r.status) \(r.text)")
        // --timeout 1, watched every 125 ms once the exchange starts (at the idle pace, every
        // 9.4 s, the answer would come late; without the watch, the upstream's answer after 5 s)
        #expect(ContinuousClock.now - started < .seconds(4), "bounded by --timeout, not a hang")
        #expect(gate.stop() == 0)
        await upstream.stop()
    }

    /// `--max-body-bytes` and the gate's header bounds (README G8): an oversize declared body is
    /// 413 and oversize headers are 431, before any vendor logic, and neither reaches the upstream,
    /// even on a path the integration lets through (`/static/`).
    @Test func oversizeBodiesAndHeadersAreRefusedBeforeTheUpstream() async throws {
        let upstream = try await GateProxyUpstream.start()
        try await Self.withGate(["--vendor", "queueit", "--emulator", "--max-body-bytes", "1024"], upstream: upstream) { gate in
            let fits = try await gate.send(
                "/static/upload", method: "POST", headers: [("Content-Type", "application/octet-stream")],
                body: [UInt8](repeating: 7, count: 1024))
            #expect(fits.status == 200 && fits.body.count == 1024)
            #expect(upstream.paths == ["/static/upload"])
            let big = try await gate.send(
                "/static/upload", method: "POST", headers: [("Content-Type", "application/octet-stream")],
                body: [UInt8](repeating: 7, count: 4096))
            #expect(big.status == 413, "\(big.status) \(big.text)")
            let port = try #require(Int(gate.baseURL.split(separator: ":").last ?? ""))
            // A short body over the bound is read and dropped: the connection serves on.
            let (short, next) = try await OffPool.run { () -> (KeepAliveConnection.Reply, KeepAliveConnection.Reply) in
                let connection = try KeepAliveConnection(port: port)
                let refused = try connection.exchange(
                    "POST /static/upload", body: [UInt8](repeating: 7, count: 4096), contentType: "text/plain")
                return (refused, try connection.exchange("GET /static/kept"))
            }
            #expect(short.status == 413 && !short.headerNames.contains("connection"))
            #expect(next.status == 200 && String(decoding: next.body, as: UTF8.self) == "upstream /static/kept")
            // A long declared body is not read through: 413 with `Connection: close`, the answer
            // arrives whole while the visitor is still sending, then the connection ends.
            let (long, longClosed) = try await OffPool.run { () -> (KeepAliveConnection.Reply, Bool) in
                let connection = try KeepAliveConnection(port: port)
                try connection.send(
                    Array("POST /static/upload HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 50000000\r\n\r\n".utf8))
                try connection.send([UInt8](repeating: 7, count: 256 * 1024))
                let reply = try connection.readReply()
                // what the visitor still sends is dropped until it stops, then the gate closes
                while (try? connection.send([UInt8](repeating: 7, count: 64 * 1024))) != nil {}
                return (reply, (try? connection.readReply()) == nil)
            }
            #expect(long.status == 413 && long.headerNames.contains("connection"), "\(long)")
            #expect(longClosed)
            let longValue = try await gate.send("/static/page", headers: [("X-Padding", String(repeating: "p", count: 10 * 1024))])
            #expect(longValue.status == 431, "\(longValue.status) \(longValue.text)")
            let many = try await gate.send("/static/page", headers: (0..<80).map { ("X-Field-\($0)", "v") })
            #expect(many.status == 431, "\(many.status) \(many.text)")
            let large = try await gate.send("/static/page", headers: (0..<5).map { ("X-Part-\($0)", String(repeating: "q", count: 4000)) })
            #expect(large.status == 431, "\(large.status) \(large.text)")
            #expect(upstream.paths == ["/static/upload", "/static/kept"], "a refused request reached the upstream: \(upstream.paths)")
            // The gate still serves after the refusals.
            let after = try await gate.send("/static/page")
            #expect(after.status == 200 && after.text == "upstream /static/page")
        }
    }

    /// Many visitors at once, spread over four event loops: 32 visitors, each landing with its own
    /// token (the replay ledger), then sending 15 requests in turn: passes with its cookie (the
    /// session memo), queue redirects without it and ignored paths. Every answer is the right one,
    /// every request let through reaches the upstream exactly once and no other does, and with
    /// `--max-connections 40` no request gets 503 (a slot not given back would show as one).
    @Test func manyVisitorsAtOnceEachGetTheirOwnAnswers() async throws {
        let upstream = try await GateProxyUpstream.start()
        try await Self.withGate(["--vendor", "queueit", "--emulator", "--threads", "4", "--max-connections", "40"], upstream: upstream) {
            gate in
            let emulator = try #require(gate.emulatorURL)
            let visitors = 32
            let rounds = 15
            var tokens: [String] = []
            for _ in 0..<visitors { tokens.append(try await Self.mintToken(emulator)) }
            let outcomes = try await withThrowingTaskGroup(of: (forwarded: [String], problems: [String]).self) { group in
                for (visitor, token) in tokens.enumerated() {
                    group.addTask {
                        var forwarded: [String] = []
                        var problems: [String] = []
                        let landing = try await gate.send("/shop/v\(visitor)?queueittoken=" + QueueItTestPercent.encode(token))
                        guard landing.status == 302,
                            let cookie = landing.headers.values(for: "Set-Cookie").first(where: { $0.hasPrefix("QueueITAccepted") })
                                .map({ String($0.prefix { $0 != ";" }) })
                        else {
                            return ([], ["visitor \(visitor): landing \(landing.status)"])
                        }
                        // The token again: used once already, so back to the queue (never upstream).
                        let replay = try await gate.send("/shop/v\(visitor)/again?queueittoken=" + QueueItTestPercent.encode(token))
                        if replay.status != 302 { problems.append("visitor \(visitor): replayed token \(replay.status)") }
                        for round in 0..<rounds {
                            let path: String
                            switch round % 3 {
                            case 0:
                                path = "/shop/v\(visitor)/r\(round)"
                                let r = try await gate.send(path, headers: [("Cookie", cookie)])
                                if r.status == 200, r.text == "upstream " + path {
                                    forwarded.append(path)
                                } else {
                                    problems.append("\(path): \(r.status) \(r.text)")
                                }
                            case 1:
                                path = "/shop/v\(visitor)/q\(round)"
                                let r = try await gate.send(path)
                                if r.status != 302 { problems.append("\(path) without a cookie: \(r.status)") }
                            default:
                                path = "/static/v\(visitor)/s\(round)"
                                let r = try await gate.send(path)
                                if r.status == 200, r.text == "upstream " + path {
                                    forwarded.append(path)
                                } else {
                                    problems.append("\(path): \(r.status) \(r.text)")
                                }
                            }
                        }
                        return (forwarded, problems)
                    }
                }
                var all: [(forwarded: [String], problems: [String])] = []
                for try await outcome in group { all.append(outcome) }
                return all
            }
            let problems = outcomes.flatMap(\.problems)
            #expect(problems.isEmpty, "\(problems.count) wrong answers, first: \(problems.prefix(5))")
            let forwarded = outcomes.flatMap(\.forwarded).sorted()
            #expect(forwarded.count == visitors * rounds * 2 / 3)
            #expect(
                upstream.paths.sorted() == forwarded, "the upstream saw \(upstream.paths.count) requests for \(forwarded.count) let through"
            )
        }
    }

    @Test func crowdHandlerQueuesAndPromotes() async throws {
        let upstream = try await GateProxyUpstream.start()
        try await Self.withGate(["--vendor", "crowdhandler", "--emulator"], upstream: upstream) { gate in
            // The demo line promotes 30 a minute: on a slow machine the first visitor may already
            // be due. Stop it promoting for this check (keys not given keep their values).
            let emulator = try #require(gate.emulatorURL)
            let stop = try await AsyncHTTPTransport.shared.send(
                HTTPRequest(
                    method: "POST", url: emulator + "/_emulator/crowdhandler/rooms/demo-queue",
                    headers: [("Content-Type", "application/json")], body: Array(#"{"rate": 0}"#.utf8), timeout: .seconds(30)))
            #expect(stop.status == 200, "\(stop.text)")
            let queued = try await gate.send("/demo-queue")
            #expect(queued.status == 302)
            #expect(queued.headers.value(for: "Location")?.contains("/demo-queue?url=") == true)
            #expect(upstream.paths.isEmpty)
            let open = try await gate.send("/demo-open")
            #expect(open.status == 200 && open.text == "upstream /demo-open")
            #expect(open.headers.values(for: "Set-Cookie").contains { $0.hasPrefix("crowdhandler=") })
            #expect(upstream.paths == ["/demo-open"])
            // The upstream's status and time reach `PUT /v1/responses/{id}` for a sampled share of
            // the requests let through (0.2 by default: none in 60 has odds of 1 in 660,000).
            for _ in 0..<60 {
                let again = try await gate.send("/demo-open")
                #expect(again.status == 200)
            }
            var recorded = 0
            for _ in 0..<100 where recorded == 0 {
                let state = try await AsyncHTTPTransport.shared.send(
                    HTTPRequest(url: emulator + "/_emulator/crowdhandler/state", timeout: .seconds(30)))
                let parsed = try JSONValue.parse(Data(state.body))
                recorded = Int(parsed["counters"]?["responsesRecorded"]?.numberValue ?? parsed["responsesRecorded"]?.numberValue ?? 0)
                if recorded == 0 { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect((1...61).contains(recorded), "responses recorded: \(recorded)")
        }
    }

    @Test func badOptionsAreUsageErrors() async throws {
        let noVendor = try await CLIProcess.run(["gate", "--vendor", "netfunnel", "--upstream", "http://127.0.0.1:8080"])
        #expect(noVendor.status == 64 && noVendor.stderr.contains("--vendor"))
        let badUpstream = try await CLIProcess.run(["gate", "--vendor", "queueit", "--upstream", "ftp://x"])
        #expect(badUpstream.status == 64 && badUpstream.stderr.contains("--upstream"))
        for upstream in ["unix:", "unix:/" + String(repeating: "s", count: 200), "http://127.0.0.1:8080/app", "http://user@127.0.0.1:8080"]
        {
            let bad = try await CLIProcess.run(["gate", "--vendor", "queueit", "--emulator", "--upstream", upstream])
            #expect(bad.status == 64 && bad.stderr.contains("--upstream must be"), "\(upstream): \(bad.stderr)")
        }
        let badMemo = try await CLIProcess.run([
            "gate", "--vendor", "queueit", "--emulator", "--upstream", "http://127.0.0.1:8080", "--session-memo", "-1"
        ])
        #expect(badMemo.status == 64 && badMemo.stderr.contains("--session-memo"))
        // a public URL is scheme://host[:port]: `http://` alone, a path or a query is refused
        for url in ["http://", "https:///", "http://shop.example/path", "http://shop.example?x=1", "http://u@shop.example"] {
            let bad = try await CLIProcess.run([
                "gate", "--vendor", "queueit", "--emulator", "--upstream", "http://127.0.0.1:8080", "--public-url", url
            ])
            #expect(bad.status == 64 && bad.stderr.contains("--public-url must be"), "\(url): \(bad.stderr)")
        }
        // a trusted proxy that is no IP address would never match: refused, not ignored
        for proxy in ["10.0.0.0/8", "300.1.1.1", "proxy.internal"] {
            let bad = try await CLIProcess.run([
                "gate", "--vendor", "queueit", "--emulator", "--upstream", "http://127.0.0.1:8080", "--trusted-proxy", proxy
            ])
            #expect(bad.status == 64 && bad.stderr.contains("--trusted-proxy must be an IP address"), "\(proxy): \(bad.stderr)")
        }
        let noConfig = try await CLIProcess.run([
            "gate", "--vendor", "queueit", "--upstream", "http://127.0.0.1:8080", "--listen", "127.0.0.1:0"
        ])
        #expect(noConfig.status == 64 && noConfig.stderr.contains("--config"))
        // a configuration larger than the bound is refused before it is read (a sparse 5 MB file)
        let folder = CLIProcess.temporaryDirectory()
        let large = folder + "/large.json"
        #expect(FileManager.default.createFile(atPath: large, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: large))
        try handle.truncate(atOffset: 5 * 1024 * 1024)
        try handle.close()
        let oversize = try await CLIProcess.run(
            ["gate", "--vendor", "queueit", "--customer", "demo", "--upstream", "http://127.0.0.1:8080", "--config", large],
            environment: ["QUEUEIT_SECRET_KEY": "k"])
        #expect(oversize.status == 64 && oversize.stderr.contains("at most 4194304 are read"), "\(oversize.stderr)")
        // without --public-url or --allowed-host (and without --emulator) the visitor's Host would
        // choose the URL the triggers read: the gate does not start
        let published = folder + "/integrationconfig.json"
        try Data(#"{"Version": 1, "Integrations": []}"#.utf8).write(to: URL(fileURLWithPath: published))
        let hostless = try await CLIProcess.run(
            [
                "gate", "--vendor", "queueit", "--customer", "demo", "--config", published,
                "--upstream", "http://127.0.0.1:8080", "--listen", "127.0.0.1:0"
            ],
            environment: ["QUEUEIT_SECRET_KEY": "k"])
        #expect(
            hostless.status == 64 && hostless.stderr.contains("--public-url") && hostless.stderr.contains("--allowed-host"),
            "\(hostless.stderr)")
        let badHost = try await CLIProcess.run([
            "gate", "--vendor", "queueit", "--emulator", "--upstream", "http://127.0.0.1:8080", "--allowed-host", "x/y"
        ])
        #expect(badHost.status == 64 && badHost.stderr.contains("--allowed-host must be"), "\(badHost.stderr)")
        // a vendor API that cannot be reached is no usage error: 4 (it was 64)
        let unreachable = folder + "/crowdhandler.json"
        try Data(#"{"publicKey": "k", "apiURL": "http://127.0.0.1:1", "waitURL": "http://127.0.0.1:1"}"#.utf8).write(
            to: URL(fileURLWithPath: unreachable))
        let down = try await CLIProcess.run([
            "gate", "--vendor", "crowdhandler", "--mode", "hybrid", "--config", unreachable,
            "--upstream", "http://127.0.0.1:8080", "--listen", "127.0.0.1:0"
        ])
        #expect(down.status == 4, "\(down.status) \(down.stderr)")
        // a --listen address that cannot be bound (taken by a running gate, or no address of this
        // machine) is a bad value, as for `emulate` and `--metrics-port`
        let running = try await RunningGate.start(["--vendor", "queueit", "--emulator", "--upstream", "http://127.0.0.1:8080"])
        let taken = try #require(URL(string: running.baseURL)?.port)
        for listen in ["127.0.0.1:\(taken)", "192.0.2.1:0"] {
            let busy = try await CLIProcess.run([
                "gate", "--vendor", "queueit", "--emulator", "--upstream", "http://127.0.0.1:8080", "--listen", listen
            ])
            #expect(busy.status == 64 && busy.stderr.contains("cannot listen on \(listen)"), "\(listen): \(busy.status) \(busy.stderr)")
        }
        #expect(running.stop() == 0)
    }

    /// Every example of `gate --help` runs as written: it starts, serves, and stops on SIGTERM.
    @Test func helpExamplesRunAsWritten() async throws {
        let help = try await CLIProcess.run(["gate", "--help"])
        let examples = try #require(help.stdout.components(separatedBy: "Examples:\n").last?.components(separatedBy: "\n\n").first)
        let commands = examples.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n")
            .map { $0.split(separator: " ").map(String.init) }
        #expect(commands.count == 4, "\(examples)")
        for words in commands {
            #expect(words.first == "waitingroom" && words.dropFirst().first == "gate", "\(words)")
            let gate = try await RunningGate.launch(Array(words.dropFirst()))
            let r = try await gate.send("/static/x")
            #expect(r.status == 502 || r.status == 200, "\(words): \(r.status)")
            #expect(gate.stop() == 0, "\(words)")
        }
    }

    /// A `queueittoken` for room `sale` of customer `demo`, minted by the emulator.
    static func mintToken(_ emulator: String) async throws -> String {
        let fields: [String: JSONValue] = [
            "customerId": .string("demo"), "waitingRoomId": .string("sale"), "expiresIn": .number(600),
            "queueId": .string(UUID().uuidString.lowercased())
        ]
        let r = try await AsyncHTTPTransport.shared.send(
            HTTPRequest(
                method: "POST", url: emulator + "/_emulator/queueit/tokens", headers: [("Content-Type", "application/json")],
                body: Array(JSONValue.object(fields).jsonText.utf8), timeout: .seconds(20)))
        guard r.status == 200, let token = try JSONValue.parse(Data(r.body))["token"]?.stringValue else {
            throw GateProxyTestError("the emulator minted no token: \(r.status) \(r.text)")
        }
        return token
    }
}

/// Percent-encodes a query value (RFC 3986 unreserved characters kept).
enum QueueItTestPercent {
    static func encode(_ s: String) -> String {
        s.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? s
    }
}

struct GateProxyTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The request lines a test server read, shared with its thread.
final class RequestLineLog: Sendable {
    let lines = Mutex<[String]>([])
}

/// A loopback HTTP server on a thread of its own that answers one request per connection with
/// `200 ok` (keep-alive not refused) and then closes the connection; with `dropsSecondRequest`
/// it keeps the connection after that answer, reads the next request and closes without
/// answering it. The request lines it read are kept, in order.
final class OneShotUpstream: Sendable {
    let port: Int
    private let fd: Int32
    private let log = RequestLineLog()

    /// The request lines read so far.
    var requestLines: [String] { log.lines.withLock { $0 } }

    init(dropsSecondRequest: Bool = false) throws {
        let (listener, port) = try Self.listenOnLoopback()
        self.port = port
        fd = listener
        let log = self.log
        Self.acceptEach(on: listener) { client in
            // one head (this server's requests have no body), or nil when the client closed
            func readHead() -> String? {
                var buffer = [UInt8](repeating: 0, count: 8192)
                var received: [UInt8] = []
                while !String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
                    let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                    if n <= 0 { return nil }
                    received += buffer[0..<n]
                }
                let head = String(decoding: received, as: UTF8.self)
                log.lines.withLock { $0.append(String(head.prefix { $0 != "\r" })) }
                return head
            }
            if readHead() != nil {
                let reply = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok".utf8)
                _ = reply.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if dropsSecondRequest { _ = readHead() }
            }
            close(client)
        }
    }

    /// Accepts connections on `listener`, on a thread of its own, until it is closed; `handle`
    /// gets each (on that thread).
    static func acceptEach(on listener: Int32, _ handle: @escaping @Sendable (Int32) -> Void) {
        Thread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                handle(client)
            }
        }.start()
    }

    /// Stops accepting (the accept loop ends).
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    /// A listening TCP socket on 127.0.0.1, on a free port, and that port.
    static func listenOnLoopback() throws -> (fd: Int32, port: Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw GateProxyTestError("a loopback test server could not listen")
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }
}
