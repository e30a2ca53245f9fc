/// When a scheduled sale starts (`--start-at +SECONDS`): that many seconds after the run starts.
public struct LoadSaleStart: Sendable, Equatable, CustomStringConvertible {
    /// Seconds from the run's start.
    package var seconds: Double

    /// A start `seconds` after the run's start.
    public init(seconds: Double) { self.seconds = seconds }

    /// `+SECONDS` (or bare SECONDS), 0 to 86,400; nil for anything else.
    package init?(spelling word: String) {
        let digits = word.hasPrefix("+") ? String(word.dropFirst()) : word
        guard let seconds = Double(digits), seconds.isFinite, (0...86_400).contains(seconds) else { return nil }
        self.seconds = seconds
    }

    /// `+SECONDS`, as ``init(spelling:)`` reads it.
    public var description: String { "+" + LoadOperatorFigures.number(seconds) }
}
