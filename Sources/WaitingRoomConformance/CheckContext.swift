import Foundation
import Synchronization
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

/// Everything one promise's check works with, and the helpers the checks share.
struct CheckContext<Emulator: ConformanceEmulator>: Sendable {
    let capabilities: ConformanceCapabilities
    let emulator: Emulator
    let clock: VirtualClock
    let recorder: Recorder
    let timeout: Duration
    let passStore: any PassStore

    init(capabilities: ConformanceCapabilities, emulator: Emulator, clock: VirtualClock, recorder: Recorder, timeout: Duration) {
        self.capabilities = capabilities
        self.emulator = emulator
        self.clock = clock
        self.recorder = recorder
        self.timeout = timeout
        self.passStore = MemoryPassStore(clock: clock)
    }

    var vendorID: String { capabilities.vendorID }
    var keys: Bool { capabilities.keys == .returned }

    // MARK: making things

    func environment(_ policy: DuplicatePolicy = .join) -> ProviderEnvironment {
        ProviderEnvironment(
            transport: AsyncHTTPTransport.shared, clock: PacedClock(base: clock), passStore: passStore, duplicatePolicy: policy)
    }

    func makeProvider(_ policy: DuplicatePolicy = .join) throws -> any WaitingRoomProvider {
        let provider = try emulator.makeProvider(environment: environment(policy))
        recorder.expect(provider.vendorID == vendorID, "the provider's vendorID is \(provider.vendorID), declared \(vendorID)")
        return provider
    }

    func entry(_ room: ConformanceRoom, user: String = "conformance-user") -> Entry {
        Entry(room: emulator.room(room), userId: user)
    }

    // MARK: waiting (real time, bounded)

    /// Polls `condition` until it holds or ``timeout`` passes; records a failure naming `what`
    /// when it does not.
    @discardableResult
    func waitUntil(_ what: String, isolation: isolated (any Actor)? = #isolation, _ condition: () async throws -> Bool) async rethrows
        -> Bool
    {
        let limit = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < limit {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(3))
        }
        if try await condition() { return true }
        recorder.fail("timed out after \(timeout) waiting for \(what)")
        return false
    }

    /// Polls `condition` for at most `bound` (real time), without recording anything.
    func holdsWithin(_ bound: Duration, isolation: isolated (any Actor)? = #isolation, _ condition: () async throws -> Bool) async rethrows
        -> Bool
    {
        let limit = ContinuousClock.now.advanced(by: bound)
        while ContinuousClock.now < limit {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(3))
        }
        return try await condition()
    }

    /// Runs `body` with the real-time bound; nil (and a failure naming `what`) when it did not end.
    func bounded<T: Sendable>(_ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
        let box = ResultBox<T>()
        let task = Task {
            do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
        }
        let ended = await holdsWithin(timeout) { box.value != nil }
        guard ended, let value = box.value else {
            task.cancel()
            recorder.fail("\(what) did not return within \(timeout)")
            return nil
        }
        return try value.get()
    }

    /// The session's outcome, or nil (recorded) when none came in time.
    func awaitOutcome(of session: WaitingSession, _ what: String) async -> Outcome? {
        guard await waitUntil("\(what): an outcome", { session.currentOutcome != nil }) else { return nil }
        return session.currentOutcome
    }

    /// Waits until the session is in line.
    @discardableResult
    func waitInLine(_ session: WaitingSession, _ what: String) async -> Bool {
        let inLine = await waitUntil("\(what): the session to wait in line (state \(session.state.rawValue))") {
            session.state == .waiting || session.state.hasOutcome
        }
        guard inLine else { return false }
        return recorder.expect(session.state == .waiting, "\(what): expected to wait in line, ended \(describe(session.currentOutcome))")
    }

    func counters() async throws -> ConformanceCounters { try await emulator.counters() }

    /// No key is left with the server: keys returned and nobody left waiting (a vendor with keys);
    /// no key counted at all (a vendor without).
    func expectNoKeyLeft(_ what: String) async throws {
        if keys {
            var last = ConformanceCounters()
            let clean = try await holdsWithin(timeout) {
                last = try await counters()
                return last.keysLeftBehind == 0 && last.waiting == 0
            }
            recorder.expect(clean, "\(what): a key was left behind (emulator counters: \(last))")
        } else {
            let now = try await counters()
            recorder.expect(now.keysLeftBehind == 0, "\(what): a vendor without keys counts keys left behind (\(now))")
        }
    }

    /// Lets users in until `subject` has an outcome; passes of others are completed to free slots.
    func admitUntilOutcome(_ subject: WaitingSession, others: [WaitingSession], room: RoomKey, _ what: String) async throws -> Outcome? {
        let everyone = others + [subject]
        for _ in 0..<8 {
            if subject.currentOutcome != nil { break }
            let before = everyone.filter { $0.currentOutcome != nil }.count
            let inLine = try await counters().waiting
            try await emulator.admit(max(1, keys ? 1 : inLine), in: room)
            _ = await holdsWithin(min(timeout, .seconds(10))) { everyone.filter { $0.currentOutcome != nil }.count > before }
            for other in others where other.currentOutcome?.pass?.requiresCompletion == true && other.state != .completed {
                _ = try await bounded("complete() of a user ahead") { try await other.complete() }
            }
        }
        return await awaitOutcome(of: subject, what)
    }

    /// Ends every session still open and checks no key is left.
    func cleanUp(_ sessions: [WaitingSession], _ what: String) async throws {
        for session in sessions {
            if session.currentOutcome == nil { session.cancel() }
        }
        for session in sessions {
            _ = await waitUntil("\(what): cancelled sessions to end") { session.currentOutcome != nil }
            if session.currentOutcome?.pass?.requiresCompletion == true, session.state != .completed {
                _ = try await bounded("\(what): complete()") { try await session.complete() }
            }
        }
        try await expectNoKeyLeft(what)
    }

