import Foundation
import Logging
import ScriptedVendor
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import WaitingRoomLua

/// Many flows on one `lua_State` at once. Lua allows one thread at a time in a state and all of
/// its coroutines; these tests make every way the host enters Lua overlap (handler awaits, script
/// coroutines, `wr.on` listeners fed from session tasks, cancellations, limit trips, script errors
/// and teardown with work in flight). Before the fix of the flow loop's isolation this crashed in
/// liblua (or tripped the shim's entry guard) within seconds.
@Suite("Lua host under stress")
struct StressTests {
    /// What one flow does in its `on_progress` handler.
    enum Mode: CaseIterable {
        case awaits, nestedAwaits, listeners, scriptError, instructionBudget, bareYield
    }

    static func source(_ mode: Mode, index: Int, sleeps: [Double]) -> String {
        let naps = sleeps.map { "assert(wr.sleep(\($0)))" }.joined(separator: "; ")
        let handler: String
        switch mode {
        case .awaits:
            handler = "local s = string.rep('x', 64) .. \(index); \(naps); wr.emit('woke', { s = s })"
        case .nestedAwaits:
            handler = """
                local co = coroutine.wrap(function() \(naps); coroutine.yield(1); return 2 end)
                local a = co(); local b = co(); wr.emit('woke', { n = a + b })
                """
        case .listeners:
            handler = """
                local room = assert(wr.open("scripted", { steps = { { progress = { ahead = 1 } }, { sleep = 0.001 }, { outcome = "passed" } } }))
                local seen = 0
                local id = wr.on("*", function(e) seen = seen + 1; wr.sleep(0.001) end)
                local s = assert(room:enqueue({ scope = "x", room = "r\(index)" }))
                local outcome = s:wait()
                \(naps)
                wr.off(id)
                wr.emit('woke', { outcome = outcome.outcome })
                """
        case .scriptError:
            handler = "\(naps); error('boom \(index)')"
        case .instructionBudget:
            handler = "\(naps); local t = {}; while true do t[#t % 100 + 1] = tostring(#t) end"
        case .bareYield:
            handler = "for _ = 1, 3 do coroutine.yield() end; \(naps); wr.emit('woke')"
        }
        return """
            return { vendor = "scripted", entry = { scope = "s", room = "r\(index)" },
                     config = { steps = { { progress = { ahead = 2 } }, { sleep = 0.001 }, { progress = { ahead = 1 } }, { outcome = "passed" } } },
                     on_progress = function(event, session) \(handler) end,
                     on_success = function() wr.emit('success') end }
            """
    }

    static let limits = LuaLimits(memoryLimit: 512 << 20, instructionBudget: 300_000, handlerDeadline: .seconds(20))

