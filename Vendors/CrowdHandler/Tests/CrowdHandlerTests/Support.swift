import CrowdHandler
import CrowdHandlerEmulator
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import WaitingRoom
import WaitingRoomHTTP

/// A CrowdHandler emulator served on 127.0.0.1, port 0, stopped gracefully.
final class EmulatorHarness: Sendable {
    let emulator: CrowdHandlerEmulator
    let port: Int
    let group: ServiceGroup
    let task: Task<Void, any Error>

    var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(emulator: CrowdHandlerEmulator, port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.emulator = emulator
        self.port = port
        self.group = group
        self.task = task
    }

    struct BindFailed: Error {}

    static func start(_ emulator: CrowdHandlerEmulator = CrowdHandlerEmulator(configuration: .testRooms)) async throws -> EmulatorHarness {
        let router = Router()
        emulator.addRoutes(to: router)
        var logger = Logger(label: "waitingroom.crowdhandler.tests")
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

    /// A client configuration pointing at this emulator.
    ///
    /// The response deadline is 5 s here, not the vendor's 1.5 s: on a 2-core machine running the
    /// whole suite in parallel (a headless browser included) a loopback `PUT /v1/responses` once
    /// took longer than 1.5 s to be answered by a debug build.
    func configuration(
        timeout: Duration = .seconds(5), trustOnFail: Bool = true, safetyNetSlug: String? = nil,
        pollInterval: Duration = .milliseconds(200), privateKey: String? = nil, publicKey: String = "test-key"
    ) throws -> CrowdHandlerConfiguration {
        try CrowdHandlerConfiguration(
            publicKey: publicKey, privateKey: privateKey, apiURL: baseURL, waitURL: baseURL, siteURL: baseURL + "/site",
            timeout: timeout, responseTimeout: .seconds(5), trustOnFail: trustOnFail, safetyNetSlug: safetyNetSlug,
            pollInterval: pollInterval)
    }

    func provider(
        _ configuration: CrowdHandlerConfiguration, passStore: (any PassStore)? = nil, clock: any WaitingRoomClock = SystemClock()
    ) -> CrowdHandlerProvider {
        CrowdHandlerProvider(
            configuration: configuration,
            environment: ProviderEnvironment(
                transport: AsyncHTTPTransport.shared, clock: clock, passStore: passStore ?? MemoryPassStore(clock: clock)))
    }
}

extension CrowdHandlerEmulatorConfiguration {
    /// open (everyone in), line (capacity 0, admin admits), blocked, closed, safety (a safety-net room).
    static let testRooms = CrowdHandlerEmulatorConfiguration(rooms: [
        "open": Room(),
        "line": Room(capacity: 0, rate: 0),
        "blocked": Room(blocked: true),
        "closed": Room(closed: true),
        "safety": Room(capacity: 0, rate: 0)
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
