import CLua
import CLuaShim
import Foundation
import Logging
import Testing
import WaitingRoom
import WaitingRoomTesting
@testable import WaitingRoomLua

/// Rerun: `WR_BENCH=1 swift test -c release --filter LuaBenchmarks`
/// (prints the figures; off by default so the suite stays fast).
@Suite("Lua benchmarks", .enabled(if: ProcessInfo.processInfo.environment["WR_BENCH"] != nil))
struct LuaBenchmarks {
    static let progress = WaitingRoomEvent.progress(
        QueueProgress(ahead: 42, behind: 7, eta: .seconds(30), etaText: "30 s", percent: 12.5),
        VendorStatus(vendor: "netfunnel", code: 201, message: "waiting"))

    static let flowSource = """
        local last = 0
        return { vendor = "scripted", entry = { scope = "s", room = "r" },
                 on_progress = function(event, session) last = event.ahead end }
        """

    static func best(of runs: Int = 5, _ body: () async -> Duration) async -> Duration {
        var best = Duration.seconds(1000)
        for _ in 0..<runs { best = min(best, await body()) }
        return best
    }

    static func nanoseconds(_ d: Duration, _ n: Int) -> Double {
        (Double(d.components.seconds) * 1e18 + Double(d.components.attoseconds)) / 1e9 / Double(n)
    }

    @Test("raw lua_pcall vs full event dispatch; idle runtime memory")
    func dispatch() async throws {
        let n = 200_000
        // 1. raw Swift -> Lua pcall round trip: rawgeti(ref) + push + pcall + read + pop
        let vm = try LuaVM(logger: Logger(label: "bench"))
        guard clua_load(vm.L, "return function(x) return x + 1 end", 35, "=bench") == LUA_OK,
              clua_pcall_host(vm.L, 0, 1) == LUA_OK else {
            Issue.record("cannot load the bench function")
            return
        }
        let ref = clua_ref(vm.L)
        let clock = ContinuousClock()
        var sink: lua_Integer = 0
        let raw = await Self.best {
            clock.measure {
                for i in 0..<n {
                    _ = clua_getref(vm.L, ref)
                    lua_pushinteger(vm.L, lua_Integer(i))
                    _ = clua_pcall(vm.L, 1, 1)
                    sink &+= clua_tointeger(vm.L, -1)
                    clua_pop(vm.L, 1)
                }
            }
        }

        // 2. full dispatch from a non-main task: actor hop + coroutine + event table + handler
        //    + decision read, for a realistic progress event
        let runtime = try FlowRuntime(source: Self.flowSource, name: "bench.lua", options: scriptedOptions(limits: .default))
        try await runtime.prepareHandlers()
        let event = Self.progress
        let full = await Task.detached {
            await Self.best {
                let start = ContinuousClock.now
                for _ in 0..<n { await runtime.dispatchForBenchmark(event) }
                return ContinuousClock.now - start
            }
        }.value

        // 3. end to end: a scripted session emitting progress events through the runtime's run()
        let steps = 20_000
        let stepsJSON = Array(repeating: "{ progress = { ahead = 42, behind = 7, eta = 30, percent = 12.5 } }", count: steps).joined(separator: ", ")
        let endToEnd = try await Task.detached {
            let runtime = try FlowRuntime(source: """
                local count = 0
                return { vendor = "scripted", entry = { scope = "s", room = "r" },
                         config = { steps = { \(stepsJSON), { outcome = "passed" } } },
                         on_progress = function(event) count = count + 1 end }
                """, name: "e2e.lua", options: scriptedOptions(limits: .default))
            let start = ContinuousClock.now
            let result = await runtime.run()
            #expect(result.outcome.name == "passed")
            return ContinuousClock.now - start
        }.value

        // 4. memory of one idle flow runtime (Lua heap), with its flow loaded and its table read
        let idle = try FlowRuntime(source: Self.flowSource, name: "idle.lua", options: scriptedOptions(limits: .default))
        try await idle.prepareHandlers()
        let heap = await idle.memoryInUse

        let rawNs = Self.nanoseconds(raw, n)
        let fullNs = Self.nanoseconds(full, n)
        let e2eNs = Self.nanoseconds(endToEnd, steps)
        print("""
            [lua-bench] raw lua_pcall round trip: \(String(format: "%.1f", rawNs)) ns/call (sink \(sink % 7))
            [lua-bench] full progress-event dispatch (detached task -> actor -> coroutine -> on_progress -> back): \(String(format: "%.3f", fullNs / 1000)) us/event
            [lua-bench] ratio full / raw: \(String(format: "%.1f", fullNs / rawNs))x
            [lua-bench] end to end through a scripted WaitingSession + run(): \(String(format: "%.3f", e2eNs / 1000)) us/event
            [lua-bench] idle flow runtime Lua heap: \(heap) bytes (\(String(format: "%.1f", Double(heap) / 1024)) KiB)
            """)
        #expect(fullNs < 5_000)
    }
}

extension FlowRuntime {
    /// Run the main flow's chunk and read its handlers (what `run()` does first).
    func prepareHandlers() async throws {
        guard let primary else { return }
        if case .failure(let error) = await host.loadSpec(primary) { throw error }
    }

    /// One event to the main flow's handler, as `run()` dispatches it.
    func dispatchForBenchmark(_ event: WaitingRoomEvent) async {
        guard let primary else { return }
        _ = await host.dispatch(event, session: nil, to: primary, useHandler: true)
    }
}
