import Synchronization
import WaitingRoomEmulators
import WaitingRoomVendors

/// The REPL's embedded emulator: started and stopped by `:emulator start|stop`.
final class EmulatorSlot: Sendable {
    private let current = Mutex<(suite: EmulatorSuite, server: EmulatorServer)?>(nil)

    /// Starts the default rooms on a free loopback port (or returns the running one).
    func start() async throws -> (suite: EmulatorSuite, server: EmulatorServer) {
        if let running = current.withLock({ $0 }) { return running }
        let suite = EmulatorSuite.demo()
        let server = try await suite.start()
        current.withLock { $0 = (suite, server) }
        return (suite, server)
    }

    /// Stops it, if running; returns whether one was running.
    @discardableResult
    func stop() async -> Bool {
        let running = current.withLock { value -> EmulatorServer? in
            defer { value = nil }
            return value?.server
        }
        guard let running else { return false }
        await running.stop()
        return true
    }
}
