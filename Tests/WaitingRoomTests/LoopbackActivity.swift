import NIOCore
import Synchronization

/// What a ``LoopbackHTTPServer`` saw, recorded on its event loop: requests by path and the
/// moments clients closed their connections (`NIODeadline`, the event loops' monotonic clock).
final class LoopbackActivity: Sendable {
    private struct State {
        var paths: [String] = []
        var closes: [NIODeadline] = []
        var onClose: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// The paths requested so far, in order.
    var paths: [String] { state.withLock { $0.paths } }
    /// When connections were closed, in order.
    var closes: [NIODeadline] { state.withLock { $0.closes } }

    /// Runs `observer` on the server's event loop each time a connection closes.
    func onClose(_ observer: @escaping @Sendable () -> Void) {
        state.withLock { $0.onClose = observer }
    }

    func requestReceived(path: String) {
        state.withLock { $0.paths.append(path) }
    }

    func connectionClosed() {
        let observer = state.withLock { state -> (@Sendable () -> Void)? in
            state.closes.append(.now())
            return state.onClose
        }
        observer?()
    }
}
