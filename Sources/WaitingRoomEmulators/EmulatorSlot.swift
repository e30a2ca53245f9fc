import Synchronization

/// An embedded emulator started and stopped on demand (the REPL's `:emulator start|stop`).
package final class EmulatorSlot: Sendable {
    private let current = Mutex<(suite: EmulatorSuite, server: EmulatorServer)?>(nil)

    /// None running yet.
    package init() {}

    /// Starts the default rooms on a free loopback port (or returns the running one).
    package func start() async throws -> (suite: EmulatorSuite, server: EmulatorServer) {
        if let running = current.withLock({ $0 }) { return running }
        let suite = EmulatorSuite.demo()
        let server = try await suite.start()
        current.withLock { $0 = (suite, server) }
        return (suite, server)
    }

    /// Stops it, if running; returns whether one was running.
    @discardableResult
    package func stop() async -> Bool {
        let running = current.withLock { value -> EmulatorServer? in
            defer { value = nil }
            return value?.server
        }
        guard let running else { return false }
        await running.stop()
        return true
    }
}
