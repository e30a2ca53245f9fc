#if canImport(Glibc)
    import Glibc
#endif

/// Reads `waitingroom`'s command line: a subcommand and its arguments, `--help` / `-h` anywhere,
/// `help [subcommand]`, and `--generate-completion-script [shell]` (the login shell's when none
/// is named).
///
/// Everything it knows comes from the commands' declarations (``CLICommand/about``,
/// ``CLIArguments/arguments``) through static calls, so a parse costs microseconds and asks the
/// Swift runtime nothing about types (ArgumentParser's reflection was two thirds of
/// `waitingroom --help`'s start-up; `bench startup`).
///
/// Rules: `--name value` and `--name=value`; a flag takes no value; an option given twice keeps
/// the last value unless it repeats; `--` ends the options; a word starting with `-` is an option
/// unless it is a negative number.
struct CommandLineParser {
    /// What the command line asks for.
    enum Invocation {
        /// Run this command.
        case run(any CLICommand)
        /// Print this text and exit 0 (help, a completion script).
        case output(String)
    }

    var root: CommandDescription
    var subcommands: [any CLICommand.Type]

    func parse(_ words: [String]) throws(UsageError) -> Invocation {
        guard let first = words.first else { return .output(rootHelp) }
        if Self.isHelp(first) { return .output(rootHelp) }
        if first == "help" { return try help(words.dropFirst()) }
        if first == "--generate-completion-script" || first.hasPrefix("--generate-completion-script=") {
            return try completionScript(words)
        }
        guard let subcommand = subcommands.first(where: { $0.about.name == first }) else {
            var error = UsageError(
                first.hasPrefix("-") ? "Unknown option '\(first)'" : "Unknown subcommand '\(first)'; expected one of \(names)")
            error.usage = "\(root.name) <subcommand>"
            error.commandPath = [root.name]
            throw error
        }
        return try parse(subcommand, words.dropFirst())
    }

    var rootHelp: String { HelpText.rootPage(root, subcommands: subcommands) }

    var names: String { subcommands.map { $0.about.name }.joined(separator: ", ") }

    static func isHelp(_ word: String) -> Bool { word == "-h" || word == "--help" || word == "-help" }

    private func help(_ words: ArraySlice<String>) throws(UsageError) -> Invocation {
        guard let name = words.first else { return .output(rootHelp) }
        guard let subcommand = subcommands.first(where: { $0.about.name == name }) else {
            var error = UsageError("Unknown subcommand '\(name)'; expected one of \(names)")
            error.usage = "\(root.name) help <subcommand>"
            throw error
        }
        return .output(page(subcommand))
    }

    private func page<C: CLICommand>(_ command: C.Type) -> String { HelpText.page(command, root: root.name) }

    private func completionScript(_ words: [String]) throws(UsageError) -> Invocation {
        let shell = Self.split(words[0]).value ?? words.dropFirst().first ?? loginShell
        let script = CompletionScript(root: root, subcommands: subcommands)
        switch shell {
        case "bash": return .output(script.bash)
        case "zsh": return .output(script.zsh)
        case "fish": return .output(script.fish)
        default:
            var error = UsageError(
                shell.map { "Unknown shell '\($0)'; expected bash, zsh or fish" }
                    ?? "Missing value for '--generate-completion-script <shell>'")
            error.usage = "\(root.name) --generate-completion-script <shell>"
            throw error
        }
    }

    /// The last path component of `$SHELL` (the shell to complete for when none is named).
    var loginShell: String? {
        guard let value = getenv("SHELL") else { return nil }
        return String(cString: value).split(separator: "/").last.map(String.init)
    }

    /// A subcommand's arguments into a command value, or its help.
    func parse<C: CLICommand>(_: C.Type, _ words: ArraySlice<String>) throws(UsageError) -> Invocation {
        do {
            guard let command = try Self.parse(C.self, words) else { return .output(page(C.self)) }
            return .run(command)
        } catch {
            var error = error
            error.usage = HelpText.usage(C.self, root: root.name)
            error.commandPath = [root.name, C.about.name]
            throw error
        }
    }

    /// The command the words spell, validated; nil when they ask for help.
    static func parse<C: CLICommand>(_: C.Type, _ words: ArraySlice<String>) throws(UsageError) -> C? {
        let arguments = C.arguments
        var command = C()
        var given = Set<String>()
        var positionals: [String] = []
        var index = words.startIndex
        var optionsEnded = false
        while index < words.endIndex {
            let word = words[index]
            index += 1
            if optionsEnded || !isOption(word) {
                positionals.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            if isHelp(word) { return nil }
            let (name, inline) = split(word)
            guard word.hasPrefix("--"),
                let argument = arguments.first(where: { $0.kind != .positional && $0.name == name })
            else {
                throw UsageError("Unknown option '\(word)'")
            }
            given.insert(name)
            switch argument.kind {
            case .flag:
                if inline != nil { throw UsageError("'\(argument.spelling)' takes no value") }
                try argument.store(&command, "")
            case .option:
                let value: String
                if let inline {
                    value = inline
                } else if index < words.endIndex, !words[index].hasPrefix("--") {
                    value = words[index]
                    index += 1
                } else {
                    throw UsageError("Missing value for '\(argument.synopsis)'")
                }
                try argument.store(&command, value)
            case .positional:
                break
            }
        }
        var remaining = positionals[...]
        for argument in arguments where argument.kind == .positional {
            if let word = remaining.popFirst() {
                try argument.store(&command, word)
            } else if argument.isRequired {
                throw UsageError("Missing expected argument '\(argument.synopsis)'")
            }
        }
        if let extra = remaining.first { throw UsageError("Unexpected argument '\(extra)'") }
        for argument in arguments where argument.kind == .option && argument.isRequired && !given.contains(argument.name) {
            throw UsageError("Missing expected argument '\(argument.synopsis)'")
        }
        try command.validate()
        return command
    }

    /// `--name` or `-x`, not `-` alone nor a negative number.
    static func isOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        return Double(word) == nil
    }

    /// `--name=value` into its name and value; `--name` into its name.
    static func split(_ word: String) -> (name: String, value: String?) {
        let body = word.drop { $0 == "-" }
        guard let equals = body.firstIndex(of: "=") else { return (String(body), nil) }
        return (String(body[..<equals]), String(body[body.index(after: equals)...]))
    }
}
