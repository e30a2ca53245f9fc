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

/// The real clock: `Date()` for wall time; sleeps are woken by a NIO event loop.
///
/// Polling intervals, retry waits and deadlines must not depend on a free thread of Swift's
/// cooperative pool (an app, or a test suite, that keeps the pool busy would otherwise see
/// every timer fire late), so a sleep is a task scheduled on the process-wide NIO event loop
/// group that resumes the sleeping task when it is due. Cancelling the task ends the sleep at
/// once with `CancellationError`.
public struct SystemClock: WaitingRoomClock {
    /// Creates the system clock.
    public init() {}
    /// The current wall-clock time.
    public func now() -> Date { Date() }
    /// Suspends for `duration` (monotonic time, woken from an event loop); throws
    /// `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await EventLoopTimer.sleep(for: duration)
    }
}

extension Duration {
    /// The duration in seconds as a `Double`.
    package var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }

    /// The duration in whole milliseconds (rounded down).
    package var milliseconds: Int64 {
        let c = components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }

    /// The longest duration ``saturating(seconds:)`` gives: 10⁹ s, about 31.7 years.
    package static let saturationBound: Duration = .seconds(1_000_000_000)

    /// `seconds` (from a script, a flag or a document) to the millisecond, without trapping:
    /// NaN and negative values give zero, values beyond ``saturationBound`` (`1e300`, an integer's
    /// largest value) give the bound. `Int64(seconds * 1000)` traps on all of those.
    /// Callers that must refuse such values check them first; this only never crashes.
    package static func saturating(seconds: Double) -> Duration {
        guard seconds > 0 else { return .zero }
        guard seconds < saturationBound.seconds else { return saturationBound }
        return .milliseconds(Int64(seconds * 1000))
    }
}
