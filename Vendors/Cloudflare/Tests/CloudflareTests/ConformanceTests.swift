import Cloudflare
import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomConformance
import WaitingRoomEmulatorKit
import WaitingRoomHTTP
import WaitingRoomTesting

/// The Cloudflare emulator behind the conformance suite: one room per behaviour, covering
/// `/cf/{behaviour}`: open (everyone in), queue (nobody in by rate: the suite admits), block
/// (`queueing_method` reject), closed (suspended). The provider retries once (2 attempts, 5 s
/// deadline each), then fails `unavailable` with code 6.
final class CloudflareConformanceEmulator: ConformanceEmulator {
    let harness: EmulatorHarness
    var emulator: CloudflareEmulator { harness.emulator }

    init(harness: EmulatorHarness) { self.harness = harness }

    static func start(clock: VirtualClock) async throws -> CloudflareConformanceEmulator {
        typealias Room = CloudflareEmulatorConfiguration.Room
        let rooms: [String: Room] = [
            ConformanceRoom.open.rawValue: Room(newUsersPerMinute: 1_000_000, totalActiveUsers: 1_000_000, refreshIntervalSeconds: 1),
            ConformanceRoom.queue.rawValue: Room(
                newUsersPerMinute: 0, totalActiveUsers: 1_000_000, queueingStatusCode: 202,
                refreshIntervalSeconds: 1),
            ConformanceRoom.block.rawValue: Room(queueingMethod: .reject),
            ConformanceRoom.closed.rawValue: Room(suspended: true)
        ]
        let emulator = CloudflareEmulator(configuration: .init(rooms: rooms), now: { clock.now() })
        return CloudflareConformanceEmulator(harness: try await EmulatorHarness.start(emulator))
    }

    func room(_ behaviour: ConformanceRoom) -> RoomKey { RoomKey(scope: "site", room: behaviour.rawValue) }

    func admit(_ count: Int, in room: RoomKey) async throws { emulator.admit(room: room.room, count: count) }

    func inject(_ fault: ConformanceFault) async throws {
        let action: EmulatorFault.Action
        switch fault.action {
        case .delay: action = .delay(.milliseconds(Self.delayMs))
        case .drop: action = .drop
        case .serverError: action = .status(503)
        case .garbage: action = .garbage
        }
        emulator.faultQueue.add(EmulatorFault(action, on: fault.request.name, count: fault.count))
    }

    func clearFaults() async throws { emulator.faultQueue.clear() }

    func counters() async throws -> ConformanceCounters {
        ConformanceCounters(entries: emulator.counters.visitorsCreated, waiting: emulator.waiting().values.reduce(0, +))
    }

    func reset() async throws { emulator.reset() }

    func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider {
        let configuration = try CloudflareConfiguration(
            siteURL: harness.siteURL, timeout: Self.requestTimeout, retries: 1, retryDelay: .seconds(1), minRefreshInterval: .seconds(1))
        return CloudflareProvider(configuration: configuration, environment: environment)
    }

    func shutdown() async { await harness.stop() }

    /// What Cloudflare promises: tokens (a cookie), not keys; no numeric position (estimates
    /// only); a rejecting room blocks (code 4); a suspended room lets the user through without a
    /// cookie (disabled, code 3); each request is tried twice, then `unavailable` code 6.
    static let capabilities = ConformanceCapabilities(
        vendorID: "cloudflare",
        keys: .none,
        passStorage: .storedUntilExpiry,
        openRoom: .passed(code: CloudflareCode.origin.rawValue, holdsKey: false),
        queuedPass: .passed(code: CloudflareCode.origin.rawValue, holdsKey: false),
        blockRoom: .blocked(code: CloudflareCode.rejected.rawValue),
        closedRoom: .disabled(code: CloudflareCode.suspended.rawValue),
        cancelCode: CloudflareCode.cancelled.rawValue,
        reportsPosition: false,
        requests: [
            ConformanceRequestKind(CloudflareEmulatorFault.page, phase: .entry),
            ConformanceRequestKind(CloudflareEmulatorFault.page, phase: .waiting)
        ],
        attemptsPerRequest: 2,
        retryBudget: .seconds(16),
        faultOutcome: { _, _ in .failed(.unavailable, code: CloudflareCode.unreachable.rawValue) })

    static let suite = ConformanceSuite(capabilities: capabilities) { clock in try await start(clock: clock) }
}

@Suite("Cloudflare conformance")
struct CloudflareConformanceTests {
    @Test(arguments: ConformancePromise.allCases)
    func conformance(_ promise: ConformancePromise) async {
        let report = await CloudflareConformanceEmulator.suite.check(promise)
        for failure in report.failures { Issue.record("\(failure)") }
    }
}
