import Foundation
import NetFUNNEL
import NetFUNNELEmulator
import Testing
import WaitingRoom
import WaitingRoomConformance
import WaitingRoomTesting

/// The NetFUNNEL emulator behind the conformance suite's emulator protocol: four segments of one
/// project, one per room behaviour. Public API only.
final class NetFUNNELConformanceEmulator: ConformanceEmulator {
    static let project = "conformance"
    /// The client's deadline for one request (real time; 10 s like the harness, so a loaded machine
    /// cannot time out a loopback answer) and the injected delay beyond it.
    static let networkTimeout = 10000
    static let delay: Duration = .milliseconds(15000)

    let emulator: NetFUNNELEmulator
    let server: NetFUNNELRunningServer

    init(emulator: NetFUNNELEmulator, server: NetFUNNELRunningServer) {
        self.emulator = emulator
        self.server = server
    }

    static func start(clock: VirtualClock) async throws -> NetFUNNELConformanceEmulator {
        let emulator = NetFUNNELEmulator(configuration: configuration, clock: clock)
        return NetFUNNELConformanceEmulator(emulator: emulator, server: try await emulator.start(host: "127.0.0.1", port: 0))
    }

    /// Long server timeouts, so virtual time racing ahead under polling never returns a key.
    static var configuration: NetFUNNELEmulatorConfiguration {
        // the harness's test segments (long timeouts), a thousand users in at once
        func segment(_ tweak: (inout NetFUNNELEmulatorConfiguration.Segment) -> Void) -> NetFUNNELEmulatorConfiguration.Segment {
            Harness.segment(.basic, limit: 1000, tweak)
        }
        return NetFUNNELEmulatorConfiguration(projects: [
            project: .init(segments: [
                ConformanceRoom.open.rawValue: segment { _ in },
                ConformanceRoom.queue.rawValue: segment { $0.limit = 0 },
                ConformanceRoom.block.rawValue: segment { $0.entryStatus = .block },
                ConformanceRoom.closed.rawValue: segment { $0.active = false }
            ])
        ])
    }

    func room(_ behaviour: ConformanceRoom) -> RoomKey { RoomKey(scope: Self.project, room: behaviour.rawValue) }

    func admit(_ count: Int, in room: RoomKey) async throws {
        emulator.updateSegment(project: room.scope, segment: room.room) { $0.limit += count }
    }

    func inject(_ fault: ConformanceFault) async throws {
        let action: NetFUNNELFault.Action
        switch fault.action {
        case .delay: action = .delay(Self.delay)
        case .drop: action = .dropConnection
        case .serverError: action = .httpStatus(503)
        case .garbage: action = .malformedBody
        }
        emulator.inject(NetFUNNELFault(opcode: Int(fault.request.name), action: action, count: fault.count))
    }

    func clearFaults() async throws { emulator.clearFaults() }

    func counters() async throws -> ConformanceCounters {
        let c = emulator.counters()
        return ConformanceCounters(
            entries: c.requests["5101"] ?? 0, keysReturned: c.keysReturned, keysLeftBehind: c.keysNeverReturned, waiting: c.waiting)
    }

    func reset() async throws {
        emulator.setConfiguration(Self.configuration)
        emulator.reset()
    }

    func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider {
        try NetFUNNELProvider(
            configuration: NetFUNNELConfiguration(
                clientId: "emulator-0000", serverUrl: server.baseURL, networkTimeout: Self.networkTimeout),
            environment: environment)
    }

    func shutdown() async { await server.shutdown() }

    /// What NetFUNNEL promises, as documented (retryCount 0: one attempt per request).
    static let capabilities = ConformanceCapabilities(
        vendorID: "netfunnel",
        keys: .returned,
        passStorage: .notStored,
        openRoom: .passed(code: 200, holdsKey: true),
        queuedPass: .passed(code: 200, holdsKey: true),
        blockRoom: .blocked(code: 301),
        // a deactivated segment lets users through with 300 (Bypass) and no key
        closedRoom: .passed(code: 300, holdsKey: false),
        cancelCode: 499,
        requests: [
            ConformanceRequestKind("5101", phase: .entry),
            ConformanceRequestKind("5002", phase: .waiting),
            ConformanceRequestKind("5004", phase: .completion)
        ],
        attemptsPerRequest: 1,
        retryBudget: .seconds(5),
        faultOutcome: { _, action in
            switch action {
            case .delay: return .failed(.networkTimeout, code: 1002)
            case .drop: return .failed(.networkOffline, code: 1001)
            case .serverError: return .failed(.unavailable, code: 1002)
            case .garbage: return .failed(.invalidResponse, code: 500)
            }
        },
        // nfComplete reports a failed key return as 500; the key is then returned in the background
        completionFaultCode: 500)

    static let suite = ConformanceSuite(capabilities: capabilities) { clock in try await start(clock: clock) }
}

@Suite("NetFUNNEL conformance")
struct NetFUNNELConformanceTests {
    @Test(arguments: ConformancePromise.allCases)
    func conformance(_ promise: ConformancePromise) async {
        let report = await NetFUNNELConformanceEmulator.suite.check(promise)
        for failure in report.failures { Issue.record("\(failure)") }
    }
}
