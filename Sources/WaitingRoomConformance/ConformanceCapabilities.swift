import WaitingRoom

/// An outcome a vendor declares for a situation, matched against the real one.
public enum ExpectedOutcome: Sendable, Hashable, CustomStringConvertible {
    /// `passed` with this vendor code; `holdsKey` says whether the pass must be given back.
    case passed(code: Int, holdsKey: Bool)
    /// `disabled` with this vendor code.
    case disabled(code: Int)
    /// `blocked` with this vendor code.
    case blocked(code: Int)
    /// `closed` with this vendor code.
    case closed(code: Int)
    /// `failed` with this error kind and vendor code.
    case failed(WaitingRoomError.Kind, code: Int)

    /// True when `outcome` is this one (vendor codes compared exactly).
    package func matches(_ outcome: Outcome) -> Bool {
        switch (self, outcome) {
        case (.passed(let code, let key), .passed(let pass, let status)):
            return status.code == code && pass.requiresCompletion == key
        case (.disabled(let code), .disabled(_, let status)): return status.code == code
        case (.blocked(let code), .blocked(let status)): return status.code == code
        case (.closed(let code), .closed(let status)): return status.code == code
        case (.failed(let kind, let code), .failed(let error)): return error.kind == kind && error.vendorCode == code
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .passed(let code, let key): return "passed \(code)" + (key ? " with a key" : " without a key")
        case .disabled(let code): return "disabled \(code)"
        case .blocked(let code): return "blocked \(code)"
        case .closed(let code): return "closed \(code)"
        case .failed(let kind, let code): return "failed \(kind.rawValue) \(code)"
        }
    }
}

/// What a vendor promises, and where it cannot keep a promise of the suite, what it does
/// instead. The suite checks the declared behaviour; nothing is skipped silently.
public struct ConformanceCapabilities: Sendable {
    /// Whether passes hold a key the vendor's server counts.
    public enum Keys: Sendable, Hashable {
        /// Passes hold a key: `complete()` gives it back, `cancel()`/`restart()` give back the
        /// waiting key, and the emulator counts keys left behind.
        case returned
        /// Passes are tokens: nothing is given back; `complete()` sends nothing, and a user who
        /// leaves the line stays counted by the server until it forgets them.
        case none
    }

    /// Whether passes are kept in the environment's ``PassStore``.
    public enum PassStorage: Sendable, Hashable {
        /// Saved when received and gone from the store once expired.
        case storedUntilExpiry
        /// Never saved (a key is used once).
        case notStored
    }

    /// The vendor id providers report.
    package var vendorID: String
    /// Key return or none.
    package var keys: Keys
    /// Pass store use.
    package var passStorage: PassStorage
    /// The outcome in the open room.
    package var openRoom: ExpectedOutcome
    /// The outcome of a user admitted from the queue room.
    package var queuedPass: ExpectedOutcome
    /// The outcome in the block room (a vendor without blocking declares what it does instead).
    package var blockRoom: ExpectedOutcome
    /// The outcome in the closed (inactive) room.
    package var closedRoom: ExpectedOutcome
    /// The vendor code of `closed` after `cancel()`.
    package var cancelCode: Int
    /// Whether waiting users get `progress` events with a position (`ahead`).
    package var reportsPosition: Bool
    /// The request kinds the emulator can fault, each with its phase.
    package var requests: [ConformanceRequestKind]
    /// How many attempts the vendor makes per request before it reports a failure (its retry
    /// budget in attempts): the suite faults that many requests in a row.
    package var attemptsPerRequest: Int
    /// The longest time (on the suite's virtual clock) from a fault to the documented event:
    /// the retry budget plus one polling interval.
    package var retryBudget: Duration
    /// The documented outcome when every attempt of an entry or waiting request meets `action`.
    package var faultOutcome: @Sendable (ConformanceRequestKind, ConformanceFaultAction) -> ExpectedOutcome
    /// The status code `complete()` reports when every attempt of the key return failed.
    package var completionFaultCode: Int?

    /// Creates capabilities.
    public init(
        vendorID: String,
        keys: Keys,
        passStorage: PassStorage,
        openRoom: ExpectedOutcome,
        queuedPass: ExpectedOutcome,
        blockRoom: ExpectedOutcome,
        closedRoom: ExpectedOutcome,
        cancelCode: Int = 499,
        reportsPosition: Bool = true,
        requests: [ConformanceRequestKind],
        attemptsPerRequest: Int = 1,
        retryBudget: Duration,
        faultOutcome: @escaping @Sendable (ConformanceRequestKind, ConformanceFaultAction) -> ExpectedOutcome,
        completionFaultCode: Int? = nil
    ) {
        self.vendorID = vendorID
        self.keys = keys
        self.passStorage = passStorage
        self.openRoom = openRoom
        self.queuedPass = queuedPass
        self.blockRoom = blockRoom
        self.closedRoom = closedRoom
        self.cancelCode = cancelCode
        self.reportsPosition = reportsPosition
        self.requests = requests
        self.attemptsPerRequest = attemptsPerRequest
        self.retryBudget = retryBudget
        self.faultOutcome = faultOutcome
        self.completionFaultCode = completionFaultCode
    }
}
