import CLua
import CLuaShim
import Logging
import WaitingRoom

/// Identifies a flow loaded into a `FlowRuntime`.
package struct FlowID: Hashable, Sendable {
    let value: Int
}

/// Hosts Lua flows on one sandboxed `lua_State` (docs/lua-embedding.md §4.3). The actor owns
/// the state; each event handler runs in its own coroutine, and `wr.*` calls that wait yield to
/// the actor, which awaits Swift and resumes them, so handlers of several sessions (or several
/// flows on one runtime) interleave without blocking a thread. Each flow has its own globals.
///
/// Globals are shared by the handlers of one flow: while a handler awaits a `wr.*` call, another
/// handler of the same flow may run and change them (as with OpenResty light threads).
public actor FlowRuntime {
    package let host: FlowHost
    package let primary: FlowContext?

    /// Thread-safe handle that stops the Lua code running on this runtime (Ctrl-C).
    package nonisolated let interrupt: LuaInterrupt
    /// Every `wr.emit` of every flow on this runtime, as it happens. Finishes when `run()` of the
    /// flow the runtime was built with returns (or with `finishActions()`).
    public nonisolated let actions: AsyncStream<FlowAction>
    private let actionContinuation: AsyncStream<FlowAction>.Continuation

    private init(options: FlowOptions, load: (FlowHost) throws(LuaError) -> FlowContext?) throws(LuaError) {
        let (stream, continuation) = AsyncStream<FlowAction>.makeStream(bufferingPolicy: .unbounded)
        let interrupt = LuaInterrupt()
        let host = try FlowHost(options: options, interrupt: interrupt, actionSink: continuation)
        let primary = try load(host)
        self.host = host
        self.primary = primary
        self.interrupt = interrupt
        self.actions = stream
        self.actionContinuation = continuation
    }

    /// An empty runtime: for the REPL, or to load flows into with `addFlow`.
    package init(options: FlowOptions = FlowOptions()) throws(LuaError) {
        try self.init(options: options) { _ throws(LuaError) in nil }
    }

    /// A runtime for the flow file at `path`. Throws `LuaError` (`.invalidFlow` naming the file for
    /// a missing, unreadable or empty file; `.syntax` with `file:line:` for code that does not compile).
    public init(path: String, options: FlowOptions = FlowOptions()) throws(LuaError) {
        try self.init(options: options) { host throws(LuaError) in try host.loadFlow(path: path) }
    }

    /// A runtime for flow source text; `name` appears in messages (`name:line:`).
    public init(source: String, name: String = "flow", options: FlowOptions = FlowOptions()) throws(LuaError) {
        try self.init(options: options) { host throws(LuaError) in try host.loadFlow(source: source, name: name) }
    }

    /// Load another flow (its own globals) into this runtime.
    package func addFlow(path: String) throws(LuaError) -> FlowID {
        FlowID(value: try host.loadFlow(path: path).id)
    }

    /// Load another flow from source text into this runtime.
    package func addFlow(source: String, name: String) throws(LuaError) -> FlowID {
        FlowID(value: try host.loadFlow(source: source, name: name).id)
    }

    /// The flow the runtime was built with.
    package var mainFlow: FlowID? { primary.map { FlowID(value: $0.id) } }

    /// Run the flow the runtime was built with: run its chunk, check its table, run the entry,
    /// dispatch every event to its handlers, apply decisions. Never throws: problems end up in
    /// `FlowResult.outcome` (`.flowError`) and `handlerErrors`.
    public func run() async -> FlowResult {
        guard let primary else {
            return FlowResult(
                outcome: .flowError(LuaError(kind: .invalidFlow, message: "this runtime was built without a flow")), actions: [],
                attempts: 0, handlerErrors: [], completion: nil)
        }
        host.runtime = self
        let result = await host.run(primary, on: self)
        actionContinuation.finish()
        return result
    }

    /// Run a flow added with `addFlow`. Several runs may be in flight on one runtime; their
    /// handlers interleave while they await.
    package func run(_ flow: FlowID) async -> FlowResult {
        guard let context = host.contexts.first(where: { $0.id == flow.value }) else {
            return FlowResult(
                outcome: .flowError(LuaError(kind: .invalidFlow, message: "unknown flow")), actions: [], attempts: 0, handlerErrors: [],
                completion: nil)
        }
        host.runtime = self
        return await host.run(context, on: self)
    }

    /// End the `actions` stream.
    package func finishActions() { actionContinuation.finish() }

    /// Gives back every key the flows and the REPL on this runtime still hold (`room:try_pass`
    /// keys not released, sessions started by `room:enqueue` left passed or waiting); each is a
    /// `key_returned` action. Returns how many. A flow's run does this for its own keys when it
    /// ends, and a runtime that is dropped does it for what is left; the REPL calls it on exit.
    package func returnHeldKeys() async -> Int {
        host.runtime = self
        var count = 0
        for context in host.contexts { count += await host.giveBackKeys(of: context, on: self) }
        return count
    }

    /// Evaluate one REPL chunk with `wr` loaded (docs/lua-embedding.md §5.1). Globals persist between calls;
    /// `interrupt.request()` stops a running chunk; cancelling the calling task makes a waiting
    /// `wr.*` call return `nil, "cancelled"`. `chunkName` is Lua's (`=stdin` reads "stdin:1:",
    /// `@flow.lua` reads "flow.lua:1:" in messages and tracebacks).
    package func evaluate(_ text: String, chunkName: String = "=stdin") async -> EvaluationResult {
        host.runtime = self
        let context: FlowContext
        if let existing = host.replContext {
            context = existing
        } else {
            do {
                context = try host.makeContext(name: "repl", chunkName: "=stdin")
            } catch {
                return .failure(error)
            }
            host.replContext = context
        }
        return await host.vm.evaluate(text, env: context.env, chunkName: chunkName, on: self)
    }

    /// Bytes the runtime's Lua heap uses now.
    package var memoryInUse: Int { host.vm.memoryInUse }

    /// Deliver an event of a session Lua created to the flow's `wr.on` listeners.
    func deliver(_ event: WaitingRoomEvent, session: WaitingSession, contextID: Int) async {
        guard let context = host.contexts.first(where: { $0.id == contextID }) else { return }
        host.options.eventObserver?(context.name, event)
        _ = await host.dispatch(event, session: session, to: context, useHandler: false, on: self)
    }
}

extension LuaVM {
    /// All arguments rendered and joined with tabs (as `print` does, without running metamethods).
    func joinArguments(_ L: OpaquePointer, from first: Int32 = 1) -> String {
        let top = lua_gettop(L)
        guard top >= first else { return "" }
        return (first...top).map { describe(L, $0, depth: 2) }.joined(separator: "\t")
    }
}
