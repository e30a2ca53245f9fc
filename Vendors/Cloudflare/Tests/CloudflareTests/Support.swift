import Cloudflare
import CloudflareEmulator
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import WaitingRoom
import WaitingRoomHTTP

/// A Cloudflare emulator served on 127.0.0.1, port 0, stopped gracefully.
final class EmulatorHarness: Sendable {
    let emulator: CloudflareEmulator
    let port: Int
    let group: ServiceGroup
    let task: Task<Void, any Error>

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var siteURL: String { baseURL + CloudflareEmulator.sitePrefix }

    private init(emulator: CloudflareEmulator, port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.emulator = emulator
        self.port = port
        self.group = group
        self.task = task
    }

    struct BindFailed: Error {}

    static func start(_ emulator: CloudflareEmulator) async throws -> EmulatorHarness {
        let router = Router()
        emulator.addRoutes(to: router)
        var logger = Logger(label: "waitingroom.cloudflare.tests")
        logger.logLevel = .critical
        let (bound, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: logger)
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: logger)
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = bound.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            throw BindFailed()
        }
        return EmulatorHarness(emulator: emulator, port: port, group: group, task: task)
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }

    /// A client configuration pointing at this emulator (refreshes honoured down to 0.1 s).
    ///
    /// A failed attempt is retried at once unless a test asks for a delay: most tests here freeze
    /// their `VirtualClock`, and a retry spaced on a frozen clock waits for ever (seen under
    /// ThreadSanitizer, where a loopback request on a loaded machine can outlast its timeout: six
    /// tests hung, the run never ended).
    func configuration(
        timeout: Duration = .seconds(15), retries: Int = 1, retryDelay: Duration = .zero,
        blockWhenQueueIsFull: Bool = true
    ) throws -> CloudflareConfiguration {
        try CloudflareConfiguration(
            siteURL: siteURL, timeout: timeout, retries: retries, retryDelay: retryDelay,
            minRefreshInterval: .milliseconds(100), blockWhenQueueIsFull: blockWhenQueueIsFull)
    }

    func provider(_ configuration: CloudflareConfiguration, clock: any WaitingRoomClock = SystemClock()) -> CloudflareProvider {
        CloudflareProvider(
            configuration: configuration,
            environment: ProviderEnvironment(
                transport: AsyncHTTPTransport.shared, clock: clock, passStore: MemoryPassStore(clock: clock)))
    }
}

extension CloudflareEmulatorConfiguration {
    /// open (everyone in), line (nobody in by rate: the admin admits), reject, suspended, full
    /// (1 new user per minute: a line over 24 h is full), random.
    static let testRooms = CloudflareEmulatorConfiguration(rooms: [
        "open": Room(newUsersPerMinute: 1_000_000, totalActiveUsers: 1_000_000, refreshIntervalSeconds: 1),
        "line": Room(newUsersPerMinute: 0, totalActiveUsers: 1_000_000, queueingStatusCode: 202, refreshIntervalSeconds: 1),
        "reject": Room(queueingMethod: .reject),
        "suspended": Room(suspended: true),
        "random": Room(
            newUsersPerMinute: 0, totalActiveUsers: 1_000_000, queueingMethod: .random, queueingStatusCode: 429,
            refreshIntervalSeconds: 1)
    ])
}

/// Collects a session's events.
final class Events: Sendable {
    final class Store: Sendable {
        let events = Mutex<[WaitingRoomEvent]>([])
    }

    let store = Store()
    let task: Task<Void, Never>

    init(_ session: WaitingSession) {
        let store = self.store
        let events = session.events
        task = Task { for await e in events { store.events.withLock { $0.append(e) } } }
    }

    var all: [WaitingRoomEvent] { store.events.withLock { $0 } }
}

/// Polls `condition` every 50 ms for up to `seconds` (generous: the machine is loaded).
func eventually(_ seconds: Double = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
