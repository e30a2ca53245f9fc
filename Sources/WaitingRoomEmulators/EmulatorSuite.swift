import CrowdHandler
import CrowdHandlerEmulator
import Foundation
import Hummingbird
import Logging
import NetFUNNEL
import NetFUNNELEmulator
import QueueIt
import QueueItEmulator
import WaitingRoom
import WaitingRoomEmulatorKit

/// Every vendor's emulator in one process on one port, configured by one JSON document:
/// `{"netfunnel": {…}, "queueit": {…}, "crowdhandler": {…}}` (a missing member means that vendor's demo rooms).
public struct EmulatorSuite: Sendable {
    /// The NetFUNNEL emulator.
    public let netfunnel: NetFUNNELEmulator
    /// The Queue-it emulator.
    public let queueit: QueueItEmulator
    /// The CrowdHandler emulator.
    public let crowdhandler: CrowdHandlerEmulator
    /// The configurations in use.
    public let netfunnelConfiguration: NetFUNNELEmulatorConfiguration
    public let queueitConfiguration: QueueItEmulatorConfiguration
    public let crowdhandlerConfiguration: CrowdHandlerEmulatorConfiguration

    /// The demo rooms of every vendor.
    public static func demo(clock: any WaitingRoomClock = SystemClock()) -> EmulatorSuite {
        EmulatorSuite(netfunnel: .demo, queueit: .demo, clock: clock)
    }

    /// Reads a shared emulator document; errors name the field (`netfunnel.projects.x.limit`).
    public init(document: JSONValue, clock: any WaitingRoomClock = SystemClock()) throws {
        guard case .object(let members) = document else {
            throw WaitingRoomError.invalidConfiguration(field: "emulator", "expected a JSON object with \"netfunnel\", \"queueit\" and/or \"crowdhandler\" members")
        }
        for key in members.keys.sorted() where !["netfunnel", "queueit", "crowdhandler"].contains(key) {
            throw WaitingRoomError.invalidConfiguration(field: key, "unknown emulator section; expected netfunnel, queueit or crowdhandler")
        }
        var crowdhandler = CrowdHandlerEmulatorConfiguration.demo
        if let section = members["crowdhandler"], section != .null {
            crowdhandler = try CrowdHandlerEmulatorConfiguration(json: section)
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
        var netfunnelDocument = members
        netfunnelDocument["crowdhandler"] = nil
        self.init(netfunnel: try NetFUNNELEmulatorConfiguration(document: .object(netfunnelDocument)), queueit: queueit,
                  crowdhandler: crowdhandler, clock: clock)
    }

    /// Builds the suite from typed configurations.
    public init(netfunnel: NetFUNNELEmulatorConfiguration, queueit: QueueItEmulatorConfiguration,
                crowdhandler: CrowdHandlerEmulatorConfiguration = .demo, clock: any WaitingRoomClock = SystemClock()) {
        netfunnelConfiguration = netfunnel
        queueitConfiguration = queueit
        crowdhandlerConfiguration = crowdhandler
        self.crowdhandler = CrowdHandlerEmulator(configuration: crowdhandler, now: { clock.now() })
        self.netfunnel = NetFUNNELEmulator(configuration: netfunnel, clock: clock)
        self.queueit = QueueItEmulator(configuration: queueit, now: { clock.now() })
    }

    /// Serves every emulator on `host:port` (port 0 picks a free one).
    public func start(host: String = "127.0.0.1", port: Int = 0, logger: Logger = EmulatorServer.quietLogger) async throws -> EmulatorServer {
        try await EmulatorServer.start(host: host, port: port, logger: logger, inline: inlineAnswers) { router in
            for vendor in vendors { vendor.addRoutes(to: router) }
            dashboard.addRoutes(to: router)
        }
    }

    /// The hot requests the server answers on its event loop, without a task (``InlineAnswerHandler``):
    /// NetFUNNEL's `/ts.wseq` and Queue-it's enqueue, each exactly as its route would answer, and
    /// only while no fault is pending for it. Everything else goes to the routes.
    public var inlineAnswers: InlineAnswerer {
        { [vendors] head, body in
            for vendor in vendors {
                if let reply = vendor.inlineAnswer(head, body: body) { return reply }
            }
            return nil
        }
    }

    /// Every vendor's emulator, in the order their routes are added. A new vendor's emulator
    /// conforms to ``EmulatedVendor`` (the kit) and is added here: routes, admin, faults, chaos
    /// and the dashboard follow.
    public var vendors: [any EmulatedVendor] { [netfunnel, queueit, crowdhandler] }

    /// The emulator of `id`, if the suite has one.
    public func vendor(_ id: String) -> (any EmulatedVendor)? { vendors.first { $0.vendorID == id } }

    /// Every emulator the `/_emulator/` dashboard shows (``vendors``); the dashboard itself
    /// names no vendor.
    public var statusSources: [any EmulatorStatusSource] { vendors }

    /// The `/_emulator/` dashboard over ``statusSources``.
    public var dashboard: EmulatorDashboard { EmulatorDashboard(sources: statusSources) }

    /// Every vendor's emulator type: the one list a new vendor is added to (with ``vendors``).
    public static let vendorTypes: [any EmulatedVendor.Type] = [NetFUNNELEmulator.self, QueueItEmulator.self, CrowdHandlerEmulator.self]

    /// The Queue-it customer of the demo rooms.
    public static let queueItCustomer = QueueItEmulator.demoCustomer

    /// Client configurations pointing at a running suite, per vendor id
    /// (``EmulatedVendor/clientDefaults(server:)``).
    public static func clientDefaults(for server: EmulatorServer) -> [String: JSONValue] {
        let address = EmulatorAddress(host: server.host, port: server.port)
        var defaults: [String: JSONValue] = [:]
        for type in vendorTypes { defaults[type.vendorID] = type.clientDefaults(server: address) }
        return defaults
    }
}
