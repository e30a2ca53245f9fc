import Foundation
import ScriptedVendor
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomConformance
import WaitingRoomTesting

/// An "emulator" for the `scripted` vendor: it has no server, so each room is a script
/// (``ScriptedProvider``) and the counters are read from the providers' call logs and the
/// sessions' states. Users in the queue room sleep on a manual gate clock until admitted.
final class ScriptedConformanceEmulator: ConformanceEmulator {
    static let vendor = "scripted"

    private struct State {
        var faults: [ConformanceFault] = []
        var providers: [ScriptedProvider] = []
        var sessions: [WaitingSession] = []
    }

    /// The queue room's users wait on this clock; ``admit(_:in:)`` moves it.
    let gate = VirtualClock()
    private let state = Mutex(State())

    func room(_ behaviour: ConformanceRoom) -> RoomKey { RoomKey(scope: Self.vendor, room: behaviour.rawValue) }

    func admit(_ count: Int, in room: RoomKey) async throws {
        for _ in 0..<count { await gate.advanceToNextWakeup(timeout: .seconds(5)) }
    }

    func inject(_ fault: ConformanceFault) async throws { state.withLock { $0.faults.append(fault) } }

    func clearFaults() async throws { state.withLock { $0.faults.removeAll() } }

    func counters() async throws -> ConformanceCounters {
        let (providers, sessions) = state.withLock { ($0.providers, $0.sessions) }
        var calls: [String] = []
        for provider in providers { calls += await provider.calls() }
        let unique = sessions.reduce(into: [WaitingSession]()) { list, s in if !list.contains(where: { $0 === s }) { list.append(s) } }
        return ConformanceCounters(
            entries: calls.filter { $0.hasPrefix("wait ") }.count,
            keysReturned: calls.filter { $0.hasPrefix("complete ") }.count,
            keysLeftBehind: unique.filter { $0.state == .passed && $0.currentOutcome?.pass?.requiresCompletion == true }.count,
            waiting: unique.filter { $0.state == .waiting || $0.state == .connecting }.count)
    }

    func reset() async throws { state.withLock { $0 = State() } }

    func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider {
        var gated = environment
        gated.clock = gate
        return Rooms(emulator: self, environment: gated)
    }

    func shutdown() async {}

    // MARK: the scripts

    static func status(_ code: Int, _ message: String) -> VendorStatus { VendorStatus(vendor: vendor, code: code, message: message) }

    func script(for room: RoomKey) -> ([ScriptedProvider.Step], TryPassResult) {
        let keyPass = Pass(
            vendor: Self.vendor, room: room, credential: "scripted-key", kind: .key, issuedAt: gate.now(), requiresCompletion: true)
        let passed = ScriptedProvider.Step.finish(.passed(keyPass, Self.status(200, "passed")))
        switch ConformanceRoom(rawValue: room.room) {
        case .open?:
            let token = Pass(vendor: Self.vendor, room: room, credential: "scripted-token", kind: .token, issuedAt: gate.now())
            return ([passed], TryPassResult(disposition: .passed, status: Self.status(200, "passed"), pass: token))
        case .queue?:
            let progress = { (ahead: Int) in
                ScriptedProvider.Step.emit(.progress(QueueProgress(ahead: ahead, behind: 0), Self.status(201, "waiting")))
            }
            return (
                [progress(2), progress(1), .sleep(.seconds(3600)), progress(0), passed],
                TryPassResult(disposition: .queue, status: Self.status(201, "would wait"))
            )
        case .block?:
            return (
                [.finish(.blocked(Self.status(301, "blocked")))], TryPassResult(disposition: .blocked, status: Self.status(301, "blocked"))
            )
        case .closed?, nil:
            return (
                [.finish(.disabled(nil, Self.status(0, "room not active")))],
                TryPassResult(disposition: .disabled, status: Self.status(0, "room not active"))
            )
        }
    }

