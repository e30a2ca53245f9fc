import ArgumentParser

/// Options shared by two subcommands, like `waitingroom`'s vendor options.
struct RoomOptions: ParsableArguments {
    @Option(help: "Vendor id.") var vendor: String = "netfunnel"
    @Flag(help: "Use the embedded emulator.") var emulator = false
    @Option(help: "Scope.") var scope: String?
    @Option(help: "Room.") var room: String?
}

struct RunFlow: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run a flow script.")
    @OptionGroup var room: RoomOptions
    @Argument(help: "The script.") var script: String
    @Option(help: "Seconds.") var timeout: Double = 30
    func run() {}
}

struct CheckRoom: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "check", abstract: "Check a room once.")
    @OptionGroup var room: RoomOptions
    @Flag(help: "JSON output.") var json = false
    func run() {}
}

struct Emulate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "emulate", abstract: "Serve the emulators.")
    @Option(help: "Port.") var port: Int = 0
    @Option(help: "Host.") var host: String = "127.0.0.1"
    func run() {}
}

/// The root command's configuration, the same in both builds.
let floorConfiguration = CommandConfiguration(
    commandName: "floor-tool", abstract: "The start-up floor of an ArgumentParser command line.",
    subcommands: [RunFlow.self, CheckRoom.self, Emulate.self])

#if ASYNC_MAIN
    /// As `waitingroom` was before its parse moved to the main thread: an `AsyncParsableCommand` root
    /// and ArgumentParser's `async` main (the parse runs on the cooperative pool).
    @main
    struct FloorTool: AsyncParsableCommand {
        static let configuration = floorConfiguration
    }
#else
    /// As `waitingroom` is: a synchronous parse on the main thread.
    @main
    struct FloorTool: ParsableCommand {
        static let configuration = floorConfiguration
    }
#endif
