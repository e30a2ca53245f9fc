import CrowdHandler
import CrowdHandlerEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomConformance
import WaitingRoomHTTP
import WaitingRoomTesting

/// The CrowdHandler emulator behind the conformance suite: one room per behaviour, guarding
/// `/site/{behaviour}`. The provider runs with `trustOnFail` false and no safety-net room, so a
/// failed check ends the session (with `trustOnFail` true it would pass; see FaultTests).
final class CrowdHandlerConformanceEmulator: ConformanceEmulator {
    let harness: EmulatorHarness
    var emulator: CrowdHandlerEmulator { harness.emulator }

    init(harness: EmulatorHarness) { self.harness = harness }

    static func start(clock: VirtualClock) async throws -> CrowdHandlerConformanceEmulator {
        var rooms: [String: CrowdHandlerEmulatorConfiguration.Room] = [:]
        rooms[ConformanceRoom.open.rawValue] = .init()
        rooms[ConformanceRoom.queue.rawValue] = .init(capacity: 0, rate: 0)
        rooms[ConformanceRoom.block.rawValue] = .init(blocked: true)
        rooms[ConformanceRoom.closed.rawValue] = .init(closed: true)
        let emulator = CrowdHandlerEmulator(configuration: .init(rooms: rooms), now: { clock.now() })
        return CrowdHandlerConformanceEmulator(harness: try await EmulatorHarness.start(emulator))
    }

    func room(_ behaviour: ConformanceRoom) -> RoomKey { RoomKey(scope: "", room: behaviour.rawValue) }

    func admit(_ count: Int, in room: RoomKey) async throws { emulator.admit(slug: room.room, count: count) }

    struct UnknownRequest: Error { let name: String }

    func inject(_ fault: ConformanceFault) async throws {
        guard let target = CrowdHandlerEmulatorFault.Target(rawValue: fault.request.name) else {
            throw UnknownRequest(name: fault.request.name)
        }
        let kind: CrowdHandlerEmulatorFault.Kind
        switch fault.action {
        case .delay: kind = .delay
        case .drop: kind = .drop
        case .serverError: kind = .status
        case .garbage: kind = .garbage
        }
        emulator.inject(CrowdHandlerEmulatorFault(kind: kind, on: target, count: fault.count, status: 503, delayMs: Self.delayMs))
    }

    func clearFaults() async throws { emulator.clearFaults() }

    func counters() async throws -> ConformanceCounters {
        let c = emulator.counters
        return ConformanceCounters(entries: c.sessionsCreated, waiting: emulator.waiting().values.reduce(0, +))
    }

    func reset() async throws { emulator.reset() }

    func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider {
        let configuration = try CrowdHandlerConfiguration(
            publicKey: "conformance", apiURL: harness.baseURL, waitURL: harness.baseURL, siteURL: harness.baseURL + "/site",
            timeout: Self.requestTimeout, trustOnFail: false, pollInterval: .seconds(1))
        return CrowdHandlerProvider(configuration: configuration, environment: environment)
    }

    func shutdown() async { await harness.stop() }

    /// What CrowdHandler promises: tokens, not keys (complete() gives nothing back; a user who
    /// leaves stays in the server's line until promoted); a refusing room answers 403 (blocked);
    /// an inactive room lets the user through (disabled); one attempt per check, and with
    /// `trustOnFail` false and no safety-net room a failed check ends `unavailable` code 2.
    static let capabilities = ConformanceCapabilities(
        vendorID: "crowdhandler",
        keys: .none,
        passStorage: .storedUntilExpiry,
        openRoom: .passed(code: 200, holdsKey: false),
        queuedPass: .passed(code: 200, holdsKey: false),
        blockRoom: .blocked(code: 403),
        closedRoom: .disabled(code: 200),
        cancelCode: 499,
        requests: [ConformanceRequestKind("requests.post", phase: .entry), ConformanceRequestKind("requests.get", phase: .waiting)],
        attemptsPerRequest: 1,
        retryBudget: .seconds(10),
        faultOutcome: { _, _ in .failed(.unavailable, code: CrowdHandlerCode.checkFailed.rawValue) })

    static let suite = ConformanceSuite(capabilities: capabilities) { clock in try await start(clock: clock) }
}

@Suite("CrowdHandler conformance")
struct CrowdHandlerConformanceTests {
    @Test(arguments: ConformancePromise.allCases)
    func conformance(_ promise: ConformancePromise) async {
        let report = await CrowdHandlerConformanceEmulator.suite.check(promise)
        for failure in report.failures { Issue.record("\(failure)") }
    }
}
