import Foundation
import Testing
import WaitingRoom

@Suite("AsyncHTTPTransport over loopback")
struct HTTPTransportTests {
    let transport = AsyncHTTPTransport(maxBodyBytes: 64 * 1024)

    @Test func answersAreReturnedWithStatusHeadersAndBody() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        let response = try await transport.send(HTTPRequest(url: server.base + "/ok", timeout: .seconds(2)))
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
        #expect(overshoot < .milliseconds(50))
    }

    @Test func aResetConnectionIsNetworkOffline() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        await #expect { try await transport.send(HTTPRequest(url: server.base + "/reset", timeout: .seconds(2))) } throws: {
            ($0 as? WaitingRoomError)?.kind == .networkOffline
        }
    }

    @Test func garbageIsAnInvalidResponseOrOffline() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        await #expect { try await transport.send(HTTPRequest(url: server.base + "/garbage", timeout: .seconds(2))) } throws: {
            let kind = ($0 as? WaitingRoomError)?.kind
            return kind == .invalidResponse || kind == .networkOffline
        }
    }

    @Test func aRefusedConnectionIsNetworkOffline() async throws {
        let server = try await LoopbackHTTPServer.start()
        let url = server.base + "/ok"
        await server.stop()
        await #expect { try await transport.send(HTTPRequest(url: url, timeout: .seconds(2))) } throws: {
            ($0 as? WaitingRoomError)?.kind == .networkOffline
        }
    }

    @Test func redirectsAreNotFollowedUnlessAsked() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        let direct = try await transport.send(HTTPRequest(url: server.base + "/redirect", timeout: .seconds(2)))
        #expect(direct.status == 302)
        #expect(direct.headers.value(for: "location") == "/ok")
        let followed = try await transport.send(HTTPRequest(url: server.base + "/redirect", timeout: .seconds(2), followRedirects: true))
        #expect(followed.status == 200)
        #expect(followed.text == "hello")
    }

    @Test func bodiesOverTheLimitAreRefused() async throws {
        let server = try await LoopbackHTTPServer.start()
        defer { Task { await server.stop() } }
        await #expect { try await transport.send(HTTPRequest(url: server.base + "/big/200000", timeout: .seconds(2))) } throws: {
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

    @Test func badURLsAreConfigurationErrors() async throws {
        await #expect { try await transport.send(HTTPRequest(url: "not a url", timeout: .seconds(1))) } throws: {
            let kind = ($0 as? WaitingRoomError)?.kind
            return kind == .invalidConfiguration || kind == .networkOffline
        }
    }
}
