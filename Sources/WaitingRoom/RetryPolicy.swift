import Foundation

/// When to try a failed request again, as a value you can construct, compare and test.
///
/// Two pacing rules cover the vendors:
/// - ``Pacing/fixedSlots``: every attempt owns a slot as long as the attempt timeout; the next
///   attempt starts when the slot ends, even if the failure came back at once. The final failure
///   is reported as soon as it is known ("immediate error response → no timeout wait"): with a
///   3000 ms timeout and 3 retries, requests that time out are reported at 12 s, requests
///   refused at once at 9 s (three slots waited, the last refusal reported at once).
/// - ``Pacing/afterFailure``: after a failed attempt, wait the next delay of ``delays``, then
///   try again; when the delays are used up, report ``exhaustion``.
///
/// Failures that are not retryable (``WaitingRoomError/isRetryable``: rejections, configuration
/// errors) end at once. Vendor presets live next to each vendor (`RetryPolicy.netFunnel(…)`,
/// `RetryPolicy.queueIt`).
package struct RetryPolicy: Hashable, Sendable {
    /// How attempts are spaced.
    package enum Pacing: Hashable, Sendable {
        /// Attempts start at fixed intervals of the attempt timeout.
        case fixedSlots
        /// Each retry waits the next entry of ``RetryPolicy/delays`` after the failure.
        case afterFailure
    }

    /// What is reported when every attempt failed.
    package enum Exhaustion: Hashable, Sendable {
        /// The last attempt's error.
        case lastError
        /// An `.unavailable` error with the given vendor code and message.
        case unavailable(code: Int, message: String)
    }

    /// The deadline of one attempt; `nil` leaves it to the transport.
    package var attemptTimeout: Duration?
    /// Retries after the first attempt.
    package var retries: Int
    /// Waits before each retry (``Pacing/afterFailure`` only); the last entry repeats if short.
    package var delays: [Duration]
    /// How attempts are spaced.
    package var pacing: Pacing
    /// What is reported when all attempts failed.
    package var exhaustion: Exhaustion

    /// Attempts in all: retries + 1.
    package var maxAttempts: Int { retries + 1 }

    /// Creates a policy. Negative retries are treated as none.
    package init(attemptTimeout: Duration?, retries: Int, delays: [Duration] = [], pacing: Pacing, exhaustion: Exhaustion = .lastError) {
        self.attemptTimeout = attemptTimeout
        self.retries = max(0, retries)
        self.delays = delays
        self.pacing = pacing
        self.exhaustion = exhaustion
    }

    /// Fixed slots of `attemptTimeout`, `retries` retries, reporting the last error.
    package static func fixedSlots(attemptTimeout: Duration, retries: Int) -> RetryPolicy {
        RetryPolicy(attemptTimeout: attemptTimeout, retries: retries, pacing: .fixedSlots)
    }

    /// Waits of `initial`, doubling while below `limit` (1, 2, 4, 8 s for 1 s and 10 s), then
    /// ``Exhaustion/unavailable(code:message:)``.
    package static func doublingBackoff(
        initial: Duration, limit: Duration, attemptTimeout: Duration?, unavailableCode: Int, message: String
    ) -> RetryPolicy {
        var delays: [Duration] = []
        var delta = initial
        while delta < limit && delta > .zero {
            delays.append(delta)
            delta = delta * 2
        }
        return RetryPolicy(
            attemptTimeout: attemptTimeout, retries: delays.count, delays: delays,
            pacing: .afterFailure, exhaustion: .unavailable(code: unavailableCode, message: message)
        )
    }

    /// No retries and no deadline of its own.
    package static let none = RetryPolicy(attemptTimeout: nil, retries: 0, pacing: .afterFailure)

    /// The wait before retry number `retry` (0-based) under ``Pacing/afterFailure``.
    package func delay(beforeRetry retry: Int) -> Duration {
        guard !delays.isEmpty else { return .zero }
        return delays[min(retry, delays.count - 1)]
    }

    /// Runs `operation` under this policy.
    ///
    /// - Parameters:
    ///   - clock: the clock for deadlines and waits.
    ///   - vendor: the vendor id put on timeout and exhaustion errors.
    ///   - onRetry: called before each retry with the retry number (1-based) and the failure.
    ///   - operation: one attempt; receives the 0-based attempt number and the attempt's
    ///     deadline (``attemptTimeout``), which it hands to the transport (``HTTPRequest/timeout``):
    ///     the transport enforces it in real time, while the policy's spacing follows `clock`, so
    ///     tests can run the spacing in virtual time. Errors other than ``WaitingRoomError``
    ///     (for example `CancellationError`) end the run at once.
    /// - Returns: the first successful attempt's value.
    @inlinable
    package func run<T: Sendable>(
        clock: any WaitingRoomClock,
        vendor: String? = nil,
        onRetry: @Sendable (Int, WaitingRoomError) -> Void = { _, _ in },
        operation: @escaping @Sendable (_ attempt: Int, _ timeout: Duration?) async throws -> T
    ) async throws -> T {
        // Memory: this frame lives while a request is in flight (thousands at once under
        // `load`), so failures stay boxed (`any Error`, one pointer) instead of being unpacked
        // into 80-byte copies; the rare steps are functions of their own.
        var lastFailure: (any Error)?
        for attempt in 0..<maxAttempts {
            try Task.checkCancellation()
            let started = clock.now()
            do {
                return try await operation(attempt, attemptTimeout)
            } catch {
                guard Self.isRetryable(error) else { throw error }
                lastFailure = error
            }
            guard attempt + 1 < maxAttempts else { break }
            if pacing == .fixedSlots, let slot = attemptTimeout {
                // The next attempt waits for the end of this slot; the final report does not.
                try await clock.sleep(until: started.addingTimeInterval(slot.seconds))
            }
            Self.announce(retry: attempt + 1, after: lastFailure, to: onRetry)
            if pacing == .afterFailure {
                try await clock.sleep(for: delay(beforeRetry: attempt))
            }
        }
        throw exhausted(after: lastFailure, vendor: vendor)
    }

    /// A ``WaitingRoomError`` that ``WaitingRoomError/isRetryable``; any other error ends the run.
    @inline(never) @usableFromInline
    static func isRetryable(_ error: any Error) -> Bool {
        (error as? WaitingRoomError)?.isRetryable ?? false
    }

    /// Tells `onRetry` which retry comes and why.
    @inline(never) @usableFromInline
    static func announce(retry: Int, after failure: (any Error)?, to onRetry: @Sendable (Int, WaitingRoomError) -> Void) {
        guard let error = failure as? WaitingRoomError else { return }
        onRetry(retry, error)
    }

    /// What a run reports when every attempt failed (``exhaustion``).
    @inline(never) @usableFromInline
    func exhausted(after failure: (any Error)?, vendor: String?) -> WaitingRoomError {
        let lastError = failure as? WaitingRoomError ?? WaitingRoomError(.unavailable, vendor: vendor, message: "no attempt was made")
        switch exhaustion {
        case .lastError:
            return lastError
        case .unavailable(let code, let message):
            return WaitingRoomError(
                .unavailable, vendor: vendor, vendorCode: code, message: "\(message) (last failure: \(lastError.message))")
        }
    }
}
