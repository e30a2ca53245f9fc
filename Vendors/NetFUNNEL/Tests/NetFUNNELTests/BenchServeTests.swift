import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

/// Serves the emulator for `bench/wrk.sh`: `WR_BENCH_SERVE=1 WR_BENCH_PORT=18181
/// WR_BENCH_SECONDS=30 WR_BENCH_URL_FILE=/tmp/url swift test -c release --filter benchServeEmulator`.
/// It takes one key (admitted) and queues a second one, writes the 5002 URL of the waiting key
/// to `WR_BENCH_URL_FILE`, and serves until the time is up.
@Suite("NetFUNNEL bench server")
struct BenchServeTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["WR_BENCH_SERVE"] == "1"))
    func benchServeEmulator() async throws {
        let env = ProcessInfo.processInfo.environment
        let port = Int(env["WR_BENCH_PORT"] ?? "") ?? 18181
        let seconds = Int(env["WR_BENCH_SECONDS"] ?? "") ?? 30
        var segment = NetFUNNELEmulatorConfiguration.Segment(control: .basic, limit: 1)
        segment.timeoutSeconds = 86_400
        segment.retentionSeconds = 86_400
        let emulator = NetFUNNELEmulator(configuration: .init(projects: ["service_1": .init(segments: ["bench": segment])]))
        let server = try await emulator.start(host: "127.0.0.1", port: port)
        let base = server.baseURL
        func call(_ query: String) async throws -> NetFUNNELReply {
            let response = try await AsyncHTTPTransport.shared.send(
                WaitingRoom.HTTPRequest(url: base + "/ts.wseq?" + query, timeout: .seconds(5)))
            return try NetFUNNELReply.parse(response.body)
        }
        let first = try await call("opcode=5101&nfid=0&sid=service_1&aid=bench&js=yes")
        let second = try await call("opcode=5101&nfid=0&sid=service_1&aid=bench&js=yes")
        #expect(first.code == 200 && second.code == 201)
        let key = second.key ?? ""
        let path =
            "/ts.wseq?opcode=5002&key=\(key)&nfid=0&prefix=NetFunnel.gRtype%3D5002%3B&ttl=1&sid=service_1&aid=bench&js=yes&1712345678901"
        if let file = env["WR_BENCH_URL_FILE"] {
            try (base + path).write(toFile: file, atomically: true, encoding: .utf8)
        }
        print("NetFUNNEL bench server on \(base) for \(seconds) s; 5002 URL: \(base + path)")
        try await Task.sleep(for: .seconds(seconds))
        let counters = emulator.counters()
        print("NetFUNNEL bench server: \(counters.requests["5002"] ?? 0) requests of 5002 answered")
        await server.shutdown()
    }
}
