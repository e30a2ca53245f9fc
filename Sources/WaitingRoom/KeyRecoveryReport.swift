import Foundation

/// What finishing a dead process's key returns came to (``KeyJournal/recover(vendor:bound:returning:)``).
public struct KeyRecoveryReport: Sendable, Hashable, Codable {
    /// How one key ended.
    public enum Result: String, Sendable, Hashable, Codable {
        /// Returned now (the late return a crash left undone).
        case returnedLate
        /// The server no longer knew the key: it was returned or timed out meanwhile.
        case alreadyGone
        /// Not returned: the reason says why.
        case gaveUp
    }

    /// One key.
    public struct Line: Sendable, Hashable, Codable {
        /// The journal id (`vendor:key`; redact before printing).
        public var id: String
        /// The vendor.
        public var vendor: String
        /// The room.
        public var room: RoomKey
        /// How it ended.
        public var result: Result
        /// The vendor's code for the return, when it answered.
        public var code: Int?
        /// The vendor's message or the reason for giving up.
        public var message: String
    }

    /// Keys this recovery took over.
    public var claimed = 0
    /// Keys still held by instances whose leases run (alive, or dead for less than a lease).
    public var heldByLiveOwners = 0
    /// When the earliest of those leases lapses, if any.
    public var nextLeaseLapse: Date?
    /// One line per claimed key.
    public var lines: [Line] = []
    /// Store failures.
    public var problems: [String] = []

    /// Creates an empty report.
    public init() {}

    /// How many keys ended with `result`.
    public func count(_ result: Result) -> Int { lines.filter { $0.result == result }.count }

    /// The late-return events a caller may pass on (one per key returned now).
    public var events: [WaitingRoomEvent] {
        lines.filter { $0.result == .returnedLate }.map {
            .keyReturnedLate(VendorStatus(vendor: $0.vendor, code: $0.code ?? 0, message: "key returned after a restart: \($0.message)"))
        }
    }
}
