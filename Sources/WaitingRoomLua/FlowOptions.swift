import Logging

/// How a `FlowRuntime` runs its flows.
public struct FlowOptions: Sendable {
    /// Sandbox limits (memory per runtime, budget and deadline per handler).
    public var limits: LuaLimits
    /// Where `print`, `warn` and `wr.log` go (label `waitingroom.lua`, metadata `flow`).
    public var logger: Logger
    /// If set, `print` output goes here instead of the logger (the REPL prints to the terminal).
    public var printHandler: (@Sendable (String) -> Void)?

    public init(
        limits: LuaLimits = .default,
        logger: Logger = Logger(label: "waitingroom.lua"),
        printHandler: (@Sendable (String) -> Void)? = nil
    ) {
        self.limits = limits
        self.logger = logger
        self.printHandler = printHandler
    }
}
