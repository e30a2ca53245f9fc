/// A vendor backend: the one protocol every waiting-room vendor implements.
///
/// Requirements an implementation must meet (checked by each vendor's tests):
/// - ``tryPass(_:)`` makes one check and never waits in line; a key it takes from the server
///   and does not hand out in a pass is returned before it returns.
/// - ``enqueue(_:)`` returns a started ``WaitingSession`` that ends in exactly one ``Outcome``;
///   an entry already in flight is joined or refused per ``ProviderEnvironment/duplicatePolicy``.
/// - Every event keeps the vendor's own status code and message.
/// - A pass that holds a key is returned by ``WaitingSession/complete()`` or ``release(_:)``.
/// - Bad configuration and bad answers are ``WaitingRoomError``s, never crashes.
public protocol WaitingRoomProvider: Sendable {
    /// The vendor id (`"netfunnel"`, `"queueit"`, …).
    var vendorID: String { get }
    /// One admission check, without waiting in line.
    func tryPass(_ entry: Entry) async throws -> TryPassResult
    /// Starts waiting in line for `entry`.
    func enqueue(_ entry: Entry) throws -> WaitingSession
    /// Returns what a pass from ``tryPass(_:)`` holds (a key), when the protected step is done.
    func release(_ pass: Pass) async throws -> VendorStatus
    /// Waits up to `timeout` for key returns still running in the background (a return that
    /// failed its documented attempts, see ``PendingReturns``); call it before the process
    /// exits. Returns how many were still in flight when the bound passed (0 = no key dropped).
    func drainPendingReturns(timeout: Duration) async -> Int
    /// Finishes the key returns that a dead process left in a durable store's journal
    /// (`KeyJournal`): keys whose owner's lease lapsed are returned until `bound` passes.
    func recoverHeldKeys(bound: Duration) async -> KeyRecoveryReport
}

extension WaitingRoomProvider {
    /// Default: nothing to return.
    public func release(_ pass: Pass) async throws -> VendorStatus {
        VendorStatus(vendor: vendorID, code: 0, message: "nothing to return")
    }

    /// Default: a vendor without background returns has nothing to wait for.
    public func drainPendingReturns(timeout: Duration) async -> Int { 0 }

    /// Default: a vendor that takes no keys has nothing to recover.
    public func recoverHeldKeys(bound: Duration) async -> KeyRecoveryReport { KeyRecoveryReport() }
}
