import Foundation
import QueueIt
import WaitingRoom

/// A customer's integration configuration: the JSON KnownUser connectors download from
/// `https://{customerId}.queue-it.net/status/integrationconfig/secure/{customerId}` with the
/// customer's API key (`queueit/Documentation`, `serverside-connectors/integration-config/README.md`).
extension QueueItEmulatorConfiguration {
    /// The API key of a customer configured without one: `{customerId}-api-key` (`demo-api-key`).
    package static func defaultAPIKey(customer: String) -> String { "\(customer)-api-key" }

    /// The event the default integration configuration queues in (`waitingroom gate --emulator`'s).
    package static let defaultIntegrationEvent = "sale"

    /// The default integration configuration of `customer`, the one `waitingroom gate --emulator`
    /// uses: ignore paths containing `/static/`, queue everything else in event `sale`. Its
    /// `Queue` integration's `QueueDomain` is empty: the emulator serves its own base URL there.
    /// `Version` 1, `PublishDate` = `publishDate`.
    package static func defaultIntegrationConfig(customer: String, publishDate: Date) -> JSONValue {
        func trigger(_ value: String, ignoreCase: Bool) -> JSONValue {
            .array([
                .object([
                    "LogicalOperator": .string("And"),
                    "TriggerParts": .array([
                        .object([
                            "ValidatorType": .string("UrlValidator"), "UrlPart": .string("PagePath"), "Operator": .string("Contains"),
                            "ValueToCompare": .string(value), "IsNegative": .bool(false), "IsIgnoreCase": .bool(ignoreCase)
                        ])
                    ])
                ])
            ])
        }
        return .object([
            "Description": .string(
                "waitingroom emulator default (as waitingroom gate --emulator): ignore /static/, queue the rest in event sale"),
            "CustomerId": .string(customer), "AccountId": .string(customer), "Version": .number(1),
            "PublishDate": .string(publishDateText(publishDate)), "ConfigDataVersion": .string("1.0.0.1"),
            "Integrations": .array([
                .object([
                    "Name": .string("static"), "ActionType": .string("Ignore"), "EventId": .string(""), "QueueDomain": .string(""),
                    "Triggers": trigger("/static/", ignoreCase: true)
                ]),
                .object([
                    "Name": .string("everything"), "ActionType": .string("Queue"), "EventId": .string(defaultIntegrationEvent),
                    "QueueDomain": .string(""), "CookieDomain": .string(""), "ExtendCookieValidity": .bool(true),
                    "CookieValidityMinute": .number(20), "RedirectLogic": .string("AllowTParameter"), "ForcedTargetUrl": .string(""),
                    "Triggers": trigger("/", ignoreCase: false)
                ])
            ])
        ])
    }

    /// `PublishDate`'s form: ISO 8601 in UTC, whole seconds (`2026-11-25T10:00:00Z`).
    package static func publishDateText(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// Checks that `config` is an integration configuration the emulator can serve: a JSON object
    /// with an `Integrations` array of objects, and a whole-number `Version` when it has one.
    /// - Throws: the error naming the field under `path` (`""`: an admin request's body, whose
    ///   fields are named as they are, `Integrations`, and the body itself `body`).
    package static func checkIntegrationConfig(_ config: JSONValue, path: String) throws(QueueItEmulatorConfigurationError) {
        typealias E = QueueItEmulatorConfigurationError
        func field(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }
        guard let object = config.objectValue else {
            throw E(field: path.isEmpty ? "body" : path, message: "must be a JSON object (an integration configuration)")
        }
        guard let integrations = object["Integrations"] else {
            throw E(field: field("Integrations"), message: "is missing (an array of integrations)")
        }
        guard let list = integrations.arrayValue else { throw E(field: field("Integrations"), message: "must be an array") }
        if let bad = list.firstIndex(where: { $0.objectValue == nil }) {
            throw E(field: "\(field("Integrations"))[\(bad)]", message: "must be an object")
        }
        if let version = object["Version"] {
            guard let n = version.numberValue, n == n.rounded(), abs(n) < 1e15 else {
                throw E(field: field("Version"), message: "must be a whole number")
            }
        }
    }

    /// Reads a customer's `apiKey`, `integrationConfig` and `unsecuredIntegrationConfig`.
    static func readIntegrationSettings(_ c: [String: Any], into customer: inout Customer, path: String)
        throws(QueueItEmulatorConfigurationError)
    {
        typealias E = QueueItEmulatorConfigurationError
        if let key = c["apiKey"] {
            guard let s = key as? String, !s.isEmpty else { throw E(field: "\(path).apiKey", message: "must be a non-empty string") }
            customer.apiKey = s
        }
        if let flag = c["unsecuredIntegrationConfig"] {
            guard let b = QueueItJSON.bool(flag) else {
                throw E(field: "\(path).unsecuredIntegrationConfig", message: "must be true or false")
            }
            customer.unsecuredIntegrationConfig = b
        }
        if let any = c["integrationConfig"] {
            let cfgPath = "\(path).integrationConfig"
            guard JSONSerialization.isValidJSONObject(any),
                let data = try? JSONSerialization.data(withJSONObject: any, options: []),
                let value = try? JSONValue.parse(data)
            else {
                throw E(field: cfgPath, message: "must be a JSON object (an integration configuration)")
            }
            try checkIntegrationConfig(value, path: cfgPath)
            customer.integrationConfig = value
        }
    }
}
