import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

/// A handler's answer (`wr.retry`, `wr.bypass`, `wr.abort`).
package enum FlowDecision: Equatable {
    case retry(after: Double)
    case bypass(String)
    case abort(String)
}

/// Everything the `FlowRuntime` actor owns: the VM, the flows, the rooms and sessions handed to
/// Lua. Not `Sendable`; every method runs on the actor (async ones take its isolation).
package final class FlowHost {
    let vm: LuaVM
    let options: FlowOptions
    let objects = HostObjects()
    var contexts: [FlowContext] = []
    var replContext: FlowContext?
    weak var runtime: FlowRuntime?
    let actionSink: AsyncStream<FlowAction>.Continuation
    private var metatablesInstalled = false

    init(options: FlowOptions, interrupt: LuaInterrupt, actionSink: AsyncStream<FlowAction>.Continuation) throws(LuaError) {
        self.options = options
        self.actionSink = actionSink
        vm = try LuaVM(limits: options.limits, interrupt: interrupt, logger: options.logger)
        installMetatables()
    }

    /// The runtime is gone (a REPL closed, a host dropped it): the keys its flows still hold
    /// go back in a task of their own (`room:try_pass` keys are released, sessions started by
    /// `room:enqueue` completed or cancelled). Logged with their count.
    deinit {
        let held = objects.held.takeAll(context: nil)
        let sessions = objects.enqueuedBy.keys.sorted().compactMap { objects.sessions[$0] }
        objects.enqueuedBy = [:]
        let pending = sessions.filter { session in
            !session.state.hasOutcome
                || (session.currentOutcome?.pass?.requiresCompletion == true
                    && (session.state == .passed || session.state == .disabled))
        }
        guard !held.isEmpty || !pending.isEmpty else { return }
        options.logger.notice("the Lua runtime was dropped holding \(held.count + pending.count) key(s); giving them back")
        Task {
            for key in held { _ = await FlowHost.release(key) }
            for session in pending {
                if session.state.hasOutcome { _ = try? await session.complete() } else { session.cancel() }
            }
        }
    }

    // MARK: contexts

    func makeContext(name: String, chunkName: String) throws(LuaError) -> FlowContext {
        let context = FlowContext(id: contexts.count, name: name, chunkName: chunkName, logger: options.logger)
        contexts.append(context)
        let printHandler = options.printHandler
        let logger = context.logger
        let printID = vm.register { vm, L in
            let text = vm.joinArguments(L)
            if let printHandler { printHandler(text) } else { logger.info("\(text)") }
            return .values(0)
        }
        let warnID = vm.register { vm, L in
            logger.warning("\(vm.joinArguments(L))")
            return .values(0)
        }
        context.env = try vm.makeEnvironment(print: printID, warn: warnID)
        installWR(in: context)
        return context
    }

    /// Read and compile a flow file (syntax errors name file:line).
    func loadFlow(path: String) throws(LuaError) -> FlowContext {
        guard FileManager.default.fileExists(atPath: path) else {
            throw LuaError(kind: .invalidFlow, message: "\(path): no such flow file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LuaError(kind: .invalidFlow, message: "\(path): cannot read the flow file")
        }
        guard let source = String(data: data, encoding: .utf8) else {
            throw LuaError(kind: .invalidFlow, message: "\(path): not a text file; expected a Lua flow (UTF-8 text)")
        }
        let name = (path as NSString).lastPathComponent
        return try loadFlow(source: source, name: name, chunkName: "@" + path, displayName: path)
    }

    func loadFlow(source: String, name: String, chunkName: String? = nil, displayName: String? = nil) throws(LuaError) -> FlowContext {
        let display = displayName ?? name
        if source.allSatisfy({ $0.isWhitespace }) {
            throw LuaError(
                kind: .invalidFlow,
                message:
                    "\(display): the flow is empty; expected Lua code that returns a flow table ({ entry = ..., vendor = ..., on_success = function(event, session) ... end })"
            )
        }
        if source.utf8.first == 0x1B {
            throw LuaError(kind: .invalidFlow, message: "\(display): precompiled Lua is not accepted; give the flow as source text")
        }
        let context = try makeContext(name: name, chunkName: chunkName ?? "=" + name)
        if let error = vm.compile(source, chunkName: context.chunkName, env: context.env) {
            throw LuaError(kind: error.kind, message: error.message)
        }
        context.chunkRef = clua_ref(vm.L)
        return context
    }

    // MARK: calling Lua

    /// Run function `ref` in a fresh coroutine with the arguments `pushArguments` pushes; return
    /// the handler's decision (its first result, when it is one).
    func call(
        _ ref: Int32, pushArguments: (OpaquePointer) -> Int32,
        on runtime: isolated FlowRuntime
    ) async -> Result<FlowDecision?, LuaError> {
        let co = vm.acquireThread()
        _ = clua_getref(co.thread, ref)
        let nargs = pushArguments(co.thread)
        var budget = vm.makeBudget()
        // A handler that does not await ends in the first resume: no async frame on that path.
        let outcome: ThreadOutcome
        switch vm.resume(co.thread, nargs: nargs, budget: &budget) {
        case .done(let done): outcome = done
        case let step: outcome = await vm.finish(co.thread, after: step, budget: budget, on: runtime)
        }
        switch outcome {
        case .finished(let count):
            let decision = count > 0 ? readDecision(co.thread, -count) : nil
            vm.releaseThread(co)
            return .success(decision)
        case .failed(let error):
            vm.releaseThread(co, finished: false)
            return .failure(error)
        }
    }

    func readDecision(_ L: OpaquePointer, _ index: Int32) -> FlowDecision? {
        guard lua_type(L, index) == LUA_TTABLE, lua_getmetatable(L, index) != 0 else { return nil }
        _ = lua_getfield(L, clua_registryindex(), "wr.decision")
        let isDecision = lua_rawequal(L, -1, -2) != 0
        clua_pop(L, 2)
        guard isDecision else { return nil }
        switch vm.stringField(L, index, "decision") {
        case "retry": return .retry(after: vm.numberField(L, index, "after") ?? 0)
        case "bypass": return .bypass(vm.stringField(L, index, "reason") ?? "")
        case "abort": return .abort(vm.stringField(L, index, "reason") ?? "")
        default: return nil
        }
    }

    /// Deliver `event` to the flow's `on_*` handler and `wr.on` listeners (each in its own
    /// coroutine, in registration order). Returns the handler's decision and any failures.
    package func dispatch(
        _ event: WaitingRoomEvent, session: WaitingSession?, to context: FlowContext, useHandler: Bool,
        on runtime: isolated FlowRuntime
    ) async -> (decision: FlowDecision?, errors: [LuaError]) {
        let handler: (String, Int32)? = useHandler ? context.handlersByEvent[event.name.ordinal] : nil
        if context.listeners.isEmpty {
            // the hot path: one handler, no listeners
            guard let (name, ref) = handler else { return (nil, []) }
            let sessionRef = session.map { sessionReference($0) }
            switch await call(ref, with: event, sessionRef: sessionRef, on: runtime) {
            case .success(let answer):
                return (answer, [])
            case .failure(var error):
                error.message = "\(name): " + error.message
                context.logger.error("\(error)")
                return (nil, [error])
            }
        }
        var refs: [(String, Int32)] = []
        if let handler { refs.append(handler) }
        for listener in context.listeners where listener.event == "*" || listener.event == event.name.rawValue {
            refs.append(("wr.on(\(listener.event))", listener.ref))
        }
        guard !refs.isEmpty else { return (nil, []) }
        let sessionRef = session.map { sessionReference($0) }
        var decision: FlowDecision?
        var errors: [LuaError] = []
        for (name, ref) in refs {
            switch await call(ref, with: event, sessionRef: sessionRef, on: runtime) {
            case .success(let answer):
                if decision == nil { decision = answer }
            case .failure(let error):
                var error = error
                error.message = "\(name): " + error.message
                context.logger.error("\(error)")
                errors.append(error)
            }
        }
        return (decision, errors)
    }

    /// Calls the handler or listener `ref` with `event` (and the session, when `sessionRef` is one).
    private func call(
        _ ref: Int32, with event: WaitingRoomEvent, sessionRef: Int32?, on runtime: isolated FlowRuntime
    ) async -> Result<FlowDecision?, LuaError> {
        await call(
            ref,
            pushArguments: { L in
                vm.push(L, event: event)
                if let sessionRef {
                    _ = clua_getref(L, sessionRef)
                    return 2
                }
                return 1
            }, on: runtime)
    }

    // MARK: rooms and sessions

    func sessionReference(_ session: WaitingSession) -> Int32 {
        let key = ObjectIdentifier(session)
        if let id = objects.sessionIDs[key], let ref = objects.sessionRefs[id] { return ref }
        let id = objects.nextID
        objects.nextID += 1
        objects.sessions[id] = session
        objects.sessionIDs[key] = id
        pushUserdata(vm.L, id: id, metatable: "wr.session")
        let ref = clua_ref(vm.L)
        objects.sessionRefs[id] = ref
        return ref
    }

    func pushUserdata(_ L: OpaquePointer, id: Int64, metatable: String) {
        guard let block = lua_newuserdatauv(L, MemoryLayout<Int64>.size, 0) else { return }
        block.storeBytes(of: id, as: Int64.self)
        luaL_setmetatable(L, metatable)
    }

    func userdataID(_ L: OpaquePointer, _ index: Int32, _ metatable: String) -> Int64? {
        guard let block = luaL_testudata(L, index, metatable) else { return nil }
        return block.load(as: Int64.self)
    }

    /// Start delivering the events of a session Lua created (`room:enqueue`) to `wr.on` listeners.
    func follow(_ session: WaitingSession, context: FlowContext) {
        guard let runtime else { return }
        let contextID = context.id
        let events = session.events  // subscribe now, before the session can emit more
        Task { [weak runtime] in
            for await event in events {
                guard let runtime else { return }
                await runtime.deliver(event, session: session, contextID: contextID)
            }
        }
    }
}
