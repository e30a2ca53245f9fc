import Testing

@testable import WaitingRoomLua

/// Small limits so the runaway cases end fast.
let testLimits = LuaLimits(memoryLimit: 4 << 20, instructionBudget: 2_000_000, handlerDeadline: .seconds(2))

func value(_ result: EvaluationResult) -> [String]? {
    if case .values(let values) = result { return values }
    return nil
}

func failure(_ result: EvaluationResult) -> LuaError? {
    if case .failure(let error) = result { return error }
    return nil
}

@Suite("Sandbox")
struct SandboxTests {
    @Test("REPL rules: expression first, statements, <eof> means incomplete")
    func replRules() async throws {
        let runtime = try FlowRuntime(options: FlowOptions(limits: testLimits))
        #expect(value(await runtime.evaluate("1 + 1")) == ["2"])
        #expect(value(await runtime.evaluate("x = 10")) == [])
        #expect(value(await runtime.evaluate("x * 2")) == ["20"])
        #expect(value(await runtime.evaluate("= x, 'a', {1, 2, k = true}")) == ["10", "a", "{ 1, 2, k = true }"])
        #expect(await runtime.evaluate("function f(a)") == .incomplete)
        #expect(value(await runtime.evaluate("function f(a)\n return a + 1\nend")) == [])
        #expect(value(await runtime.evaluate("f(41)")) == ["42"])
        let syntax = try #require(failure(await runtime.evaluate("x = = 1")))
        #expect(syntax.kind == .syntax)
        #expect(syntax.message.hasPrefix("stdin:1:"))
        let runtimeError = try #require(failure(await runtime.evaluate("local t = nil\nreturn t.x")))
        #expect(runtimeError.kind == .runtime)
        #expect(runtimeError.message.contains("stdin:2:"))
        #expect(runtimeError.traceback?.contains("stack traceback") == true)
    }

    /// Every escape of docs/lua-embedding.md §3.1 is refused.
    @Test(
        "escapes are refused",
        arguments: [
            "return io.open('/etc/passwd')",
            "return os.execute('true')",
            "return os.getenv('HOME')",
            "return require('os')",
            "return package.loadlib('libc.so.6', 'system')",
            "return debug.getregistry()",
            "return dofile('/etc/passwd')",
            "return loadfile('/etc/passwd')",
            "return string.dump(function() end)",
            "return ('').dump(function() end)",
            "return getmetatable('').__index",
            "return collectgarbage('collect')",
            "return collectgarbage()",
            "return setmetatable({}, { __gc = function() end })",
            "return assert(load('\\27Lua\\84\\0'))()",
            "return assert(load('\\27Lua\\84\\0', 'x', 'b'))()",
            "return rawget(_G, 'io').open('/etc/passwd')"
        ])
    func escapeRefused(_ chunk: String) async throws {
        let runtime = try FlowRuntime(options: FlowOptions(limits: testLimits))
        let error = try #require(failure(await runtime.evaluate(chunk)), "\(chunk) was not refused")
        #expect(error.kind == .runtime)
        #expect(value(await runtime.evaluate("return 1")) == ["1"])
    }

    @Test("what the sandbox leaves in _G")
    func globals() async throws {
        let runtime = try FlowRuntime(options: FlowOptions(limits: testLimits))
        let result = await runtime.evaluate(
            """
            local names = {}
            for k in pairs(_G) do names[#names + 1] = k end
            table.sort(names)
            return table.concat(names, ' ')
            """)
        let names = try #require(value(result)?.first)
        for forbidden in ["io", "os", "package", "require", "debug", "dofile", "loadfile"] {
            #expect(!names.split(separator: " ").contains(Substring(forbidden)), "\(forbidden) present")
        }
        #expect(value(await runtime.evaluate("return collectgarbage('count') > 0")) == ["true"])
        #expect(value(await runtime.evaluate("return load('return 1 + 2')()")) == ["3"])
        #expect(value(await runtime.evaluate("return load('return y', 'c', 't', { y = 5 })()")) == ["5"])
        #expect(value(await runtime.evaluate("return ('abc'):upper(), getmetatable('')")) == ["ABC", "false"])
    }

    @Test("an infinite loop ends with the instruction budget; the next chunk runs")
    func infiniteLoop() async throws {
        let runtime = try FlowRuntime(options: FlowOptions(limits: testLimits))
        let error = try #require(failure(await runtime.evaluate("while true do end")))
        #expect(error.kind == .instructionBudget)
        #expect(error.message.contains("instruction budget exceeded"))
        // the limit is named once (it read "instruction budget exceeded: instruction budget exceeded …")
        #expect(error.description.ranges(of: "instruction budget exceeded").count == 1, "\(error)")
        // a script's own message that starts like a kind keeps the kind in front
        let own = try #require(failure(await runtime.evaluate("error('error in x', 0)")))
        #expect(own.description.hasPrefix("error: error in x"), "\(own)")
        #expect(value(await runtime.evaluate("return 2")) == ["2"])
    }

