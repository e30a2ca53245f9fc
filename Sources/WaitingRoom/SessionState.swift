/// Where a ``WaitingSession`` stands. `passed` and `disabled` are outcomes that may still be
/// followed by `completed`; `blocked`, `closed`, `failed` and `completed` are final.
public enum SessionState: String, Hashable, Sendable, Codable, CaseIterable {
    /// Created, not started yet.
    case idle
    /// Asking the vendor for admission.
    case connecting
    /// In line.
    case waiting
    /// Admitted; holds a pass.
    case passed
    /// The room is not active; the user may proceed (a token may be attached).
    case disabled
    /// Refused by the vendor.
    case blocked
    /// Closed by the user or the queue page.
    case closed
    /// Ended with an error.
    case failed
    /// The pass was given back (key returned) and the session is over.
    case completed

    /// True when no further event can follow.
    package var isFinal: Bool {
        switch self {
        case .blocked, .closed, .failed, .completed: return true
        case .idle, .connecting, .waiting, .passed, .disabled: return false
        }
    }

    /// True once an outcome is known.
    package var hasOutcome: Bool {
        switch self {
        case .idle, .connecting, .waiting: return false
        default: return true
        }
    }
}