    static func options() -> FlowOptions {
        let registry = VendorRegistry()
        registry.register(ScriptedConfiguration.self)
        // silent: a thousand expected handler errors are not worth logging
        return FlowOptions(
            limits: limits, logger: Logger(label: "stress") { _ in SwiftLogNoOpLogHandler() },
            registry: registry, environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: SystemClock()))
    }

    @Test("1,000 flows on one runtime: random awaits, cancellations, limit trips, script errors, teardown in flight")
    func thousandFlows() async throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededRandom(seed: seed)
        let flows = 1_000
        var runtime: FlowRuntime? = try FlowRuntime(options: Self.options())
        weak let weakRuntime = runtime
        var modes: [Mode] = []
        var ids: [FlowID] = []
        for index in 0..<flows {
            let mode = Mode.allCases[Int(random.next() % UInt64(Mode.allCases.count))]
            let sleeps = (0..<Int(random.next() % 3)).map { _ in Double(random.next() % 4) / 1000 }
            modes.append(mode)
            ids.append(try await runtime!.addFlow(source: Self.source(mode, index: index, sleeps: sleeps), name: "f\(index).lua"))
        }
        var tasks: [Task<FlowResult, Never>] = []
        var cancelled = Set<Int>()
        for index in 0..<flows {
            let id = ids[index]
            let held = runtime!
            tasks.append(Task { await held.run(id) })
            if random.next() % 8 == 0 {
                cancelled.insert(index)
                let task = tasks[index]
                let delay = Int(random.next() % 20)
                Task {
                    try? await Task.sleep(for: .milliseconds(delay))
                    task.cancel()
                }
            }
        }
        runtime = nil  // teardown while every run is in flight: the runs keep the runtime alive
        var results: [FlowResult] = []
        for task in tasks { results.append(await task.value) }

        var checked = 0
        for (index, result) in results.enumerated() where !cancelled.contains(index) {
            let context = "flow \(index) (\(modes[index])), seed \(seed)"
            switch modes[index] {
            case .awaits, .nestedAwaits, .listeners, .bareYield:
                #expect(result.outcome.name == "passed", "\(context): \(result.outcome)")
                #expect(result.handlerErrors.isEmpty, "\(context): \(result.handlerErrors)")
                #expect(names(result.actions) == ["woke", "woke", "success"], "\(context): \(names(result.actions))")
            case .scriptError:
                #expect(result.outcome.name == "passed", "\(context)")
                #expect(result.handlerErrors.count == 2, "\(context)")
                #expect(
                    result.handlerErrors.allSatisfy { $0.kind == .runtime && $0.message.contains("boom \(index)") },
                    "\(context): \(result.handlerErrors)")
            case .instructionBudget:
                #expect(result.outcome.name == "passed", "\(context)")
                #expect(result.handlerErrors.count == 2, "\(context)")
                #expect(result.handlerErrors.allSatisfy { $0.kind == .instructionBudget }, "\(context): \(result.handlerErrors)")
            }
            checked += 1
        }
        #expect(checked + cancelled.count == flows)
        // every run is over, so nothing holds the runtime any more: it (and its lua_State) is gone
        for _ in 0..<500 where weakRuntime != nil { try await Task.sleep(for: .milliseconds(2)) }
        #expect(weakRuntime == nil, "the runtime outlived its runs (seed \(seed))")
    }

    @Test("interrupt, cancel and drop a runtime while 100 handlers are asleep, three times; reuse after interrupt")
    func teardownWhileAsleep() async throws {
        for round in 0..<3 {
            var runtime: FlowRuntime? = try FlowRuntime(options: Self.options())
            weak let weakRuntime = runtime
            var tasks: [Task<FlowResult, Never>] = []
            for index in 0..<100 {
                let id = try await runtime!.addFlow(
                    source: """
                        return { vendor = "scripted", entry = { scope = "s", room = "t\(index)" },
                                 config = { steps = { { progress = { ahead = 1 } }, { outcome = "passed" } } },
                                 on_progress = function() wr.emit('asleep'); if wr.sleep(60) then wr.emit('woke') end end }
                        """, name: "t\(index).lua")
                let held = runtime!
                tasks.append(Task { await held.run(id) })
            }
            // let most of them reach their sleep, then stop everything at once
            try await Task.sleep(for: .milliseconds(20 * (round + 1)))
            if round != 1 { runtime!.interrupt.request() }
            for task in tasks { task.cancel() }
            if round == 2 {
                // the runtime still works for new code (evaluate clears the interrupt) while the
                // stopped runs wind down
                #expect(value(await runtime!.evaluate("return 1 + 1")) == ["2"])
            }
            runtime = nil
            let started = ContinuousClock.now
            for task in tasks {
                let result = await task.value
                #expect(!names(result.actions).contains("woke"), "round \(round)")
            }
            // a stopped or cancelled sleep ends at once; 60 s sleeps must not be waited out (the
            // bound is 50 s: a loaded CI machine took 30.2 s to wind 100 stopped runs down)
            #expect(ContinuousClock.now - started < .seconds(50), "round \(round)")
            for _ in 0..<500 where weakRuntime != nil { try await Task.sleep(for: .milliseconds(2)) }
            #expect(weakRuntime == nil, "round \(round)")
        }
    }
}
