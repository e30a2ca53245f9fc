import Dispatch
import Foundation
import Testing
import WaitingRoom
import WaitingRoomBench
import WaitingRoomEmulators
import WaitingRoomVendors

/// `waitingroom bench` figures as a script reads them, and the emulator suite without its tools.
@Suite struct BenchFiguresTests {
    @Test func jsonCarriesBaselineRatioAndGoal() throws {
        let figure = CoreBenchmarks.Figure(name: "x vs y", value: 30, unit: "req/s", baseline: 60, goal: "ratio >= 0.5")
        let object = try #require(figure.json(suite: "emulators").objectValue)
        #expect(object["suite"] == .string("emulators") && object["name"] == .string("x vs y") && object["unit"] == .string("req/s"))
        #expect(object["value"] == .number(30) && object["baseline"] == .number(60) && object["ratio"] == .number(0.5))
        #expect(object["goal"] == .string("ratio >= 0.5") && object["skipped"] == nil)
        #expect(figure.description.contains("ratio 0.500×"))

        let plain = try #require((CoreBenchmarks.Figure(name: "n", value: 1, unit: "ns")).json(suite: "core").objectValue)
        #expect(plain["baseline"] == nil && plain["ratio"] == nil && plain["goal"] == nil)
        // a failed measurement (NaN) stays valid JSON
        let failed = (CoreBenchmarks.Figure(name: "n", value: .nan, unit: "", baseline: 0)).json(suite: "core")
        #expect(failed["value"] == .null && failed["ratio"] == nil)
        #expect(try JSONValue.parse(JSONValue.array([failed]).jsonText) == .array([failed]))
    }

    @Test func emulatorSuiteWithoutItsToolsIsSkippedWithTheInstallCommand() async throws {
        let figures = await EmulatorBenchmarks.run(locate: { _ in nil })
        #expect(!figures.isEmpty)
        for figure in figures {
            let skipped = try #require(figure.skipped)
            #expect(skipped.contains("wrk and nginx") && skipped.contains("apt-get install wrk nginx-light"))
            #expect(figure.json(suite: "emulators")["skipped"] == .string(skipped))
        }
        let onlyNginx = await EmulatorBenchmarks.run(locate: { $0 == "wrk" ? "/usr/bin/wrk" : nil })
        #expect(onlyNginx.allSatisfy { $0.skipped?.hasPrefix("needs nginx:") == true })
    }

    @Test func theSuiteStartsItsServersOnlyFromTheWaitingroomBinary() {
        // the test runner is not `waitingroom`: the suite would skip rather than start the runner
        #expect(BenchChildServer.currentExecutable() == nil)
    }

    @Test func loopbackHTTPReadsAStaticReplyAndRejectsOtherHosts() async throws {
        let body = Array(#"{"ok":true}"#.utf8)
        let server = try await StaticReplyServer.start(replies: ["/a.json": .init(contentType: "application/json", body: body)])
        let base = server.baseURL
        // blocking socket calls: on a Dispatch thread, so the server's handlers keep the cooperative pool
        let (get, post, missing) = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        (
                            try LoopbackHTTP.exchange(base + "/a.json"),
                            try LoopbackHTTP.exchange(base + "/a.json", method: "POST", body: Array("x".utf8), contentType: "text/plain"),
                            try LoopbackHTTP.exchange(base + "/nothing")
                        )
                    })
            }
        }
        await server.stop()
        #expect(get.status == 200 && get.body == body)
        #expect(post.status == 200 && post.body == body)
        #expect(missing.status == 404)
        #expect(throws: EmulatorBenchmarks.BenchFailure.self) { try LoopbackHTTP.exchange("http://example.com/") }
        #expect(throws: EmulatorBenchmarks.BenchFailure.self) { try LoopbackHTTP.parse(Array("garbage".utf8), url: "u") }
        let short = Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8)
        #expect(throws: EmulatorBenchmarks.BenchFailure.self) { try LoopbackHTTP.parse(short, url: "u") }
    }

    @Test func toolsAreFoundOnThePathAndInSbin() {
        #expect(EmulatorBenchmarks.tool("sh") != nil)
        #expect(EmulatorBenchmarks.tool("no-such-tool-for-waitingroom") == nil)
    }

    @Test func benchRejectsAnUnknownSuiteAndNamesEmulators() async throws {
        let result = try await CLIProcess.run(["bench", "nosuch"], timeout: .seconds(60))
        #expect(result.status != 0)
        #expect(result.stderr.contains("emulators"))
    }
}
