import Foundation

/// What finishing a dead process's key returns came to (`KeyJournal/recover(vendor:bound:returning:)`).
public struct KeyRecoveryReport: Sendable, Hashable, Codable {
    /// How one key ended.
    package enum Result: String, Sendable, Hashable, Codable {
        /// Returned now (the late return a crash left undone).
        case returnedLate
        /// The server no longer knew the key: it was returned or timed out meanwhile.
        case alreadyGone
        /// Not returned: the reason says why.
        case gaveUp
    }

    /// One key.
    package struct Line: Sendable, Hashable, Codable {
        /// The journal id (`vendor:key`; redact before printing).
        package var id: String
        /// The vendor.
        package var vendor: String
        /// The room.
        package var room: RoomKey
        /// How it ended.
        package var result: Result
        /// The vendor's code for the return, when it answered.
        package var code: Int?
        /// The vendor's message or the reason for giving up.
        package var message: String
    }

    /// Keys this recovery took over.
    package var claimed = 0
    /// Keys still held by instances whose leases run (alive, or dead for less than a lease).
    package var heldByLiveOwners = 0
    /// When the earliest of those leases lapses, if any.
    package var nextLeaseLapse: Date?
    /// One line per claimed key.
    package var lines: [Line] = []
    /// Store failures.
    package var problems: [String] = []

    /// Creates an empty report.
    package init() {}

    /// How many keys ended with `result`.
    package func count(_ result: Result) -> Int { lines.filter { $0.result == result }.count }

    /// The late-return events a caller may pass on (one per key returned now).
    public var events: [WaitingRoomEvent] {
        lines.filter { $0.result == .returnedLate }.map {
            .keyReturnedLate(VendorStatus(vendor: $0.vendor, code: $0.code ?? 0, message: "key returned after a restart: \($0.message)"))
        }
    }
}
