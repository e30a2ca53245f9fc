/// The `waitingroom` command: run flows, poke rooms, serve the emulator, run the demo.
public enum WaitingRoomCommand {
    static let about = CommandDescription(
        name: "waitingroom",
        abstract: "Wait in any vendor's virtual waiting room: flows, REPL, checks, emulator, demo.",
        discussion: """
            Examples:
              waitingroom demo                                  # crowd + you in each vendor's room, on the embedded emulator
              waitingroom run Scripts/flows/netfunnel-checkout.lua --emulator
              waitingroom check --vendor netfunnel --emulator --scope service_1 --room segKey_basic --json
              waitingroom emulate --port 8080                   # serve every vendor's emulator
              waitingroom repl                                  # Lua with `wr` loaded

            \(ExitStatus.helpTable)
            """)

    /// The subcommands, in the order help lists them.
    static let subcommands: [any CLICommand.Type] = [
        RunCommand.self, ReplCommand.self, CheckCommand.self, EmulateCommand.self,
        DemoCommand.self, LoadCommand.self, ReturnsCommand.self, BenchCommand.self, GateCommand.self
    ]

    /// The parser for `waitingroom`'s command line.
    static var parser: CommandLineParser { CommandLineParser(root: about, subcommands: subcommands) }
}