    @Test("a pcall-wrapped loop cannot swallow the budget (sticky)")
    func pcallLoop() async throws {
        let runtime = try FlowRuntime(options: FlowOptions(limits: testLimits))
        let error = try #require(
            failure(
                await runtime.evaluate(
                    "while true do pcall(function() while true do end end) end")))
        #expect(error.kind == .instructionBudget)
        let nested = try #require(
            failure(
                await runtime.evaluate(
                    """
                    local co = coroutine.wrap(function() while true do pcall(function() while true do end end) end end)
                    while true do pcall(co) end
                    """)))
        #expect(nested.kind == .instructionBudget)
        #expect(value(await runtime.evaluate("return 3")) == ["3"])
    }

    @Test("the wall-clock deadline stops a loop when the budget is off")
    func deadline() async throws {
        var limits = testLimits
        limits.instructionBudget = 0
        limits.handlerDeadline = .milliseconds(100)
        let runtime = try FlowRuntime(options: FlowOptions(limits: limits))
        let error = try #require(failure(await runtime.evaluate("while true do pcall(function() while true do end end) end")))
        #expect(error.kind == .deadline)
        #expect(value(await runtime.evaluate("return 4")) == ["4"])
    }

    @Test(
        "memory bombs end with the memory limit; the runtime recovers",
        arguments: [
            "local t = {} for i = 1, 1e8 do t[i] = i end",
            "local s = 'x' for i = 1, 40 do s = s .. s end",
            "return string.rep('x', 1e9)",
            "return ('x'):rep(1e7):rep(100)",
            "local ok = pcall(string.rep, 'x', 1e9) while true do local t = {} end",
            "local t = {} while true do pcall(function() t[#t + 1] = {} end) end"
        ])
    func memoryBomb(_ chunk: String) async throws {
        let runtime = try FlowRuntime(options: FlowOptions(limits: testLimits))
        let error = try #require(failure(await runtime.evaluate(chunk)))
        #expect(error.kind == .memory, "\(error)")
        #expect(error.message.contains("memory limit exceeded"))
        #expect(error.description.ranges(of: "memory limit exceeded").count == 1, "\(error)")
        #expect(value(await runtime.evaluate("return #string.rep('y', 1000)")) == ["1000"])
        #expect(await runtime.memoryInUse < testLimits.memoryLimit)
    }

    @Test("string.rep of nothing does not spin")
    func emptyRep() async throws {
        let runtime = try FlowRuntime(options: FlowOptions(limits: testLimits))
        #expect(value(await runtime.evaluate("return #string.rep('', 1e15), #string.rep('', 1e15, '')")) == ["0", "0"])
    }

    @Test("a pattern bomb is refused before it runs; normal patterns work")
    func patternBomb() async throws {
        let runtime = try FlowRuntime(options: FlowOptions(limits: testLimits))
        let clock = ContinuousClock()
        let start = clock.now
        let error = try #require(failure(await runtime.evaluate("return string.find(string.rep('a', 800), '.-.-.-b')")))
        #expect(clock.now - start < .seconds(1))
        #expect(error.message.contains("pattern too complex"))
        let method = try #require(failure(await runtime.evaluate("return (string.rep('a', 800)):match('.-.-.-.-b')")))
        #expect(method.message.contains("pattern too complex"))
        #expect(value(await runtime.evaluate("return ('key=value'):match('^(%w+)=(%w+)$')")) == ["key", "value"])
        #expect(value(await runtime.evaluate("return (string.rep('a b ', 2000)):gsub('%s+', ' '):len()")) == ["8000"])
        #expect(value(await runtime.evaluate("return string.find(string.rep('a', 100000), 'b', 1, true)")) == ["nil"])
        #expect(failure(await runtime.evaluate("return table.move({}, 1, 1 << 40, 2)"))?.message.contains("table.move") == true)
    }

    @Test("the interrupt handle stops running code from another task")
    func interrupt() async throws {
        var limits = testLimits
        limits.instructionBudget = 0
        limits.handlerDeadline = nil
        let runtime = try FlowRuntime(options: FlowOptions(limits: limits))
        let handle = runtime.interrupt
        let stopper = Task.detached {
            try await Task.sleep(for: .milliseconds(50))
            handle.request()
        }
        let error = try #require(failure(await runtime.evaluate("while true do pcall(function() while true do end end) end")))
        #expect(error.kind == .interrupted)
        try await stopper.value
        #expect(value(await runtime.evaluate("return 5")) == ["5"])
    }

    @Test("each flow has its own globals and library tables")
    func isolation() async throws {
        let runtime = try FlowRuntime(options: FlowOptions(limits: testLimits))
        let other = try await runtime.testContext(name: "other")
        #expect(value(await runtime.evaluate("string.format = nil; shared = 1; rawset(string, 'x', 1); return string.format")) == ["nil"])
        #expect(
            value(await runtime.evaluate("return type(string.format), shared, string.x, ('%d'):format(7)", in: other)) == [
                "function", "nil", "nil", "7"
            ])
        #expect(value(await runtime.evaluate("load('leak = 1')(); return leak")) == ["1"])
        #expect(value(await runtime.evaluate("return leak", in: other)) == ["nil"])
    }
}

extension FlowRuntime {
    func testContext(name: String) throws(LuaError) -> Int {
        try host.makeContext(name: name, chunkName: "=" + name).id
    }

    func evaluate(_ text: String, in contextID: Int) async -> EvaluationResult {
        await host.vm.evaluate(text, env: host.contexts[contextID].env, on: self)
    }
}
