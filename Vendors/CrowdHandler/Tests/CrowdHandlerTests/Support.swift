import CrowdHandler
import CrowdHandlerEmulator
import Foundation
import Logging
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomHTTP

/// A CrowdHandler emulator served on 127.0.0.1, port 0, stopped gracefully.
final class EmulatorHarness: Sendable {
    let emulator: CrowdHandlerEmulator
    let server: EmulatorServer
    var port: Int { server.port }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(emulator: CrowdHandlerEmulator, server: EmulatorServer) {
        self.emulator = emulator
        self.server = server
    }

    static func start(_ emulator: CrowdHandlerEmulator = CrowdHandlerEmulator(configuration: .testRooms)) async throws -> EmulatorHarness {
        var logger = Logger(label: "waitingroom.crowdhandler.tests")
        logger.logLevel = .critical
        let server = try await EmulatorServer.start(logger: logger) { emulator.addRoutes(to: $0) }
        return EmulatorHarness(emulator: emulator, server: server)
    }

    func stop() async { await server.stop() }

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
