import NIOCore
import NIOPosix
import Synchronization

/// Timers that fire from a NIO event loop instead of the cooperative pool's own timer.
///
/// A timer scheduled here is due on an event loop thread (the same process-wide group
/// AsyncHTTPClient uses), so it fires on time even when every thread of Swift's cooperative
/// pool is busy; only the code after the `await` needs a cooperative thread to run. Cancelling
/// the waiting task cancels the scheduled task at once and throws `CancellationError`.
enum EventLoopTimer {
    /// The longest single wait (about 100 years): longer waits are clamped so that the event
    /// loop's deadline arithmetic cannot overflow.
    static let longestWait: Duration = .seconds(100 * 365 * 24 * 3600)

    /// Suspends for `duration`, woken by a task scheduled on `loop`.
    ///
    /// - Throws: `CancellationError` when the calling task is (or becomes) cancelled.
    static func sleep(
        for duration: Duration,
        on loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    ) async throws {
        try Task.checkCancellation()
        guard duration > .zero else { return }
        let timer = PendingTimer()
        let delay = TimeAmount(min(duration, longestWait))
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                timer.arm(continuation, on: loop, after: delay)
            }
        } onCancel: {
            timer.cancel()
        }
    }
}

/// One armed timer: resumes its continuation exactly once, from the event loop when it is
/// due or from the cancelling thread when the task is cancelled first.
private final class PendingTimer: Sendable {
    private enum State {
        case idle
        case armed(CheckedContinuation<Void, any Error>, Scheduled<Void>)
        case cancelled
        case finished
    }

    private let state = Mutex<State>(.idle)

    /// Schedules the wake-up, or throws at once when cancellation came first.
    func arm(_ continuation: CheckedContinuation<Void, any Error>, on loop: any EventLoop, after delay: TimeAmount) {
        let cancelledAlready = state.withLock { state -> Bool in
            guard case .idle = state else { return true }
            let scheduled = loop.scheduleTask(in: delay) { self.fire() }
            state = .armed(continuation, scheduled)
            return false
        }
        if cancelledAlready { continuation.resume(throwing: CancellationError()) }
    }

    /// The event loop's side: the timer is due.
    private func fire() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard case .armed(let continuation, _) = state else { return nil }
            state = .finished
            return continuation
        }
        continuation?.resume()
    }

    /// The task's side: it was cancelled.
    func cancel() {
        let armed = state.withLock { state -> (CheckedContinuation<Void, any Error>, Scheduled<Void>)? in
            switch state {
            case .idle:
                state = .cancelled
                return nil
            case .armed(let continuation, let scheduled):
                state = .cancelled
                return (continuation, scheduled)
            case .cancelled, .finished:
                return nil
            }
        }
        guard let (continuation, scheduled) = armed else { return }
        scheduled.cancel()
        continuation.resume(throwing: CancellationError())
    }
}
