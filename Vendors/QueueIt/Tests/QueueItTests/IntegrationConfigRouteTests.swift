import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP

@testable import QueueItEmulator

/// The emulator serves customers' integration configurations as Queue-it's platform does
/// (`queueit/Documentation` `serverside-connectors/integration-config/README.md`): the secure
/// download with the `api-key` header, the keyless one, the admin routes that change and publish
/// it, faults with the kit's form (`"on": "integrationconfig"`), and the download counter on
/// `/metrics` and in the state JSON. Over loopback HTTP to an emulator on 127.0.0.1:0.
@Suite("Queue-it emulator: integration configuration download", .timeLimit(.minutes(2)))
struct IntegrationConfigRouteTests {
    /// The emulator's clock: fixed, moved by the tests.
    final class FixedClock: Sendable {
        let value = Mutex(Date(timeIntervalSince1970: 1_790_000_000))  // 2026-09-21T…Z
        var now: Date { value.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { value.withLock { $0.addTimeInterval(seconds) } }
    }

    struct Emulator {
        let server: QueueItEmulatorServer
        let clock: FixedClock
        var base: String { server.baseURL }

        static func start(_ configuration: QueueItEmulatorConfiguration = .demo) async throws -> Emulator {
            let clock = FixedClock()
            let server = try await QueueItEmulatorServer.start(QueueItEmulator(configuration: configuration, now: { clock.now }))
            return Emulator(server: server, clock: clock)
        }

        func send(
            _ path: String, method: String = "GET", headers: [(String, String)] = [], body: String? = nil,
            timeout: Duration = .seconds(30)
        ) async throws -> HTTPResponse {
            try await AsyncHTTPTransport.shared.send(
                HTTPRequest(
                    method: method, url: base + path,
                    headers: HTTPHeaderList(headers + (body == nil ? [] : [("Content-Type", "application/json")])),
                    body: body.map { Array($0.utf8) }, timeout: timeout))
        }

        /// The secure download with `key` (nil: no `api-key` header).
        func download(_ customer: String = "demo", key: String? = "demo-api-key", timeout: Duration = .seconds(30)) async throws
            -> HTTPResponse
        {
            try await send("/status/integrationconfig/secure/\(customer)", headers: key.map { [("api-key", $0)] } ?? [], timeout: timeout)
        }

        func fault(_ json: String) async throws {
            let answer = try await send("/_emulator/queueit/faults", method: "POST", body: json)
            #expect(answer.status == 200, "\(answer.text)")
        }

