import Foundation
import WaitingRoom

/// How an integration-configuration download ended (the `result` label of the download counter).
enum IntegrationConfigResult: String, Sendable, Hashable, CaseIterable {
    /// 200 with the configuration.
    case ok
    /// 401: a missing or wrong `api-key`, or the keyless route of a customer that does not allow it.
    case unauthorized
    /// A fault was injected into the download (whatever it then answered).
    case fault
}

/// The customers' integration configurations: downloads, admin changes, counters.
extension QueueItEmulatorModel {
    func hasCustomer(_ customer: String) -> Bool {
        state.withLockedValue { $0.configuration.customers[customer] != nil }
    }

    /// Counts one download of `customer`'s configuration.
    func recordIntegrationConfigDownload(customer: String, result: IntegrationConfigResult) {
        state.withLockedValue { s in s.integrationConfigDownloads[customer, default: [:]][result, default: 0] += 1 }
    }

    /// The download (`GET /status/integrationconfig/secure/{c}` with `apiKey` the request's `api-key`
    /// header, or the keyless `GET /status/integrationconfig/{c}` when `secure` is false), as served
    /// from `base`: 200 with the configuration (empty `QueueDomain`s of `Queue` integrations filled
    /// with `base`), 401 for a missing or wrong key or a keyless download the customer does not
    /// allow, 404 for an unknown customer. Counted as `ok` / `unauthorized` when `count` (a
    /// download a fault was injected into was counted as `fault` already).
    func integrationConfigDownload(customer: String, secure: Bool, apiKey: String?, base: String, count: Bool) -> Answer {
        let outcome = state.withLockedValue { s -> (IntegrationConfigResult, JSONValue)? in
            guard let c = s.configuration.customers[customer] else { return nil }
            let expected = c.apiKey ?? QueueItEmulatorConfiguration.defaultAPIKey(customer: customer)
            let allowed = secure ? apiKey == expected : c.unsecuredIntegrationConfig
            let result: IntegrationConfigResult = allowed ? .ok : .unauthorized
            if count { s.integrationConfigDownloads[customer, default: [:]][result, default: 0] += 1 }
            return (result, c.integrationConfig ?? .null)
        }
        guard let (result, config) = outcome else { return Self.error(404, "unknown customer '\(customer)'") }
        switch result {
        case .ok:
            return Answer(status: 200, body: Array(Self.served(config, base: base).jsonText.utf8))
        case .unauthorized, .fault:
            if !secure {
                return Self.error(
                    401,
                    "customer '\(customer)' requires the secure download: GET /status/integrationconfig/secure/\(customer) with its api-key header"
                )
            }
            return Self.error(401, apiKey == nil ? "missing api-key header" : "wrong api-key for customer '\(customer)'")
        }
    }

    /// `config` as served from `base`: each `Queue` integration whose `QueueDomain` is missing or
    /// empty gets `base` (the emulator is the customer's queue domain).
    static func served(_ config: JSONValue, base: String) -> JSONValue {
        guard var object = config.objectValue, let integrations = object["Integrations"]?.arrayValue else { return config }
        object["Integrations"] = .array(
            integrations.map { integration in
                guard var i = integration.objectValue, i["ActionType"]?.stringValue == "Queue" else { return integration }
                let domain = i["QueueDomain"]
                guard domain == nil || domain == .null || domain?.stringValue == "" else { return integration }
                i["QueueDomain"] = .string(base)
                return .object(i)
            })
        return .object(object)
    }

    /// `customer`'s configuration as stored (nil: unknown customer).
    func integrationConfig(customer: String) -> JSONValue? {
        state.withLockedValue { $0.configuration.customers[customer]?.integrationConfig }
    }

    /// Replaces `customer`'s configuration with `config` (checked first); nil for an unknown customer.
    func setIntegrationConfig(customer: String, _ config: JSONValue) throws(QueueItEmulatorConfigurationError) -> JSONValue? {
        try QueueItEmulatorConfiguration.checkIntegrationConfig(config, path: "")
        return state.withLockedValue { s -> JSONValue? in
            guard s.configuration.customers[customer] != nil else { return nil }
            s.configuration.customers[customer]?.integrationConfig = config
            return config
        }
    }

    /// Publishes a new version of `customer`'s configuration: `Version` + 1 (1 when it had none)
    /// and `PublishDate` = now. Nil for an unknown customer.
    func publishIntegrationConfig(customer: String) -> JSONValue? {
        let date = QueueItEmulatorConfiguration.publishDateText(now())
        return state.withLockedValue { s -> JSONValue? in
            guard let c = s.configuration.customers[customer] else { return nil }
            var object = c.integrationConfig?.objectValue ?? [:]
            let version = object["Version"]?.numberValue ?? 0
            object["Version"] = .number(version.rounded() + 1)
            object["PublishDate"] = .string(date)
            s.configuration.customers[customer]?.integrationConfig = .object(object)
            return .object(object)
        }
    }

    /// Downloads per configured customer and result (zeros included), in a stable order.
    func integrationConfigDownloadCounts() -> [(customer: String, result: IntegrationConfigResult, count: Int)] {
        state.withLockedValue { s in
            s.configuration.customers.keys.sorted().flatMap { customer in
                IntegrationConfigResult.allCases.map { (customer, $0, s.integrationConfigDownloads[customer]?[$0] ?? 0) }
            }
        }
    }

    /// The state JSON's `integrationConfig`: per customer its `version`, `publishDate`,
    /// `unsecuredAllowed` and `downloads` (`ok`, `unauthorized`, `fault`).
    func integrationConfigSnapshot(_ s: State) -> [String: Any] {
        var out: [String: Any] = [:]
        for (cid, c) in s.configuration.customers {
            var o: [String: Any] = ["unsecuredAllowed": c.unsecuredIntegrationConfig]
            if let v = c.integrationConfig?["Version"]?.numberValue, let whole = Int(exactly: v) { o["version"] = whole }
            if let d = c.integrationConfig?["PublishDate"]?.stringValue { o["publishDate"] = d }
            var downloads: [String: Any] = [:]
            for r in IntegrationConfigResult.allCases { downloads[r.rawValue] = s.integrationConfigDownloads[cid]?[r] ?? 0 }
            o["downloads"] = downloads
            out[cid] = o
        }
        return out
    }
}
