/// A set of command-line arguments: a command, or a group of options several commands share.
protocol CLIArguments {
    /// The value before parsing: every property at its default.
    init()
    /// What the command line may say, in the order help lists it.
    static var arguments: [CLIArgument<Self>] { get }
    /// Checks that the parsed values go together (ranges, exclusive options).
    func validate() throws(UsageError)
}

extension CLIArguments {
    func validate() throws(UsageError) {}
}

/// The words help shows for a command.
struct CommandDescription: Sendable {
    /// The word that names it (`run`).
    var name: String
    /// One line.
    var abstract: String
    /// Paragraphs and examples, as written.
    var discussion: String
}

/// A `waitingroom` subcommand: its description, its arguments and what it does.
protocol CLICommand: CLIArguments, Sendable {
    static var about: CommandDescription { get }
    /// Does the command's work; throws an ``ExitStatus`` to exit with that status.
    func run() async throws
    /// Whether this invocation serves HTTP, so its tasks should run on NIO's event loops
    /// (``WaitingRoomCommand/runFromCommandLine(_:)``).
    var servesOnEventLoops: Bool { get }
}

extension CLICommand {
    var servesOnEventLoops: Bool { false }
}
