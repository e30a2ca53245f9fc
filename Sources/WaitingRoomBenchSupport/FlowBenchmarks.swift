import CLua
import CLuaShim
import Logging
import WaitingRoom
import WaitingRoomLua

/// Measurements of the Lua host's costs (docs/lua-embedding.md §6), for the gated test
/// (`WR_BENCH=1 swift test -c release --filter LuaBenchmarks`) and tools. Run from a non-main task.
package enum FlowBenchmarks {
    /// What `measure` found.
    package struct Figures: Sendable, CustomStringConvertible {
        /// Swift → Lua: `rawgeti(ref)` + push + `lua_pcall` (traceback handler, hook armed) + read + pop.
        package var rawPcallNanoseconds: Double
        /// A realistic progress event from a non-main task to the flow's `on_progress` and back:
        /// actor hop, pooled coroutine, event table built field by field, handler, decision read.
        package var dispatchNanoseconds: Double
        /// The same dispatch issued from inside the runtime's actor (no hop): what the hop costs is
        /// the difference.
        package var inActorDispatchNanoseconds: Double
        /// The same through a `WaitingSession` stream and `FlowRuntime.run()` (when measured).
        package var endToEndNanoseconds: Double?
        /// Lua heap of one idle flow runtime with its flow loaded and its table read.
        package var idleRuntimeBytes: Int

        package var ratio: Double { dispatchNanoseconds / rawPcallNanoseconds }

        package var description: String {
            var lines = [
                "raw lua_pcall round trip: \(format(rawPcallNanoseconds)) ns/call",
                "full progress-event dispatch: \(format(dispatchNanoseconds / 1000, digits: 3)) us/event",
                "ratio full / raw: \(format(ratio))x",
                "same dispatch from inside the actor (no hop): \(format(inActorDispatchNanoseconds / 1000, digits: 3)) us/event"
            ]
            if let endToEndNanoseconds {
                lines.append("end to end (WaitingSession stream + run()): \(format(endToEndNanoseconds / 1000, digits: 3)) us/event")
            }
            lines.append("idle flow runtime Lua heap: \(idleRuntimeBytes) bytes (\(format(Double(idleRuntimeBytes) / 1024)) KiB)")
            return lines.joined(separator: "\n")
        }

        private func format(_ value: Double, digits: Int = 1) -> String {
            var scale = 1.0
            for _ in 0..<digits { scale *= 10 }
            let rounded = (value * scale).rounded() / scale
            return "\(rounded)"
        }
    }

    static let progress = WaitingRoomEvent.progress(
        QueueProgress(ahead: 42, behind: 7, eta: .seconds(30), etaText: "30 s", percent: 12.5),
        VendorStatus(vendor: "netfunnel", code: 201, message: "waiting"))

    static let flowSource = """
        local last = 0
        return { vendor = "bench", entry = { scope = "s", room = "r" },
                 on_progress = function(event, session) last = event.ahead end }
        """

    /// Measure `iterations` calls of each kind (best of `repeats`). `endToEnd` gives options whose
    /// registry has the `"scripted"` vendor (WaitingRoomTesting) to also time a real session.
    package static func measure(iterations: Int = 200_000, repeats: Int = 5, endToEnd: FlowOptions? = nil) async throws -> Figures {
        let raw = try rawPcall(iterations: iterations, repeats: repeats)
        let options = FlowOptions()
        options.registry.register(
            VendorDescriptor(id: "bench", summary: "benchmark") { _, _ in
                throw WaitingRoomError(.invalidUse, message: "bench vendor")
            })
        let runtime = try FlowRuntime(source: flowSource, name: "bench.lua", options: options)
        try await runtime.prepareHandlers()
        var best = Duration.seconds(1_000_000)
        let event = progress
        for _ in 0..<repeats {
            let start = ContinuousClock.now
            for _ in 0..<iterations { await runtime.dispatchForBenchmark(event) }
            best = min(best, ContinuousClock.now - start)
        }
        var inside = Duration.seconds(1_000_000)
        for _ in 0..<repeats { inside = min(inside, await runtime.dispatchLoopForBenchmark(event, iterations: iterations)) }
        let idle = try FlowRuntime(source: flowSource, name: "idle.lua", options: options)
        try await idle.prepareHandlers()
        var figures = Figures(
            rawPcallNanoseconds: raw, dispatchNanoseconds: nanoseconds(best) / Double(iterations),
            inActorDispatchNanoseconds: nanoseconds(inside) / Double(iterations),
            endToEndNanoseconds: nil, idleRuntimeBytes: await idle.memoryInUse)
        if let endToEnd {
            let steps = min(iterations, 20_000)
            let step = "{ progress = { ahead = 42, behind = 7, eta = 30, percent = 12.5 } }"
            let runtime = try FlowRuntime(
                source: """
                    local count = 0
                    return { vendor = "scripted", entry = { scope = "s", room = "r" },
                             config = { steps = { \(Array(repeating: step, count: steps).joined(separator: ", ")), { outcome = "passed" } } },
                             on_progress = function(event) count = count + 1 end }
                    """, name: "e2e.lua", options: endToEnd)
            let start = ContinuousClock.now
            _ = await runtime.run()
            figures.endToEndNanoseconds = nanoseconds(ContinuousClock.now - start) / Double(steps)
        }
        return figures
    }

    static func nanoseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9
    }

    static func rawPcall(iterations: Int, repeats: Int) throws -> Double {
        let vm = try LuaVM(logger: Logger(label: "bench"))
        let source = "return function(x) return x + 1 end"
        guard clua_load(vm.L, source, source.utf8.count, "=bench") == LUA_OK, clua_pcall_host(vm.L, 0, 1) == LUA_OK else {
            throw LuaError(kind: .runtime, message: "cannot load the bench function")
        }
        let ref = clua_ref(vm.L)
        var sink: lua_Integer = 0
        var best = Duration.seconds(1_000_000)
        for _ in 0..<repeats {
            let start = ContinuousClock.now
            for i in 0..<iterations {
                _ = clua_getref(vm.L, ref)
                lua_pushinteger(vm.L, lua_Integer(i))
                _ = clua_pcall(vm.L, 1, 1)
                sink &+= clua_tointeger(vm.L, -1)
                clua_pop(vm.L, 1)
            }
            best = min(best, ContinuousClock.now - start)
        }
        if sink == 42 { vm.logger.trace("sink") }
        return nanoseconds(best) / Double(iterations)
    }
}

extension FlowRuntime {
    /// Run the main flow's chunk and read its handlers (what `run()` does first).
    package func prepareHandlers() async throws(LuaError) {
        guard let primary else { return }
        if case .failure(let error) = await host.loadSpec(primary, on: self) { throw error }
    }

    /// `iterations` events dispatched from inside the actor (no hop): the share of the hop.
    package func dispatchLoopForBenchmark(_ event: WaitingRoomEvent, iterations: Int) async -> Duration {
        let start = ContinuousClock.now
        for _ in 0..<iterations { await dispatchForBenchmark(event) }
        return ContinuousClock.now - start
    }

    /// One event to the main flow's handler, as `run()` dispatches it.
    package func dispatchForBenchmark(_ event: WaitingRoomEvent) async {
        guard let primary else { return }
        _ = await host.dispatch(event, session: nil, to: primary, useHandler: true, on: self)
    }
}
