import Foundation
import Testing
import WaitingRoom
import WaitingRoomEmulators

/// A request whose `Content-Length` is over a route's bound is answered at once, without waiting
/// for a body the client never sends (the emulator used to wait for the rest: an inline answer
/// collected it, and the routes read until their bound).
@Suite("Emulators: a declared body over the bound is refused at once", .timeLimit(.minutes(2)))
struct EmulatorBodyBoundTests {
    @Test func hugeDeclaredBodiesAreAnsweredWithoutWaiting() async throws {
        let suite = EmulatorSuite.demo()
        let server = try await suite.start()
        defer { Task { await server.stop() } }
        let port = server.port
        // (request line, what answers it): admin routes name the body (400), vendor routes 413
        let cases: [(line: String, status: Int)] = [
            ("POST /_emulator/queueit/faults", 400),
            ("POST /_emulator/netfunnel/faults", 400),
            ("POST /_emulator/crowdhandler/rooms/demo-queue", 400),
            ("POST /api/mobileapp/queue/demo/sale/enqueue", 413),
            ("POST /_emulator/queueit/tokens", 413)
        ]
        let replies = try await OffPool.run { () throws -> [(Int, Duration)] in
            var replies: [(Int, Duration)] = []
            for c in cases {
                let connection = try KeepAliveConnection(port: port)
                let started = ContinuousClock.now
                try connection.send(
                    Array(
                        "\(c.line) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n{\"a\":"
                            .utf8))
                let reply = try connection.readReply()
                replies.append((reply.status, ContinuousClock.now - started))
            }
            return replies
        }
        for (c, reply) in zip(cases, replies) {
            #expect(reply.0 == c.status, "\(c.line): \(reply.0)")
            // the socket's receive timeout is 20 s; an answer that waited for the body would not come
            #expect(reply.1 < .seconds(15), "\(c.line): \(reply.1)")
        }
        // the emulator goes on serving
        let connection = try KeepAliveConnection(port: port)
        let state = try connection.exchange("GET /_emulator/queueit/faults")
        #expect(state.status == 200)
    }
}
