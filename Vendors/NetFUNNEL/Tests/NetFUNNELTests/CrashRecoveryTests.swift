import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

/// Nothing lost when a process dies: every key is in the journal of a durable store before the
/// app sees it, and the next process returns what a dead one held (issue 27 §3).
///
/// A dead process is modelled by a provider whose clock never moves again: its heartbeat never
/// renews its leases, exactly as after SIGKILL. The emulator and the recovering provider share
/// a second clock that the test moves past the dead process's lease, well inside the keys'
/// timeout, so the emulator's own clock shows which keys it would have returned itself.
@Suite("NetFUNNEL crash recovery")
struct CrashRecoveryTests {
    struct Setup {
        let emulator: NetFUNNELEmulator
        let server: NetFUNNELRunningServer
        let clock: VirtualClock
        let deadClock: VirtualClock
        let store: FilePassStore
        let directory: URL

        func configuration() -> NetFUNNELConfiguration {
            NetFUNNELConfiguration(clientId: "emulator-0000", serverUrl: server.baseURL, networkTimeout: 10000)
        }

        func provider(clock: VirtualClock, lease: Duration = .seconds(10), recoverOnStart: Bool = false) throws -> NetFUNNELProvider {
            try NetFUNNELProvider(
                configuration: configuration(),
                environment: ProviderEnvironment(
                    transport: AsyncHTTPTransport.shared, clock: clock, passStore: store, leaseDuration: lease,
                    recoversHeldKeysOnStart: recoverOnStart))
        }

        func entry(_ user: String) -> Entry { Entry(room: RoomKey(scope: Harness.project, room: "seg"), userId: user) }
    }

    static func run(timeout: Double = 60, _ body: (Setup) async throws -> Void) async throws {
        let clock = VirtualClock()
        // Both clocks start at the same instant; only `clock` moves.
        let deadClock = VirtualClock(start: clock.now())
        let segment = Harness.segment(limit: 5) { $0.timeoutSeconds = timeout }
        let emulator = NetFUNNELEmulator(
            configuration: NetFUNNELEmulatorConfiguration(projects: [Harness.project: .init(segments: ["seg": segment])], strictKeys: true),
            clock: clock)
        let server = try await emulator.start(host: "127.0.0.1", port: 0)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wr-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = FilePassStore(path: directory.appendingPathComponent("state.json").path, clock: clock)
        let setup = Setup(emulator: emulator, server: server, clock: clock, deadClock: deadClock, store: store, directory: directory)
        do { try await body(setup) } catch {
            await server.shutdown()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        await server.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func theNextProcessReturnsWhatADeadOneHeldDespiteFaults() async throws {
        try await Self.run { s in
            let dead = try s.provider(clock: s.deadClock)
            for user in 0..<5 {
                let session = try dead.enqueue(s.entry("u\(user)"))
                guard case .passed(let pass, _) = await session.outcome() else {
                    Issue.record("u\(user) did not pass")
                    return
                }
                #expect(pass.requiresCompletion)
            }
            // Every key is on record before the app saw it.
            let journal = try await s.store.heldKeys()
            #expect(journal.count == 5)
            #expect(Set(journal.map(\.owner)) == [dead.environment.keyJournal.owner])
            #expect(
                journal.allSatisfy { $0.expiresAt == $0.takenAt.addingTimeInterval(60) }, "the segment's timeoutSec is each key's expiry")
            #expect(s.emulator.counters().keysHeld == 5)

            // A live owner's keys are not taken over.
            let early = try s.provider(clock: s.clock)
            let tooSoon = await early.recoverHeldKeys(bound: .seconds(1))
            #expect(tooSoon.claimed == 0)
            #expect(tooSoon.heldByLiveOwners == 5)

            // The dead process's lease (10 s) lapses; the keys' timeout (60 s) has not.
            s.clock.advance(by: .seconds(11))
            s.emulator.inject(NetFUNNELFault(opcode: 5004, action: .dropConnection, count: 2))
            s.emulator.inject(NetFUNNELFault(opcode: 5004, action: .httpStatus(503), count: 1))
            let next = try s.provider(clock: s.clock)
            let report = await next.recoverHeldKeys(bound: .seconds(20))
            #expect(report.claimed == 5)
            #expect(report.count(.returnedLate) == 5, "\(report.lines)")
            #expect(report.events.count == 5)
            #expect(try await s.store.heldKeys().isEmpty)
            let counters = s.emulator.counters()
            #expect(counters.keysReturned == 5)
            #expect(counters.keysAutoReturned == 0)
            #expect(counters.keysNeverReturned == 0)
        }
    }

    @Test func aNewProviderReturnsADeadProcesssKeysWhenItStarts() async throws {
        try await Self.run { s in
            let dead = try s.provider(clock: s.deadClock)
            for user in 0..<3 {
                guard case .passed = await (try dead.enqueue(s.entry("d\(user)"))).outcome() else {
                    Issue.record("not passed")
                    return
                }
            }
            s.clock.advance(by: .seconds(11))
            _ = try s.provider(clock: s.clock, recoverOnStart: true)
            for _ in 0..<1000 where s.emulator.counters().keysReturned < 3 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(s.emulator.counters().keysReturned == 3)
            for _ in 0..<200 where try await !s.store.heldKeys().isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            #expect(try await s.store.heldKeys().isEmpty)
            #expect(s.emulator.counters().keysNeverReturned == 0)
        }
    }

    @Test func aKeyPastItsTimeoutIsDroppedWithTheReason() async throws {
        try await Self.run(timeout: 30) { s in
            let dead = try s.provider(clock: s.deadClock)
            guard case .passed = await (try dead.enqueue(s.entry("late"))).outcome() else {
                Issue.record("not passed")
                return
            }
            s.clock.advance(by: .seconds(31))
            let report = await (try s.provider(clock: s.clock)).recoverHeldKeys(bound: .seconds(5))
            #expect(report.count(.gaveUp) == 1)
            #expect(report.lines.first?.message.contains("timed the key out") == true)
            #expect(try await s.store.heldKeys().isEmpty)
            #expect(s.emulator.counters().keysAutoReturned == 1, "the server's own timeout returned it")
        }
    }

    @Test func returnedKeysLeaveTheJournalAndAWaitingKeyIsOnRecordToo() async throws {
        try await Self.run { s in
            let provider = try s.provider(clock: s.clock)
            var sessions: [WaitingSession] = []
            for user in 0..<5 {
                let session = try provider.enqueue(s.entry("p\(user)"))
                guard case .passed = await session.outcome() else {
                    Issue.record("not passed")
                    return
                }
                sessions.append(session)
            }
            // A sixth user waits in line: the server holds a key for it too.
            let waiting = try provider.enqueue(s.entry("w"))
            for _ in 0..<400 where try await s.store.heldKeys().count < 6 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(try await s.store.heldKeys().count == 6)
            for session in sessions { _ = try await session.complete() }
            waiting.cancel()
            _ = await waiting.outcome()
            #expect(try await s.store.heldKeys().isEmpty)
            // tryPass: the pass's key is on record until it is released.
            let pass = try #require(try await provider.tryPass(s.entry("t")).pass)
            #expect(pass.requiresCompletion)
            #expect(try await s.store.heldKeys().count == 1)
            #expect(provider.environment.keyJournal.heldCount == 1)
            #expect(try await provider.release(pass).code == 200)
            #expect(try await s.store.heldKeys().isEmpty)
            let counters = s.emulator.counters()
            #expect(counters.keysAutoReturned == 0)
            #expect(counters.keysNeverReturned == 0)
        }
    }
}
