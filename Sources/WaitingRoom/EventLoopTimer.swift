import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// Timers that fire from the transport's event loops (or the core's timer queue) instead of the
/// cooperative pool's own timer.
///
/// A timer scheduled here is due on a thread that is not one of Swift's cooperative pool: an
/// event loop of the process's default transport (``HTTPTransport/timerEventLoops``, the group
/// AsyncHTTPClient runs on, once ``HTTPTransportSystem`` is bootstrapped), else a serial
/// Dispatch queue of the core's own. So it fires on time even when every cooperative thread is
/// busy; only the code after the `await` needs one. The core links no event-loop implementation
/// (no NIOPosix). Cancelling the waiting task cancels the scheduled timer at once and throws
/// `CancellationError`.
enum EventLoopTimer {
    /// The longest single wait (about 100 years): longer waits are clamped so that the event
    /// loop's deadline arithmetic cannot overflow.
    static let longestWait: Duration = .seconds(100 * 365 * 24 * 3600)

    /// The core's own timer thread, for a process whose transport has no event loops.
    static let queue = DispatchQueue(label: "waitingroom.timers")

    /// Runs `fire` after `delay` on `loop`, on the default transport's event loops when there
    /// are any, else on ``queue``; returns what cancels it.
    static func schedule(after delay: Duration, on loop: (any EventLoop)? = nil, _ fire: @escaping @Sendable () -> Void) -> TimerCancel {
        let delay = min(delay, longestWait)
        if let loop = loop ?? HTTPTransportSystem.timerEventLoops?.any() {
            return .eventLoop(loop.scheduleTask(in: TimeAmount(delay)) { fire() })
        }
        return .dispatch(scheduleOnQueue(after: delay, fire))
    }

    /// Runs `fire` after `delay` on the core's timer queue.
    static func scheduleOnQueue(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> TimerWorkItem {
        let item = TimerWorkItem()
        let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanoseconds))) { item.run(fire) }
        return item
    }

    /// Suspends for `duration`, woken from `loop` (nil: see ``schedule(after:on:_:)``).
    ///
    /// - Throws: `CancellationError` when the calling task is (or becomes) cancelled.
    static func sleep(for duration: Duration, on loop: (any EventLoop)? = nil) async throws {
        try Task.checkCancellation()
        guard duration > .zero else { return }
        let timer = PendingTimer()
        let delay = duration
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                timer.arm(continuation, on: loop, after: delay)
            }
        } onCancel: {
            timer.cancel()
        }
    }
}

/// What cancels a scheduled timer.
enum TimerCancel: Sendable {
    case eventLoop(Scheduled<Void>)
    case dispatch(TimerWorkItem)

    func cancel() {
        switch self {
        case .eventLoop(let scheduled): scheduled.cancel()
        case .dispatch(let item): item.cancel()
        }
    }
}

/// A timer on the core's queue: cancelling marks it, and the queue skips it when it comes due
/// (a cancelled long timer costs this object until its deadline).
final class TimerWorkItem: Sendable {
    private let cancelled = Atomic(false)
    /// Marks the timer cancelled.
    func cancel() { cancelled.store(true, ordering: .releasing) }
    /// Runs `fire` unless the timer was cancelled.
    func run(_ fire: @Sendable () -> Void) {
        if !cancelled.load(ordering: .acquiring) { fire() }
    }
}

/// One armed timer: resumes its continuation exactly once, from the timer's thread when it is
/// due or from the cancelling thread when the task is cancelled first.
private final class PendingTimer: Sendable {
    private enum State {
        case idle
        case armed(CheckedContinuation<Void, any Error>, TimerCancel)
        case cancelled
        case finished
    }

    /// Behind NIO's lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    private let state = NIOLockedValueBox<State>(.idle)

    /// Schedules the wake-up, or throws at once when cancellation came first.
    func arm(_ continuation: CheckedContinuation<Void, any Error>, on loop: (any EventLoop)?, after delay: Duration) {
        let cancelledAlready = state.withLockedValue { state -> Bool in
            guard case .idle = state else { return true }
            let scheduled = EventLoopTimer.schedule(after: delay, on: loop) { self.fire() }
            state = .armed(continuation, scheduled)
            return false
        }
        if cancelledAlready { continuation.resume(throwing: CancellationError()) }
    }

    /// The event loop's side: the timer is due.
    private func fire() {
        let continuation = state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
            guard case .armed(let continuation, _) = state else { return nil }
            state = .finished
            return continuation
        }
        continuation?.resume()
    }

    /// The task's side: it was cancelled.
    func cancel() {
        let armed = state.withLockedValue { state -> (CheckedContinuation<Void, any Error>, TimerCancel)? in
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
