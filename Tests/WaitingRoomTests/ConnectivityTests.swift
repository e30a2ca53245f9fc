import Foundation
import Testing
import WaitingRoomTesting

@testable import WaitingRoom

/// Issue 25 §3: the default connectivity monitor and the session's connection states.
@Suite("Connectivity")
struct ConnectivityTests {
    /// A fake `/proc/net` and `/sys/class/net` in a temporary folder.
    static func tables(route: String, ipv6: String = "", interfaces: [String: (operstate: String, flags: String)]) throws
        -> SystemConnectivityMonitor
    {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("conn-\(UUID().uuidString)")
        let proc = root.appendingPathComponent("proc")
        let sys = root.appendingPathComponent("sys")
        try FileManager.default.createDirectory(at: proc, withIntermediateDirectories: true)
        try route.write(to: proc.appendingPathComponent("route"), atomically: true, encoding: .utf8)
        try ipv6.write(to: proc.appendingPathComponent("ipv6_route"), atomically: true, encoding: .utf8)
        for (name, state) in interfaces {
            let dir = sys.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try (state.operstate + "\n").write(to: dir.appendingPathComponent("operstate"), atomically: true, encoding: .utf8)
            try (state.flags + "\n").write(to: dir.appendingPathComponent("flags"), atomically: true, encoding: .utf8)
        }
        return SystemConnectivityMonitor(procNet: proc.path, sysClassNet: sys.path)
    }

    static let header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"

    @Test func aDefaultRouteThroughAnInterfaceThatIsUpIsOnline() throws {
        let m = try Self.tables(
            route: Self.header + "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n",
            interfaces: ["eth0": ("up", "0x1003")])
        #expect(!m.isOffline(host: "queue.example.com"))
    }

    @Test func noRouteOrOnlyDownInterfacesIsOffline() throws {
        let none = try Self.tables(route: Self.header, interfaces: [:])
        #expect(none.isOffline(host: "queue.example.com"))
        #expect(none.isOffline(host: nil))
        let down = try Self.tables(
            route: Self.header + "wlan0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n",
            interfaces: ["wlan0": ("down", "0x1002")])
        #expect(down.isOffline(host: "queue.example.com"))
        let loOnly = try Self.tables(
            route: Self.header + "lo\t0000007F\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n",
            interfaces: ["lo": ("unknown", "0x9")])
        #expect(loOnly.isOffline(host: "queue.example.com"))
    }

    @Test func loopbackIsNeverOfflineAndUnreadableTablesMeanOnline() throws {
        let none = try Self.tables(route: Self.header, interfaces: [:])
        for host in ["127.0.0.1", "localhost", "[::1]", "::1", "app.localhost"] { #expect(!none.isOffline(host: host), "\(host)") }
        let missing = SystemConnectivityMonitor(procNet: "/nonexistent/proc", sysClassNet: "/nonexistent/sys")
        #expect(!missing.isOffline(host: "queue.example.com"))
    }

    @Test func anIPv6RouteCounts() throws {
        let ipv6 =
            "20010db8000000000000000000000000 20 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth1\n"
        let m = try Self.tables(route: Self.header, ipv6: ipv6, interfaces: ["eth1": ("up", "0x1003")])
        #expect(!m.isOffline(host: "queue.example.com"))
    }

    /// An engine that fails twice (reconnecting), then answers (connected), then passes.
    struct FlakyEngine: WaitingSessionEngine {
        var vendorID: String { "flaky" }
        func wait(for entry: Entry, context: SessionContext) async -> Outcome {
            let s = VendorStatus(vendor: "flaky", code: 1002, message: "timeout")
            context.emit(.connection(.reconnecting(attempt: 1, nextRetryIn: .seconds(1)), s))
            context.emit(.connection(.reconnecting(attempt: 2, nextRetryIn: .seconds(2)), s))
            context.emit(.connection(.offline, s))
            context.emit(.connection(.offline, s))  // no news: not emitted twice
            context.emit(.progress(QueueProgress(ahead: 3), VendorStatus(vendor: "flaky", code: 201, message: "wait")))
            return .passed(
                Pass(vendor: "flaky", room: entry.room, credential: "t", kind: .token, issuedAt: Date()),
                VendorStatus(vendor: "flaky", code: 200, message: "ok"))
        }
        func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus { VendorStatus(vendor: "flaky", code: 0, message: "") }
    }

    @Test func theSessionAnnouncesEachChangeAndConnectedWhenTheVendorAnswersAgain() async throws {
        let environment = ProviderEnvironment(transport: NoNetworkTransport(), clock: VirtualClock(autoAdvance: true))
        let session = WaitingSession(entry: Entry(room: RoomKey(scope: "s", room: "r")), engine: FlakyEngine(), environment: environment)
        var states: [ConnectionState] = []
        var names: [EventName] = []
        for await event in session.events {
            names.append(event.name)
            if case .connection(let state, _) = event { states.append(state) }
        }
        #expect(
            states == [
                .reconnecting(attempt: 1, nextRetryIn: .seconds(1)), .reconnecting(attempt: 2, nextRetryIn: .seconds(2)), .offline,
                .connected
            ])
        // connected comes right before the answer that shows it
        let connected = try #require(names.firstIndex(of: .connection).map { _ in names.lastIndex(of: .connection)! })
        #expect(names[connected + 1] == .stateChanged || names[connected + 1] == .progress, "\(names)")
        let fields = WaitingRoomEvent.connection(
            .reconnecting(attempt: 2, nextRetryIn: .milliseconds(1500)), VendorStatus(vendor: "v", code: 1, message: "m")
        ).fields()
        #expect(fields["connection"] == .string("reconnecting") && fields["attempt"] == .number(2) && fields["retry_in"] == .number(1.5))
    }
}
