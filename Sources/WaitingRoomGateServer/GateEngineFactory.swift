import CrowdHandler
import CrowdHandlerGateEngine
import Foundation
import Logging
import QueueIt
import QueueItGateEngine
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateProxy
import WaitingRoomHTTP
import WaitingRoomVendors

/// Builds `waitingroom gate`'s engine from its options: from `--config` (Queue-it's integration
/// configuration as its platform publishes it; CrowdHandler's client settings), or with
/// `--emulator` pointed at the embedded emulator.
enum GateEngineFactory {
    /// What builds a Queue-it gate from one integration configuration, the same way each time (the
    /// first one, and each one a reload puts in force): the customer, the secret key, the options
    /// and the ledger, which every configuration's gate shares.
    struct QueueItBuilder: Sendable {
        let customer: String
        let secretKey: String
        let options: QueueItGate.Options
        /// With the embedded emulator: the queue domain every Queue or Cancel integration is sent to.
        let emulatorQueueDomain: String?

        func build(_ configuration: QueueItIntegrationConfig) throws -> QueueItGate {
            var configuration = configuration
            if let emulatorQueueDomain {
                for index in configuration.integrations.indices where !configuration.integrations[index].queueDomain.isEmpty {
                    configuration.integrations[index].queueDomain = emulatorQueueDomain
                }
            }
            return try QueueItGate(customerId: customer, secretKey: secretKey, configuration: configuration, options: options)
        }
    }

    /// The builder for the options given. With `emulator`: customer `demo` and its secret key.
    /// Without: the customer and the secret key (`QUEUEIT_SECRET_KEY`) must be given.
    static func queueItBuilder(
        customer: String?, secretKey: String?, sessionMemo: Int = 10_000, checksOptions: Bool = false,
        cookieSameSite: String? = nil, ledger: GateCredentialLedger? = nil,
        emulator: (suite: EmulatorSuite, server: EmulatorServer)?, logger: Logger
    ) throws -> QueueItBuilder {
        let options = QueueItGate.Options(
            ledger: ledger ?? GateCredentialLedger(GateReplayLedger()), sessionMemoCapacity: sessionMemo,
            ignoresOptionsRequests: !checksOptions, cookieSameSite: cookieSameSite,
            logger: logger)
        if let emulator {
            let customer = EmulatorSuite.queueItCustomer
            guard let secret = emulator.suite.queueitConfiguration.customers[customer]?.secretKey else {
                throw WaitingRoomError.invalidConfiguration(field: "--emulator", "the emulator has no Queue-it customer \(customer)")
            }
            return QueueItBuilder(customer: customer, secretKey: secret, options: options, emulatorQueueDomain: emulator.server.baseURL)
        }
        guard let customer, !customer.isEmpty else {
            throw WaitingRoomError.invalidConfiguration(field: "--customer", "give --customer (the Queue-it customer id)")
        }
        guard let secretKey, !secretKey.isEmpty else {
            throw WaitingRoomError.invalidConfiguration(field: "QUEUEIT_SECRET_KEY", "set QUEUEIT_SECRET_KEY to the customer's secret key")
        }
        return QueueItBuilder(customer: customer, secretKey: secretKey, options: options, emulatorQueueDomain: nil)
    }

    /// CrowdHandler's gate: the settings of `configFile` (the same JSON `check --vendor
    /// crowdhandler --config` reads), with `emulator`'s API, waiting rooms, demo public key and
    /// private key filled in where the file says nothing.
    static func crowdHandler(
        configFile: String?, mode: CrowdHandlerGate.Mode,
        emulator: (suite: EmulatorSuite, server: EmulatorServer)?
    ) async throws -> CrowdHandlerGate {
        var json = try VendorConfigurationLoader.load(vendor: CrowdHandlerConfiguration.vendorID, file: configFile, settings: [])
        if let emulator {
            var defaults = EmulatorSuite.clientDefaults(for: emulator.server)[CrowdHandlerConfiguration.vendorID] ?? .object([:])
            if case .object(var fields) = defaults {
                fields["privateKey"] = .string(emulator.suite.crowdhandlerConfiguration.privateKey)
                fields["timeout"] = .number(2000)
                defaults = .object(fields)
            }
            json = VendorDefaults.merge(defaults, under: json)
        } else if configFile == nil {
            throw WaitingRoomError.invalidConfiguration(field: "--config", "give --config FILE (CrowdHandler's settings) or --emulator")
        }
        let configuration = try CrowdHandlerConfiguration(json: json)
        let transport = AsyncHTTPTransport.shared
        switch mode {
        case .hybrid: return try await CrowdHandlerGate.withRoomFeed(configuration: configuration, transport: transport, mode: .hybrid)
        case .full: return try CrowdHandlerGate(configuration: configuration, transport: transport, mode: .full)
        }
    }

    /// Reads a Queue-it integration configuration file; errors name the file.
    static func readIntegrationConfig(_ path: String) throws -> QueueItIntegrationConfig {
        let data = try VendorConfigurationLoader.contents(path, limit: QueueItIntegrationConfig.maxBytes)
        do {
            return try QueueItIntegrationConfig(json: [UInt8](data))
        } catch {
            throw WaitingRoomError.invalidConfiguration(field: path, "not a Queue-it integration configuration: \(error)")
        }
    }
}
