import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import WaitingRoom
import WaitingRoomEmulatorKit

/// Queue-it's integration-configuration download, as its platform serves it to KnownUser
/// connectors (`queueit/Documentation` `serverside-connectors/integration-config/README.md`):
/// `GET https://{c}.queue-it.net/status/integrationconfig/secure/{c}` with the customer's
/// `api-key` header, or the keyless `…/status/integrationconfig/{c}`. The emulator is one host for
/// every customer: the same paths under its base URL. Admin routes under
/// `/_emulator/queueit/customers/{c}/integrationconfig`. Faults: the kit's form with
/// `"on": "integrationconfig"`.
extension QueueItEmulator {
    /// The admin path of a customer's integration configuration (`{customer}` a path parameter).
    static let integrationConfigAdminPath = "/_emulator/queueit/customers/:customer/integrationconfig"

    /// The counter of integration-configuration downloads, per `customer` and `result` (`ok`,
    /// `unauthorized`, `fault`).
    package static let integrationConfigDownloadsMetric = EmulatorMetric(
        name: EmulatorMetric.prefix + "queueit_integrationconfig_downloads_total",
        help: "Queue-it integration configuration downloads per customer and result (ok, unauthorized: 401, fault: a fault was injected).",
        kind: .counter)

    static let apiKeyField = HTTPField.Name("api-key")!

    func addIntegrationConfigRoutes(to router: Router<BasicRequestContext>) {
        router.get("/status/integrationconfig/secure/:customerId") { [self] req, ctx in
            await self.handleIntegrationConfigDownload(req, ctx, secure: true)
        }
        router.get("/status/integrationconfig/:customerId") { [self] req, ctx in
            await self.handleIntegrationConfigDownload(req, ctx, secure: false)
        }
        let admin = Self.integrationConfigAdminPath
        router.get(RouterPath(admin)) { [self] _, ctx -> Response in
            let c = EmulatorHTTP.pathParameter(ctx.parameters, "customer")
            guard let config = model.integrationConfig(customer: c) else { return Self.unknownCustomer(c) }
            return EmulatorHTTP.json(config)
        }
        router.put(RouterPath(admin)) { [self] req, ctx -> Response in
            let c = EmulatorHTTP.pathParameter(ctx.parameters, "customer")
            guard model.hasCustomer(c) else { return Self.unknownCustomer(c) }
            do {
                let body = try await EmulatorHTTP.jsonBody(req)
                guard let stored = try model.setIntegrationConfig(customer: c, body) else { return Self.unknownCustomer(c) }
                return EmulatorHTTP.json(stored)
            } catch let error as WaitingRoomError {
                return EmulatorHTTP.badRequest(error)
            } catch let error as QueueItEmulatorConfigurationError {
                return EmulatorHTTP.badRequest(
                    .invalidConfiguration(field: error.field, "\(error.field): \(error.message)", vendor: Self.vendorID))
            }
        }
        router.post(RouterPath(admin + "/version")) { [self] _, ctx -> Response in
            let c = EmulatorHTTP.pathParameter(ctx.parameters, "customer")
            guard let published = model.publishIntegrationConfig(customer: c) else { return Self.unknownCustomer(c) }
            return EmulatorHTTP.json(published)
        }
    }

    static func unknownCustomer(_ customer: String) -> Response {
        EmulatorHTTP.json(.object(["error": .string("no customer \(customer)")]), status: 404)
    }

