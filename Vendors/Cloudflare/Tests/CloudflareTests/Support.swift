import Cloudflare
import CloudflareEmulator
import Foundation
import Logging
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomHTTP
import WaitingRoomTesting

/// A Cloudflare emulator served on 127.0.0.1, port 0, stopped gracefully.
final class EmulatorHarness: Sendable {
    let emulator: CloudflareEmulator
    let server: EmulatorServer
    var port: Int { server.port }

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var siteURL: String { baseURL + CloudflareEmulator.sitePrefix }

    private init(emulator: CloudflareEmulator, server: EmulatorServer) {
        self.emulator = emulator
        self.server = server
    }

    static func start(_ emulator: CloudflareEmulator) async throws -> EmulatorHarness {
        var logger = Logger(label: "waitingroom.cloudflare.tests")
        logger.logLevel = .critical
        let server = try await EmulatorServer.start(logger: logger) { emulator.addRoutes(to: $0) }
        return EmulatorHarness(emulator: emulator, server: server)
    }

    func stop() async { await server.stop() }

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

/// A suite of the emulator's rooms on a virtual clock: the room types, and a harness serving
/// rooms whose time is a ``VirtualClock``.
protocol CloudflareRoomSuite {}

extension CloudflareRoomSuite {
    typealias Room = CloudflareEmulatorConfiguration.Room
    typealias Event = CloudflareEmulatorConfiguration.Event

    static func harness(_ rooms: [String: Room], clock: VirtualClock) async throws -> EmulatorHarness {
        try await EmulatorHarness.start(CloudflareEmulator(configuration: .init(rooms: rooms), now: { clock.now() }))
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