        func state() async throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(try await send("/_emulator/queueit/state").body)) as? [String: Any])
        }

        func stop() async { await server.shutdown() }
    }

    static func object(_ response: HTTPResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(response.text)")
    }

    static let adminPath = "/_emulator/queueit/customers/demo/integrationconfig"

    // MARK: the download

    @Test func rightKeyGetsTheConfigurationWithTheEmulatorAsQueueDomain() async throws {
        let e = try await Emulator.start()
        defer { Task { await e.stop() } }
        let answer = try await e.download()
        #expect(answer.status == 200)
        #expect(answer.headers.value(for: "Content-Type") == "application/json")
        let config = try Self.object(answer)
        #expect(config["CustomerId"] as? String == "demo" && config["AccountId"] as? String == "demo")
        #expect(config["Version"] as? Int == 1)
        #expect(config["PublishDate"] as? String == QueueItEmulatorConfiguration.publishDateText(e.clock.now))
        #expect(config["ConfigDataVersion"] as? String == "1.0.0.1")
        #expect(config["Description"] is String)
        let integrations = try #require(config["Integrations"] as? [[String: Any]])
        #expect(integrations.map { $0["ActionType"] as? String } == ["Ignore", "Queue"])
        // ignore /static/, queue everything else in event `sale` on the emulator itself
        #expect(integrations[0]["QueueDomain"] as? String == "")
        let ignored = ((integrations[0]["Triggers"] as? [[String: Any]])?.first?["TriggerParts"] as? [[String: Any]])?.first
        #expect(ignored?["ValueToCompare"] as? String == "/static/")
        #expect(integrations[1]["EventId"] as? String == "sale")
        #expect(integrations[1]["QueueDomain"] as? String == e.base)
        // The keyless route serves the same document (allowed by default); a trailing slash is the same route.
        let open = try await e.send("/status/integrationconfig/demo")
        #expect(open.status == 200 && open.body == answer.body)
        #expect(try await e.send("/status/integrationconfig/secure/demo/", headers: [("api-key", "demo-api-key")]).body == answer.body)
        // The demo customer has no key of its own: the default one.
        #expect(e.server.emulator.configuration.customers["demo"]?.apiKey == nil)
    }

    @Test func wrongOrMissingKeyIs401AndUnknownCustomer404() async throws {
        var configuration = QueueItEmulatorConfiguration.demo
        configuration.customers["closed"] = .init(secretKey: "s", rooms: [:], apiKey: "closed-key", unsecuredIntegrationConfig: false)
        let e = try await Emulator.start(configuration)
        defer { Task { await e.stop() } }
        let missing = try await e.download(key: nil)
        #expect(missing.status == 401)
        #expect(try Self.object(missing)["error"] as? String == "missing api-key header")
        #expect(try await e.download(key: "wrong").status == 401)
        #expect(try await e.download(key: "DEMO-API-KEY").status == 401)
        #expect(try await e.download(key: "closed-key").status == 401)  // another customer's key
        // a customer of its own key; the keyless route refused when the customer does not allow it
        #expect(try await e.download("closed", key: "closed-key").status == 200)
        #expect(try await e.download("closed", key: "closed-api-key").status == 401)
        #expect(try await e.send("/status/integrationconfig/closed").status == 401)
        // unknown customer: 404 on both routes, with or without a key
        #expect(try await e.download("nobody").status == 404)
        #expect(try await e.download("nobody", key: nil).status == 404)
        #expect(try await e.send("/status/integrationconfig/nobody").status == 404)
        #expect(e.server.emulator.integrationConfigDownloads(customer: "demo") == ["ok": 0, "unauthorized": 4, "fault": 0])
        #expect(e.server.emulator.integrationConfigDownloads(customer: "closed") == ["ok": 1, "unauthorized": 2, "fault": 0])
    }

    // MARK: admin

    @Test func adminPutChangesWhatIsServedAndBadBodiesAre400() async throws {
        let e = try await Emulator.start()
        defer { Task { await e.stop() } }
        let mine = #"""
            {"Description": "mine", "CustomerId": "demo", "AccountId": "acct", "Version": 5, "PublishDate": "2026-11-25T10:00:00Z",
             "ConfigDataVersion": "1.0.0.1", "Integrations": [
              {"Name": "shop", "ActionType": "Queue", "EventId": "flash", "QueueDomain": "demo.queue-it.net", "Triggers": []},
              {"Name": "rest", "ActionType": "Queue", "EventId": "sale", "QueueDomain": "", "Triggers": []}]}
            """#
        let put = try await e.send(Self.adminPath, method: "PUT", body: mine)
        #expect(put.status == 200, "\(put.text)")
        let served = try Self.object(try await e.download())
        #expect(served["Version"] as? Int == 5 && served["Description"] as? String == "mine" && served["AccountId"] as? String == "acct")
        let integrations = try #require(served["Integrations"] as? [[String: Any]])
        #expect(integrations.map { $0["QueueDomain"] as? String } == ["demo.queue-it.net", e.base])
        // GET answers it as stored (an empty QueueDomain stays empty there)
        let got = try Self.object(try await e.send(Self.adminPath))
        #expect(got["Version"] as? Int == 5)
        #expect((got["Integrations"] as? [[String: Any]])?.map { $0["QueueDomain"] as? String } == ["demo.queue-it.net", ""])

        // bad bodies: 400 naming the problem; nothing changes
        for (body, field) in [
            ("not json", "body"), ("[]", "body"), (#"{"Version": 6}"#, "Integrations"),
            (#"{"Integrations": {}}"#, "Integrations"), (#"{"Integrations": [1]}"#, "Integrations[0]"),
            (#"{"Integrations": [], "Version": "6"}"#, "Version")
        ] {
            let bad = try await e.send(Self.adminPath, method: "PUT", body: body)
            #expect(bad.status == 400, "\(body)")
            let error = try Self.object(bad)
            #expect(error["field"] as? String == field, "\(body): \(error)")
            #expect((error["error"] as? String)?.isEmpty == false)
        }
        #expect(try Self.object(try await e.download())["Version"] as? Int == 5)
        // unknown customer
        #expect(try await e.send("/_emulator/queueit/customers/nobody/integrationconfig", method: "PUT", body: mine).status == 404)
        #expect(try await e.send("/_emulator/queueit/customers/nobody/integrationconfig").status == 404)
        #expect(try await e.send("/_emulator/queueit/customers/nobody/integrationconfig/version", method: "POST").status == 404)
        // a reset forgets visitors and counters, not the published configuration
        #expect(try await e.send("/_emulator/queueit/reset", method: "POST").status == 200)
        #expect(try Self.object(try await e.download())["Version"] as? Int == 5)
    }

    @Test func versionBumpPublishesANewVersion() async throws {
        let e = try await Emulator.start()
        defer { Task { await e.stop() } }
        let before = try Self.object(try await e.download())
        #expect(before["Version"] as? Int == 1)
        e.clock.advance(90)
        let bumped = try await e.send(Self.adminPath + "/version", method: "POST")
        #expect(bumped.status == 200)
        #expect(try Self.object(bumped)["Version"] as? Int == 2)
        let after = try Self.object(try await e.download())
        #expect(after["Version"] as? Int == 2)
        #expect(after["PublishDate"] as? String == QueueItEmulatorConfiguration.publishDateText(e.clock.now))
        #expect(after["PublishDate"] as? String != before["PublishDate"] as? String)
        // everything else unchanged
        #expect((after["Integrations"] as? [Any])?.count == 2 && after["Description"] as? String == before["Description"] as? String)
        _ = try await e.send(Self.adminPath + "/version", method: "POST")
        #expect(try Self.object(try await e.download())["Version"] as? Int == 3)
        // a configuration without a Version gets 1
        #expect(try await e.send(Self.adminPath, method: "PUT", body: #"{"Integrations": []}"#).status == 200)
        #expect(try Self.object(try await e.send(Self.adminPath + "/version", method: "POST"))["Version"] as? Int == 1)
        // the state JSON shows the version and the date
        let demo = (try await e.state()["integrationConfig"] as? [String: Any])?["demo"] as? [String: Any]
        #expect(
            demo?["version"] as? Int == 1 && demo?["publishDate"] as? String == QueueItEmulatorConfiguration.publishDateText(e.clock.now))
    }

    // MARK: faults

    @Test func status500Fault() async throws {
        let e = try await Emulator.start()
        defer { Task { await e.stop() } }
        try await e.fault(#"{"action": "status", "status": 500, "on": "integrationconfig"}"#)
        let failed = try await e.download()
        #expect(failed.status == 500)
        #expect(try Self.object(failed)["error"] as? String == "injected fault 500")
        #expect(try await e.download().status == 200)  // count 1: used up
        // the older form and Swift's `inject` reach the route too; a wrong key meets the fault first
        e.server.emulator.inject(QueueItEmulatorFault(kind: .status, count: 2, status: 503, on: .integrationconfig))
        #expect(try await e.download(key: "wrong").status == 503)
        #expect(try await e.send("/status/integrationconfig/demo").status == 503)
        #expect(try await e.download().status == 200)
        #expect(e.server.emulator.integrationConfigDownloads(customer: "demo") == ["ok": 2, "unauthorized": 0, "fault": 3])
        #expect(e.server.emulator.counters.faultsInjectedOnIntegrationConfig == 3)
    }

    @Test func badJSONFault() async throws {
        let e = try await Emulator.start()
        defer { Task { await e.stop() } }
        try await e.fault(#"{"action": "garbage", "on": "integrationconfig"}"#)
        let garbage = try await e.download()
        #expect(garbage.status == 200)
        #expect(garbage.headers.value(for: "Content-Type") == "application/json")
        #expect(garbage.text.hasPrefix("{"))
        #expect((try? JSONSerialization.jsonObject(with: Data(garbage.body))) == nil, "not JSON: \(garbage.text)")
        #expect(try Self.object(try await e.download())["Version"] as? Int == 1)
    }

    @Test func hangFaultIsBoundedByTheClientTimeout() async throws {
        let e = try await Emulator.start()
        defer { Task { await e.stop() } }
        // "hang": a delay far past the client's deadline (the server's graceful stop waits it out)
        try await e.fault(#"{"action": "delay", "delayMs": 8000, "on": "integrationconfig"}"#)
        let start = ContinuousClock.now
        await #expect(throws: WaitingRoomError.self) { _ = try await e.download(timeout: .milliseconds(300)) }
        let took = ContinuousClock.now - start
        // well before the 8 s delay (generous: a loaded machine)
        #expect(took < .seconds(6), "the client gave up after \(took)")
        #expect(e.server.emulator.integrationConfigDownloads(customer: "demo")["fault"] == 1)
        // the next download is served at once
        #expect(try await e.download(timeout: .seconds(10)).status == 200)
    }

    @Test func faultsOfOtherRequestKindsLeaveDownloadsAlone() async throws {
        let e = try await Emulator.start()
        defer { Task { await e.stop() } }
        try await e.fault(#"{"action": "status", "status": 500, "on": "enqueue"}"#)
        try await e.fault(#"{"action": "drop", "on": "queue"}"#)
        #expect(try await e.download().status == 200)
        #expect(e.server.emulator.counters.pendingFaults == 2)
        // a bad `on` is refused with the kinds listed
        let bad = try await e.send("/_emulator/queueit/faults", method: "POST", body: #"{"action": "status", "on": "config"}"#)
        #expect(bad.status == 400)
        #expect((try Self.object(bad)["error"] as? String)?.contains("integrationconfig") == true)
    }

    // MARK: counters

    @Test func downloadCounterOnMetricsAndInTheState() async throws {
        let e = try await Emulator.start()
        defer { Task { await e.stop() } }
        let name = "waitingroom_emulator_queueit_integrationconfig_downloads_total"
        func line(_ result: String) -> String { "\(name){vendor=\"queueit\",customer=\"demo\",result=\"\(result)\"}" }
        func counts() async throws -> [String: String] {
            let metrics = try await e.send("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.text.contains("# TYPE \(name) counter"))
            var out: [String: String] = [:]
            for l in metrics.text.split(separator: "\n") where l.hasPrefix(name + "{") {
                for r in ["ok", "unauthorized", "fault"] where l.hasPrefix(line(r) + " ") {
                    out[r] = String(l.dropFirst(line(r).count + 1))
                }
            }
            return out
        }
        #expect(try await counts() == ["ok": "0", "unauthorized": "0", "fault": "0"])
        _ = try await e.download()
        _ = try await e.send("/status/integrationconfig/demo")
        _ = try await e.download(key: "wrong")
        _ = try await e.download(key: nil)
        _ = try await e.download("nobody")  // unknown customers are not counted (labels come from the configuration)
        try await e.fault(#"{"action": "status", "status": 500, "on": "integrationconfig"}"#)
        _ = try await e.download()
        #expect(try await counts() == ["ok": "2", "unauthorized": "2", "fault": "1"])
        let state = try await e.state()
        let downloads = ((state["integrationConfig"] as? [String: Any])?["demo"] as? [String: Any])?["downloads"] as? [String: Int]
        #expect(downloads == ["ok": 2, "unauthorized": 2, "fault": 1])
        #expect((state["faultsInjectedOn"] as? [String: Any])?["integrationconfig"] as? Int == 1)
        #expect(state["faultsInjected"] as? Int == 1)
        // the samples (`metrics(into:)`, what the combined emulator's /metrics renders) are the same
        #expect(e.server.emulator.metricsText().contains(line("ok") + " 2\n"))
        // a reset starts the counters again
        #expect(try await e.send("/_emulator/queueit/reset", method: "POST").status == 200)
        #expect(try await counts() == ["ok": "0", "unauthorized": "0", "fault": "0"])
    }

    // MARK: configuration document

    @Test func documentSetsKeyConfigurationAndKeylessSwitch() throws {
        let document = #"""
            {"queueit": {"customers": {"acme": {"secretKey": "k", "rooms": {}, "apiKey": "acme-key", "unsecuredIntegrationConfig": false,
              "integrationConfig": {"Version": 9, "Integrations": []}}, "plain": {"secretKey": "k", "rooms": {}}}}}
            """#
        let c = try QueueItEmulatorConfiguration(document: Array(document.utf8))
        #expect(c.customers["acme"]?.apiKey == "acme-key" && c.customers["acme"]?.unsecuredIntegrationConfig == false)
        #expect(c.customers["acme"]?.integrationConfig?["Version"] == .number(9))
        #expect(c.customers["plain"]?.apiKey == nil && c.customers["plain"]?.unsecuredIntegrationConfig == true)
        #expect(QueueItEmulatorConfiguration.defaultAPIKey(customer: "plain") == "plain-api-key")
        func field(_ customer: String) -> String? {
            do {
                _ = try QueueItEmulatorConfiguration(
                    document: Array(#"{"queueit": {"customers": {"acme": {"secretKey": "k", "rooms": {}, \#(customer)}}}}"#.utf8))
                return nil
            } catch { return error.field }
        }
        #expect(field(#""apiKey": """#) == "queueit.customers.acme.apiKey")
        #expect(field(#""unsecuredIntegrationConfig": "no""#) == "queueit.customers.acme.unsecuredIntegrationConfig")
        #expect(field(#""integrationConfig": []"#) == "queueit.customers.acme.integrationConfig")
        #expect(field(#""integrationConfig": {"Version": 1}"#) == "queueit.customers.acme.integrationConfig.Integrations")
        #expect(field(#""integrationConfig": {"Integrations": ["x"]}"#) == "queueit.customers.acme.integrationConfig.Integrations[0]")
    }
}
