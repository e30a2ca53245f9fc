/// Runs `operation` and gives up with `onTimeout()` when `timeout` passes first on `clock`.
///
/// The operation is cancelled when the deadline wins; the deadline is cancelled when the
/// operation finishes. This is how the SDK enforces its own deadlines instead of trusting a
/// transport's rounding.
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
