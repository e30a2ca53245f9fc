import Foundation
import QueueIt
import QueueItGateEngine
import Testing
import WaitingRoom
import WaitingRoomGate
import WaitingRoomGateTestSupport
import WaitingRoomHTTP

/// The whole AJAX form against real servers: `QueueItHybridClient` calls an API behind the gate,
/// gets `x-queueit-redirect`, waits in the emulator's `sale` room (a line), comes back with the
/// `queueittoken` the emulator's queue handed out, and reaches the API; the cookie carries later calls.
@Suite struct QueueItEndToEndTests {
    @Test func hybridClientWaitsInTheRoomAndReachesTheProtectedAPI() async throws {
        try await GateTestApp.run(makeEngine: { try QueueItGateFixture.gate($0) }) { server, app, upstream in
            let template = try QueueItConfiguration(
                customerId: "demo", waitingRoomId: "sale", waitingRoomDomain: "\(server.host):\(server.port)",
                userId: "gate-e2e", pollInterval: .seconds(1), queuePage: .follow)
            let client = QueueItHybridClient(environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared), template: template)
            let url = "http://localhost:\(app.port)/api/data"
            let first = try await client.send(WaitingRoom.HTTPRequest(url: url, timeout: .seconds(30)))
            #expect(first.status == 200 && String(decoding: first.body, as: UTF8.self) == "upstream /api/data")
            #expect(client.queueItToken != nil)
            #expect(client.cookieHeader?.contains(QueueItGateFixture.cookieName + "=EventId=sale&QueueId=") == true)
            #expect(upstream.count == 1)
            let second = try await client.send(WaitingRoom.HTTPRequest(url: url))
            #expect(second.status == 200 && second.headers.value(for: "x-queueit-redirect") == nil)
            #expect(upstream.count == 2)
        }
    }
}
