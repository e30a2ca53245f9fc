import WaitingRoom

/// The exit statuses of `waitingroom`, one table for every subcommand.
///
/// | status | meaning |
/// |---|---|
/// | 0 | passed (or disabled: the room is off, go ahead), or the command did its job |
/// | 2 | blocked by the vendor |
/// | 3 | closed (by the user, the queue page, or a flow's `wr.abort`) |
/// | 4 | error: network, vendor or configuration failure while waiting |
/// | 5 | script error: the flow failed to load or a handler failed |
/// | 6 | would queue (`check` only: the room has a line) |
/// | 64 | bad usage: unknown flag, bad value, unreadable or invalid config file |
public enum ExitStatus: Int32, CaseIterable, Sendable, Error {
    case passed = 0
    case blocked = 2
    case closed = 3
    case error = 4
    case scriptError = 5
    case wouldQueue = 6
    case usage = 64

    /// The status for an outcome.
    public init(_ outcome: Outcome) {
        switch outcome {
        case .passed, .disabled: self = .passed
        case .blocked: self = .blocked
        case .closed: self = .closed
        case .failed(let error): self = error.kind == .invalidConfiguration ? .usage : .error
        }
    }

    /// The status for a `tryPass` answer.
    public init(_ disposition: TryPassResult.Disposition) {
        switch disposition {
        case .passed, .disabled: self = .passed
        case .queue: self = .wouldQueue
        case .blocked: self = .blocked
        }
    }

    /// One line for `--help` texts.
    public static let helpTable = """
        Exit status: 0 passed/disabled · 2 blocked · 3 closed · 4 error · 5 script error · \
        6 would queue (check) · 64 bad usage.
        """
}
