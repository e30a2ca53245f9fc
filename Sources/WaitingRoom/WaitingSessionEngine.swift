import Logging

/// The vendor side of a ``WaitingSession``: how one vendor waits in line and gives a pass back.
///
/// The session owns the state machine, the event fan-out and the public API; the engine only
/// talks to the vendor. Requirements:
/// - ``wait(for:context:)`` emits progress, queue-opened and restart events with
///   ``SessionContext/emit(_:)`` and returns the outcome; the session announces the outcome.
/// - When the task is cancelled, it returns any key it holds and then returns promptly with
///   `.closed(cancelledStatus)`.
/// - ``complete(_:context:)`` is called at most once per pass.
public protocol WaitingSessionEngine: Sendable {
    /// The vendor id.
    var vendorID: String { get }
    /// The status reported when the user cancels.
    var cancelledStatus: VendorStatus { get }
    /// The status of the `sessionRestarted` event when the caller restarts the session
    /// (``WaitingSession/restart()``): the vendor's own code for a restart, where it has one.
    var restartedStatus: VendorStatus { get }
    /// Waits in line for `entry` until an outcome.
    func wait(for entry: Entry, context: SessionContext) async -> Outcome
    /// Gives back what `pass` holds; the status says whether that worked.
    func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus
}

extension WaitingSessionEngine {
    /// Default: code 499, "closed by the user".
    public var cancelledStatus: VendorStatus { VendorStatus(vendor: vendorID, code: 499, message: "closed by the user") }
    /// Default: code 0, "restarted by the caller".
    public var restartedStatus: VendorStatus { VendorStatus(vendor: vendorID, code: 0, message: "restarted by the caller") }
}

/// What an engine sees of its session: the entry, the environment and a way to emit events.
/// Events from a run that was superseded by ``WaitingSession/restart()`` are dropped.
public struct SessionContext: Sendable {
    let session: WaitingSession
    let generation: Int

    /// The entry being waited for.
    public var entry: Entry { session.entry }
    /// The provider's environment.
    public var environment: ProviderEnvironment { session.environment }
    /// The vendor's logger.
    package var logger: Logger { session.logger }

    /// Emits `event` to every subscriber and bound handler of the session.
    public func emit(_ event: WaitingRoomEvent) { session.emit(event, generation: generation) }

    /// Hands a key whose documented return attempts failed to the environment's
    /// ``PendingReturns``: `attempt` is tried on `schedule` until it returns the key, and the
    /// session announces a success as ``WaitingRoomEvent/keyReturnedLate(_:)``. Call it before
    /// returning the outcome (or the completion status) that reports the failed return, so the
    /// session's streams stay open for the late event.
    package func returnInBackground(
        schedule: PendingReturns.Schedule, attempt: @escaping @Sendable () async -> PendingReturns.Attempt
    ) {
        session.returnInBackground(schedule: schedule, attempt: attempt)
    }
}
