import CLua
import CLuaShim
import Logging

/// What a Swift host function asks the C trampoline to do once the Swift frame has returned.
enum HostReturn {
    /// `n` results are on the stack.
    case values(Int32)
    /// Raise this message, prefixed with the caller's `file:line:`.
    case error(String)
    /// Yield to the actor, which awaits the operation and resumes the coroutine with its results.
    case await(PendingOperation)
}

/// An async operation a host function hands to the actor. `run` must not touch the `lua_State`;
/// `deliver` runs back on the actor and pushes the results (returning how many).
struct PendingOperation {
    let run: @Sendable () async -> any Sendable
    let deliver: (LuaVM, OpaquePointer, any Sendable) -> Int32

    init<T: Sendable>(
        _ run: @escaping @Sendable () async -> T,
        deliver: @escaping (LuaVM, OpaquePointer, T) -> Int32
    ) {
        self.run = { await run() }
        self.deliver = { vm, L, value in
            guard let value = value as? T else {
                lua_pushnil(L)
                vm.push(L, "internal error: unexpected result type")
                return 2
            }
            return deliver(vm, L, value)
        }
    }
}

/// A Swift host function: reads its arguments from `L` with calls that cannot raise, pushes its
/// results, and returns a `HostReturn` (it never raises or yields itself).
typealias HostFunction = (LuaVM, OpaquePointer) -> HostReturn

