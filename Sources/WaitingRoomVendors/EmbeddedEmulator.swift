import Foundation
import Hummingbird
import Logging
import NetFUNNEL
import NetFUNNELEmulator
import QueueIt
import QueueItEmulator
import WaitingRoom

/// Every vendor's emulator in one process on one port, configured by one JSON document:
/// `{"netfunnel": {…}, "queueit": {…}}` (a missing member means that vendor's demo rooms).
public struct EmulatorSuite: Sendable {
    /// The NetFUNNEL emulator.
    public let netfunnel: NetFUNNELEmulator
    /// The Queue-it emulator.
    public let queueit: QueueItEmulator
    /// The configurations in use.
    public let netfunnelConfiguration: NetFUNNELEmulatorConfiguration
    public let queueitConfiguration: QueueItEmulatorConfiguration

    /// The demo rooms of every vendor.
    public static func demo(clock: any WaitingRoomClock = SystemClock()) -> EmulatorSuite {
        EmulatorSuite(netfunnel: .demo, queueit: .demo, clock: clock)
    }

    /// Reads a shared emulator document; errors name the field (`netfunnel.projects.x.limit`).
    public init(document: JSONValue, clock: any WaitingRoomClock = SystemClock()) throws {
        guard case .object(let members) = document else {
            throw WaitingRoomError.invalidConfiguration(field: "emulator", "expected a JSON object with \"netfunnel\" and/or \"queueit\" members")
        }
        for key in members.keys.sorted() where !["netfunnel", "queueit"].contains(key) {
            throw WaitingRoomError.invalidConfiguration(field: key, "unknown emulator section; expected netfunnel or queueit")
        }
        let queueit: QueueItEmulatorConfiguration
        if members["queueit"] == nil || members["queueit"] == .null {
            queueit = .demo
        } else {
            do {
                queueit = try QueueItEmulatorConfiguration(document: Array(document.jsonText.utf8))
            } catch {
                let field = error.field.hasPrefix("queueit") ? error.field : "queueit.\(error.field)"
                throw WaitingRoomError.invalidConfiguration(field: field, error.message, vendor: "queueit")
            }
        }
        self.init(netfunnel: try NetFUNNELEmulatorConfiguration(document: document), queueit: queueit, clock: clock)
    }

    /// Builds the suite from typed configurations.
    public init(netfunnel: NetFUNNELEmulatorConfiguration, queueit: QueueItEmulatorConfiguration, clock: any WaitingRoomClock = SystemClock()) {
        netfunnelConfiguration = netfunnel
        queueitConfiguration = queueit
        self.netfunnel = NetFUNNELEmulator(configuration: netfunnel, clock: clock)
        self.queueit = QueueItEmulator(configuration: queueit, now: { clock.now() })
    }

    /// Serves every emulator on `host:port` (port 0 picks a free one).
    public func start(host: String = "127.0.0.1", port: Int = 0, logger: Logger = EmulatorServer.quietLogger) async throws -> EmulatorServer {
        try await EmulatorServer.start(host: host, port: port, logger: logger) { router in
            netfunnel.addRoutes(to: router)
            queueit.addRoutes(to: router)
            dashboard.addRoutes(to: router)
        }
    }

    /// Every emulator the `/_emulator/` dashboard shows. A new vendor's emulator conforms to
    /// `EmulatorStatusSource` and is added here; the dashboard itself does not change.
    public var statusSources: [any EmulatorStatusSource] { [netfunnel, queueit] }

    /// The `/_emulator/` dashboard over ``statusSources``.
    public var dashboard: EmulatorDashboard { EmulatorDashboard(sources: statusSources) }

    /// The Queue-it customer of the demo rooms.
    public static let queueItCustomer = "demo"

    /// Client configurations pointing at a running suite, per vendor id.
    public static func clientDefaults(for server: EmulatorServer) -> [String: JSONValue] {
        [
            "netfunnel": .object([
                "clientId": .string("emulator"),
                "serverUrl": .string(server.baseURL),
                "networkTimeout": .number(3000),
            ]),
            "queueit": .object([
                "customerId": .string(Self.queueItCustomer),
                "waitingRoomDomain": .string("\(server.host):\(server.port)"),
                // The emulator's queue page is followed over HTTP; the Queue-it default is "host".
                "queuePage": .string("follow"),
            ]),
        ]
    }
}
