import CLua
import CLuaShim

/// The result of evaluating one REPL chunk.
package enum EvaluationResult: Sendable, Hashable {
    /// The chunk ran; its results rendered for display (empty for a statement).
    case values([String])
    /// The chunk is an unfinished statement (Lua said `<eof>`): read another line and try again.
    case incomplete
    /// The chunk did not compile or failed while running.
    case failure(LuaError)
}

extension LuaVM {
    /// REPL rules of `lua.c` (docs/lua-embedding.md §5.1): a leading `=` means `return`; try `return <chunk>;`
    /// first, then the chunk as statements; a syntax error ending in `<eof>` means "incomplete".
    /// Runs in `env` inside a coroutine, so `wr.*` awaits work at the prompt; `LuaInterrupt`
    /// stops it.
    func evaluate(
        _ text: String, env: Int32, chunkName: String = "=stdin",
        on runtime: isolated FlowRuntime
    ) async -> EvaluationResult {
        interrupt.reset()
        var source = text
        if source.hasPrefix("=") { source = "return " + source.dropFirst() }
        if compile("return " + source + ";", chunkName: chunkName, env: env) != nil {
            if let error = compile(source, chunkName: chunkName, env: env) {
                if error.kind == .syntax, error.message.hasSuffix("<eof>") { return .incomplete }
                return .failure(error)
            }
        }
        let co = acquireThread()
        lua_xmove(L, co.thread, 1)
        switch await run(co.thread, nargs: 0, on: runtime) {
        case .finished(let count):
            var values: [String] = []
            if count > 0 {
                for i in 0..<count { values.append(describe(co.thread, -count + i)) }
            }
            releaseThread(co)
            return .values(values)
        case .failed(let error):
            releaseThread(co, finished: false)
            return .failure(error)
        }
    }
}
