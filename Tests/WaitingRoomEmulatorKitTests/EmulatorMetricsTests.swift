import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomEmulatorKit
import WaitingRoomEmulators
import WaitingRoomHTTP
import WaitingRoomVendors
import WebDriver

/// Issue 28 §3: the combined emulator serves `GET /metrics` in the Prometheus text format with
/// every room of every vendor; its figures are the emulators' own counters (the admin routes and
/// `/_emulator/status` say the same), its counters only grow, and `promtool check metrics` accepts it.
@Suite("Emulator /metrics: every room of every vendor in the Prometheus format, over loopback", .timeLimit(.minutes(3)))
struct EmulatorMetricsTests {
    static let prefix = "waitingroom_emulator_"

    // MARK: - NetFUNNEL under load

    /// 200 NetFUNNEL users through a segment that lets 20 in at a time, each completing 100 ms after
    /// it passed; `/metrics` scraped during the load (consistent, counters never going down, promtool
    /// happy) and after it (every figure equal to the admin counters read right after).
    @Test func netfunnelLoadMatchesTheAdminCounters() async throws {
        let users = 200
        let limit = 20
        let document = try JSONValue.parse(
            #"""
            {"netfunnel": {"projects": {"service_1": {"segments": {
                "metrics_load": {"control": "basic", "limit": \#(limit), "ttlMin": 1, "ttlMax": 1}}}}}}
            """#)
        let suite = try EmulatorSuite(document: document)
        let server = try await suite.start(host: "127.0.0.1", port: 0)
        let base = server.baseURL
        let room = ["vendor": "netfunnel", "scope": "service_1", "room": "metrics_load"]

        let before = try await Self.scrape(base)
        #expect(before.value("users_waiting", room) == 0 && before.value("admitted_total", room) == 0, "\(before.text)")

        // The longest deadline the agent allows and more retries: a loaded CI machine running every
        // suite at once must not turn slow loopback answers into failures.
        var configuration = try #require(EmulatorSuite.clientDefaults(for: server)["netfunnel"]?.objectValue)
        configuration["networkTimeout"] = .number(10000)
        configuration["retryCount"] = .number(3)
        let provider = try VendorRegistry.standard.makeProvider(vendor: "netfunnel", configuration: .object(configuration))
        let finished = Finished()
        let load = Task { () throws -> [String] in
            try await withThrowingTaskGroup(of: String.self) { group in
                for i in 0..<users {
                    group.addTask {
                        defer { finished.add() }
                        let session = try provider.enqueue(
                            Entry(room: RoomKey(scope: "service_1", room: "metrics_load"), userId: "metrics-user-\(i)"))
                        let outcome = await session.outcome()
                        if case .passed = outcome {
                            try await Task.sleep(for: .milliseconds(100))  // the protected step
                            try await session.complete()
                        }
                        return outcome.name
                    }
                }
                var outcomes: [String] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
        }

        // during the load: scrape, check each scrape on its own and against the one before
        var during: [Scrape] = []
        var previous = before
        var maxWaiting = 0.0
        var maxInside = 0.0
        while finished.count < users {
            let scrape = try await Self.scrape(base)
            let stillLoading = finished.count < users
            Self.checkConsistent(scrape, room: room, limit: Double(limit))
            Self.checkMonotonic(from: previous, to: scrape)
            previous = scrape
            if stillLoading { during.append(scrape) }
            maxWaiting = max(maxWaiting, scrape.value("users_waiting", room) ?? 0)
            maxInside = max(maxInside, scrape.value("users_inside", room) ?? 0)
            try await Task.sleep(for: .milliseconds(250))
        }
        let outcomes = try await load.value
        #expect(
            outcomes.count == users && outcomes.allSatisfy { $0 == "passed" }, "\(Dictionary(grouping: outcomes) { $0 }.mapValues(\.count))"
        )
        #expect(during.count >= 2, "scrapes taken while users were still waiting: \(during.count)")
        #expect(maxWaiting > 0, "a scrape during the load saw users waiting")
        #expect(maxInside > 0 && maxInside <= Double(limit), "users inside peaked at \(maxInside)")
        if let middle = during.last {
            let check = try Self.promtool(middle.text)
            #expect(check.status == 0, "promtool check metrics (during the load): \(check.output)\n\(middle.text)")
        }

        // after the load: the scrape, then the admin counters at once (nothing moves any more)
        let after = try await Self.scrape(base)
        Self.checkMonotonic(from: previous, to: after)
        let counters = try await Self.json(base, "/_emulator/netfunnel/counters")
        let status = try await Self.json(base, "/_emulator/status")
        #expect(after.value("users_waiting", room) == 0 && after.value("users_inside", room) == 0)
        let requests = try #require(counters["requests"]?.objectValue)
        // Every user was admitted. The emulator counts admissions per ticket (one 5101 each): a
        // client retry of a 5101 whose first attempt the emulator had already answered (slow
        // loopback on a loaded CI machine) is a second ticket, as a real server would count it, so
        // the bound above is the 5101 requests received.
        let admitted = after.value("admitted_total", room) ?? 0
        let tickets = requests["5101"]?.numberValue ?? 0
        #expect(admitted >= Double(users) && admitted <= tickets, "admitted \(admitted), users \(users), 5101 requests \(tickets)")
        #expect(requests.count >= 2, "\(requests)")
        for (opcode, count) in requests {
            #expect(
                after.value("requests_total", ["vendor": "netfunnel", "kind": "opcode \(opcode)"]) == count.numberValue, "opcode \(opcode)")
        }
        #expect((requests["5004"]?.numberValue ?? 0) >= Double(users), "every user returned its key with 5004")
        #expect(after.series("requests_total", matching: ["vendor": "netfunnel"]).count == requests.count)
        let replies = try #require(counters["replies"]?.objectValue)
        for (code, count) in replies {
            #expect(after.value("replies_total", ["vendor": "netfunnel", "code": "code \(code)"]) == count.numberValue, "code \(code)")
        }
        #expect(after.series("replies_total", matching: ["vendor": "netfunnel"]).count == replies.count)
        #expect(after.value("keys_never_returned", ["vendor": "netfunnel"]) == counters["keysNeverReturned"]?.numberValue)
        #expect(after.value("keys_auto_returned_total", ["vendor": "netfunnel"]) == counters["keysAutoReturned"]?.numberValue)
        #expect(after.value("faults_injected_total", ["vendor": "netfunnel"]) == counters["faultsInjected"]?.numberValue)
        Self.checkEqualsStatus(after, status)
        let check = try Self.promtool(after.text)
        #expect(check.status == 0, "promtool check metrics (after the load): \(check.output)\n\(after.text)")
        await server.stop()
    }

    // MARK: - Queue-it and CrowdHandler

    /// Queue-it and CrowdHandler rooms appear with their `vendor`, `scope` and `room` labels, and
    /// their requests, replies and faults are what the emulators count.
    @Test func queueitAndCrowdHandlerRoomsAppearWithTheirLabels() async throws {
        let suite = EmulatorSuite.demo()
        let server = try await suite.start(host: "127.0.0.1", port: 0)
        let base = server.baseURL
        let enqueue = try await Self.send(
            HTTPRequest(
                method: "POST", url: "/api/mobileapp/queue/demo/sale/enqueue",
                body: Array(#"{"userId": "metrics-visitor", "userAgent": "metrics-test", "sdkVersion": "test"}"#.utf8)), to: base)
        #expect(enqueue.status == 200, "\(enqueue.text)")
        let arrival = try await Self.send(
            HTTPRequest(
                method: "POST", url: "/v1/requests", headers: [("x-api-key", "k")], body: Array(#"{"url": "/site/demo-queue"}"#.utf8)),
            to: base)
        #expect(arrival.status == 200, "\(arrival.text)")
        let fault = try await Self.send(
            HTTPRequest(
                method: "POST", url: "/_emulator/crowdhandler/faults",
                body: Array(#"{"action": "status", "status": 503, "on": "rooms", "count": 2}"#.utf8)), to: base)
        #expect(fault.status == 200, "\(fault.text)")

        let scrape = try await Self.scrape(base)
        let status = try await Self.json(base, "/_emulator/status")
        let sale = ["vendor": "queueit", "scope": "demo", "room": "sale"]
        let line = ["vendor": "crowdhandler", "scope": "site", "room": "demo-queue"]
        for labels in [sale, line] {
            // one arrival: waiting now or admitted already, whatever the moment
            let waiting = try #require(scrape.value("users_waiting", labels), "\(labels)\n\(scrape.text)")
            let admitted = try #require(scrape.value("admitted_total", labels), "\(labels)")
            #expect(waiting + admitted == 1, "\(labels)")
            #expect(scrape.value("users_inside", labels) == nil, "\(labels): no limit on users inside")
        }
        #expect(scrape.value("admission_rate_per_second", sale) == 1, "sale admits 1 a second")
        #expect(scrape.value("admission_rate_per_second", line) == 0.5, "demo-queue admits 30 a minute")
        for (vendor, rooms) in [("queueit", ["open", "closed"]), ("crowdhandler", ["demo-open", "demo-blocked", "demo-closed"])] {
            for name in rooms {
                let present = scrape.series("users_waiting", matching: ["vendor": vendor, "room": name])
                #expect(present.count == 1, "\(vendor) \(name)")
            }
        }
        #expect(scrape.value("requests_total", ["vendor": "queueit", "kind": "enqueue (served)"]) == 1)
        #expect(scrape.value("requests_total", ["vendor": "crowdhandler", "kind": "POST /v1/requests (served)"]) == 1)
        #expect(scrape.series("replies_total", matching: ["vendor": "crowdhandler"]).count >= 1)
        #expect(scrape.value("faults_pending", ["vendor": "crowdhandler"]) == 2)
        #expect(scrape.value("faults_injected_total", ["vendor": "crowdhandler"]) == 0)
        #expect(scrape.value("keys_never_returned", ["vendor": "queueit"]) == nil, "Queue-it passes hold no key")
        #expect(scrape.value("keys_never_returned", ["vendor": "crowdhandler"]) == nil, "CrowdHandler passes hold no key")
        #expect(scrape.value("keys_never_returned", ["vendor": "netfunnel"]) == 0)
        // every room of the dashboard's status is there, with the same labels
        for vendor in status["vendors"]?.arrayValue ?? [] {
            let id = try #require(vendor["vendor"]?.stringValue)
            for r in vendor["rooms"]?.arrayValue ?? [] {
                let labels = ["vendor": id, "scope": r["scope"]?.stringValue ?? "", "room": r["room"]?.stringValue ?? ""]
                #expect(scrape.value("users_waiting", labels) != nil, "\(labels)")
                #expect(scrape.value("admission_rate_per_second", labels) != nil, "\(labels)")
            }
        }
        let check = try Self.promtool(scrape.text)
        #expect(check.status == 0, "promtool check metrics: \(check.output)\n\(scrape.text)")
        await server.stop()
    }

    // MARK: - bounds

    /// A client that sends a thousand made-up opcodes cannot make a thousand series more than the
    /// bound: past ``EmulatorMetricsEndpoint/seriesLimit`` they are summed in one `other` series,
    /// and the sum still equals the emulator's count.
    @Test func madeUpOpcodesStayWithinTheSeriesBound() async throws {
        let suite = EmulatorSuite.demo()
        let server = try await suite.start(host: "127.0.0.1", port: 0)
        let base = server.baseURL
        _ = try await Self.send(HTTPRequest(url: "/ts.wseq?opcode=5101&sid=service_1&aid=segKey_basic&js=yes"), to: base)
        let first = try await Self.scrape(base)
        #expect(first.value("requests_total", ["vendor": "netfunnel", "kind": "opcode 5101"]) == 1)
        let madeUp = EmulatorMetricsEndpoint.seriesLimit + 20
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for opcode in stride(from: 10_000 + worker, to: 10_000 + madeUp, by: 8) {
                        _ = try await Self.send(HTTPRequest(url: "/ts.wseq?opcode=\(opcode)&sid=service_1&aid=segKey_basic"), to: base)
                    }
                }
            }
            try await group.waitForAll()
        }
        let scrape = try await Self.scrape(base)
        let counters = try await Self.json(base, "/_emulator/netfunnel/counters")
        let requests = try #require(counters["requests"]?.objectValue)
        #expect(requests.count == madeUp + 1)
        let series = scrape.series("requests_total", matching: ["vendor": "netfunnel"])
        #expect(series.count == EmulatorMetricsEndpoint.seriesLimit + 1, "the bound and one series for the rest")
        #expect(scrape.value("requests_total", ["vendor": "netfunnel", "kind": "other"]) != nil)
        #expect(scrape.value("requests_total", ["vendor": "netfunnel", "kind": "opcode 5101"]) == 1, "a kind seen first stays")
        let total = requests.values.reduce(0) { $0 + ($1.numberValue ?? 0) }
        #expect(series.reduce(0) { $0 + $1.value } == total)
        Self.checkMonotonic(from: first, to: scrape)
        Self.checkMonotonic(from: scrape, to: try await Self.scrape(base))
        await server.stop()
    }

    /// What a vendor might report that would break the format (a bad name, a reserved label, no
    /// label, a negative counter, a value that is not a number, one family as a counter and a
    /// gauge, two HELP texts) is left out or settled, never a crash; promtool accepts the rest.
    @Test func renderingLeavesOutWhatWouldBreakTheFormat() throws {
        let good = EmulatorMetric(name: "waitingroom_emulator_things_total", help: "Things.", kind: .counter)
        let samples = [
            EmulatorMetricSample(good, labels: ["vendor": "x", "kind": "a \"quoted\"\nline \\"], value: 2),
            EmulatorMetricSample(good, labels: ["vendor": "x", "kind": "a \"quoted\"\nline \\"], value: 3),
            EmulatorMetricSample(EmulatorMetric(name: good.name, help: "Other help.", kind: .counter), labels: ["vendor": "y"], value: 1),
            EmulatorMetricSample(EmulatorMetric(name: good.name, help: "Things.", kind: .gauge), labels: ["vendor": "z"], value: 7),
            EmulatorMetricSample(good, labels: ["vendor": "x", "kind": "negative"], value: -1),
            EmulatorMetricSample(good, labels: [:], value: 1),
            EmulatorMetricSample(good, labels: ["vendor": "x", "__reserved": "1"], value: 1),
            EmulatorMetricSample(EmulatorMetric(name: "bad-name", help: "Bad.", kind: .gauge), labels: ["vendor": "x"], value: 1),
            EmulatorMetricSample(.usersWaiting, labels: ["vendor": "x", "scope": "s", "room": "r"], value: .nan),
            EmulatorMetricSample(.usersWaiting, labels: ["vendor": "x", "scope": "s", "room": "r2"], value: 4),
            EmulatorMetricSample(
                EmulatorMetric(name: "waitingroom_emulator_quiet", help: "", kind: .gauge), labels: ["vendor": "x"], value: 1)
        ]
        let text = EmulatorMetricsEndpoint.render(samples)
        let scrape = try Scrape(text)
        #expect(
            scrape.value("things_total", ["vendor": "x", "kind": "a \"quoted\"\nline \\"]) == 5,
            "counters with the same labels add up\n\(text)")
        #expect(scrape.value("things_total", ["vendor": "y"]) == 1)
        #expect(scrape.series("things_total", matching: [:]).count == 2, "\(text)")
        #expect(scrape.help[Self.prefix + "things_total"] == "Things.")
        #expect(scrape.series("users_waiting", matching: [:]).map(\.labels) == [["vendor": "x", "scope": "s", "room": "r2"]])
        #expect(!text.contains("bad-name") && !text.contains("__reserved"))
        #expect(scrape.help[Self.prefix + "quiet"]?.isEmpty == false, "a family without HELP text gets one")
        let check = try Self.promtool(text)
        #expect(check.status == 0, "promtool check metrics: \(check.output)\n\(text)")
    }

    // MARK: - checks

    /// One scrape on its own: every family has HELP and TYPE, counters end in `_total`, and the
    /// load's room is within its limit (inside ≤ limit, inside ≤ admitted, inside ≤ keys never
    /// returned: held keys are never returned yet; all read in one snapshot of the emulator).
    static func checkConsistent(_ scrape: Scrape, room: [String: String], limit: Double) {
        for name in Set(scrape.all.map(\.name)) {
            #expect(name.hasPrefix(prefix), "\(name)")
            #expect(scrape.help[name]?.isEmpty == false, "\(name) has HELP text")
            let type = scrape.types[name]
            #expect(type == "counter" || type == "gauge", "\(name): \(type ?? "no TYPE")")
            #expect((type == "counter") == name.hasSuffix("_total"), "\(name)")
        }
        let inside = scrape.value("users_inside", room) ?? -1
        let admitted = scrape.value("admitted_total", room) ?? -1
        let neverReturned = scrape.value("keys_never_returned", ["vendor": "netfunnel"]) ?? -1
        #expect(inside >= 0 && inside <= limit, "inside \(inside)")
        #expect(inside <= admitted, "inside \(inside), admitted \(admitted)")
        #expect(inside <= neverReturned, "inside \(inside), keys never returned \(neverReturned)")
        #expect((scrape.value("users_waiting", room) ?? -1) >= 0)
        #expect((scrape.value("admission_rate_per_second", room) ?? -1) >= 0)
        for vendor in ["netfunnel", "queueit", "crowdhandler"] {
            #expect(scrape.value("faults_injected_total", ["vendor": vendor]) != nil, "\(vendor)")
            #expect(scrape.value("faults_pending", ["vendor": vendor]) != nil, "\(vendor)")
        }
        #expect(scrape.value("users_waiting", ["vendor": "queueit", "scope": "demo", "room": "sale"]) != nil)
        #expect(scrape.value("users_waiting", ["vendor": "crowdhandler", "scope": "site", "room": "demo-queue"]) != nil)
    }

    /// Every counter of `earlier` is in `later`, not smaller.
    static func checkMonotonic(from earlier: Scrape, to later: Scrape) {
        for s in earlier.all where earlier.types[s.name] == "counter" {
            let now = later.all.first { $0.name == s.name && $0.labels == s.labels }?.value
            #expect((now ?? -1) >= s.value, "\(s.name)\(s.labels): \(s.value) then \(now.map { "\($0)" } ?? "gone")")
        }
    }

    /// The figures `/_emulator/status` gives for every room and vendor, read right after the scrape.
    static func checkEqualsStatus(_ scrape: Scrape, _ status: JSONValue) {
        for vendor in status["vendors"]?.arrayValue ?? [] {
            let id = vendor["vendor"]?.stringValue ?? ""
            for r in vendor["rooms"]?.arrayValue ?? [] {
                let labels = ["vendor": id, "scope": r["scope"]?.stringValue ?? "", "room": r["room"]?.stringValue ?? ""]
                #expect(scrape.value("users_waiting", labels) == r["waiting"]?.numberValue, "\(labels)")
                #expect(scrape.value("admitted_total", labels) == r["admittedTotal"]?.numberValue, "\(labels)")
                #expect(scrape.value("users_inside", labels) == r["inside"]?.numberValue, "\(labels)")
                if id != "netfunnel" {  // NetFUNNEL's rate is measured over a window that moves on with time
                    #expect(scrape.value("admission_rate_per_second", labels) == r["rate"]?.numberValue, "\(labels)")
                }
            }
            #expect(scrape.value("faults_injected_total", ["vendor": id]) == vendor["faultsInjected"]?.numberValue, "\(id)")
            #expect(scrape.value("faults_pending", ["vendor": id]) == vendor["faultsPending"]?.numberValue, "\(id)")
            #expect(scrape.value("keys_never_returned", ["vendor": id]) == vendor["keysNeverReturned"]?.numberValue, "\(id)")
        }
    }

    // MARK: - HTTP, promtool

    static func send(_ request: HTTPRequest, to base: String) async throws -> HTTPResponse {
        var r = request
        r.url = base + r.url
        // 30 s: a CI run once froze the whole machine for about 20 s (every test in flight ended
        // at 20.0–20.4 s) and a 10 s bound failed the first scrape
        r.timeout = .seconds(30)
        return try await AsyncHTTPTransport.shared.send(r)
    }

    static func scrape(_ base: String) async throws -> Scrape {
        let response = try await send(HTTPRequest(url: "/metrics"), to: base)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.headers.value(for: "content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
        return try Scrape(response.text)
    }

    static func json(_ base: String, _ path: String) async throws -> JSONValue {
        let response = try await send(HTTPRequest(url: path), to: base)
        #expect(response.status == 200, "\(path): \(response.text)")
        return try JSONValue.parse(response.text)
    }

    /// `promtool check metrics` with `text` on its stdin: its exit status and what it printed.
    static func promtool(_ text: String) throws -> (status: Int32, output: String) {
        let path = "/usr/bin/promtool"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            Issue.record("promtool is missing (\(path), Debian package prometheus): run Scripts/setup")
            return (-1, "promtool missing")
        }
        let (status, printed) = try SpawnedProcess.run(path, arguments: ["check", "metrics"], input: Array(text.utf8))
        return (status, String(decoding: printed, as: UTF8.self))
    }
}

extension EmulatorMetricsTests {
    /// How many load sessions have finished.
    final class Finished: Sendable {
        private let value = Mutex(0)
        func add() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    /// One `/metrics` text, parsed: HELP and TYPE per family, and every sample with its labels.
    struct Scrape: Sendable {
        struct Sample: Sendable {
            var name: String
            var labels: [String: String]
            var value: Double
        }

        struct Malformed: Error, CustomStringConvertible {
            var line: String
            var description: String { "malformed metrics line: \(line)" }
        }

        let text: String
        private(set) var help: [String: String] = [:]
        private(set) var types: [String: String] = [:]
        private(set) var all: [Sample] = []

        init(_ text: String) throws {
            self.text = text
            for line in text.split(separator: "\n").map(String.init) {
                if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                    let rest = line.dropFirst(7)
                    let name = String(rest.prefix { $0 != " " })
                    let value = String(rest.dropFirst(name.count + 1))
                    if line.hasPrefix("# HELP ") { help[name] = value } else { types[name] = value }
                } else if !line.hasPrefix("#") {
                    all.append(try Self.sample(line))
                }
            }
        }

        /// `name{label="value",…} value`, label values with `\\`, `\"` and `\n` escapes.
        static func sample(_ line: String) throws -> Sample {
            var chars = Array(line)[...]
            let name = String(chars.prefix { $0 != "{" && $0 != " " })
            chars = chars.dropFirst(name.count)
            var labels: [String: String] = [:]
            if chars.first == "{" {
                chars = chars.dropFirst()
                while chars.first != "}" {
                    let label = String(chars.prefix { $0 != "=" })
                    chars = chars.dropFirst(label.count)
                    guard chars.first == "=", chars.dropFirst().first == "\"" else { throw Malformed(line: line) }
                    chars = chars.dropFirst(2)
                    var value = ""
                    while let c = chars.first, c != "\"" {
                        chars = chars.dropFirst()
                        if c == "\\", let escaped = chars.first {
                            chars = chars.dropFirst()
                            value.append(escaped == "n" ? "\n" : escaped)
                        } else {
                            value.append(c)
                        }
                    }
                    guard chars.first == "\"" else { throw Malformed(line: line) }
                    chars = chars.dropFirst()
                    labels[label] = value
                    if chars.first == "," { chars = chars.dropFirst() }
                    guard !chars.isEmpty else { throw Malformed(line: line) }
                }
                chars = chars.dropFirst()
            }
            let fields = String(chars).split(separator: " ")
            guard let first = fields.first, let value = Double(first) else { throw Malformed(line: line) }
            return Sample(name: name, labels: labels, value: value)
        }

        /// The value of `waitingroom_emulator_<name>` with exactly `labels`.
        func value(_ name: String, _ labels: [String: String]) -> Double? {
            all.first { $0.name == EmulatorMetricsTests.prefix + name && $0.labels == labels }?.value
        }

        /// The samples of `waitingroom_emulator_<name>` whose labels include `labels`.
        func series(_ name: String, matching labels: [String: String]) -> [Sample] {
            all.filter { s in s.name == EmulatorMetricsTests.prefix + name && labels.allSatisfy { s.labels[$0.key] == $0.value } }
        }
    }
}
