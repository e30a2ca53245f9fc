import Foundation
import NIOConcurrencyHelpers
import QueueIt
import QueueItGateEngine
import Testing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGateTestSupport
import WaitingRoomHTTP

/// Issue 49 §6: `waitingroom gate --authz --config-url` pulls Queue-it's integration
/// configuration from the emulator (the secure route, `api-key`) every 2 s in the background:
/// a change of triggers on the emulator takes effect within an interval; a broken download
/// leaves the configuration in force (counted on `/metrics`); 100 pushes swap it under a steady
/// stream of subrequests with 0 errors, every answer one that one of the two configurations
/// gives; a push with a wrong hash is refused (403) and changes nothing.
@Suite(.serialized, .timeLimit(.minutes(4))) struct LiveConfigurationTests {
    static let origin = "http://shop.example"

    /// The fixture's configuration (`/shop/` queues in `sale`), at `version`; `shopQueues: false`
    /// moves that trigger to `/checkout/`, so `/shop/` matches nothing.
    static func configuration(_ server: EmulatorServer, version: Int, shopQueues: Bool) -> String {
        var json = QueueItGateFixture.configurationJSON(queueDomain: server.baseURL).replacingOccurrences(
            of: #""Version": 7"#, with: #""Version": \#(version)"#)
        if !shopQueues { json = json.replacingOccurrences(of: #""ValueToCompare": "/shop/""#, with: #""ValueToCompare": "/checkout/""#) }
        return json
    }

    static func admin(_ server: EmulatorServer, _ method: String, _ route: String, _ body: String) async throws {
        let r = try await AsyncHTTPTransport.shared.send(
            WaitingRoom.HTTPRequest(
                method: method, url: server.baseURL + route, headers: [("Content-Type", "application/json")], body: Array(body.utf8),
                timeout: .seconds(10)))
        #expect(r.status == 200, "\(route): \(r.status) \(r.text)")
    }

    /// The status of the gate's answer to a subrequest for `/shop/cart` (with `cookie` when given).
    static func ask(_ gate: GateProcess, cookie: String? = nil) async throws -> WaitingRoom.HTTPResponse {
        var headers = [("X-Original-URI", "/shop/cart"), ("X-Original-Method", "GET"), ("X-Forwarded-Host", "shop.example")]
        if let cookie { headers.append(("Cookie", cookie)) }
        return try await LoopbackHTTPClient.send(port: gate.port, target: "/.waitingroom/auth", headers: headers)
    }

    /// A counter's value on the gate's `/metrics` (summed over its labels).
    static func metric(_ port: Int, _ name: String) async throws -> Double {
        let text = try await LoopbackHTTPClient.send(port: port, target: "/metrics").text
        return text.split(separator: "\n").filter { $0.hasPrefix(name) }.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            .reduce(0, +)
    }

    @Test func pulledPushedAndBrokenConfigurations() async throws {
        let server = try await EmulatorSuite.demo().start()
        do {
            try await Self.admin(
                server, "PUT", "/_emulator/queueit/customers/demo/integrationconfig",
                Self.configuration(server, version: 1, shopQueues: true))
            let metricsPort = try LoopbackHTTPClient.freePort()
            // the same version 1 on disk: the gate starts with it if its first download is slow
            // (a loaded machine); the test then waits for the pulls either way
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("live-config-\(UUID().uuidString).json")
            try Data(Self.configuration(server, version: 1, shopQueues: true).utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            try await GateProcess.with(
                [
                    "--config", file.path,
                    "--authz", "--vendor", "queueit", "--customer", "demo", "--public-url", Self.origin, "--listen", "127.0.0.1:0",
                    "--config-url", server.baseURL + "/status/integrationconfig/secure/demo", "--config-interval", "2",
                    "--metrics-port", "\(metricsPort)"
                ], environment: ["QUEUEIT_SECRET_KEY": QueueItGateFixture.secret, "QUEUEIT_API_KEY": "demo-api-key"]
            ) { gate in
                #expect(try await Self.ask(gate).status == 401, "version 1: /shop/ queues")

                // a change of triggers on the emulator: in force within an interval (2 s; polled)
                let changed = ContinuousClock.now
                try await Self.admin(
                    server, "PUT", "/_emulator/queueit/customers/demo/integrationconfig",
                    Self.configuration(server, version: 2, shopQueues: false))
                var status = 0
                while ContinuousClock.now - changed < .seconds(10) {
                    status = try await Self.ask(gate).status
                    if status == 200 { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                let took = ContinuousClock.now - changed
                #expect(status == 200, "version 2 never came into force")
                // one interval is 2 s; bounded loosely here (a loaded machine), the figure is printed
                #expect(took < .seconds(6), "in force after \(took) (interval 2 s)")
                print("live configuration: version 2 in force \(took) after the emulator changed")

                // two broken downloads (a document cut short), then version 3 (/shop/ queues again):
                // version 2 stays until a good download
                let failuresBefore = try await Self.metric(metricsPort, "waitingroom_gate_config_failures_total")
                try await Self.admin(
                    server, "POST", "/_emulator/queueit/faults", #"{"action": "garbage", "on": "integrationconfig", "count": 2}"#)
                try await Self.admin(
                    server, "PUT", "/_emulator/queueit/customers/demo/integrationconfig",
                    Self.configuration(server, version: 3, shopQueues: true))
                var sawFaults = false
                var kept = true
                let broken = ContinuousClock.now
                while ContinuousClock.now - broken < .seconds(15) {
                    let state = try await EmulatorAdmin.state(server, vendor: "queueit")
                    let faults = state["integrationConfig"]?["demo"]?["downloads"]?["fault"]?.numberValue ?? 0
                    let answer = try await Self.ask(gate).status
                    if faults >= 2 {
                        sawFaults = true
                        break
                    }
                    if answer != 200 { kept = false }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(sawFaults && kept, "faults downloaded: \(sawFaults); version 2 kept meanwhile: \(kept)")
                // the gate counts a failure once the broken answer has reached it (polled)
                var failures = failuresBefore
                for _ in 0..<100 where failures < failuresBefore + 2 {
                    failures = try await Self.metric(metricsPort, "waitingroom_gate_config_failures_total")
                    if failures < failuresBefore + 2 { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(failures >= failuresBefore + 2, "failures on /metrics: \(failuresBefore) before, \(failures) after")
                status = 0
                let recovered = ContinuousClock.now
                while ContinuousClock.now - recovered < .seconds(10) {
                    status = try await Self.ask(gate).status
                    if status == 401 { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(status == 401, "version 3 never came into force after the faults")

                // 100 pushes under a steady stream of subrequests with a valid cookie: every
                // answer is a 200, with the session cookie extended (/shop/ queues) or without
                // (/shop/ matches nothing); none is anything else
                let cookie = QueueItGateFixture.cookie(age: 30)
                let counts = NIOLockedValueBox<(extended: Int, plain: Int, other: [Int])>((0, 0, []))
                let pushing = NIOLockedValueBox(true)
                let load = Task {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for _ in 0..<4 {
                            group.addTask {
                                while pushing.withLockedValue({ $0 }) {
                                    let r = try await Self.ask(gate, cookie: cookie)
                                    let extended = r.headers.values(for: "Set-Cookie").contains {
                                        $0.hasPrefix(QueueItGateFixture.cookieName + "=")
                                    }
                                    counts.withLockedValue { c in
                                        if r.status != 200 {
                                            c.other.append(r.status)
                                        } else if extended {
                                            c.extended += 1
                                        } else {
                                            c.plain += 1
                                        }
                                    }
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                var refusedPushes = 0
                for swap in 0..<100 {
                    let json = Self.configuration(server, version: 100 + swap, shopQueues: swap % 2 == 1)
                    let body = QueueItIntegrationConfigSource.pushBody(json: Array(json.utf8), secretKey: QueueItGateFixture.secret)
                    let r = try await LoopbackHTTPClient.send(
                        port: gate.port, method: "PUT", target: "/.waitingroom/configuration",
                        headers: [("Content-Type", "application/json")], body: body)
                    if r.status != 200 { refusedPushes += 1 }
                    try await Task.sleep(for: .milliseconds(20))
                }
                pushing.withLockedValue { $0 = false }
                try await load.value
                let seen = counts.withLockedValue { $0 }
                #expect(refusedPushes == 0)
                #expect(seen.other.isEmpty, "answers other than 200: \(seen.other.prefix(10))")
                #expect(seen.extended > 0 && seen.plain > 0, "both configurations answered: \(seen)")
                print(
                    "live configuration: 100 pushes, \(seen.extended + seen.plain) subrequests during them (\(seen.extended) under a queueing configuration, \(seen.plain) under the other), \(seen.other.count) errors"
                )

                // a push signed with another key: 403, nothing changes (version 199, /shop/ queues)
                let last = try await Self.ask(gate, cookie: nil).status
                let forged = QueueItIntegrationConfigSource.pushBody(
                    json: Array(Self.configuration(server, version: 500, shopQueues: false).utf8),
                    secretKey: "not-the-secret-key")
                let refused = try await LoopbackHTTPClient.send(
                    port: gate.port, method: "PUT", target: "/.waitingroom/configuration", body: forged)
                #expect(refused.status == 403, "\(refused.status) \(refused.text)")
                let malformed = try await LoopbackHTTPClient.send(
                    port: gate.port, method: "PUT", target: "/.waitingroom/configuration",
                    body: Array(#"{"integrationInfo": "zz", "hash": "00"}"#.utf8))
                #expect(malformed.status == 403 || malformed.status == 400)
                #expect(try await Self.ask(gate, cookie: nil).status == last, "the configuration in force changed after refused pushes")
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
