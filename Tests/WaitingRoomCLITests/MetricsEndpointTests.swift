import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomMetricsEndpoint
import WaitingRoomTesting
import WebDriver

@testable import WaitingRoomCLI

/// Issue 28 §3: `--metrics-port` on `run`, `load` and `demo`, and `GET /metrics` while `load`
/// runs, checked by `promtool check metrics`.
///
/// The endpoint is only ever started in a child `waitingroom` process: starting it here would
/// bootstrap swift-metrics for the whole test process, which other suites may want to do.
@Suite("metrics endpoint", .serialized, .timeLimit(.minutes(3)))
struct MetricsEndpointTests {
    static let promtool = "/usr/bin/promtool"

    /// Text a child writes, collected as it comes (the reader drains the pipe to its end, so a
    /// chatty child never blocks on a full pipe).
    final class Collected: Sendable {
        private let text = Mutex("")
        func append(_ data: Data) { text.withLock { $0 += String(decoding: data, as: UTF8.self) } }
        var value: String { text.withLock { $0 } }

        /// Reads `fd` to its end (and closes it) on a thread of its own.
        static func draining(_ fd: Int32?) -> (Collected, Task<Void, Never>) {
            let collected = Collected()
            let task = Task {
                await DedicatedThread.run(name: "metrics.drain") {
                    while true {
                        let data = SpawnedProcess.readSome(fd)
                        if data.isEmpty { break }
                        collected.append(data)
                    }
                    if let fd { close(fd) }
                }
            }
            return (collected, task)
        }
    }

    /// Runs `promtool check metrics` on `text`: its exit status and what it printed.
    static func promtoolCheck(_ text: String) async throws -> (status: Int32, output: String) {
        try await DedicatedThread.run(name: "promtool") {
            let (status, printed) = try SpawnedProcess.run(promtool, arguments: ["check", "metrics"], input: Array(text.utf8))
            return (status, String(decoding: printed, as: UTF8.self))
        }
    }

    @Test func loadServesPrometheusTextWhileItRunsAndStopsAfter() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.promtool),
            "\(Self.promtool) is missing: run Scripts/setup (it installs Debian's prometheus package, which has promtool)")
        let process = try SpawnedProcess.spawn(
            CLIProcess.binary,
            arguments: [
                "load", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "act_10",
                "--users", "40", "--hold", "0.5", "--metrics-port", "0"
            ], directory: CLIProcess.packageRoot, stdin: .discard)
        let (out, outDrained) = Collected.draining(process.stdout)
        let (err, errDrained) = Collected.draining(process.stderr)
        defer { if process.isRunning { process.terminate() } }

        // the address, on stderr, before anything else happens
        let deadline = ContinuousClock.now + .seconds(60)
        var url: String?
        while url == nil, ContinuousClock.now < deadline, process.isRunning {
            url = err.value.split(separator: "\n").first { $0.hasPrefix("metrics: ") }.map { String($0.dropFirst("metrics: ".count)) }
            if url == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let address = try #require(url, "no 'metrics: URL' line on stderr: \(err.value)")
        #expect(address.hasPrefix("http://127.0.0.1:") && address.hasSuffix("/metrics"), "\(address)")

        // scrape while the load runs
        var scrapes = 0
        var last: HTTPResponse?
        while process.isRunning, ContinuousClock.now < deadline {
            if let response = try? await AsyncHTTPTransport.shared.send(HTTPRequest(url: address, timeout: .seconds(5))), process.isRunning
            {
                scrapes += 1
                last = response
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        let status = await DedicatedThread.run(name: "load.wait") { process.waitForExit() }
        await outDrained.value
        await errDrained.value
        #expect(status == 0, "load: \(err.value)")
        #expect(out.value.contains("passed 40"), "\(out.value)")
        #expect(scrapes > 0, "/metrics never answered while load ran")
        let response = try #require(last)
        #expect(response.status == 200)
        #expect(response.headers.value(for: "Content-Type") == "text/plain; version=0.0.4")
        let text = String(decoding: response.body, as: UTF8.self)
        let check = try await Self.promtoolCheck(text)
        #expect(check.status == 0, "promtool check metrics: \(check.output)\n\(text)")
        // Tolerant: the SDK's own metrics (the core's WaitingRoomMetrics) count sessions once
        // they are in the build; until then the registry may be empty, which is valid text too.
        if text.contains("waitingroom_sessions_started_total") {
            let line = text.split(separator: "\n").first { $0.hasPrefix("waitingroom_sessions_started_total{") }
            #expect(line?.contains("vendor=\"netfunnel\"") == true && line?.contains("room=\"act_10\"") == true, "\(text)")
            #expect(line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0 > 0, "\(text)")
        }
        // and it stopped with the command (the port may be reused by another test's server by now,
        // but not for these metrics)
        let after = try? await AsyncHTTPTransport.shared.send(HTTPRequest(url: address, timeout: .seconds(5)))
        #expect(
            after.map { String(decoding: $0.body, as: UTF8.self).contains("waitingroom_") } != true, "\(address) still serves after load")
    }

    @Test func runLoadAndDemoTakeTheOptionAndRefuseABadPort() throws {
        let parser = WaitingRoomCommand.parser
        func parsed(_ words: [String]) throws(UsageError) -> (any CLICommand)? {
            guard case .run(let command) = try parser.parse(words) else { return nil }
            return command
        }
        #expect((try parsed(["run", "f.lua", "--metrics-port", "9464"]) as? RunCommand)?.metricsOptions.metricsPort == 9464)
        #expect((try parsed(["demo", "--metrics-port", "0"]) as? DemoCommand)?.metricsOptions.metricsPort == 0)
        let load = try parsed(["load", "--vendor", "netfunnel", "--scope", "s", "--room", "r", "--metrics-port=65535"]) as? LoadCommand
        #expect(load?.metricsOptions.metricsPort == 65535)
        #expect(
            (try parsed(["load", "--vendor", "netfunnel", "--scope", "s", "--room", "r"]) as? LoadCommand)?.metricsOptions.metricsPort
                == nil)
        for bad in ["65536", "-1"] {
            #expect(throws: UsageError.self, "--metrics-port \(bad)") { _ = try parsed(["demo", "--metrics-port", bad]) }
        }
        do {
            _ = try parsed(["run", "f.lua", "--metrics-port", "70000"])
            Issue.record("--metrics-port 70000 was taken")
        } catch {
            #expect(error.message == "--metrics-port must be 0…65535")
        }
    }

    @Test func everyFamilyGetsAHelpLineOnce() {
        let text = """
            # TYPE waitingroom_events_total counter
            waitingroom_events_total{vendor="netfunnel",event="passed"} 3
            # HELP mine_total Already explained.
            # TYPE mine_total counter
            mine_total 1
            # TYPE other_seconds histogram
            other_seconds_count 0

            """
        let out = String(decoding: MetricsHelpText.adding(to: Array(text.utf8)), as: UTF8.self)
        #expect(
            out == """
                # HELP waitingroom_events_total Session events delivered, by vendor and event name.
                # TYPE waitingroom_events_total counter
                waitingroom_events_total{vendor="netfunnel",event="passed"} 3
                # HELP mine_total Already explained.
                # TYPE mine_total counter
                mine_total 1
                # HELP other_seconds other_seconds (a swift-metrics metric of this process).
                # TYPE other_seconds histogram
                other_seconds_count 0

                """)
        #expect(MetricsHelpText.adding(to: []) == [])
        #expect(MetricsHelpText.escape("a\\b\nc") == "a\\\\b\\nc")
    }
}
