/// Runs `operation` and gives up with `onTimeout()` when `timeout` passes first on `clock`.
///
/// The operation is cancelled when the deadline wins; the deadline is cancelled when the
/// operation finishes. With ``SystemClock`` the deadline's timer fires from a NIO event loop, not
/// from the cooperative pool; the operation must still react to cancellation, and the caller
/// needs a cooperative thread to resume. `AsyncHTTPTransport` (module `WaitingRoomHTTP`) does not need this race: its
/// deadline is AsyncHTTPClient's own, on the request's event loop.
public func withDeadline<T: Sendable>(
    _ timeout: Duration,
    clock: any WaitingRoomClock,
    onTimeout: @escaping @Sendable () -> any Error,
    operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await clock.sleep(for: timeout)
            throw onTimeout()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw CancellationError() }
        return first
    }
}
