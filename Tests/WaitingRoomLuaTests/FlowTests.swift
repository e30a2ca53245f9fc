import Foundation
import ScriptedVendor
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import WaitingRoomLua

/// A registry with the scripted vendor and an auto-advancing virtual clock (no real sleeps).
func scriptedOptions(clock: VirtualClock = VirtualClock(autoAdvance: true), limits: LuaLimits = testLimits) -> FlowOptions {
    let registry = VendorRegistry()
    registry.register(ScriptedConfiguration.self)
    return FlowOptions(
        limits: limits, registry: registry, environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: clock))
}

func names(_ actions: [FlowAction]) -> [String] { actions.map(\.name) }

@Suite("Flows")
struct FlowTests {
    @Test("a flow waits, sees progress, completes after its business step")
    func basicFlow() async throws {
        let runtime = try FlowRuntime(
            source: """
                return {
                  vendor = "scripted",
                  entry = { scope = "shop", room = "checkout" },
                  config = { steps = {
                    { progress = { ahead = 3, behind = 0 } }, { sleep = 1 },
                    { progress = { ahead = 0, percent = 100 } }, { outcome = "passed", key = "KEY-1" } } },
                  on_progress = function(event) wr.emit("progress", { ahead = event.ahead, code = event.code }) end,
                  on_success = function(event, session)
                    wr.emit("navigate", { to = "/checkout", key = event.pass.credential })
                    assert(wr.sleep(2))
                    local status = assert(session:complete())
                    wr.emit("returned", { code = status.code })
                  end,
                  on_complete = function(event) wr.emit("done", { vendor = event.vendor }) end,
                }
                """, name: "basic.lua", options: scriptedOptions())
        let result = await runtime.run()
        guard case .vendor(.passed(let pass, _)) = result.outcome else {
            Issue.record("unexpected outcome \(result.outcome)")
            return
        }
        #expect(pass.credential == "KEY-1")
        #expect(names(result.actions) == ["progress", "progress", "navigate", "returned", "done"])
        #expect(result.actions[0].payload == .object(["ahead": .number(3), "code": .number(201)]))
        #expect(result.actions[2].payload["key"] == .string("KEY-1"))
        #expect(result.completion?.code == 200)
        #expect(result.attempts == 1)
        #expect(result.handlerErrors.isEmpty)
        var streamed: [String] = []
        for await action in runtime.actions { streamed.append(action.name) }
        #expect(streamed == names(result.actions))
    }

    @Test("a held key is returned when the flow does not complete it")
    func autoComplete() async throws {
        let runtime = try FlowRuntime(
            source: """
                return { vendor = "scripted", entry = { scope = "s", room = "r" },
                         config = { steps = { { outcome = "passed", key = "K" } } },
                         on_complete = function() wr.emit("completed") end }
                """, name: "auto.lua", options: scriptedOptions())
        let result = await runtime.run()
        #expect(result.outcome.name == "passed")
        #expect(result.completion != nil)
        #expect(names(result.actions) == ["completed"])
    }

    @Test("retry is bounded by max_retries; then the outcome stands")
    func retryLimit() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let runtime = try FlowRuntime(
            source: """
                return { vendor = "scripted", entry = { scope = "s", room = "r" }, max_retries = 2,
                         config = { steps = { { outcome = "failed", error = "networkTimeout" } } },
                         on_error = function(event)
                           wr.emit("error", { kind = event.error.kind })
                           return wr.retry { after = 5 }
                         end }
                """, name: "retry.lua", options: scriptedOptions(clock: clock))
        let result = await runtime.run()
        #expect(result.attempts == 3)
        guard case .vendor(.failed(let error)) = result.outcome else {
            Issue.record("unexpected outcome \(result.outcome)")
            return
        }
        #expect(error.kind == .networkTimeout)
        #expect(names(result.actions) == ["error", "error", "error"])
        #expect(clock.sleepLog.filter { $0 == .seconds(5) }.count == 2)

