import Foundation
import Testing
import WaitingRoom
import WaitingRoomBenchSupport
import WaitingRoomTesting

@testable import WaitingRoomLua

/// Rerun: `WR_BENCH=1 swift test -c release --filter LuaBenchmarks`
/// (prints the figures; off by default so the suite stays fast).
@Suite("Lua benchmarks", .enabled(if: ProcessInfo.processInfo.environment["WR_BENCH"] != nil))
struct LuaBenchmarks {
    @Test("raw lua_pcall vs full event dispatch; idle runtime memory")
    func dispatch() async throws {
        let figures = try await Task.detached {
            try await FlowBenchmarks.measure(endToEnd: scriptedOptions(limits: .default))
        }.value
        print(figures.description.split(separator: "\n").map { "[lua-bench] " + $0 }.joined(separator: "\n"))
        #expect(figures.dispatchNanoseconds < 50_000)
    }
}
