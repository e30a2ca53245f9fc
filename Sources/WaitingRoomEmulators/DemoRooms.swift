import CloudflareEmulator
import CrowdHandlerEmulator
import NetFUNNELEmulator
import QueueItEmulator
import WaitingRoom

/// The rooms `waitingroom demo` uses: small enough that a crowd of 20 forms a line, fast enough
/// that the demo ends within 30 s.
package enum DemoRooms {
    /// One room of the demo: its title, vendor, room and how long a user holds its pass.
    package struct Leg: Sendable {
        package var title: String
        package var vendor: String
        package var room: RoomKey
        package var hold: ClosedRange<Double>
    }

    /// The four rooms, one per vendor, in the order the demo runs them.
    package static let legs = [
        Leg(
            title: "NetFUNNEL basic control (service_1/segKey_demo, 4 at a time)", vendor: "netfunnel",
            room: RoomKey(scope: "service_1", room: "segKey_demo"), hold: 0.3...1.2),
        Leg(
            title: "Queue-it queue (demo/demo-sale, 6 admitted per second)", vendor: "queueit",
            room: RoomKey(scope: EmulatorSuite.queueItCustomer, room: "demo-sale"), hold: 0...0),
        Leg(
            title: "CrowdHandler room (demo-queue, 360 promoted per minute)", vendor: "crowdhandler",
            room: RoomKey(scope: "site", room: "demo-queue"), hold: 0...0),
        Leg(
            title: "Cloudflare Waiting Room, JSON mode (demo-queue, 360 new users per minute)", vendor: "cloudflare",
            room: RoomKey(scope: "site", room: "demo-queue"), hold: 0...0)
    ]

    /// The default rooms plus the four demo rooms.
    package static func suite() -> EmulatorSuite {
        var netfunnel = NetFUNNELEmulatorConfiguration.demo
        var segment = NetFUNNELEmulatorConfiguration.Segment(control: .basic, limit: 4)
        segment.ttlMin = 1
        segment.ttlMax = 1
        netfunnel.projects["service_1", default: .init(segments: [:])].segments["segKey_demo"] = segment
        var queueit = QueueItEmulatorConfiguration.demo
        queueit.customers[EmulatorSuite.queueItCustomer]?.rooms["demo-sale"] = .init(state: .queue, admitPerSecond: 6)
        var crowdhandler = CrowdHandlerEmulatorConfiguration.demo
        crowdhandler.rooms["demo-queue"] = .init(capacity: 0, rate: 360)
        var cloudflare = CloudflareEmulatorConfiguration.demo
        cloudflare.rooms["demo-queue"] = .init(
            newUsersPerMinute: 360, totalActiveUsers: 1_000_000, queueingStatusCode: 202,
            refreshIntervalSeconds: 1)
        let clock = SystemClock()
        return EmulatorSuite(
            vendors: [
                NetFUNNELEmulator(configuration: netfunnel, clock: clock),
                QueueItEmulator(configuration: queueit, now: { clock.now() }),
                CrowdHandlerEmulator(configuration: crowdhandler, now: { clock.now() }),
                CloudflareEmulator(configuration: cloudflare, now: { clock.now() })
            ], clock: clock)
    }
}