        // a wait past what a duration holds is the longest one (it trapped: SIGILL)
        let far = VirtualClock(autoAdvance: true)
        let farRuntime = try FlowRuntime(
            source: """
                return { vendor = "scripted", entry = { scope = "s", room = "r" }, max_retries = 1,
                         config = { steps = { { outcome = "failed", error = "networkTimeout" } } },
                         on_error = function(event) return wr.retry { after = 1e300 } end }
                """, name: "far.lua", options: scriptedOptions(clock: far))
        #expect(await farRuntime.run().attempts == 2)
        #expect(far.sleepLog.contains(Duration.saturationBound), "\(far.sleepLog)")
    }

    @Test("fail-open: bypass after bounded retries on network errors")
    func failOpen() async throws {
        let runtime = try FlowRuntime(
            source: """
                local failures = 0
                return { vendor = "scripted", entry = { scope = "s", room = "r" },
                         config = { steps = { { outcome = "failed", error = "networkOffline" } } },
                         on_error = function(event)
                           failures = failures + 1
                           if failures <= 2 then return wr.retry { after = 1 } end
                           return wr.bypass("network down after " .. failures .. " tries")
                         end }
                """, name: "failopen.lua", options: scriptedOptions())
        let result = await runtime.run()
        #expect(result.outcome == .bypassed(reason: "network down after 3 tries", after: result.outcome.bypassedAfter))
        #expect(result.outcome.allowsEntry)
        #expect(result.attempts == 3)
    }

    @Test("abort from on_progress cancels the session")
    func abortFromProgress() async throws {
        let runtime = try FlowRuntime(
            source: """
                return { vendor = "scripted", entry = { scope = "s", room = "r" },
                         config = { steps = { { progress = { ahead = 5000 } }, { sleep = 60 }, { outcome = "passed" } } },
                         on_progress = function(event)
                           if event.ahead > 1000 then return wr.abort("line too long") end
                         end,
                         on_success = function() wr.emit("should not happen") end }
                """, name: "abort.lua", options: scriptedOptions(clock: VirtualClock()))
        let result = await runtime.run()
        guard case .aborted(let reason, let after) = result.outcome else {
            Issue.record("unexpected outcome \(result.outcome)")
            return
        }
        #expect(reason == "line too long")
        #expect(after?.name == "closed")
        #expect(result.actions.isEmpty)
    }

    @Test("a failing or runaway handler is reported; the next event is served")
    func handlerFailures() async throws {
        let runtime = try FlowRuntime(
            source: """
                local n = 0
                return { vendor = "scripted", entry = { scope = "s", room = "r" },
                         config = { steps = { { progress = { ahead = 2 } }, { progress = { ahead = 1 } },
                                              { progress = { ahead = 0 } }, { outcome = "passed" } } },
                         on_progress = function(event)
                           n = n + 1
                           if n == 1 then error("boom") end
                           if n == 2 then while true do pcall(function() while true do end end) end end
                           wr.emit("served", { ahead = event.ahead })
                         end,
                         on_success = function() wr.emit("success") end }
                """, name: "failing.lua", options: scriptedOptions())
        let result = await runtime.run()
        #expect(result.outcome.name == "passed")
        #expect(names(result.actions) == ["served", "success"])
        #expect(result.handlerErrors.count == 2)
        #expect(result.handlerErrors.first?.kind == .runtime)
        #expect(result.handlerErrors.first?.message.contains("failing.lua:7: boom") == true)
        #expect(result.handlerErrors.first?.traceback?.contains("failing.lua:7") == true)
        #expect(result.handlerErrors.last?.kind == .instructionBudget)
    }

    @Test("two flows awaiting on one runtime interleave")
    func interleave() async throws {
        let clock = VirtualClock()
        let options = scriptedOptions(clock: clock)
        let runtime = try FlowRuntime(options: options)
        func flow(_ name: String) -> String {
            """
            return { vendor = "scripted", entry = { scope = "s", room = "\(name)" },
                     config = { steps = { { progress = { ahead = 1 } }, { outcome = "passed" } } },
                     on_progress = function() wr.emit("waiting"); assert(wr.sleep(10)); wr.emit("woke") end,
                     on_success = function() wr.emit("success") end }
            """
        }
        let a = try await runtime.addFlow(source: flow("a"), name: "a.lua")
        let b = try await runtime.addFlow(source: flow("b"), name: "b.lua")
        async let resultA = runtime.run(a)
        async let resultB = runtime.run(b)
        // both handlers are asleep at the same time: they interleave on one lua_State
        for _ in 0..<2000 where clock.sleeperCount < 2 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .seconds(10))
        let (ra, rb) = await (resultA, resultB)
        #expect(names(ra.actions) == ["waiting", "woke", "success"])
        #expect(names(rb.actions) == ["waiting", "woke", "success"])
        #expect(clock.elapsed == .seconds(10))
    }

    @Test("wr.* waits work inside pcall and script coroutines; cancellation gives nil, 'cancelled'")
    func asyncBridge() async throws {
        let clock = VirtualClock(autoAdvance: true)
        let runtime = try FlowRuntime(options: scriptedOptions(clock: clock))
        #expect(value(await runtime.evaluate("return pcall(wr.sleep, 1)")) == ["true", "true"])
        #expect(value(await runtime.evaluate("return coroutine.wrap(function() return wr.sleep(0.5) end)()")) == ["true"])
        #expect(
            value(
                await runtime.evaluate(
                    """
                    local co = coroutine.create(function(x) local ok = wr.sleep(1); coroutine.yield(x + 1); return 'done' end)
                    local a, b = coroutine.resume(co, 1)
                    local c, d = coroutine.resume(co)
                    return b, d, coroutine.status(co)
                    """)) == ["2", "done", "dead"])
        #expect(value(await runtime.evaluate("return wr.now()")) == ["1800000002.5"])
        // seconds past what a duration holds wait the longest duration (10⁹ s), as asked; the
        // conversion trapped (SIGILL) for 1e300 and math.maxinteger
        #expect(
            value(await runtime.evaluate("return wr.sleep(1e300), wr.sleep(math.maxinteger), wr.now()")) == ["true", "true", "3800000002.5"]
        )
        for bad in ["0/0", "-1", "math.huge"] {
            let refused = try #require(failure(await runtime.evaluate("return wr.sleep(\(bad))")), "\(bad)")
            #expect(refused.message.contains("expected a number of seconds >= 0"), "\(bad): \(refused)")
            let timeout = try #require(
                failure(await runtime.evaluate("return wr.http({ url = 'http://127.0.0.1:9/', timeout = \(bad) })")), "\(bad)")
            #expect(timeout.message.contains("request.timeout: expected a number of seconds > 0"), "\(bad): \(timeout)")
        }
        let failure = try #require(failure(await runtime.evaluate("table.sort({3, 2, 1}, function(a, b) wr.sleep(1) return a < b end)")))
        #expect(failure.message.contains("cannot wait here"))

        let manual = VirtualClock()
        let waiting = try FlowRuntime(options: scriptedOptions(clock: manual))
        let task = Task { await waiting.evaluate("local ok, err = wr.sleep(100); return ok, err, (wr.sleep(1))") }
        for _ in 0..<2000 where manual.sleeperCount < 1 { try await Task.sleep(for: .milliseconds(1)) }
        task.cancel()
        #expect(value(await task.value) == ["nil", "cancelled", "nil"])
    }

    @Test("wr.open, room:enqueue, session:wait and wr.on from Lua")
    func imperativeAPI() async throws {
        let runtime = try FlowRuntime(options: scriptedOptions())
        let result = await runtime.evaluate(
            """
            local seen = {}
            local id = wr.on("progress", function(e) seen[#seen + 1] = e.ahead end)
            local room = assert(wr.open("scripted", { steps = { { progress = { ahead = 2 } }, { sleep = 1 }, { outcome = "passed", key = "K" } } }))
            local check = assert(room:try_pass({ scope = "s", room = "r" }))
            local session = assert(room:enqueue({ scope = "s", room = "r", user_id = "u1" }))
            local outcome = session:wait()
            for _ = 1, 200 do if #seen > 0 then break end wr.sleep(0) end
            local status = assert(session:complete())
            assert(wr.off(id))
            return check.disposition, outcome.outcome, outcome.pass.credential, status.code, session:state(), #seen
            """)
        #expect(value(result) == ["queue", "passed", "K", "200", "completed", "1"])
        #expect(failure(await runtime.evaluate("wr.open('nope', {})")) == nil)
        #expect(value(await runtime.evaluate("local r, msg = wr.open('nope', {}); return r, msg ~= nil")) == ["nil", "true"])
        let badEntry = try #require(
            failure(await runtime.evaluate("wr.open('scripted', { steps = { { outcome = 'passed' } } }):enqueue({ scope = 's' })")))
        #expect(badEntry.message.contains("entry.room"))
    }

    @Test("wr.json round trip and decisions")
    func jsonAndDecisions() async throws {
        let runtime = try FlowRuntime(options: scriptedOptions())
        #expect(value(await runtime.evaluate("return wr.json.encode({ a = 1, b = { true, 'x' } })")) == [#"{"a":1,"b":[true,"x"]}"#])
        #expect(
            value(
                await runtime.evaluate("local v = wr.json.decode('{\"k\": [1, null, 2.5]}'); return v.k[1], v.k[2] == wr.json.null, v.k[3]")
            ) == ["1", "true", "2.5"])
        #expect(value(await runtime.evaluate("return wr.json.decode('{')")).map { $0.first } == "nil")
        // JSON has no NaN or infinity: refused with the path named (the payload was written as null)
        let nan = value(await runtime.evaluate("return wr.json.encode({ eta = 0/0 })")) ?? []
        #expect(nan.first == "nil" && nan.last?.contains("value.eta") == true, "\(nan)")
        let infinite = value(await runtime.evaluate("return pcall(wr.emit, 'eta', { list = { 1, math.huge } })")) ?? []
        #expect(infinite.first == "false" && infinite.last?.contains("not a finite number") == true, "\(infinite)")
        #expect(
            value(await runtime.evaluate("local d = wr.retry { after = 3 }; return d.decision, d.after, getmetatable(d)")) == [
                "retry", "3.0", "wr.decision"
            ])
        #expect(value(await runtime.evaluate("return wr.retry().after, wr.retry(2).after, wr.retry({}).after")) == ["0.0", "2.0", "0.0"])
        // an `after` that is not a number was taken for 0 without a word
        for bad in ["wr.retry { after = 'x' }", "wr.retry { after = {} }", "wr.retry('soon')", "wr.retry { after = -1 }"] {
            let refused = value(await runtime.evaluate("return pcall(function() return \(bad) end)")) ?? []
            #expect(refused.first == "false" && refused.last?.contains("'after' must be a number") == true, "\(bad): \(refused)")
        }
        // a reason is text or absent: these gave an empty reason without a word
        #expect(
            value(await runtime.evaluate("return wr.bypass('down').reason, wr.abort().reason, wr.bypass(nil).decision")) == [
                "down", "nil", "bypass"
            ])
        for bad in ["wr.bypass(5)", "wr.abort({})", "wr.bypass(true)"] {
            let refused = value(await runtime.evaluate("return pcall(function() return \(bad) end)")) ?? []
            #expect(refused.first == "false" && refused.last?.contains("'reason' must be a string") == true, "\(bad): \(refused)")
        }
        // wr.log names its level first: wr.log() logged an empty line, wr.log(5) dropped the 5
        for bad in ["wr.log()", "wr.log(5, 'x')"] {
            let refused = value(await runtime.evaluate("return pcall(function() return \(bad) end)")) ?? []
            #expect(refused.first == "false" && refused.last?.contains("the first argument is the level") == true, "\(bad): \(refused)")
        }
        #expect(value(await runtime.evaluate("return pcall(wr.log, 'debug', 'fine')")) == ["true"])
    }

    /// Deep tables and deep JSON cross the Lua stack level by level. Lua promises a host
    /// function only 20 free slots; `wr.emit` of a cycle or of 60 nested tables, and
    /// `wr.json.decode` of 60 nested arrays, pushed past them and crashed the process (SIGSEGV).
    @Test("deep tables and deep JSON are converted or refused, never pushed past the Lua stack")
    func deepNesting() async throws {
        let runtime = try FlowRuntime(options: scriptedOptions())
        let nest = "local function nest(n) local t = {} local c = t for i = 1, n - 1 do c.n = {} c = c.n end return t end"
        let walk = "local function depth(v) local d = 0 while type(v) == 'table' do d = d + 1 v = v[1] or v.n end return d end"
        for _ in 0..<3 {
            #expect(value(await runtime.evaluate("\(nest) return #wr.json.encode(nest(64)) > 0")) == ["true"])
            let deep = value(await runtime.evaluate("\(nest) return wr.json.encode(nest(65))")) ?? []
            #expect(deep.first == "nil" && deep.last?.contains("nested too deeply") == true, "\(deep)")
            let cycle = value(await runtime.evaluate("local t = {} t.self = t return pcall(wr.emit, 'cyclic', t)")) ?? []
            #expect(cycle.first == "false" && cycle.last?.contains("nested too deeply") == true, "\(cycle)")
            let emitted = value(await runtime.evaluate("\(nest) return pcall(wr.emit, 'deep', nest(100))")) ?? []
            #expect(emitted.first == "false", "\(emitted)")
            for levels in [30, 60, JSONValue.maximumDepth] {
                let text = String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
                #expect(value(await runtime.evaluate("\(walk) return depth(wr.json.decode('\(text)'))")) == ["\(levels)"])
            }
            for levels in [JSONValue.maximumDepth + 1, 5000] {
                let text = String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
                let refused = value(await runtime.evaluate("return wr.json.decode('\(text)')")) ?? []
                #expect(refused.first == "nil" && refused.last?.contains("nested more than") == true, "\(refused)")
            }
        }
        #expect(value(await runtime.evaluate("return 1 + 1")) == ["2"])
    }

    @Test(
        "bad flow files are named with what was expected",
        arguments: [
            ("", "the flow is empty"),
            ("return 42", "must return a table"),
            ("local x = ", "x.lua:1:"),
            ("return {\n vendor = 'scripted',\n on_sucess = function() end }", "x.lua:3: unknown handler 'on_sucess'"),
            ("return { vendor = 'nope', entry = { scope = 's', room = 'r' } }", "unknown vendor 'nope'"),
            ("return { vendor = 'scripted' }", "no entry"),
            ("return { vendor = 'scripted', entry = { scope = 's', room = 'r' }, on_success = 3 }", "'on_success' must be a function"),
            ("error('at top')", "x.lua:1: at top")
        ])
    func badFlows(_ source: String, _ expected: String) async throws {
        do {
            let runtime = try FlowRuntime(source: source, name: "x.lua", options: scriptedOptions())
            let result = await runtime.run()
            guard case .flowError(let error) = result.outcome else {
                Issue.record("no flow error for \(source): \(result.outcome)")
                return
            }
            #expect(error.message.contains(expected), "\(error.message)")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test("a missing flow file is named")
    func missingFile() throws {
        #expect(throws: LuaError.self) { try FlowRuntime(path: "/nonexistent/flow.lua") }
        do {
            _ = try FlowRuntime(path: "/nonexistent/flow.lua")
        } catch {
            #expect(error.message == "/nonexistent/flow.lua: no such flow file")
        }
    }
}

extension FlowOutcome {
    var bypassedAfter: Outcome? {
        if case .bypassed(_, let after) = self { return after }
        return nil
    }
}

@Suite("Flow options")
struct FlowOptionTests {
    @Test("host-given entry and config win; configs merge key by key")
    func hostOverrides() async throws {
        var options = scriptedOptions()
        options.config = .object(["steps": .array([.object(["outcome": .string("blocked")])])])
        options.entry = Entry(room: RoomKey(scope: "host", room: "room"))
        let runtime = try FlowRuntime(
            source: """
                return { vendor = "scripted", entry = { scope = "flow", room = "r" },
                         config = { tryPass = "passed", steps = { { outcome = "passed" } } },
                         on_block = function(e) wr.emit("blocked", { scope = wr.entry.scope, tryPass = wr.config.tryPass }) end }
                """, name: "host.lua", options: options)
        let result = await runtime.run()
        #expect(result.outcome.name == "blocked")
        #expect(result.actions.first?.payload == .object(["scope": .string("host"), "tryPass": .string("passed")]))
    }

    @Test("wr.config is what the provider runs with: the registry's own configuring included")
    func registryConfiguring() async throws {
        var options = scriptedOptions()
        let plain = options.registry
        let registry = VendorRegistry()
        for descriptor in plain.descriptors {
            // a host that pins one option over the flow's and fills in another (as `run --emulator` does)
            registry.register(
                VendorDescriptor(
                    id: descriptor.id, summary: descriptor.summary,
                    configure: { given in
                        guard case .object(var members) = given else { return given }
                        members["steps"] = .array([.object(["outcome": .string("blocked")])])
                        if members["tryPass"] == nil { members["tryPass"] = .string("passed") }
                        return .object(members)
                    }, make: descriptor.make))
        }
        options.registry = registry
        let runtime = try FlowRuntime(
            source: """
                return { vendor = "scripted", entry = { scope = "s", room = "r" },
                         config = { steps = { { outcome = "passed" } } },
                         on_block = function(e) wr.emit("blocked", { tryPass = wr.config.tryPass, steps = #wr.config.steps }) end }
                """, name: "configured.lua", options: options)
        let result = await runtime.run()
        #expect(result.outcome.name == "blocked", "the provider ran with the pinned steps")
        #expect(result.actions.first?.payload == .object(["tryPass": .string("passed"), "steps": .number(1)]))
        #expect(registry.configuration(vendor: "scripted", given: .object([:]))["tryPass"] == .string("passed"))
        #expect(registry.configuration(vendor: "nobody", given: .object(["a": .number(1)])) == .object(["a": .number(1)]))
    }

    @Test("the event observer sees every event")
    func observer() async throws {
        let seen = Seen()
        var options = scriptedOptions()
        options.eventObserver = { _, event in seen.add(event.name.rawValue) }
        let runtime = try FlowRuntime(
            source: """
                return { vendor = "scripted", entry = { scope = "s", room = "r" },
                         config = { steps = { { progress = { ahead = 1 } }, { outcome = "passed" } } } }
                """, name: "observer.lua", options: options)
        _ = await runtime.run()
        #expect(seen.names.contains("progress"))
        #expect(seen.names.contains("passed"))
    }
}

final class Seen: Sendable {
    private let storage = Mutex<[String]>([])
    func add(_ name: String) { storage.withLock { $0.append(name) } }
    var names: [String] { storage.withLock { $0 } }
}
