/// How waiting ended. The cases with a pass or an error are `indirect` (boxed), so an outcome
/// held across an `await` costs a pointer, not the whole pass, in the task's frame.
public enum Outcome: Hashable, Sendable, Codable {
    /// Admitted with a pass.
    indirect case passed(Pass, VendorStatus)
    /// The room is not active; proceed (a token may be attached).
    indirect case disabled(Pass?, VendorStatus)
    /// Refused by the vendor.
    case blocked(VendorStatus)
    /// Closed by the user or the queue page.
    case closed(VendorStatus)
    /// Ended with an error.
    indirect case failed(WaitingRoomError)

    /// The vendor status of this outcome.
    package var status: VendorStatus {
        switch self {
        case .passed(_, let s), .disabled(_, let s), .blocked(let s), .closed(let s): return s
        case .failed(let e): return e.status
        }
    }

    /// The pass, if the outcome holds one.
    package var pass: Pass? {
        switch self {
        case .passed(let p, _): return p
        case .disabled(let p, _): return p
        default: return nil
        }
    }

    /// The session state this outcome leaves the session in.
    package var state: SessionState {
        switch self {
        case .passed: return .passed
        case .disabled: return .disabled
        case .blocked: return .blocked
        case .closed: return .closed
        case .failed: return .failed
        }
    }

    /// The event that announces this outcome.
    package var event: WaitingRoomEvent {
        switch self {
        case .passed(let p, let s): return .passed(p, s)
        case .disabled(let p, let s): return .disabled(p, s)
        case .blocked(let s): return .blocked(s)
        case .closed(let s): return .closed(s)
        case .failed(let e): return .failed(e)
        }
    }

    /// A short name: `passed`, `disabled`, `blocked`, `closed`, `failed`.
    package var name: String { state.rawValue }
}

/// The answer to one ``WaitingRoomProvider/tryPass(_:)`` check, made without waiting.
public struct TryPassResult: Hashable, Sendable, Codable {
    /// What the check found.
    public enum Disposition: String, Hashable, Sendable, Codable {
        /// The user may proceed now; ``pass`` holds the proof.
        case passed
        /// The user would have to wait in line.
        case queue
        /// The room is not active; proceed.
        case disabled
        /// The vendor refuses the user.
        case blocked
    }

    /// What the check found.
    public var disposition: Disposition
    /// What the vendor said.
    public var status: VendorStatus
    /// The pass, when passed or disabled with a token.
    public var pass: Pass?
    /// The queue page, when the user would wait behind one.
    package var queuePage: QueuePage?
    /// The line as the vendor reported it, when it did.
    package var progress: QueueProgress?

    /// Creates a result.
    public init(
        disposition: Disposition, status: VendorStatus, pass: Pass? = nil, queuePage: QueuePage? = nil, progress: QueueProgress? = nil
    ) {
        self.disposition = disposition
        self.status = status
        self.pass = pass
        self.queuePage = queuePage
        self.progress = progress
    }
}