    /// `GET /status/integrationconfig/secure/{c}` (`secure`) or `GET /status/integrationconfig/{c}`.
    func handleIntegrationConfigDownload(_ req: Request, _ ctx: BasicRequestContext, secure: Bool) async -> Response {
        // Queue-it: "A missing host header will result in a 400 Bad Request response".
        guard let host = req.head.authority, !host.isEmpty else {
            return Self.response(400, QueueItEmulatorModel.json(["error": "missing Host header"]))
        }
        let c = EmulatorHTTP.pathParameter(ctx.parameters, "customerId")
        guard model.hasCustomer(c) else {
            return Self.response(404, QueueItEmulatorModel.json(["error": "unknown customer '\(c)'"]))
        }
        var faulted = false
        if let fault = model.takeFault(for: .integrationconfig) {
            faulted = true
            model.recordIntegrationConfigDownload(customer: c, result: .fault)
            if let answer = await Self.applyToIntegrationConfig(fault) { return answer }
        }
        let key = secure ? req.headers[Self.apiKeyField] : nil
        return Self.response(
            model.integrationConfigDownload(customer: c, secure: secure, apiKey: key, base: Self.base(req), count: !faulted))
    }

    /// What a fault does to a download: `status` answers a JSON error, `garbage` a 200
    /// `application/json` body that is cut off in the middle (not JSON); `delay` and `drop` as
    /// everywhere.
    static func applyToIntegrationConfig(_ fault: EmulatorFault) async -> Response? {
        await EmulatorHTTP.apply(
            fault,
            errorPage: { status in ("{\"error\":\"injected fault \(status)\"}", "application/json") },
            garbage: {
                (#"{"Description":"injected fault: a cut-off integration configuration","Integrations":[{"Name":"#, "application/json")
            })
    }

    // MARK: metrics

    /// The kit's standard figures and the integration-configuration downloads
    /// (``integrationConfigDownloadsMetric``, every configured customer, zeros included).
    package func metrics(into samples: inout [EmulatorMetricSample]) {
        standardMetrics(into: &samples)
        for (customer, result, count) in model.integrationConfigDownloadCounts() {
            samples.append(
                EmulatorMetricSample(
                    Self.integrationConfigDownloadsMetric, labels: ["vendor": vendorID, "customer": customer, "result": result.rawValue],
                    value: Double(count)))
        }
    }

    /// Integration-configuration downloads of `customer` so far (since the start or the last
    /// reset), per result: `ok`, `unauthorized`, `fault`.
    package func integrationConfigDownloads(customer: String) -> [String: Int] {
        var out: [String: Int] = [:]
        for (c, result, count) in model.integrationConfigDownloadCounts() where c == customer { out[result.rawValue] = count }
        return out
    }

    /// ``metrics(into:)`` in the Prometheus text format (0.0.4): what the stand-alone server
    /// (``QueueItEmulatorServer``) answers on `GET /metrics`; the combined emulator renders the
    /// same samples with swift-prometheus.
    package func metricsText() -> String {
        var samples: [EmulatorMetricSample] = []
        metrics(into: &samples)
        return Self.prometheusText(samples)
    }

    static func prometheusText(_ samples: [EmulatorMetricSample]) -> String {
        var order: [String] = []
        var families: [String: (metric: EmulatorMetric, lines: [String])] = [:]
        let rank = ["vendor": 0, "scope": 1, "room": 2]
        for sample in samples where sample.value.isFinite {
            let name = sample.metric.name
            if families[name] == nil {
                order.append(name)
                families[name] = (sample.metric, [])
            }
            let labels = sample.labels.sorted { a, b in
                let (x, y) = (rank[a.key] ?? 3, rank[b.key] ?? 3)
                return x != y ? x < y : a.key < b.key
            }.map { "\($0.key)=\"\(escapeLabelValue($0.value))\"" }.joined(separator: ",")
            let value = sample.value == sample.value.rounded() && abs(sample.value) < 1e15 ? String(Int64(sample.value)) : "\(sample.value)"
            families[name]?.lines.append(labels.isEmpty ? "\(name) \(value)" : "\(name){\(labels)} \(value)")
        }
        var text = ""
        for name in order {
            guard let family = families[name] else { continue }
            text += "# HELP \(name) \(family.metric.help)\n# TYPE \(name) \(family.metric.kind.rawValue)\n"
            for line in family.lines { text += line + "\n" }
        }
        return text
    }

    private static func escapeLabelValue(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
