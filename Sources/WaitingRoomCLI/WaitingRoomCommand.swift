import ArgumentParser

/// The `waitingroom` command: run flows, poke rooms, serve the emulator, run the demo.
public struct WaitingRoomCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "waitingroom",
        abstract: "Wait in any vendor's virtual waiting room: flows, REPL, checks, emulator, demo.",
        discussion: """
            Examples:
              waitingroom demo                                  # crowd + you in each vendor's room, on the embedded emulator
              waitingroom run Scripts/flows/netfunnel-checkout.lua --emulator
              waitingroom check --vendor netfunnel --emulator --scope service_1 --room segKey_basic --json
              waitingroom emulate --port 8080                   # serve every vendor's emulator
              waitingroom repl                                  # Lua with `wr` loaded

            \(ExitStatus.helpTable)
            """,
        subcommands: [
            RunCommand.self, ReplCommand.self, CheckCommand.self, EmulateCommand.self,
            DemoCommand.self, LoadCommand.self, BenchCommand.self,
        ]
    )

    public init() {}
}
