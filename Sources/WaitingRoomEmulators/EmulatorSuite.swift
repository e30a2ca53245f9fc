import CloudflareEmulator
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
/// `{"netfunnel": {…}, "queueit": {…}, "crowdhandler": {…}, "cloudflare": {…}}` (a missing member means that vendor's
/// demo rooms). A vendor's emulator joins by one line in ``vendorTypes``: the document's sections,
/// routes, inline answers, faults, chaos, the dashboard, `describe` and client defaults follow.
public struct EmulatorSuite: Sendable {
    /// Every vendor's emulator type: the one list a new vendor is added to.
    package static let vendorTypes: [any EmulatedVendor.Type] = [
        NetFUNNELEmulator.self, QueueItEmulator.self, CrowdHandlerEmulator.self, CloudflareEmulator.self
    ]

    /// Every vendor's emulator, in ``vendorTypes`` order.
    package let vendors: [any EmulatedVendor]

    /// The NetFUNNEL emulator.
    package let netfunnel: NetFUNNELEmulator
    /// The Queue-it emulator.
    package let queueit: QueueItEmulator
    /// The CrowdHandler emulator.
    package let crowdhandler: CrowdHandlerEmulator
    /// The configurations in use.
    package var netfunnelConfiguration: NetFUNNELEmulatorConfiguration { netfunnel.configuration }
    package var queueitConfiguration: QueueItEmulatorConfiguration { queueit.configuration }
    package var crowdhandlerConfiguration: CrowdHandlerEmulatorConfiguration { crowdhandler.configuration }

    /// The demo rooms of every vendor.
    public static func demo(clock: any WaitingRoomClock = SystemClock()) -> EmulatorSuite {
        EmulatorSuite(netfunnel: .demo, queueit: .demo, clock: clock)
    }

    /// Reads a shared emulator document: one section per vendor id (``EmulatedVendor/make(section:clock:)``);
    /// errors name the field (`netfunnel.projects.x.limit`).
    public init(document: JSONValue, clock: any WaitingRoomClock = SystemClock()) throws {
        let ids = Self.vendorTypes.map { $0.emulatedVendorID }
        guard case .object(let members) = document else {
            throw WaitingRoomError.invalidConfiguration(
                field: "emulator", "expected a JSON object with members named after the vendors (\(ids.joined(separator: ", ")))")
        }
        for key in members.keys.sorted() where !ids.contains(key) {
            throw WaitingRoomError.invalidConfiguration(
                field: key, "unknown emulator section; expected one of \(ids.joined(separator: ", "))")
        }
        var vendors: [any EmulatedVendor] = []
        for type in Self.vendorTypes {
            vendors.append(try type.makeEmulator(section: members[type.emulatedVendorID], clock: clock))
        }
        self.init(vendors: vendors, clock: clock)
    }

    /// Builds the suite from typed configurations.
    package init(
        netfunnel: NetFUNNELEmulatorConfiguration, queueit: QueueItEmulatorConfiguration,
        crowdhandler: CrowdHandlerEmulatorConfiguration = .demo, clock: any WaitingRoomClock = SystemClock()
    ) {
        self.init(
            vendors: [
                NetFUNNELEmulator(configuration: netfunnel, clock: clock),
                QueueItEmulator(configuration: queueit, now: { clock.now() }),
                CrowdHandlerEmulator(configuration: crowdhandler, now: { clock.now() })
            ], clock: clock)
    }

    /// The suite of `vendors`; a vendor of ``vendorTypes`` the list lacks is served with its demo
    /// rooms (on `clock`), after the ones given.
    package init(vendors: [any EmulatedVendor], clock: any WaitingRoomClock = SystemClock()) {
        let netfunnel = vendors.lazy.compactMap { $0 as? NetFUNNELEmulator }.first ?? NetFUNNELEmulator(configuration: .demo, clock: clock)
        let queueit =
            vendors.lazy.compactMap { $0 as? QueueItEmulator }.first ?? QueueItEmulator(configuration: .demo, now: { clock.now() })
        let crowdhandler =
            vendors.lazy.compactMap { $0 as? CrowdHandlerEmulator }.first
            ?? CrowdHandlerEmulator(configuration: .demo, now: { clock.now() })
        self.netfunnel = netfunnel
        self.queueit = queueit
        self.crowdhandler = crowdhandler
        var all = vendors
        for typed in [netfunnel, queueit, crowdhandler] as [any EmulatedVendor]
        where !all.contains(where: { $0.vendorID == typed.vendorID }) {
            all.append(typed)
        }
        for type in Self.vendorTypes where !all.contains(where: { $0.vendorID == type.emulatedVendorID }) {
            if let demo = try? type.makeEmulator(section: nil, clock: clock) { all.append(demo) }
        }
        self.vendors = all
    }

    /// Serves every emulator on `host:port` (port 0 picks a free one), with the dashboard
    /// (`/_emulator/`) and `GET /metrics`.
    public func start(host: String = "127.0.0.1", port: Int = 0, logger: Logger = EmulatorServer.quietLogger) async throws -> EmulatorServer
    {
        try await EmulatorServer.start(host: host, port: port, logger: logger, inline: inlineAnswers) { router in
            for vendor in vendors { vendor.addRoutes(to: router) }
            dashboard.addRoutes(to: router)
            metrics.addRoutes(to: router)
        }
    }

    /// `GET /metrics` over ``vendors``: every room of every vendor in the Prometheus text format
    /// (``EmulatorMetricsEndpoint``). Each ``start(host:port:logger:)`` serves a new one.
    package var metrics: EmulatorMetricsEndpoint { EmulatorMetricsEndpoint(vendors: vendors) }

    /// The hot requests the server answers on its event loop, without a task (``InlineAnswerHandler``):
    /// NetFUNNEL's `/ts.wseq` and Queue-it's enqueue, each exactly as its route would answer, and
    /// only while no fault is pending for it. Everything else goes to the routes.
    package var inlineAnswers: InlineAnswerer {
        { [vendors] head, body in
            for vendor in vendors {
                if let reply = vendor.inlineAnswer(head, body: body) { return reply }
            }
            return nil
        }
    }

    /// The emulator of `id`, if the suite has one.
    package func vendor(_ id: String) -> (any EmulatedVendor)? { vendors.first { $0.vendorID == id } }

    /// Every emulator the `/_emulator/` dashboard shows (``vendors``); the dashboard itself
    /// names no vendor.
    package var statusSources: [any EmulatorStatusSource] { vendors }

    /// The `/_emulator/` dashboard over ``statusSources``.
    public var dashboard: EmulatorDashboard { EmulatorDashboard(sources: statusSources) }

    /// The Queue-it customer of the demo rooms.
    package static let queueItCustomer = QueueItEmulator.demoCustomer

    /// Client configurations pointing at a running suite, per vendor id
    /// (``EmulatedVendor/clientDefaults(server:)``).
    /// Per vendor id, the client options that say where its servers are
    /// (``EmulatedVendor/clientAddressKeys``).
    package static var clientAddressKeys: [String: Set<String>] {
        var keys: [String: Set<String>] = [:]
        for type in vendorTypes { keys[type.vendorID] = type.clientAddressKeys }
        return keys
    }

    public static func clientDefaults(for server: EmulatorServer) -> [String: JSONValue] {
        let address = EmulatorAddress(host: server.host, port: server.port)
        var defaults: [String: JSONValue] = [:]
        for type in vendorTypes { defaults[type.vendorID] = type.clientDefaults(server: address) }
        return defaults
    }
}
