import CLua
import CLuaShim
import Logging

/// Hosts Lua flows on one sandboxed `lua_State` (reference lua-embedding.md §4.3). The actor owns
/// the state; each event handler runs in its own coroutine, and `wr.*` calls that wait yield to
/// the actor, which awaits Swift and resumes them, so handlers of several sessions (or several
/// flows) interleave without blocking a thread.
public actor FlowRuntime {
    let vm: LuaVM
    let options: FlowOptions
    var contexts: [FlowContext] = []
    /// The REPL's global table (created on first use).
    var replContext: FlowContext?

    /// Thread-safe handle that stops the Lua code running on this runtime (Ctrl-C).
    public nonisolated let interrupt: LuaInterrupt

    /// An empty runtime (for the REPL, or to load flows into later).
    public init(options: FlowOptions = FlowOptions()) throws(LuaError) {
        let interrupt = LuaInterrupt()
        self.interrupt = interrupt
        self.options = options
        self.vm = try LuaVM(limits: options.limits, interrupt: interrupt, logger: options.logger)
    }

    /// Evaluate one REPL chunk with `wr` loaded (reference §5.1). Globals persist between calls.
    public func evaluate(_ text: String) async -> EvaluationResult {
        let context: FlowContext
        if let existing = replContext {
            context = existing
        } else {
            do {
                context = try makeContext(name: "repl", chunkName: "=stdin")
            } catch {
                return .failure(error)
            }
            replContext = context
        }
        return await vm.evaluate(text, env: context.env)
    }

    /// Bytes the runtime's Lua heap uses now.
    public var memoryInUse: Int { vm.memoryInUse }

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
        return context
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
