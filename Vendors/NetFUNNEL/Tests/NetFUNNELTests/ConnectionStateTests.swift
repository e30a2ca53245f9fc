import Foundation
import Testing
import WaitingRoom
import WaitingRoomTesting

@testable import NetFUNNEL

/// Issue 25 §3: NetFUNNEL's 1001 comes from the connectivity monitor.
struct ConnectionStateTests {
    struct Offline: ConnectivityMonitor { func isOffline(host: String?) -> Bool { true } }

    /// Every request times out (what a device with no network sees for a DNS name).
    static func timingOut() -> StubTransport {
        StubTransport { _ in throw WaitingRoomError(.networkTimeout, message: "no answer within the deadline") }
    }

    func outcome(_ monitor: any ConnectivityMonitor) async throws -> WaitingRoomError? {
        let c = NetFUNNELConfiguration(clientId: "emulator-0000", serverUrl: "https://nf.example", networkTimeout: 500)
        let provider = try NetFUNNELProvider(
            configuration: c, environment: ProviderEnvironment(transport: Self.timingOut(), connectivity: monitor))
        guard case .failed(let error) = await (try provider.enqueue(Entry(room: RoomKey(scope: "service_1", room: "act_10")))).outcome()
        else {
            return nil
        }
        return error
    }

    @Test func aFailureWithNoRouteToTheServerIs1001NetworkNotConnected() async throws {
        let error = try #require(try await outcome(Offline()))
        #expect(error.vendorCode == 1001 && error.kind == .networkOffline, "\(error)")
        #expect(error.message.hasPrefix("Network Not Connected"))
    }

    @Test func withARouteATimeoutStays1002() async throws {
        let error = try #require(try await outcome(AssumeOnline()))
        #expect(error.vendorCode == 1002, "\(error)")
    }
}