/// Owns one sandboxed `lua_State` (not `Sendable`: it lives inside the actor that owns it).
package final class LuaVM {
    package let L: OpaquePointer
    let limits: LuaLimits
    /// `limits.handlerDeadline` in nanoseconds (nil: none), worked out once for the hot path.
    private let handlerDeadlineNs: Int64?
    let interrupt: LuaInterrupt
    package var logger: Logger
    private let state: UnsafeMutablePointer<clua_Limits>
    private var hostFunctions: [HostFunction] = []
    private var pending: [Int64: PendingOperation] = [:]
    private var nextOperationID: Int64 = 1
    private var threadPool: [(thread: OpaquePointer, ref: Int32)] = []
    private var makeEnvironmentRef: Int32 = LUA_NOREF
    /// Interned event keys and names (see `LuaInternedStrings`).
    private(set) var interned = LuaInternedStrings(keys: [], eventNames: [])

    package init(limits: LuaLimits = .default, interrupt: LuaInterrupt = LuaInterrupt(), logger: Logger) throws(LuaError) {
        self.limits = limits
        self.handlerDeadlineNs = limits.handlerDeadline.map { duration in
            let (seconds, attoseconds) = duration.components
            return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        }
        self.interrupt = interrupt
        self.logger = logger
        state = UnsafeMutablePointer<clua_Limits>.allocate(capacity: 1)
        state.initialize(to: clua_Limits())
        state.pointee.mem_limit = limits.memoryLimit > 0 ? limits.memoryLimit : 0
        state.pointee.step = Int32(clamping: max(1, limits.hookStep))
        state.pointee.pattern_limit = limits.patternWorkLimit
        state.pointee.move_limit = Int64(limits.tableMoveLimit)
        guard let L = clua_newstate(state) else {
            state.deallocate()
            throw LuaError(kind: .memory, message: "cannot create a Lua state")
        }
        self.L = L
        state.pointee.dispatch = { L, ctx, fid in
            guard let L, let ctx else { return CLUA_HOST_RAISE }
            return Unmanaged<LuaVM>.fromOpaque(ctx).takeUnretainedValue().callHost(L, Int(fid))
        }
        state.pointee.dispatch_ctx = Unmanaged.passUnretained(self).toOpaque()
        state.pointee.poll = { ctx in
            guard let ctx else { return 0 }
            return Unmanaged<LuaInterrupt>.fromOpaque(ctx).takeUnretainedValue().isRequested ? 1 : 0
        }
        state.pointee.poll_ctx = Unmanaged.passUnretained(interrupt).toOpaque()
        guard clua_open_sandbox(L) == LUA_OK else {
            throw LuaError(kind: .memory, message: "cannot open the Lua libraries")
        }
        try installPrelude()
        interned = LuaInternedStrings(L) { L, text in self.push(L, text) }
        _ = clua_gc_generational(L)
    }

    deinit {
        clua_close(L)
        state.deallocate()
    }

    // MARK: host functions

    /// Register a host function; the returned id is pushed with `pushHost`.
    func register(_ fn: @escaping HostFunction) -> Int32 {
        hostFunctions.append(fn)
        return Int32(hostFunctions.count - 1)
    }

    func pushHost(_ L: OpaquePointer, _ fid: Int32) { clua_pushhost(L, fid) }

    fileprivate func callHost(_ L: OpaquePointer, _ fid: Int) -> Int32 {
        guard fid >= 0, fid < hostFunctions.count else {
            push(L, "unknown host function")
            return CLUA_HOST_RAISE_WHERE
        }
        switch hostFunctions[fid](self, L) {
        case .values(let n):
            return n
        case .error(let message):
            push(L, message)
            return CLUA_HOST_RAISE_WHERE
        case .await(let operation):
            guard lua_isyieldable(L) != 0 else {
                push(
                    L,
                    "cannot wait here: wr.* calls that wait cannot run inside a metamethod, a "
                        + "table.sort comparator, a string.gsub function or at the top level of load()")
                return CLUA_HOST_RAISE_WHERE
            }
            let id = nextOperationID
            nextOperationID += 1
            pending[id] = operation
            lua_pushlightuserdata(L, clua_sentinel())
            lua_pushinteger(L, id)
            return CLUA_HOST_YIELD_BASE - 2
        }
    }

    // MARK: environments and chunks

    private func installPrelude() throws(LuaError) {
        guard loadText(LuaPrelude.source, chunkName: "=sandbox") == LUA_OK else {
            let message = string(L, -1) ?? "?"
            throw LuaError(kind: .syntax, message: "sandbox prelude: \(message)")
        }
        clua_pushglobaltable(L)
        lua_pushlightuserdata(L, clua_sentinel())
        guard clua_pcall_host(L, 2, 1) == LUA_OK else {
            let message = string(L, -1) ?? "?"
            clua_pop(L, 1)
            throw LuaError(kind: .runtime, message: "sandbox prelude: \(message)")
        }
        makeEnvironmentRef = clua_ref(L)
    }

    /// A fresh global table for one flow: copies of the safe base functions and of the library
    /// tables, so one flow cannot change another's `string` or globals. `host` fills in globals
    /// such as `print`, `warn` and `wr` (pushed onto `L` by the closure, which returns the count).
    func makeEnvironment(print printID: Int32, warn warnID: Int32) throws(LuaError) -> Int32 {
        _ = clua_getref(L, makeEnvironmentRef)
        lua_createtable(L, 0, 2)
        clua_pushhost(L, printID)
        lua_setfield(L, -2, "print")
        clua_pushhost(L, warnID)
        lua_setfield(L, -2, "warn")
        guard clua_pcall_host(L, 1, 1) == LUA_OK else {
            let message = string(L, -1) ?? "?"
            clua_pop(L, 1)
            throw LuaError(kind: .memory, message: "cannot create a flow environment: \(message)")
        }
        return clua_ref(L)
    }

    private func loadText(_ source: String, chunkName: String) -> Int32 {
        var source = source
        return source.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                clua_load(L, chars.baseAddress, chars.count, chunkName)
            }
        }
    }

    /// Compile `source` in environment `env`, leaving the function on the stack of `L`.
    func compile(_ source: String, chunkName: String, env: Int32) -> LuaError? {
        let status = loadText(source, chunkName: chunkName)
        guard status == LUA_OK else {
            let message = string(L, -1) ?? "cannot load chunk"
            clua_pop(L, 1)
            if status == LUA_ERRMEM { return LuaError(kind: .memory, message: message) }
            return LuaError(kind: .syntax, message: message)
        }
        _ = clua_getref(L, env)
        if lua_setupvalue(L, -2, 1) == nil { clua_pop(L, 1) }
        return nil
    }

    // MARK: running coroutines

    /// Take a coroutine from the pool (or make one). It stays anchored in the registry.
    func acquireThread() -> (thread: OpaquePointer, ref: Int32) {
        if let reused = threadPool.popLast() { return reused }
        let co: OpaquePointer = lua_newthread(L)
        let ref = clua_ref(L)
        return (co, ref)
    }

    /// Give a finished coroutine back (reset and pooled, or released).
    /// Only threads that finished normally are reused: a thread stopped from inside the hook keeps
    /// hooks disabled (Lua leaves `allowhook` cleared when a hook error escapes `lua_resume`).
    func releaseThread(_ entry: (thread: OpaquePointer, ref: Int32), finished: Bool = true) {
        let reusable = finished && lua_status(entry.thread) == LUA_OK
        if lua_status(entry.thread) != LUA_OK { _ = lua_resetthread(entry.thread) }
        lua_settop(entry.thread, 0)
        if reusable && threadPool.count < 16 {
            threadPool.append(entry)
        } else {
            clua_unref(L, entry.ref)
        }
    }

    /// The limits left to a coroutine across its resumes.
    struct RunBudget {
        var instructionsLeft: Int64
        var runTimeLeftNs: Int64?
    }

    /// What one resume of a coroutine ended with.
    enum ResumeStep {
        /// Returned (`n` results on the stack) or failed: the run is over.
        case done(ThreadOutcome)
        /// Yielded on a `wr.*` operation to await.
        case awaiting(PendingOperation)
        /// A bare `coroutine.yield()`: let others run, then resume with no values.
        case yielded
        /// Resume again at once with `nargs` values already pushed (an internal answer).
        case resume(nargs: Int32)
    }

    /// A fresh budget from the limits.
    func makeBudget() -> RunBudget {
        RunBudget(instructionsLeft: Int64(limits.instructionBudget), runTimeLeftNs: handlerDeadlineNs)
    }

    /// Resume `co` once, synchronously, with the limits armed. The hot path: a handler that
    /// does not await finishes here without an async frame.
    func resume(_ co: OpaquePointer, nargs: Int32, budget: inout RunBudget) -> ResumeStep {
        state.pointee.tripped = 0
        state.pointee.refused_growth = 0
        state.pointee.budget_enabled = limits.instructionBudget > 0 ? 1 : 0
        state.pointee.budget = budget.instructionsLeft
        // The clock is read only when a deadline is set, and read again only after a yield
        // (the time spent awaiting a `wr.*` call does not count against the handler).
        let start = budget.runTimeLeftNs != nil ? clua_now_ns() : 0
        state.pointee.deadline_ns = budget.runTimeLeftNs.map { start + max($0, 1) } ?? 0
        var nres: Int32 = 0
        let status = clua_resume(co, L, nargs, &nres)
        budget.instructionsLeft = state.pointee.budget
        state.pointee.deadline_ns = 0
        switch status {
        case LUA_OK:
            return .done(.finished(nres))
        case LUA_YIELD:
            if let left = budget.runTimeLeftNs { budget.runTimeLeftNs = left - (clua_now_ns() - start) }
            guard nres >= 2, lua_touserdata(co, -nres) == clua_sentinel() else {
                clua_pop(co, nres)
                return .yielded
            }
            let id = clua_tointeger(co, -nres + 1)
            clua_pop(co, nres)
            guard let operation = pending.removeValue(forKey: id) else {
                lua_pushnil(co)
                push(co, "internal error: unknown operation")
                return .resume(nargs: 2)
            }
            return .awaiting(operation)
        default:
            return .done(.failed(failure(co, status: status)))
        }
    }

    /// Resume `co` until it returns, errors, or is stopped by a limit, serving `wr.*` awaits in
    /// between (the caller's actor is free while an operation is awaited). On `.finished(n)` the
    /// `n` results are on top of `co`'s stack.
    func run(
        _ co: OpaquePointer, nargs: Int32, chunkName: String? = nil,
        on runtime: isolated FlowRuntime
    ) async -> ThreadOutcome {
        var budget = makeBudget()
        let first = resume(co, nargs: nargs, budget: &budget)
        if case .done(let outcome) = first { return outcome }
        return await finish(co, after: first, budget: budget, on: runtime)
    }

    /// Serve what a resume stopped on, and resume again, until the coroutine is done.
    func finish(
        _ co: OpaquePointer, after step: ResumeStep, budget: RunBudget,
        on runtime: isolated FlowRuntime
    ) async -> ThreadOutcome {
        var step = step
        var budget = budget
        while true {
            let nargs: Int32
            switch step {
            case .done(let outcome):
                return outcome
            case .resume(let count):
                nargs = count
            case .yielded:
                // a bare coroutine.yield() at the handler's top level: let others run
                await Task.yield()
                nargs = 0
            case .awaiting(let operation):
                if Task.isCancelled {
                    nargs = pushCancelled(co)
                } else {
                    let value = await operation.run()
                    if interrupt.isRequested {
                        return .failed(LuaError(kind: .interrupted, message: "interrupted while waiting"))
                    }
                    nargs = Task.isCancelled ? pushCancelled(co) : operation.deliver(self, co, value)
                }
            }
            step = resume(co, nargs: nargs, budget: &budget)
        }
    }

    private func pushCancelled(_ co: OpaquePointer) -> Int32 {
        lua_pushnil(co)
        push(co, "cancelled")
        return 2
    }

    private func failure(_ co: OpaquePointer, status: Int32) -> LuaError {
        var message: String
        if lua_type(co, -1) == LUA_TSTRING {
            message = string(co, -1) ?? "error"
        } else {
            message = "(error object is a \(String(cString: clua_typename_at(co, -1))) value)"
        }
        clua_traceback(L, co, nil, 0)
        let traceback = string(L, -1)
        clua_pop(L, 1)
        let kind: LuaError.Kind
        switch state.pointee.tripped {
        case CLUA_TRIP_BUDGET: kind = .instructionBudget
        case CLUA_TRIP_DEADLINE: kind = .deadline
        case CLUA_TRIP_INTERRUPT: kind = .interrupted
        case CLUA_TRIP_MEMORY: kind = .memory
        default: kind = status == LUA_ERRMEM ? .memory : .runtime
        }
        switch kind {
        case .instructionBudget:
            message += " (limit: \(limits.instructionBudget) instructions per handler)"
        case .deadline:
            message += " (limit: \(limits.handlerDeadline.map { "\($0)" } ?? "none") of running time per handler)"
        case .memory:
            if status == LUA_ERRMEM { message = "memory limit exceeded (not enough memory)" }
            message += " (limit: \(limits.memoryLimit) bytes per flow)"
        default:
            break
        }
        state.pointee.tripped = 0
        if kind == .memory { _ = clua_gc_collect(L) }
        return LuaError(kind: kind, message: message, traceback: traceback)
    }

    // MARK: small stack helpers (none of these can raise)

    func push(_ L: OpaquePointer, _ string: String) {
        var string = string
        string.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                _ = lua_pushlstring(L, chars.baseAddress, chars.count)
            }
        }
    }

    /// The string at `index` if it *is* a string (numbers are not converted in place).
    func string(_ L: OpaquePointer, _ index: Int32) -> String? {
        guard lua_type(L, index) == LUA_TSTRING else { return nil }
        var length = 0
        guard let pointer = lua_tolstring(L, index, &length) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }

    /// Bytes the Lua heap uses now.
    var memoryInUse: Int { Int(state.pointee.mem_used) }
    /// Most bytes the Lua heap has used.
    var memoryPeak: Int { Int(state.pointee.mem_peak) }
}

/// How a coroutine run ended.
enum ThreadOutcome {
    case finished(Int32)
    case failed(LuaError)
}