    static func failure(_ action: ConformanceFaultAction) -> WaitingRoomError {
        switch action {
        case .delay: return WaitingRoomError(.networkTimeout, vendor: vendor, vendorCode: 504, message: "scripted timeout")
        case .drop: return WaitingRoomError(.networkOffline, vendor: vendor, vendorCode: -1, message: "scripted drop")
        case .serverError: return WaitingRoomError(.server, vendor: vendor, vendorCode: 503, message: "scripted server error")
        case .garbage: return WaitingRoomError(.invalidResponse, vendor: vendor, vendorCode: 200, message: "scripted garbage")
        }
    }

    /// The fault for the next `wait`, used up.
    func takeFault() -> ConformanceFault? {
        state.withLock { state in
            guard let index = state.faults.firstIndex(where: { $0.request.name == "wait" }) else { return nil }
            let fault = state.faults[index]
            if fault.count <= 1 { state.faults.remove(at: index) } else { state.faults[index].count -= 1 }
            return fault
        }
    }

    func register(_ provider: ScriptedProvider) { state.withLock { $0.providers.append(provider) } }
    func track(_ session: WaitingSession) { state.withLock { $0.sessions.append(session) } }

    /// One scripted provider per room (so duplicates of an entry meet the same deduplicator);
    /// a faulted wait gets a provider of its own that fails.
    final class Rooms: WaitingRoomProvider {
        let vendorID = ScriptedConformanceEmulator.vendor
        let emulator: ScriptedConformanceEmulator
        let environment: ProviderEnvironment
        private let cache = Mutex<[RoomKey: ScriptedProvider]>([:])

        init(emulator: ScriptedConformanceEmulator, environment: ProviderEnvironment) {
            self.emulator = emulator
            self.environment = environment
        }

        func provider(for room: RoomKey) -> ScriptedProvider {
            if let fault = emulator.takeFault() {
                let failing = ScriptedProvider(
                    steps: [.finish(.failed(ScriptedConformanceEmulator.failure(fault.action)))], environment: environment)
                emulator.register(failing)
                return failing
            }
            return cache.withLock { cache in
                if let known = cache[room] { return known }
                let (steps, tryPass) = emulator.script(for: room)
                let made = ScriptedProvider(steps: steps, tryPassResult: tryPass, environment: environment)
                emulator.register(made)
                cache[room] = made
                return made
            }
        }

        func tryPass(_ entry: Entry) async throws -> TryPassResult { try await provider(for: entry.room).tryPass(entry) }

        func enqueue(_ entry: Entry) throws -> WaitingSession {
            let session = try provider(for: entry.room).enqueue(entry)
            emulator.track(session)
            return session
        }

        func release(_ pass: Pass) async throws -> VendorStatus { try await provider(for: pass.room).release(pass) }
    }

    /// The scripted vendor's promises: a key in every pass, nothing stored; faults are scripted
    /// failures of the one `wait` step.
    static let capabilities = ConformanceCapabilities(
        vendorID: vendor,
        keys: .returned,
        passStorage: .notStored,
        openRoom: .passed(code: 200, holdsKey: true),
        queuedPass: .passed(code: 200, holdsKey: true),
        blockRoom: .blocked(code: 301),
        closedRoom: .disabled(code: 0),
        cancelCode: 499,
        requests: [ConformanceRequestKind("wait", phase: .entry)],
        attemptsPerRequest: 1,
        retryBudget: .seconds(1),
        faultOutcome: { _, action in
            let error = failure(action)
            return .failed(error.kind, code: error.vendorCode ?? 0)
        })

    static let suite = ConformanceSuite(capabilities: capabilities) { _ in ScriptedConformanceEmulator() }
}

@Suite("Scripted vendor conformance")
struct ScriptedConformanceTests {
    @Test(arguments: ConformancePromise.allCases)
    func conformance(_ promise: ConformancePromise) async {
        let report = await ScriptedConformanceEmulator.suite.check(promise)
        for failure in report.failures { Issue.record("\(failure)") }
    }
}
