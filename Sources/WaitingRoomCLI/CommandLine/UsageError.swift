/// A command line `waitingroom` cannot run: an unknown option, a missing or bad value, options
/// that do not go together. Reported on stderr with the command's usage line; exit status 64.
struct UsageError: Error, CustomStringConvertible {
    /// What is wrong, naming the option or word.
    var message: String
    /// The usage line of the command it concerns, when known.
    var usage: String?
    /// The words that name the command (`["waitingroom", "run"]`), for the help hint.
    var commandPath: [String]

    init(_ message: String) {
        self.message = message
        self.usage = nil
        self.commandPath = []
    }

    var description: String { message }

    /// The report for stderr: the message, the usage line and where to read more.
    var report: String {
        var text = "Error: \(message)\n"
        if let usage { text += "Usage: \(usage)\n" }
        if !commandPath.isEmpty {
            let helpWords =
                commandPath.count > 1
                ? "\(commandPath[0]) help \(commandPath.dropFirst().joined(separator: " "))" : "\(commandPath[0]) --help"
            text += "  See '\(helpWords)' for more information.\n"
        }
        return text
    }
}
