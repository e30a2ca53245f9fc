import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A one-shot signal from a signal handler to async code: `waitingroom emulate` serves until
/// SIGINT or SIGTERM (``trapInterrupts()``) fires it.
package final class StopSignal: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    private let sources = Mutex<[any DispatchSourceSignal]>([])

    /// Not fired yet; no signal trapped.
    package init() {}

    /// From now until ``release()``, SIGINT and SIGTERM fire this signal instead of ending the
    /// process.
    package func trapInterrupts() {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        sources.withLock { sources in
            sources = [SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0, queue: .global()) }
            for source in sources {
                source.setEventHandler { [self] in fire() }
                source.resume()
            }
        }
    }

    /// Stops watching the signals ``trapInterrupts()`` trapped.
    package func release() {
        sources.withLock { sources in
            for source in sources { source.cancel() }
        }
    }

    /// Wakes every waiter, now and later.
    package func fire() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.fired = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once ``fire()`` was called.
    package func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let fired = state.withLock { s -> Bool in
                if s.fired { return true }
                s.waiters.append(continuation)
                return false
            }
            if fired { continuation.resume() }
        }
    }
}
