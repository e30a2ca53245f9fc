import Foundation
import Testing
import WaitingRoomTesting

@testable import QueueIt
@testable import QueueItEmulator

/// Benchmarks, off unless asked for (see `Vendors/QueueIt/bench/wrk.sh`):
/// - `WR_BENCH=1`: tokens validated per second.
/// - `WR_BENCH_SERVE=N`: serve the emulator (demo configuration) on 127.0.0.1 for N seconds;
///   the port is printed and written to `WR_BENCH_PORTFILE` if set (`WR_BENCH_PORT` picks it).
@Suite struct QueueItBenchmarks {
    static var env: [String: String] { ProcessInfo.processInfo.environment }

    @Test(.enabled(if: env["WR_BENCH"] != nil))
    func tokenValidationThroughput() async throws {
        let secret = "bench-secret-key"
        let minter = QueueItTokenMinter(secretKey: secret)
        let validator = QueueItTokenValidator(secretKey: secret, eventId: "sale")
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let tokens = try (0..<1000).map { i in
            try minter.mint(
                eventId: "sale", queueId: "9f1c2b7e-\(i)", expiresAt: 1_700_000_600, redirectType: .queue,
                cookieValidityMinutes: 20, clientIP: "10.0.\(i % 250).1")
        }
        let n = Int(Self.env["WR_BENCH_TOKENS"] ?? "") ?? 200_000
        // CPU-bound: measured on a thread of its own, off the cooperative pool.
        let (elapsed, ok) = await DedicatedThread.run(name: "queueit.bench") { () -> (Duration, Int) in
            var ok = 0
            let elapsed = ContinuousClock().measure {
                for i in 0..<n
                where (try? validator.validate(tokens[i % tokens.count], now: now, clientIP: "10.0.\(i % tokens.count % 250).1")) != nil {
                    ok += 1
                }
            }
            return (elapsed, ok)
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("bench: \(n) tokens validated (hash+event+expiry+ip, 2 HMACs each) in \(elapsed): \(Int(Double(n) / seconds)) tokens/s")
        #expect(ok == n)
    }

    @Test(.enabled(if: env["WR_BENCH_SERVE"] != nil))
    func serveForBenchmark() async throws {
        let seconds = Int(Self.env["WR_BENCH_SERVE"] ?? "") ?? 30
        let port = Int(Self.env["WR_BENCH_PORT"] ?? "") ?? 0
        let server = try await QueueItEmulatorServer.start(QueueItEmulator(configuration: .demo), port: port)
        print("bench: emulator serving on \(server.baseURL) for \(seconds) s")
        if let file = Self.env["WR_BENCH_PORTFILE"] {
            try String(server.port).write(toFile: file, atomically: true, encoding: .utf8)
        }
        try await Task.sleep(for: .seconds(seconds))
        print("bench: emulator served \(server.emulator.enqueueCount) enqueue calls")
        await server.shutdown()
    }
}
