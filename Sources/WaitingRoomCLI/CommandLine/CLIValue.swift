import WaitingRoom

/// A value an option or a positional argument reads from one command-line word.
///
/// Conversions are static calls: nothing here asks the Swift runtime about a type at run time,
/// which is what keeps `waitingroom`'s start-up near a bare executable's (`bench startup`).
protocol CLIValue {
    /// The value the word spells, or nil when it spells none (a usage error names the word).
    init?(commandLineWord word: String)
    /// The value as help shows a default.
    var commandLineDescription: String { get }
    /// The words that are values, when there are few (help and shell completion list them).
    static var commandLineChoices: [String] { get }
}

extension CLIValue {
    static var commandLineChoices: [String] { [] }
}

extension String: CLIValue {
    init?(commandLineWord word: String) { self = word }
    var commandLineDescription: String { self }
}

extension Int: CLIValue {
    init?(commandLineWord word: String) { self.init(word, radix: 10) }
    var commandLineDescription: String { String(self) }
}

extension Double: CLIValue {
    /// A finite decimal number (`nan` and `inf` are refused).
    init?(commandLineWord word: String) {
        guard let value = Double(word), value.isFinite else { return nil }
        self = value
    }
    var commandLineDescription: String { description }
}

extension ControlMode: CLIValue {
    init?(commandLineWord word: String) { self.init(rawValue: word) }
    var commandLineDescription: String { rawValue }
    static var commandLineChoices: [String] { allCases.map(\.rawValue) }
}