    // MARK: judging

    func describe(_ outcome: Outcome?) -> String {
        guard let outcome else { return "no outcome" }
        switch outcome {
        case .failed(let error): return "failed \(error.kind.rawValue) \(error.vendorCode.map(String.init) ?? "nil") (\(error.message))"
        case .passed(let pass, let status):
            return "passed \(status.code) \(pass.requiresCompletion ? "with a key" : "without a key") (\(status.message))"
        default: return "\(outcome.name) \(outcome.status.code) (\(outcome.status.message))"
        }
    }

    /// Records a failure unless `outcome` is `expected` and carries this vendor's id.
    func expect(_ outcome: Outcome?, is expected: ExpectedOutcome, _ what: String) {
        guard let outcome else { return }
        recorder.expect(expected.matches(outcome), "\(what): expected \(expected), got \(describe(outcome))")
        let vendor = outcome.status.vendor
        recorder.expect(vendor == vendorID, "\(what): the outcome's vendor is \"\(vendor)\", expected \"\(vendorID)\"")
    }

    /// The transitions a session may make, seen on its first stream.
    static var transitions: [SessionState: Set<SessionState>] {
        [
            .idle: [.connecting, .closed],
            .connecting: [.waiting, .passed, .disabled, .blocked, .closed, .failed],
            .waiting: [.passed, .disabled, .blocked, .closed, .failed, .connecting],
            .passed: [.completed, .connecting],
            .disabled: [.completed, .connecting]
        ]
    }

    /// Checks a first stream's events: lifecycle order, progress only in line, each outcome event
    /// right after its state, and a position (`ahead`) that never rises within one wait.
    func checkLifecycle(_ events: [WaitingRoomEvent], _ what: String) {
        var state: SessionState?
        var lastAhead: Int?
        for (index, event) in events.enumerated() {
            switch event {
            case .stateChanged(let next, _):
                if let current = state {
                    recorder.expect(
                        Self.transitions[current]?.contains(next) == true,
                        "\(what): event \(index): state \(current.rawValue) → \(next.rawValue) is not a documented transition")
                } else {
                    recorder.expect(next == .idle, "\(what): the first stream must start with stateChanged(idle), got \(next.rawValue)")
                }
                if next == .connecting { lastAhead = nil }
                state = next
            case .progress(let progress, _):
                recorder.expect(state == .waiting, "\(what): event \(index): progress while \(state?.rawValue ?? "nothing")")
                if let ahead = progress.ahead {
                    if let previous = lastAhead {
                        recorder.expect(ahead <= previous, "\(what): event \(index): the position rose from \(previous) to \(ahead) ahead")
                    }
                    lastAhead = ahead
                }
            case .queueOpened:
                recorder.expect(state == .waiting, "\(what): event \(index): queueOpened while \(state?.rawValue ?? "nothing")")
            case .passed, .disabled, .blocked, .closed, .failed:
                let expected: SessionState
                switch event {
                case .passed: expected = .passed
                case .disabled: expected = .disabled
                case .blocked: expected = .blocked
                case .closed: expected = .closed
                default: expected = .failed
                }
                recorder.expect(state == expected, "\(what): event \(index): \(event.name.rawValue) while \(state?.rawValue ?? "nothing")")
            case .completed:
                recorder.expect(state == .completed, "\(what): event \(index): completed while \(state?.rawValue ?? "nothing")")
            case .keyReturnedLate:
                recorder.expect(state?.hasOutcome == true, "\(what): event \(index): keyReturnedLate before an outcome")
            case .connection:
                recorder.expect(
                    state == .connecting || state == .waiting,
                    "\(what): event \(index): connection while \(state?.rawValue ?? "nothing") (only while connecting or waiting)")
            case .queuePageChanged, .userExited:
                recorder.expect(state == .waiting, "\(what): event \(index): \(event.name.rawValue) while \(state?.rawValue ?? "nothing")")
            case .sessionRestarted:
                break
            }
        }
    }

    /// `body` must throw a `.invalidUse` ``WaitingRoomError``.
    func expectInvalidUse(_ what: String, _ body: @escaping @Sendable () async throws -> Void) async {
        do {
            _ = try await bounded(what) { try await body() }
            recorder.fail("\(what) did not throw (expected WaitingRoomError .invalidUse)")
        } catch let error as WaitingRoomError {
            recorder.expect(error.kind == .invalidUse, "\(what) threw \(error.kind.rawValue), expected invalidUse (\(error.message))")
        } catch {
            recorder.fail("\(what) threw \(error), expected WaitingRoomError .invalidUse")
        }
    }
}

/// The result of a bounded call, set once by the task that runs it.
final class ResultBox<T: Sendable>: Sendable {
    private let storage = Mutex<Result<T, any Error>?>(nil)
    func set(_ result: Result<T, any Error>) { storage.withLock { $0 = result } }
    var value: Result<T, any Error>? { storage.withLock { $0 } }
}

/// The suite's virtual clock as the provider sees it: each sleep moves virtual time at once, as
/// on the auto-advancing clock, but first pauses a few real milliseconds, so a waiting user polls
/// at a bounded rate instead of flat out (the suite runs beside the rest of a parallel test run).
struct PacedClock: WaitingRoomClock {
    let base: VirtualClock
    static let pause: Duration = .milliseconds(5)

    func now() -> Date { base.now() }

    func sleep(for duration: Duration) async throws {
        if duration > .zero { try await Task.sleep(for: Self.pause) }
        try await base.sleep(for: duration)
    }
}
