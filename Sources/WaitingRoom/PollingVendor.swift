/// A vendor whose wait is a loop of checks: what it gives ``PollingSessionEngine``, which owns
/// the rest (the run counter, the stored-pass check, cancellation, the wait between checks and
/// pass persistence).
///
/// Requirements:
/// - ``begin(_:run:)`` is cheap and does no I/O: it names the room whose stored pass counts for
///   this run (nil: ask the vendor whatever is stored) and the state the run's checks carry.
/// - ``check(_:visit:context:)`` asks the vendor once (retries within it are the vendor's) and
///   may emit connection events; it returns what came back, failures included.
/// - ``decide(_:entry:visit:context:)`` says what the answer means: it emits queue-opened and
///   progress events and returns the outcome, or when to check again. It is not called when the
///   task was cancelled during the check.
package protocol PollingVendor: Sendable {
    /// What one run carries from check to check (a session token, a cookie jar, a counter).
    associatedtype Visit: Sendable
    /// What one check brought back (usually a `Result`).
    associatedtype Answer: Sendable

    /// The vendor id.
    var vendorID: String { get }
    /// The vendor's pass persistence.
    var passes: PassKeeper { get }
    /// The status of an outcome that comes from a stored pass.
    var storedPassStatus: VendorStatus { get }
    /// The status reported when the user cancels.
    var cancelledStatus: VendorStatus { get }
    /// The status of the `sessionRestarted` event when the caller restarts the session.
    var restartedStatus: VendorStatus { get }

    /// Starts run number `run` (1 for the first wait, then one more per restart): the room whose
    /// stored pass ends the wait at once (nil: none), and the first check's state.
    func begin(_ entry: Entry, run: Int) throws(WaitingRoomError) -> (storedPassRoom: RoomKey?, visit: Visit)
    /// One check of the vendor for `entry`.
    func check(_ entry: Entry, visit: Visit, context: SessionContext) async -> Answer
    /// What `answer` means: the outcome, or when to check again.
    func decide(_ answer: Answer, entry: Entry, visit: inout Visit, context: SessionContext) async -> PollStep
    /// Gives back what `pass` holds.
    func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus
}

extension PollingVendor {
    /// Default: code 499, "closed by the user".
    package var cancelledStatus: VendorStatus { VendorStatus(vendor: vendorID, code: 499, message: "closed by the user") }
    /// Default: code 0, "restarted by the caller".
    package var restartedStatus: VendorStatus { VendorStatus(vendor: vendorID, code: 0, message: "restarted by the caller") }
    /// Default: nothing to give back (code 0).
    package func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus {
        VendorStatus(vendor: vendorID, code: 0, message: "nothing to return")
    }
}
