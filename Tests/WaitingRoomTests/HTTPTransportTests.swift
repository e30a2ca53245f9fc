import Foundation
import Testing
import WaitingRoom

@testable import WaitingRoomHTTP

/// Serialized: the deadline checks measure milliseconds. The busy-pool check
/// (`HTTPTransportTests+BusyPool.swift`) takes every cooperative thread, in a child process.
@Suite("AsyncHTTPTransport over loopback", .serialized)
struct HTTPTransportTests {
    let transport = AsyncHTTPTransport(maxBodyBytes: 64 * 1024)
    // Requests expected to be answered get 20 s: in the full parallel run the fuzz suites keep both
    // cores busy for 20–35 s, and 2 s for a 200 KB answer timed out there. These tests are about
    // what comes back; the deadline tests measure time on their own.

    @Test func answersAreReturnedWithStatusHeadersAndBody() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        let response = try await transport.send(HTTPRequest(url: server.base + "/ok", timeout: .seconds(20)))
        #expect(response.status == 200)
        #expect(response.text == "hello")
        #expect(response.headers.value(for: "content-type") == "text/plain")
    }

    /// The SDK enforces deadlines itself, to milliseconds, also below one second.
    @Test(arguments: [150, 400, 900])
    func deadlinesBelowOneSecondAreHonoured(milliseconds: Int) async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        let started = ContinuousClock.now
        do {
            _ = try await transport.send(HTTPRequest(url: server.base + "/delay/3000", timeout: .milliseconds(milliseconds)))
            Issue.record("expected a timeout")
        } catch let error as WaitingRoomError {
            #expect(error.kind == .networkTimeout)
        }
        let elapsed = ContinuousClock.now - started
        let overshoot = elapsed - .milliseconds(milliseconds)
        print("deadline \(milliseconds) ms: answered after \(elapsed)")
        #expect(overshoot >= .milliseconds(-5))
        // Generous: the suite runs in parallel on 2 cores, so the caller may wait for a thread after
        // the deadline fired. Still far below what the bug gave (whole seconds; 7.5 s when the pool
        // was starved). The precision itself is printed above and reported, not asserted.
        #expect(overshoot < .milliseconds(2_500))
    }

    /// The deadline covers the body too: a server that sends the head and then stalls in the
    /// body is cut off at the deadline (the bound is generous; a missing body deadline would
    /// wait forever).
    @Test func aBodyThatStallsAfterTheHeadTimesOut() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        // One answered request first, so the stalled request goes out on a connection that is
        // already open: on a loaded machine (the suite runs in parallel on 2 cores) connecting
        // alone could take the whole deadline, and a connection that opens after its request
        // timed out is kept idle in the pool (not closed), which is not what this test is about.
        _ = try await transport.send(HTTPRequest(url: server.base + "/ok", timeout: .seconds(10)))
        let started = ContinuousClock.now
        await #expect { try await transport.send(HTTPRequest(url: server.base + "/partial", timeout: .milliseconds(300))) } throws: {
            ($0 as? WaitingRoomError)?.kind == .networkTimeout
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(295))
        #expect(elapsed < .seconds(2))
        // The server sees the close on its own event loop, possibly just after the client's error.
        for _ in 0..<500 where server.activity.closes.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.activity.closes.count == 1, "the stalled connection was closed (server saw \(server.activity.paths))")
    }

    // 20 s deadlines: the answer comes at once; a loaded CI machine turned 2 s into a timeout
    @Test func aResetConnectionIsNetworkOffline() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        await #expect { try await transport.send(HTTPRequest(url: server.base + "/reset", timeout: .seconds(20))) } throws: {
            ($0 as? WaitingRoomError)?.kind == .networkOffline
        }
    }

    @Test func garbageIsAnInvalidResponseOrOffline() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        await #expect { try await transport.send(HTTPRequest(url: server.base + "/garbage", timeout: .seconds(20))) } throws: {
            let kind = ($0 as? WaitingRoomError)?.kind
            return kind == .invalidResponse || kind == .networkOffline
        }
    }

    @Test func aRefusedConnectionIsNetworkOffline() async throws {
        let server = try await LoopbackHTTPServer.start()
        let url = server.base + "/ok"
        await server.stop()
        await #expect { try await transport.send(HTTPRequest(url: url, timeout: .seconds(20))) } throws: {
            // refused at once; the deadline is far so that a stalled machine cannot turn it into a timeout
            ($0 as? WaitingRoomError)?.kind == .networkOffline
        }
    }

    @Test func redirectsAreNotFollowedUnlessAsked() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        let direct = try await transport.send(HTTPRequest(url: server.base + "/redirect", timeout: .seconds(20)))
        #expect(direct.status == 302)
        #expect(direct.headers.value(for: "location") == "/ok")
        let followed = try await transport.send(HTTPRequest(url: server.base + "/redirect", timeout: .seconds(20), followRedirects: true))
        #expect(followed.status == 200)
        #expect(followed.text == "hello")
    }

    /// Redirects are followed by the transport, each `Location` checked first: a port over 65535
    /// trapped in AsyncHTTPClient and ended the process (a flow's `wr.http` could not catch it).
    @Test func redirectsAreCheckedBeforeTheyAreFollowed() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        func to(_ status: Int, _ location: String) -> String {
            server.base + "/to/\(status)/" + (location.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? location)
        }
        func follow(_ url: String, method: String = "GET", headers: HTTPHeaderList = [], body: [UInt8]? = nil) async throws -> HTTPResponse
        {
            try await transport.send(
                HTTPRequest(method: method, url: url, headers: headers, body: body, timeout: .seconds(20), followRedirects: true))
        }
        for bad in ["http://127.0.0.1:99999/x", "http://127.0.0.1:65536/"] {
            await #expect { try await follow(to(302, bad)) } throws: {
                ($0 as? WaitingRoomError)?.kind == .invalidResponse && "\($0)".contains("not 0…65535")
            }
        }
        // the caller's own URL with such a port is the caller's mistake, refused before sending
        await #expect { try await follow("http://127.0.0.1:70000/ok") } throws: {
            ($0 as? WaitingRoomError)?.kind == .invalidConfiguration
        }
        // a cycle: `/to/302/x` answers `Location: x`, which is itself
        await #expect { try await follow(server.base + "/to/302/x") } throws: {
            ($0 as? WaitingRoomError)?.kind == .invalidResponse && "\($0)".contains("cycle")
        }
        // more than 10 redirects; 10 are followed
        await #expect { try await follow(server.base + "/hops/11") } throws: {
            ($0 as? WaitingRoomError)?.message.contains("more than 10 redirects") == true
        }
        let followedTen = try await follow(server.base + "/hops/10")
        #expect(followedTen.status == 200 && followedTen.text == "hello" && followedTen.url == server.base + "/hops/0")
        // relative and absolute locations; the final URL is the answer's
        let relative = try await follow(to(301, "/ok"))
        #expect(relative.status == 200 && relative.url == server.base + "/ok")
        // 303 makes a POST a GET without its body; 307 keeps both
        let seeOther = try await follow(
            to(303, "/echo"), method: "POST", headers: [("Content-Type", "text/plain")], body: Array("data".utf8))
        #expect(seeOther.text.hasPrefix("GET\n") && !seeOther.text.lowercased().contains("content-type"), "\(seeOther.text)")
        let temporary = try await follow(
            to(307, "/echo"), method: "POST", headers: [("Content-Type", "text/plain")], body: Array("data".utf8))
        #expect(temporary.text.hasPrefix("POST\n") && temporary.text.lowercased().contains("content-type: text/plain"), "\(temporary.text)")
        // the cookie goes along to the same origin only (localhost is another origin than 127.0.0.1)
        let same = try await follow(to(302, "/echo"), headers: [("Cookie", "a=1")])
        #expect(same.text.contains("Cookie: a=1"), "\(same.text)")
        let other = try await follow(to(302, "http://localhost:\(server.port)/echo"), headers: [("Cookie", "a=1")])
        #expect(other.status == 200 && !other.text.contains("a=1"), "\(other.text)")
        // another scheme is not followed: the 3xx is the answer
        let ftp = try await follow(to(302, "ftp://127.0.0.1/x"))
        #expect(ftp.status == 302)
    }

    /// A password in a URL is not repeated in errors (they reach logs and a flow's messages).
    @Test func passwordsInURLsAreMaskedInErrors() async throws {
        #expect(AsyncHTTPTransport.shown("http://u:p@127.0.0.1:1/x?y=1") == "http://u:***@127.0.0.1:1/x?y=1")
        #expect(AsyncHTTPTransport.shown("https://token@host/a@b") == "https://token@host/a@b")
        #expect(AsyncHTTPTransport.shown("http://host/path?mail=a@b") == "http://host/path?mail=a@b")
        #expect(AsyncHTTPTransport.shown("http://a:b:c@host") == "http://a:***@host")
        await #expect { try await transport.send(HTTPRequest(url: "http://u:secret@127.0.0.1:1/x", timeout: .seconds(2))) } throws: {
            "\($0)".contains("u:***@127.0.0.1:1") && !"\($0)".contains("secret")
        }
        await #expect { try await transport.send(HTTPRequest(method: "G T", url: "http://u:secret@127.0.0.1:1/x")) } throws: {
            !"\($0)".contains("secret")
        }
    }

    @Test func bodiesOverTheLimitAreRefused() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        await #expect { try await transport.send(HTTPRequest(url: server.base + "/big/200000", timeout: .seconds(20))) } throws: {
            ($0 as? WaitingRoomError)?.kind == .invalidResponse
        }
    }

    @Test func cancellationStopsTheRequest() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        let transport = self.transport
        let url = server.base + "/delay/5000"
        let started = ContinuousClock.now
        let task = Task { try await transport.send(HTTPRequest(url: url, timeout: .seconds(10))) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    /// A method or header field that would change the request's lines on the wire is the
    /// caller's error and nothing is sent. AsyncHTTPClient wrote the method `GET\r\nX: y` as
    /// given (the server read a second header line), and a value holding CR LF was refused as
    /// `networkOffline`.
    @Test func requestsThatWouldBreakTheirLinesAreRefusedBeforeSending() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        let cases: [(HTTPRequest, field: String)] = [
            (HTTPRequest(method: "GET\r\nX-Injected: 1", url: server.base + "/ok"), "method"),
            (HTTPRequest(method: "GET /other", url: server.base + "/ok"), "method"),
            (HTTPRequest(method: "", url: server.base + "/ok"), "method"),
            (HTTPRequest(url: server.base + "/ok", headers: [("X-A", "a\r\nX-Injected: 1")]), "headers"),
            (HTTPRequest(url: server.base + "/ok", headers: [("X-A", "a\u{0}b")]), "headers"),
            (HTTPRequest(url: server.base + "/ok", headers: [("X-A: b\r\nX-B", "c")]), "headers"),
            (HTTPRequest(url: server.base + "/ok", headers: [("", "c")]), "headers")
        ]
        for (request, field) in cases {
            do {
                _ = try await transport.send(request)
                Issue.record("sent \(request.method) \(request.headers.fields)")
            } catch let error as WaitingRoomError {
                #expect(error.kind == .invalidConfiguration && error.field == field, "\(error)")
            }
        }
        #expect(server.activity.paths.isEmpty, "\(server.activity.paths)")
        // methods and fields that are tokens still go as given
        let purge = try await transport.send(
            HTTPRequest(method: "PURGE", url: server.base + "/ok", headers: [("X-Trace_1", "a b; c=\"d\"")], timeout: .seconds(20)))
        #expect(purge.status == 200)
    }

    @Test func badURLsAreConfigurationErrors() async throws {
        await #expect { try await transport.send(HTTPRequest(url: "not a url", timeout: .seconds(1))) } throws: {
            let kind = ($0 as? WaitingRoomError)?.kind
            return kind == .invalidConfiguration || kind == .networkOffline
        }
    }
}
