/// The redirect type a `queueittoken` carries in its `rt_` field (docs/queueit-protocol.md §2.2).
///
/// Spellings follow the Android SDK's enum (case-sensitive). Any other text is kept in
/// ``other(_:)`` instead of crashing (Android throws on unknown values; iOS shows the queue).
package enum QueueItRedirectType: Sendable, Hashable, CustomStringConvertible {
    /// The visitor must wait in the queue (also: no token at all).
    case queue
    /// Safety net: the room lets visitors straight through; passed without a queue page.
    case safetynet
    /// The event is over; treated as disabled.
    case afterEvent
    /// The waiting room is disabled; treated as disabled.
    case disabled
    /// A direct link; the queue page is shown.
    case directLink
    /// The waiting room is idle (before the event); treated as disabled.
    case idle
    /// Connector diagnostics (`rt_debug`); the queue page is shown.
    case debug
    /// A bypass token; the queue page is shown (the SDK does not special-case it).
    case bypass
    /// Any other text, including the empty string when `rt_` has no following `~`.
    case other(String)

    /// The spelling used in tokens.
    package var rawValue: String {
        switch self {
        case .queue: return "queue"
        case .safetynet: return "safetynet"
        case .afterEvent: return "afterevent"
        case .disabled: return "disabled"
        case .directLink: return "directLink"
        case .idle: return "idle"
        case .debug: return "debug"
        case .bypass: return "bypass"
        case .other(let s): return s
        }
    }

    package var description: String { rawValue }

    /// Maps the token spelling (case-sensitive, like Android's `valueOf`).
    package init(rawValue: String) {
        switch rawValue {
        case "queue": self = .queue
        case "safetynet": self = .safetynet
        case "afterevent": self = .afterEvent
        case "disabled": self = .disabled
        case "directLink": self = .directLink
        case "idle": self = .idle
        case "debug": self = .debug
        case "bypass": self = .bypass
        default: self = .other(rawValue)
        }
    }

    /// The redirect type of an enqueue answer's token: no token (or an empty one) ⇒ `.queue`;
    /// otherwise the text between the first `~rt_` and the next `~` (iOS and Android); no such
    /// match ⇒ `.other("")`, which shows the queue (iOS behaviour).
    package init(token: String?) {
        guard let token, !token.isEmpty else {
            self = .queue
            return
        }
        self = QueueItRedirectType(rawValue: Self.extract(from: token) ?? "")
    }

    /// The text between the first `~rt_` and the following `~`, or nil when there is none.
    package static func extract(from token: String) -> String? {
        let bytes = Array(token.utf8)
        guard let at = QueueItBytes.find(Array("~rt_".utf8), in: bytes) else { return nil }
        let rest = bytes[(at + 4)...]
        guard let end = rest.firstIndex(of: UInt8(ascii: "~")) else { return nil }
        return String(decoding: rest[..<end], as: UTF8.self)
    }

    /// What the engine does with an enqueue answer of this type (docs/queueit-protocol.md §2.2 engine step).
    package var action: QueueItEnqueueAction {
        switch self {
        case .safetynet: return .passed
        case .disabled, .idle, .afterEvent: return .disabled
        default: return .showQueue
        }
    }
}

/// What the engine does after a successful enqueue.
package enum QueueItEnqueueAction: String, Sendable, Hashable {
    /// Passed at once; no queue page (safetynet).
    case passed
    /// The room is not queueing (disabled, idle, afterevent); the token is handed over.
    case disabled
    /// Show (or follow) the queue page at `QueueUrl` until the target URL is reached.
    case showQueue
}
