import Foundation
import Logging
import QueueIt
import QueueItEmulator
import Testing
import WaitingRoom
import WaitingRoomConformance
import WaitingRoomEmulators
import WaitingRoomHTTP
import WaitingRoomTesting

/// The Queue-it emulator behind the conformance suite's emulator protocol: one customer with a
/// room per behaviour. Public API and the emulator's admin endpoints only.
final class QueueItConformanceEmulator: ConformanceEmulator {
    static let customer = "conformance"
    let emulator: QueueItEmulator
    let server: EmulatorServer
    var port: Int { server.port }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    init(emulator: QueueItEmulator, server: EmulatorServer) {
        self.emulator = emulator
        self.server = server
    }

    static func start(clock: VirtualClock) async throws -> QueueItConformanceEmulator {
        var block = QueueItEmulatorConfiguration.Room(state: .queue)
        block.enqueueTokenRequired = true
        let configuration = QueueItEmulatorConfiguration(customers: [
            customer: .init(
                secretKey: "conformance-secret-0123456789",
                rooms: [
                    ConformanceRoom.open.rawValue: .init(state: .safetynet),
                    ConformanceRoom.queue.rawValue: .init(state: .queue, admitPerSecond: 0),
                    ConformanceRoom.block.rawValue: block,
                    ConformanceRoom.closed.rawValue: .init(state: .disabled)
                ])
        ])
        let emulator = QueueItEmulator(configuration: configuration, now: { clock.now() })
        // Served with a graceful stop (open requests finish): the suite starts and stops an
        // emulator per promise, while keep-alive connections and delayed answers are still open.
        var logger = Logger(label: "waitingroom.conformance.queueit")
        logger.logLevel = .critical
        let server = try await EmulatorServer.start(logger: logger) { emulator.addRoutes(to: $0) }
        return QueueItConformanceEmulator(emulator: emulator, server: server)
    }

    func room(_ behaviour: ConformanceRoom) -> RoomKey { RoomKey(scope: Self.customer, room: behaviour.rawValue) }

    func admit(_ count: Int, in room: RoomKey) async throws {
        emulator.admit(customerId: room.scope, waitingRoomId: room.room, count: count)
    }

    struct UnsupportedFault: Error, CustomStringConvertible {
        let fault: ConformanceFault
        var description: String { "this adapter does not fault \(fault.request.name) requests (queue-page faults: see ChaosTests)" }
    }

    func inject(_ fault: ConformanceFault) async throws {
        guard fault.request.name == "enqueue" else { throw UnsupportedFault(fault: fault) }
        switch fault.action {
        case .delay: emulator.inject(QueueItEmulatorFault(kind: .delay, count: fault.count, delayMs: Self.delayMs))
        case .drop: emulator.inject(QueueItEmulatorFault(kind: .drop, count: fault.count))
        case .serverError: emulator.inject(QueueItEmulatorFault(kind: .status, count: fault.count, status: 503))
        case .garbage: emulator.inject(QueueItEmulatorFault(kind: .nonjson, count: fault.count))
        }
    }

    func admin(_ method: String, _ path: String) async throws -> JSONValue {
        let response = try await AsyncHTTPTransport.shared.send(
            WaitingRoom.HTTPRequest(method: method, url: baseURL + "/_emulator/queueit/" + path, timeout: .seconds(30)))
        return try JSONValue.parse(Data(response.body))
    }

    func clearFaults() async throws { _ = try await admin("DELETE", "faults") }

    func counters() async throws -> ConformanceCounters {
        let state = try await admin("GET", "state")
        let rooms = state["customers"]?[Self.customer]?["rooms"]?.objectValue ?? [:]
        let waiting = rooms.values.reduce(0) { $0 + Int($1["waiting"]?.numberValue ?? 0) }
        return ConformanceCounters(entries: emulator.enqueueCount, waiting: waiting)
    }

    func reset() async throws { _ = try await admin("POST", "reset") }

    func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider {
        QueueItProvider(
            configuration: try QueueItConfiguration(
                customerId: Self.customer, waitingRoomDomain: "127.0.0.1:\(port)", userId: "conformance",
                requestTimeout: Self.requestTimeout, pollInterval: .seconds(1),
                queuePage: .follow),  // the emulator's queue page is followed headlessly
            environment: environment)
    }

    func shutdown() async {
        await server.stop()
    }

    /// What Queue-it promises: tokens, not keys (nothing to give back, and a user who leaves stays
    /// in the server's line); no blocking (a room that refuses needs an enqueue token: 403);
    /// faults on the enqueue call: five attempts with 1, 2, 4 and 8 s between them, then code 3.
    /// (Queue-page faults have a schedule of their own, 1…30 s; the kit has one retry budget per
    /// vendor, so they are checked by `ChaosTests`, not here.)
    static let capabilities = ConformanceCapabilities(
        vendorID: "queueit",
        keys: .none,
        passStorage: .storedUntilExpiry,
        openRoom: .passed(code: 200, holdsKey: false),
        queuedPass: .passed(code: 200, holdsKey: false),
        blockRoom: .failed(.rejected, code: 403),
        closedRoom: .disabled(code: 200),
        cancelCode: 499,
        requests: [ConformanceRequestKind("enqueue", phase: .entry)],
        attemptsPerRequest: 5,
        retryBudget: .seconds(16),
        faultOutcome: { _, _ in .failed(.unavailable, code: 3) })

    /// Any one wait of the suite may take 90 s of real time: a delayed enqueue is five attempts,
    /// each ending at the 5 s real-time deadline (25 s), and with the suite's default 30 s a CI
    /// run on two busy cores timed out `errorKinds` and `faults` waiting for their outcome.
    static let suite = ConformanceSuite(capabilities: capabilities, timeout: .seconds(90)) { clock in try await start(clock: clock) }
}

@Suite("Queue-it conformance")
struct QueueItConformanceTests {
    @Test(arguments: ConformancePromise.allCases)
    func conformance(_ promise: ConformancePromise) async {
        let report = await QueueItConformanceEmulator.suite.check(promise)
        for failure in report.failures { Issue.record("\(failure)") }
    }
}
