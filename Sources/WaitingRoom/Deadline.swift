import Synchronization

/// Runs `operation` and gives up with `onTimeout()` when `timeout` passes first on `clock`.
///
/// Whichever comes first resumes the caller: the operation's result, the deadline (the operation
/// is then cancelled), or the caller's own cancellation (the operation is cancelled and the
/// caller gets `CancellationError` at once). The caller never waits for a cancelled operation to
/// end: one that does not react to cancellation at once (a driver's clean-up, a blocking call) is
/// left to end in the background, and what it returns then is dropped (an operation that opens
/// something must close it itself when it is cancelled). A task group would wait for it; that held
/// `PostgresStateStore.connect` past its connect timeout, for ever, under ThreadSanitizer's timing
/// (a schema transaction cancelled while it waited for a lock another instance held).
///
/// With ``SystemClock`` the deadline's timer fires from a NIO event loop, not from the
/// cooperative pool; the caller still needs a cooperative thread to resume. `AsyncHTTPTransport`
/// (module `WaitingRoomHTTP`) does not need this race: its deadline is AsyncHTTPClient's own, on
/// the request's event loop.
package func withDeadline<T: Sendable>(
    _ timeout: Duration,
    clock: any WaitingRoomClock,
    onTimeout: @escaping @Sendable () -> any Error,
    operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let work = Task { try await operation() }
    let timer = Task { try await clock.sleep(for: timeout) }
    let race = DeadlineRace()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            Task {
                let result = await work.result
                // settled before the timer is cancelled: a cancelled timer wakes its watcher below,
                // which must not win with a CancellationError for work that has just finished
                if race.settle() { continuation.resume(with: result) }
                timer.cancel()
            }
            Task {
                let expired = (try? await timer.value) != nil
                if expired { work.cancel() }
                // unexpired: the timer was cancelled, by the work's end (settled already) or the caller's cancellation
                if race.settle() { continuation.resume(throwing: expired ? onTimeout() : CancellationError()) }
            }
        }
    } onCancel: {
        work.cancel()
        timer.cancel()
    }
}

/// The one resume of a ``withDeadline(_:clock:onTimeout:operation:)`` call: whichever side
/// settles it first resumes the caller.
private final class DeadlineRace: Sendable {
    private let settled = Atomic<Bool>(false)

    /// True for the first caller only.
    func settle() -> Bool {
        settled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
