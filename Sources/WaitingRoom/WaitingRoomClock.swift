import Foundation

/// The source of time for everything the SDK schedules: polling intervals, retries, deadlines
/// and pass expiry. Inject a virtual clock (`VirtualClock` in `WaitingRoomTesting`) to test
/// timing rules without sleeping.
public protocol WaitingRoomClock: Sendable {
    /// The current wall-clock time (used for pass expiry and vendor timestamps).
    func now() -> Date
    /// Suspends for `duration`; throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

extension WaitingRoomClock {
    /// Sleeps until `date` (returns at once when it is in the past).
    public func sleep(until date: Date) async throws {
        let seconds = date.timeIntervalSince(now())
        if seconds > 0 { try await sleep(for: .seconds(seconds)) }
    }
}

/// The real clock: `Date()` for wall time and `ContinuousClock` for sleeping.
public struct SystemClock: WaitingRoomClock {
    /// Creates the system clock.
    public init() {}
    public func now() -> Date { Date() }
    public func sleep(for duration: Duration) async throws {
        try await ContinuousClock().sleep(for: duration)
    }
}

extension Duration {
    /// The duration in seconds as a `Double`.
    public var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }

    /// The duration in whole milliseconds (rounded down).
    public var milliseconds: Int64 {
        let c = components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }
}
