/// An error from Lua code or from the flow host, written for the person who has to fix the flow.
public struct LuaError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: String, Sendable, Hashable {
        /// The chunk does not compile; `message` has `file:line:`.
        case syntax
        /// A Lua error raised while running; `traceback` has the stack.
        case runtime
        /// The handler used up its instruction budget (`LuaLimits.instructionBudget`).
        case instructionBudget
        /// The handler ran longer than `LuaLimits.handlerDeadline`.
        case deadline
        /// The flow's heap hit `LuaLimits.memoryLimit`.
        case memory
        /// `LuaInterrupt.request()` stopped it (Ctrl-C).
        case interrupted
        /// The Swift task was cancelled.
        case cancelled
        /// The flow file is missing, empty, not a flow, or names something unknown.
        case invalidFlow
    }

    package var kind: Kind
    /// One line (or a few) saying what happened, with `file:line:` where Lua knows it.
    public var message: String
    /// The Lua stack at the point of failure, when there is one.
    package var traceback: String?

    package init(kind: Kind, message: String, traceback: String? = nil) {
        self.kind = kind
        self.message = message
        self.traceback = traceback
    }

    public var description: String {
        let head: String
        switch kind {
        case .syntax: head = "syntax error: "
        case .runtime: head = "error: "
        case .instructionBudget: head = "instruction budget exceeded: "
        case .deadline: head = "handler deadline exceeded: "
        case .memory: head = "memory limit exceeded: "
        case .interrupted: head = "interrupted: "
        case .cancelled: head = "cancelled: "
        case .invalidFlow: head = "invalid flow: "
        }
        // A tripped limit's message already names it ("memory limit exceeded (limit: …)"): not twice.
        let isLimit = kind == .instructionBudget || kind == .deadline || kind == .memory
        let text = isLimit && message.hasPrefix(head.dropLast(2)) ? message : head + message
        if let traceback, !traceback.isEmpty { return text + "\n" + traceback }
        return text
    }
}
