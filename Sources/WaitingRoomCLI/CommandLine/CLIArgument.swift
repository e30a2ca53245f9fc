/// One thing a command reads from its command line: an option with a value (`--port 8080`,
/// `--port=8080`), a flag (`--json`) or a positional argument (`run FLOW`), and where it goes in
/// the command's value.
///
/// Declared as key paths into the command, so the property's initial value is the default help
/// shows, and parsing writes the property: no reflection. A command lists its arguments in
/// ``CLIArguments/arguments``; a group of options shared by commands (``VendorOptions``) is
/// spliced in with ``group(_:)``.
struct CLIArgument<Command> {
    typealias Kind = CLIArgumentKind

    typealias Completion = CLICompletion

    var kind: Kind
    /// The long name without dashes (`drain-timeout`), or the positional's name (`flow`).
    var name: String
    var help: String
    /// The default shown in help, if any.
    var defaultDescription: String?
    var isRequired: Bool
    var isRepeating: Bool
    var isHidden: Bool
    var completion: Completion
    /// Stores one occurrence into the command: the word for an option or a positional, nothing
    /// for a flag. Throws a usage error naming the word when it is no value of the property's type.
    var store: (inout Command, String) throws(UsageError) -> Void

    /// `--name` as it is written, or `<name>` for a positional.
    var spelling: String { kind == .positional ? "<\(name)>" : "--\(name)" }

    /// `--name <name>` for an option, `--name` for a flag, `<name>` for a positional.
    var synopsis: String {
        switch kind {
        case .option: return "--\(name) <\(name)>"
        case .flag: return "--\(name)"
        case .positional: return "<\(name)>"
        }
    }

    static func convert<V: CLIValue>(_ word: String, for synopsis: String) throws(UsageError) -> V {
        guard let value = V(commandLineWord: word) else {
            var message = "The value '\(word)' is invalid for '\(synopsis)'"
            let choices = V.commandLineChoices
            if !choices.isEmpty { message += "; expected \(choices.joined(separator: ", "))" }
            throw UsageError(message)
        }
        return value
    }

    static func completion<V: CLIValue>(_ completion: Completion, for _: V.Type) -> Completion {
        if case .none = completion, !V.commandLineChoices.isEmpty { return .choices(V.commandLineChoices) }
        return completion
    }
}

extension CLIArgument where Command: CLIArguments {
    /// `--name VALUE`, absent unless given.
    static func option<V: CLIValue>(
        _ name: String, _ path: WritableKeyPath<Command, V?>, help: String,
        completion: Completion = .none, isHidden: Bool = false
    ) -> Self {
        let synopsis = "--\(name) <\(name)>"
        return CLIArgument(
            kind: .option, name: name, help: help, defaultDescription: nil, isRequired: false,
            isRepeating: false, isHidden: isHidden, completion: Self.completion(completion, for: V.self)
        ) { command, word throws(UsageError) in
            command[keyPath: path] = try Self.convert(word, for: synopsis) as V
        }
    }

    /// `--name VALUE`, with the property's initial value as the default, or required.
    static func option<V: CLIValue>(
        _ name: String, _ path: WritableKeyPath<Command, V>, help: String,
        isRequired: Bool = false, completion: Completion = .none
    ) -> Self {
        single(.option, name, path, help: help, isRequired: isRequired, completion: completion)
    }

    /// `--name VALUE`, as many times as wanted; the values in order.
    static func repeating<V: CLIValue>(
        _ name: String, _ path: WritableKeyPath<Command, [V]>, help: String,
        completion: Completion = .none
    ) -> Self {
        let synopsis = "--\(name) <\(name)>"
        return CLIArgument(
            kind: .option, name: name, help: help, defaultDescription: nil, isRequired: false,
            isRepeating: true, isHidden: false, completion: Self.completion(completion, for: V.self)
        ) { command, word throws(UsageError) in
            command[keyPath: path].append(try Self.convert(word, for: synopsis) as V)
        }
    }

    /// `--name`: true when given.
    static func flag(_ name: String, _ path: WritableKeyPath<Command, Bool>, help: String) -> Self {
        CLIArgument(
            kind: .flag, name: name, help: help, defaultDescription: nil, isRequired: false,
            isRepeating: false, isHidden: false, completion: .none
        ) { command, _ throws(UsageError) in
            command[keyPath: path] = true
        }
    }

    /// A positional argument, required or with the property's initial value as the default.
    static func positional<V: CLIValue>(
        _ name: String, _ path: WritableKeyPath<Command, V>, help: String,
        isRequired: Bool = true, completion: Completion = .none
    ) -> Self {
        single(.positional, name, path, help: help, isRequired: isRequired, completion: completion)
    }

    /// An option or a positional that sets one value, required or defaulting to the property's
    /// initial value.
    private static func single<V: CLIValue>(
        _ kind: Kind, _ name: String, _ path: WritableKeyPath<Command, V>, help: String,
        isRequired: Bool, completion: Completion
    ) -> Self {
        let synopsis = kind == .positional ? "<\(name)>" : "--\(name) <\(name)>"
        return CLIArgument(
            kind: kind, name: name, help: help,
            defaultDescription: isRequired ? nil : Command()[keyPath: path].commandLineDescription,
            isRequired: isRequired, isRepeating: false, isHidden: false,
            completion: Self.completion(completion, for: V.self)
        ) { command, word throws(UsageError) in
            command[keyPath: path] = try Self.convert(word, for: synopsis) as V
        }
    }

    /// The arguments of a group of options (``VendorOptions``, ``RoomOptions``), stored into the
    /// command's property that holds the group.
    static func group<Group: CLIArguments>(_ path: WritableKeyPath<Command, Group>) -> [Self] {
        Group.arguments.map { inner in
            let store = inner.store
            return CLIArgument(
                kind: inner.kind, name: inner.name, help: inner.help, defaultDescription: inner.defaultDescription,
                isRequired: inner.isRequired, isRepeating: inner.isRepeating, isHidden: inner.isHidden,
                completion: inner.completion
            ) { command, word throws(UsageError) in
                try store(&command[keyPath: path], word)
            }
        }
    }
}

/// What a shell completes, and help lists, for an argument's value.
enum CLICompletion: Sendable {
    /// Anything: no suggestion.
    case none
    /// A path.
    case files
    /// One of these words.
    case choices([String])
}

/// Whether an argument is an option with a value, a flag or a positional.
enum CLIArgumentKind: Sendable {
    case option
    case flag
    case positional
}
