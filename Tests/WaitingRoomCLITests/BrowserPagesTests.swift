import CrowdHandler
import CrowdHandlerEmulator
import Foundation
import NetFUNNELEmulator
import QueueItEmulator
import Testing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomHTTP
import WaitingRoomVendors

/// The emulators' pages, the `/_emulator/` dashboard and the load report in a real headless
/// chromium, against the combined emulator on 127.0.0.1 port 0. Real time; generous deadlines.
@Suite("pages in headless chromium", .serialized, .timeLimit(.minutes(6)))
struct BrowserPagesTests {
    static func get(_ url: String) async throws -> HTTPResponse {
        try await AsyncHTTPTransport.shared.send(HTTPRequest(url: url, timeout: .seconds(20)))
    }

    static func post(_ url: String, json: String? = nil) async throws -> HTTPResponse {
        try await AsyncHTTPTransport.shared.send(
            HTTPRequest(
                method: "POST", url: url, headers: [("Content-Type", "application/json")],
                body: json.map { Array($0.utf8) } ?? Array("{}".utf8),
                timeout: .seconds(20)))
    }

    /// One NetFUNNEL request in the native dialect: the result code and the parameters.
    static func wire(_ base: String, _ query: String) async throws -> (code: Int, params: [String: String]) {
        let text = try await get(base + "/ts.wseq?" + query).text
        let parts = text.split(separator: ":", maxSplits: 1)
        let code = try #require(Int(parts.first ?? ""), "not a NetFUNNEL reply: \(text)")
        var params: [String: String] = [:]
        for pair in (parts.count > 1 ? parts[1] : "").split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { params[String(kv[0])] = String(kv[1]) }
        }
        return (code, params)
    }

    // MARK: NetFUNNEL

    @Test func netfunnelWaitingPageCountsDownThenReturnsTheKeyAndHandsOver() async throws {
        let suite = EmulatorSuite.demo()
        suite.netfunnel.updateSegment(project: "service_1", segment: "page") { s in
            s.limit = 1
            s.ttlMin = 1
            s.ttlMax = 1
            s.timeoutSeconds = 300
            s.retentionSeconds = 300
            s.liveMessage = "Tickets go on sale in order of arrival"
        }
        let server = try await suite.start()
        await HeadlessBrowser.run { browser in
            let base = server.baseURL
            // Two users ahead: A is admitted (holds the only slot), B waits at the head of the line.
            let a = try await Self.wire(base, "opcode=5101&sid=service_1&aid=page")
            #expect(a.code == 200)
            let b = try await Self.wire(base, "opcode=5101&sid=service_1&aid=page")
            #expect(b.code == 201)
            try await browser.open(base + "/_emulator/netfunnel/waiting-room.html?sid=service_1&aid=page")
            _ = try await browser.run("window.__sameDocument = 'kept'; return true;")
            var seen: [String] = []
            func ahead() async throws -> String? { try await browser.text(ofElement: "ahead", keepingChangesIn: &seen) }
            #expect(try await browser.waitUntil(timeout: .seconds(60)) { try await ahead() == "1" }, "ahead: \(seen)")
            #expect(try await browser.text(ofElement: "message") == "Tickets go on sale in order of arrival")
            #expect(try await browser.text(ofElement: "behind") == "0")
            // A returns its key; B's next poll admits B: the page's user is now first in line.
            #expect(try await Self.wire(base, "opcode=5004&key=\(try #require(a.params["key"]))").code == 200)
            let bIn = try await Self.wire(base, "opcode=5002&sid=service_1&aid=page&key=\(try #require(b.params["key"]))")
            #expect(bIn.code == 200)
            #expect(try await browser.waitUntil(timeout: .seconds(60)) { try await ahead() == "0" }, "ahead: \(seen)")
            let progress = try await browser.run("return document.getElementById('progress').getAttribute('aria-valuenow');").stringValue
            #expect(progress == "50", "aria-valuenow \(progress ?? "nil")")
            #expect(try await browser.run("return window.__sameDocument || null;").stringValue == "kept", "the page was reloaded")
            // B leaves: the page's user is admitted, returns the key (5004) and goes to the target.
            #expect(try await Self.wire(base, "opcode=5004&key=\(try #require(bIn.params["key"]))").code == 200)
            var url = ""
            #expect(
                try await browser.waitUntil(timeout: .seconds(60)) {
                    url = try await browser.currentURL()
                    return url.contains("/_emulator/netfunnel/target.html")
                }, "still at \(url)")
            #expect(url.contains("netfunnel=passed"))
            #expect(try await browser.text(ofElement: "welcome") == "Welcome through segment page")
            #expect(seen.compactMap(Int.init) == seen.compactMap(Int.init).sorted(by: >), "the position never rose: \(seen)")
            let counters = suite.netfunnel.counters()
            #expect(counters.keysReturned == 3, "\(counters)")
            #expect(counters.keysNeverReturned == 0, "\(counters)")
            try await browser.expectNoConsoleErrors()
        }
        await server.stop()
    }

    // MARK: Queue-it

    @Test func queueItQueuePageCountsDownThenHandsOverWithAQueueittoken() async throws {
        var configuration = QueueItEmulatorConfiguration.demo
        var room = QueueItEmulatorConfiguration.Room(state: .queue, admitPerSecond: 0)
        room.message = "Doors open at noon"
        configuration.customers["demo"]?.rooms["gate"] = room
        let suite = EmulatorSuite(netfunnel: .demo, queueit: configuration)
        let server = try await suite.start()
        await HeadlessBrowser.run { browser in
            let base = server.baseURL
            var queueURL = ""
            for user in ["u1", "u2", "u3"] {
                let reply = try await Self.post(
                    base + "/api/mobileapp/queue/demo/gate/enqueue",
                    json: #"{"userId":"\#(user)","userAgent":"test","sdkVersion":"test"}"#)
                #expect(reply.status == 200)
                let object = try JSONValue.parse(reply.text).objectValue
                queueURL = try #require(object?["QueueUrl"]?.stringValue, "\(reply.text)")
            }
            try await browser.open(queueURL)
            _ = try await browser.run("window.__sameDocument = 'kept'; return true;")
            #expect(try await browser.text(ofElement: "ahead") == "2")
            #expect(try await browser.text(ofElement: "message") == "Doors open at noon")
            var seen: [String] = []
            func ahead() async throws -> String? { try await browser.text(ofElement: "ahead", keepingChangesIn: &seen) }
            _ = try await ahead()
            #expect(try await Self.post(base + "/_emulator/queueit/rooms/demo/gate/admit?count=1").status == 200)
            #expect(try await browser.waitUntil(timeout: .seconds(60)) { try await ahead() == "1" }, "ahead: \(seen)")
            #expect(try await Self.post(base + "/_emulator/queueit/rooms/demo/gate/admit?count=1").status == 200)
            #expect(try await browser.waitUntil(timeout: .seconds(60)) { try await ahead() == "0" }, "ahead: \(seen)")
            let progress = try await browser.run("return document.getElementById('progress').getAttribute('aria-valuenow');").stringValue
            #expect(progress == "66", "aria-valuenow \(progress ?? "nil")")
            #expect(try await browser.run("return window.__sameDocument || null;").stringValue == "kept", "the page was reloaded")
            #expect(try await Self.post(base + "/_emulator/queueit/rooms/demo/gate/admit?count=1").status == 200)
            var url = ""
            #expect(
                try await browser.waitUntil(timeout: .seconds(60)) {
                    url = try await browser.currentURL()
                    return url.contains("/queueit/target/demo/gate")
                }, "still at \(url)")
            let token = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "queueittoken" }?.value, "\(url)")
            #expect(token.hasPrefix("e_gate~"))
            #expect(seen == ["2", "1", "0"], "ahead: \(seen)")
            #expect(suite.queueit.counters.passedVisitors == 1)
            try await browser.expectNoConsoleErrors()
        }
        await server.stop()
    }

    // MARK: CrowdHandler

    /// One CrowdHandler API call with the demo public key; the JSON answer.
    static func crowdHandler(_ method: String, _ url: String, json: String? = nil) async throws -> HTTPResponse {
        try await AsyncHTTPTransport.shared.send(
            HTTPRequest(
                method: method, url: url,
                headers: [("Content-Type", "application/json"), ("x-api-key", CrowdHandlerEmulatorConfiguration.demoPublicKey)],
                body: json.map { Array($0.utf8) }, timeout: .seconds(20)))
    }

    @Test func crowdHandlerWaitingPageCountsDownThenHandsOverWithASignedToken() async throws {
        var configuration = CrowdHandlerEmulatorConfiguration.demo
        configuration.rooms["gate"] = CrowdHandlerEmulatorConfiguration.Room(capacity: 0, rate: 0, message: "Doors open at noon")
        let suite = EmulatorSuite(netfunnel: .demo, queueit: .demo, crowdhandler: configuration)
        let server = try await suite.start()
        await HeadlessBrowser.run { browser in
            let base = server.baseURL
            // Two users ahead in the line of gate (capacity 0: nobody at once; rate 0: only admin admits).
            for _ in 0..<2 {
                let reply = try await Self.crowdHandler("POST", base + "/v1/requests", json: #"{"url":"/site/gate"}"#)
                let result = try JSONValue.parse(reply.text).objectValue?["result"]?.objectValue
                #expect(reply.status == 200 && result?["promoted"] == .number(0), "\(reply.text)")
            }
            // The dashboard's link to the room's waiting page.
            let page = try #require(suite.crowdhandler.emulatorStatus().rooms.first { $0.key.room == "gate" }?.queuePagePath)
            try await browser.open(base + page)
            _ = try await browser.run("window.__sameDocument = 'kept'; return true;")
            var seen: [String] = []
            func ahead() async throws -> String? { try await browser.text(ofElement: "ahead", keepingChangesIn: &seen) }
            #expect(try await browser.waitUntil(timeout: .seconds(60)) { try await ahead() == "2" }, "ahead: \(seen)")
            #expect(try await browser.text(ofElement: "position") == "3")
            #expect(try await browser.text(ofElement: "behind") == "0")
            #expect(try await browser.text(ofElement: "message") == "Doors open at noon")
            #expect(try await Self.post(base + "/_emulator/crowdhandler/rooms/gate/admit", json: #"{"count":1}"#).status == 200)
            #expect(try await browser.waitUntil(timeout: .seconds(60)) { try await ahead() == "1" }, "ahead: \(seen)")
            #expect(try await Self.post(base + "/_emulator/crowdhandler/rooms/gate/admit", json: #"{"count":1}"#).status == 200)
            #expect(try await browser.waitUntil(timeout: .seconds(60)) { try await ahead() == "0" }, "ahead: \(seen)")
            let progress = try await browser.run("return document.querySelector('[role=progressbar]').getAttribute('aria-valuenow');")
                .stringValue
            #expect(progress == "66", "aria-valuenow \(progress ?? "nil")")
            #expect(try await browser.run("return window.__sameDocument || null;").stringValue == "kept", "the page was reloaded")
            // The page's user is promoted: it goes to the target with ch-id, ch-id-signature and ch-requested.
            #expect(try await Self.post(base + "/_emulator/crowdhandler/rooms/gate/admit", json: #"{"count":1}"#).status == 200)
            var url = ""
            #expect(
                try await browser.waitUntil(timeout: .seconds(60)) {
                    url = try await browser.currentURL()
                    return URLComponents(string: url)?.path == "/site/gate"
                }, "still at \(url)")
            let query = URLComponents(string: url)?.queryItems ?? []
            func item(_ name: String) -> String? { query.first { $0.name == name }?.value }
            let token = try #require(item("ch-id"), "\(url)")
            let requested = try #require(item("ch-requested"), "\(url)")
            let room = try #require(configuration.rooms["gate"])
            let expected = CrowdHandlerSignature(privateKey: configuration.privateKey)
                .sign(slug: "gate", queueActivatesOn: room.queueActivatesOn, token: token, requested: requested)
            #expect(item("ch-id-signature") == expected, "\(url)")
            #expect(try await browser.text(ofElement: "through") == "You are through")
            #expect(seen == ["2", "1", "0"], "ahead: \(seen)")
            #expect(suite.crowdhandler.counters.promoted == 3)
            try await browser.expectNoConsoleErrors()
        }
        await server.stop()
    }

    @Test func dashboardShowsCrowdHandlerRoomsAndCounters() async throws {
        var configuration = CrowdHandlerEmulatorConfiguration.demo
        configuration.rooms["line"] = CrowdHandlerEmulatorConfiguration.Room(capacity: 0, rate: 0)
        let suite = EmulatorSuite(netfunnel: .demo, queueit: .demo, crowdhandler: configuration)
        let server = try await suite.start()
        await HeadlessBrowser.run { browser in
            let base = server.baseURL
            // Three users in line, one let in at demo-open, one refused at demo-blocked; two faults on
            // GET /v1/rooms, one of them used.
            for _ in 0..<3 { _ = try await Self.crowdHandler("POST", base + "/v1/requests", json: #"{"url":"/site/line"}"#) }
            _ = try await Self.crowdHandler("POST", base + "/v1/requests", json: #"{"url":"/site/demo-open"}"#)
            #expect(try await Self.crowdHandler("POST", base + "/v1/requests", json: #"{"url":"/site/demo-blocked"}"#).status == 403)
            #expect(
                try await Self.post(base + "/_emulator/crowdhandler/faults", json: #"{"kind":"status","on":"rooms","count":2}"#).status
                    == 200)
            #expect(try await Self.crowdHandler("GET", base + "/v1/rooms").status == 503)
            try await browser.open(base + "/_emulator/")
            #expect(
                try await browser.waitUntil(timeout: .seconds(60)) {
                    Int(try await browser.run("return document.body.getAttribute('data-polls');").stringValue ?? "0") ?? 0 >= 2
                }, "the dashboard never polled twice")
            func shown(_ selector: String) async throws -> String? {
                try await browser.run("var e = document.querySelector('\(selector)'); return e ? e.textContent : null;").stringValue
            }
            func number(_ v: JSONValue?) -> String { v?.numberValue.map { String(Int($0)) } ?? "nil" }
            let state = try JSONValue.parse(try await Self.get(base + "/_emulator/crowdhandler/state").text).objectValue ?? [:]
            let counters = state["counters"]?.objectValue ?? [:]
            let rooms = state["rooms"]?.objectValue ?? [:]
            #expect(try await shown(#"b[data-vendor="crowdhandler"][data-field="faultsInjected"]"#) == number(counters["faultsInjected"]))
            #expect(try await shown(#"b[data-vendor="crowdhandler"][data-field="faultsPending"]"#) == number(state["faultsPending"]))
            #expect(try await shown(#"b[data-vendor="crowdhandler"][data-field="keysNeverReturned"]"#) == "—")
            #expect(number(counters["faultsInjected"]) == "1" && number(state["faultsPending"]) == "1")
            let line = rooms["line"]?.objectValue
            #expect(try await shown(#"td[data-room="crowdhandler/site/line"][data-field="waiting"]"#) == number(line?["waiting"]))
            #expect(try await shown(#"td[data-room="crowdhandler/site/line"][data-field="state"]"#) == "queue")
            #expect(number(line?["waiting"]) == "3")
            let open = rooms["demo-open"]?.objectValue
            #expect(
                try await shown(#"td[data-room="crowdhandler/site/demo-open"][data-field="admittedTotal"]"#) == number(open?["admitted"]))
            #expect(number(open?["admitted"]) == "1")
            #expect(try await shown(#"td[data-room="crowdhandler/site/demo-blocked"][data-field="state"]"#) == "blocked")
            let link = try await browser.run(
                """
                var a = document.querySelector('tr[data-room-row="crowdhandler/site/line"] a'); return a ? a.getAttribute('href') : null;
                """
            ).stringValue
            #expect(link?.hasPrefix("/line?") == true, "\(link ?? "nil")")
            // Controls go through CrowdHandler's admin routes: admit one, then set the rate (the
            // capacity stays as it was).
            _ = try await browser.run(
                """
                var row = document.querySelector('tr[data-room-row="crowdhandler/site/line"]');
                Array.prototype.find.call(row.querySelectorAll('button'), function (b) { return b.textContent === 'Admit 1'; }).click();
                return true;
                """)
            #expect(
                try await browser.waitUntil(timeout: .seconds(30)) {
                    try await shown(#"td[data-room="crowdhandler/site/line"][data-field="waiting"]"#) == "2"
                })
            #expect(suite.crowdhandler.waiting()["line"] == 2)
            _ = try await browser.run(
                """
                var row = document.querySelector('tr[data-room-row="crowdhandler/site/line"]');
                row.querySelector('input').value = '6';
                row.querySelector('button').click();
                return true;
                """)
            #expect(
                await browser.waitUntil(timeout: .seconds(30)) {
                    suite.crowdhandler.snapshot().objectValue?["rooms"]?.objectValue?["line"]?.objectValue?["rate"] == .number(6)
                })
            #expect(suite.crowdhandler.snapshot().objectValue?["rooms"]?.objectValue?["line"]?.objectValue?["capacity"] == .number(0))
            try await browser.expectNoConsoleErrors()
        }
        await server.stop()
    }

    // MARK: dashboard

    @Test func dashboardShowsTheCountersOfEveryVendor() async throws {
        let suite = EmulatorSuite.demo()
        let server = try await suite.start()
        await HeadlessBrowser.run { browser in
            let base = server.baseURL
            // Some state: NetFUNNEL segKey_basic (limit 1): one inside, two waiting; one fault used.
            for _ in 0..<3 { _ = try await Self.wire(base, "opcode=5101&sid=service_1&aid=segKey_basic") }
            #expect(
                try await Self.post(base + "/_emulator/netfunnel/faults", json: #"{"opcode":5101,"httpStatus":503,"count":1}"#).status
                    == 200)
            #expect(try await Self.get(base + "/ts.wseq?opcode=5101&sid=service_1&aid=act_10").status == 503)
            // Queue-it: two waiting in flash, one fault used on enqueue, one pending.
            #expect(try await Self.post(base + "/_emulator/queueit/faults", json: #"{"kind":"status","count":2}"#).status == 200)
            for user in ["d1", "d2", "d3", "d4"] {
                _ = try await Self.post(
                    base + "/api/mobileapp/queue/demo/flash/enqueue", json: #"{"userId":"\#(user)","userAgent":"t","sdkVersion":"t"}"#)
            }
            try await browser.open(base + "/_emulator/")
            #expect(
                try await browser.waitUntil(timeout: .seconds(60)) {
                    Int(try await browser.run("return document.body.getAttribute('data-polls');").stringValue ?? "0") ?? 0 >= 2
                }, "the dashboard never polled twice")
            func shown(_ selector: String) async throws -> String? {
                try await browser.run("var e = document.querySelector('\(selector)'); return e ? e.textContent : null;").stringValue
            }
            let counters = try JSONValue.parse(try await Self.get(base + "/_emulator/netfunnel/counters").text).objectValue ?? [:]
            let state = try JSONValue.parse(try await Self.get(base + "/_emulator/netfunnel/state").text)
            let queueit = try JSONValue.parse(try await Self.get(base + "/_emulator/queueit/state").text).objectValue ?? [:]
            func number(_ v: JSONValue?) -> String { v?.numberValue.map { String(Int($0)) } ?? "nil" }
            #expect(try await shown(#"b[data-vendor="netfunnel"][data-field="faultsInjected"]"#) == number(counters["faultsInjected"]))
            #expect(
                try await shown(#"b[data-vendor="netfunnel"][data-field="keysNeverReturned"]"#) == number(counters["keysNeverReturned"]))
            #expect(try await shown(#"b[data-vendor="netfunnel"][data-field="waiting"]"#) == number(counters["waiting"]))
            let basic = state.objectValue?["projects"]?.objectValue?["service_1"]?.objectValue?["segments"]?.objectValue?["segKey_basic"]?
                .objectValue
            #expect(
                try await shown(#"td[data-room="netfunnel/service_1/segKey_basic"][data-field="waiting"]"#) == number(basic?["waiting"]))
            #expect(
                try await shown(#"td[data-room="netfunnel/service_1/segKey_basic"][data-field="inside"]"#) == number(basic?["admitted"]))
            #expect(number(basic?["waiting"]) == "2" && number(basic?["admitted"]) == "1")
            #expect(try await shown(#"b[data-vendor="queueit"][data-field="faultsInjected"]"#) == number(queueit["faultsInjected"]))
            #expect(try await shown(#"b[data-vendor="queueit"][data-field="faultsPending"]"#) == number(queueit["pendingFaults"]))
            #expect(try await shown(#"b[data-vendor="queueit"][data-field="keysNeverReturned"]"#) == "—")
            let flash = queueit["customers"]?.objectValue?["demo"]?.objectValue?["rooms"]?.objectValue?["flash"]?.objectValue
            #expect(try await shown(#"td[data-room="queueit/demo/flash"][data-field="waiting"]"#) == number(flash?["waiting"]))
            #expect(number(flash?["waiting"]) == "2" && number(queueit["faultsInjected"]) == "2")
            // A control goes through the vendor's admin route: set segKey_basic's limit to 3.
            _ = try await browser.run(
                """
                var row = document.querySelector('tr[data-room-row="netfunnel/service_1/segKey_basic"]');
                row.querySelector('input').value = '3';
                row.querySelector('button').click();
                return true;
                """)
            #expect(
                try await browser.waitUntil(timeout: .seconds(30)) {
                    try await shown(#"td[data-room="netfunnel/service_1/segKey_basic"][data-field="limit"]"#) == "3"
                })
            #expect(suite.netfunnel.configuration.projects["service_1"]?.segments["segKey_basic"]?.limit == 3)
            let svgPaths = try await browser.run("return document.querySelectorAll('#chart-queue path').length;").numberValue ?? 0
            #expect(svgPaths >= 1, "the queue chart has a line")
            try await browser.expectNoConsoleErrors()
        }
        await server.stop()
    }

    // MARK: load report

    @Test func loadReportOpensWithoutConsoleErrors() async throws {
        let path = CLIProcess.temporaryDirectory() + "/report.html"
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "act_10", "--users", "40",
                "--hold", "0.2", "--chaos", "1", "--set", "retryCount=3", "--json", "--report", path
            ], timeout: .seconds(180))
        #expect(result.status == 0 || result.status == 4, "\(result.stderr)")
        let summary = try JSONValue.parse(result.stdout).objectValue ?? [:]
        #expect(summary["histogram"]?.arrayValue?.isEmpty == false)
        #expect((summary["timeline"]?.objectValue?["points"]?.arrayValue?.count ?? 0) > 2)
        #expect(summary["requests"]?.objectValue?["opcode 5101"] != nil)
        #expect(summary["settings"]?.objectValue?["users"] == .string("40"))
        let html = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("@import"), "no external assets")
        await HeadlessBrowser.run { browser in
            _ = try await browser.consoleErrors()
            try await browser.open(URL(fileURLWithPath: path).absoluteString)
            #expect(
                try await browser.waitUntil(timeout: .seconds(30)) {
                    try await browser.run("return document.body.getAttribute('data-rendered');").stringValue == "yes"
                }, "the report's script did not finish")
            let bars = try await browser.run("return document.querySelectorAll('#chart-histogram rect').length;").numberValue ?? 0
            #expect(bars >= 2)
            let lines =
                try await browser.run("return document.querySelectorAll('#chart-waiting path, #chart-admissions path').length;").numberValue
                ?? 0
            #expect(lines == 2)
            let passed = try await browser.run(
                "var e = document.querySelector('[data-outcome=\"passed\"]'); return e ? e.textContent : null;"
            ).stringValue
            #expect(passed == (summary["outcomes"]?.objectValue?["passed"]?.numberValue).map { String(Int($0)) })
            try await browser.expectNoConsoleErrors()
        }
    }
}
