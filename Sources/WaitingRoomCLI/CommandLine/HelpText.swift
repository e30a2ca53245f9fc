/// Help pages and usage lines, laid out like the help of other Swift command-line tools:
/// OVERVIEW, the discussion as written, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS.
enum HelpText {
    /// Width the option table wraps at.
    static let width = 80
    /// Column the descriptions start at.
    static let column = 26

    /// `waitingroom run <flow> [--config <config>] …`: required arguments bare, the others in
    /// brackets, repeatable ones with `...`; hidden options left out.
    static func usage<C: CLICommand>(_: C.Type, root: String) -> String {
        var words = [root, C.about.name]
        let visible = C.arguments.filter { !$0.isHidden }
        for argument in visible.filter({ $0.kind == .positional }) + visible.filter({ $0.kind != .positional }) {
            var word = argument.synopsis
            if argument.isRepeating { word += " ..." }
            words.append(argument.isRequired ? word : "[\(word)]")
        }
        return words.joined(separator: " ")
    }

    /// The help page of a subcommand.
    static func page<C: CLICommand>(_: C.Type, root: String) -> String {
        let about = C.about
        var text = "OVERVIEW: \(about.abstract)\n\n"
        if !about.discussion.isEmpty { text += about.discussion + "\n\n" }
        text += "USAGE: \(usage(C.self, root: root))\n"
        let visible = C.arguments.filter { !$0.isHidden }
        let positionals = visible.filter { $0.kind == .positional }
        if !positionals.isEmpty {
            text += "\nARGUMENTS:\n"
            for argument in positionals { text += row(argument.synopsis, describe(argument)) }
        }
        text += "\nOPTIONS:\n"
        for argument in visible where argument.kind != .positional {
            text += row(argument.synopsis, describe(argument))
        }
        text += row("-h, --help", "Show help information.")
        return text
    }

    /// The help page of the root command: what each subcommand is for.
    static func rootPage(_ root: CommandDescription, subcommands: [any CLICommand.Type]) -> String {
        var text = "OVERVIEW: \(root.abstract)\n\n"
        if !root.discussion.isEmpty { text += root.discussion + "\n\n" }
        text += "USAGE: \(root.name) <subcommand>\n\nOPTIONS:\n"
        text += row("-h, --help", "Show help information.")
        text += row("--generate-completion-script <shell>", "A completion script for bash, zsh or fish.")
        text += "\nSUBCOMMANDS:\n"
        for subcommand in subcommands { text += row(subcommand.about.name, subcommand.about.abstract) }
        text += row("help", "Show subcommand help information.")
        text += "\n  See '\(root.name) help <subcommand>' for detailed help.\n"
        return text
    }

    static func describe<C>(_ argument: CLIArgument<C>) -> String {
        var text = argument.help
        if argument.isRepeating, !text.contains("repeatable") { text += " (repeatable)" }
        if let value = argument.defaultDescription { text += " (default: \(value))" }
        if case .choices(let words) = argument.completion, !words.isEmpty, !text.contains(words[0]) {
            text += " (values: \(words.joined(separator: ", ")))"
        }
        return text
    }

    /// One table row: the label at 2 columns, the text from ``column`` on (on the next line when
    /// the label is longer), wrapped at ``width``.
    static func row(_ label: String, _ text: String) -> String {
        let indent = String(repeating: " ", count: column)
        let lines = wrap(text, width: width - column)
        var out = "  " + label
        let labelWidth = label.unicodeScalars.count
        if labelWidth + 2 <= column - 2, let first = lines.first {
            out += String(repeating: " ", count: column - 2 - labelWidth) + first + "\n"
            for line in lines.dropFirst() { out += indent + line + "\n" }
        } else {
            out += "\n"
            for line in lines { out += indent + line + "\n" }
        }
        return out
    }

    /// Words of `text` in lines of at most `width` characters (a longer word gets a line of its own).
    ///
    /// Split on the UTF-8 bytes and joined with concrete `String` appends: the generic
    /// `split(separator:)` on characters and `append(contentsOf:)` of a `Substring` each made the
    /// Swift runtime scan every protocol conformance record in the binary, a third of `--help`'s
    /// instructions.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        var lineWidth = 0
        for bytes in text.utf8.split(separator: UInt8(ascii: " ")) {
            let word = String(Substring(bytes))
            let wordWidth = word.unicodeScalars.count
            if lineWidth == 0 {
                line = word
                lineWidth = wordWidth
            } else if lineWidth + 1 + wordWidth <= width {
                line += " "
                line += word
                lineWidth += 1 + wordWidth
            } else {
                lines.append(line)
                line = word
                lineWidth = wordWidth
            }
        }
        if lineWidth > 0 || lines.isEmpty { lines.append(line) }
        return lines
    }
}
