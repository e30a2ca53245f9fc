import CrowdHandler
import Foundation
import QueueIt
import WaitingRoom
import WaitingRoomEmulators
import CrowdHandlerGateEngine
import QueueItGateEngine
import WaitingRoomGate
import WaitingRoomGateProxy
import WaitingRoomHTTP

/// Builds `waitingroom gate`'s engine from its options: from `--config` (Queue-it's integration
/// configuration as its platform publishes it; CrowdHandler's client settings), or with
/// `--emulator` pointed at the embedded emulator.
enum GateEngineFactory {
    /// The Queue-it event the emulator's default integration queues (the demo room `sale`, 1 visitor/s).
    static let emulatorEvent = "sale"

    /// Queue-it's KnownUser gate. With `emulator`: customer `demo`, its secret key, and the
    /// integrations of `configFile` (or the default: ignore `/static/`, queue every other page in
    /// `sale`) with their queue domain set to the emulator. Without: `configFile` is required,
    /// and the customer and the secret key (`QUEUEIT_SECRET_KEY`) must be given.
    static func queueIt(configFile: String?, customer: String?, secretKey: String?, sessionMemo: Int = 10_000, checksOptions: Bool = false,
                        cookieSameSite: String? = nil, ledger: GateCredentialLedger? = nil,
                        emulator: (suite: EmulatorSuite, server: EmulatorServer)?) throws -> QueueItGate {
        let builder = try queueItBuilder(customer: customer, secretKey: secretKey, sessionMemo: sessionMemo, checksOptions: checksOptions,
                                         cookieSameSite: cookieSameSite, ledger: ledger, emulator: emulator)
        if let emulator {
            return try builder.build(configFile.map(readIntegrationConfig)
                ?? QueueItIntegrationConfig(json: defaultIntegrationJSON(queueDomain: emulator.server.baseURL)))
        }
        guard let configFile else {
            throw WaitingRoomError.invalidConfiguration(field: "--config", "give --config FILE (Queue-it's integration configuration), --config-url or --emulator")
        }
        return try builder.build(readIntegrationConfig(configFile))
    }

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
    static func queueItBuilder(customer: String?, secretKey: String?, sessionMemo: Int = 10_000, checksOptions: Bool = false,
                               cookieSameSite: String? = nil, ledger: GateCredentialLedger? = nil,
                               emulator: (suite: EmulatorSuite, server: EmulatorServer)?) throws -> QueueItBuilder {
        let options = QueueItGate.Options(ledger: ledger ?? GateCredentialLedger(GateReplayLedger()), sessionMemoCapacity: sessionMemo,
                                          ignoresOptionsRequests: !checksOptions, cookieSameSite: cookieSameSite,
                                          logger: CLILogging.logger(label: "waitingroom.gate.queueit"))
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
    static func crowdHandler(configFile: String?, mode: CrowdHandlerGate.Mode,
                             emulator: (suite: EmulatorSuite, server: EmulatorServer)?) async throws -> CrowdHandlerGate {
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

    /// The emulator's default integration configuration, in Queue-it's published form.
    static func defaultIntegrationJSON(queueDomain: String) -> String {
        """
        {"Description": "waitingroom gate --emulator", "CustomerId": "demo", "AccountId": "demo", "Version": 1,
         "Integrations": [
          {"Name": "static", "ActionType": "Ignore", "EventId": "", "QueueDomain": "",
           "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
             {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/static/",
              "IsNegative": false, "IsIgnoreCase": true}]}]},
          {"Name": "everything", "ActionType": "Queue", "EventId": "\(emulatorEvent)", "QueueDomain": "\(queueDomain)", "CookieDomain": "",
           "ExtendCookieValidity": true, "CookieValidityMinute": 20, "RedirectLogic": "AllowTParameter", "ForcedTargetUrl": "",
           "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
             {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/",
              "IsNegative": false, "IsIgnoreCase": false}]}]}
         ]}
        """
    }
}
