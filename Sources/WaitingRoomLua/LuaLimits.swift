/// Resource limits of one Lua flow host (one `lua_State`). Every violation ends the running
/// handler with a `LuaError` naming the limit; the host and the other handlers keep running.
public struct LuaLimits: Sendable, Hashable {
    /// Bytes the flow's Lua heap may use. Default 16 MiB. `0` disables the cap.
    package var memoryLimit: Int
    /// Lua VM instructions one handler may execute, summed over all its slices (time spent awaiting
    /// `wr.*` calls costs nothing). Sticky: once exceeded, `pcall` cannot swallow the error.
    /// Default 10 million (about 0.1–0.2 s of pure Lua on the reference machine). `0` disables it.
    package var instructionBudget: Int
    /// Wall-clock time one handler may spend running Lua (awaits excluded). Default 1 s.
    /// Catches work the instruction count cannot see (C library calls). `nil` disables it.
    package var handlerDeadline: Duration?
    /// How often (in instructions) the hook checks the budget, the deadline and interrupts. Default 1000.
    package var hookStep: Int
    /// Estimated worst-case steps a `string.find/match/gmatch/gsub` call may take, computed from the
    /// subject length and the pattern's repetition items; larger calls are refused before they run.
    /// Default 1e9 (about 0.3 s worst case on the reference machine). `0` disables the check.
    package var patternWorkLimit: Double
    /// Largest `table.move` element count. Default 4,194,304. `0` disables the check.
    package var tableMoveLimit: Int

    public init(
        memoryLimit: Int = 16 << 20,
        instructionBudget: Int = 10_000_000,
        handlerDeadline: Duration? = .seconds(1),
        hookStep: Int = 1000,
        patternWorkLimit: Double = 1e9,
        tableMoveLimit: Int = 1 << 22
    ) {
        self.memoryLimit = memoryLimit
        self.instructionBudget = instructionBudget
        self.handlerDeadline = handlerDeadline
        self.hookStep = hookStep
        self.patternWorkLimit = patternWorkLimit
        self.tableMoveLimit = tableMoveLimit
    }

    /// The documented defaults.
    public static let `default` = LuaLimits()
}
