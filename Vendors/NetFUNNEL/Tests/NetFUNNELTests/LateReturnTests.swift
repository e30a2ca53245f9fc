import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

/// A key whose documented return attempts failed is returned in the background
/// (`backgroundReturnSeconds`, a proposal) and reported as `keyReturnedLate`.
@Suite("NetFUNNEL late key returns")
struct LateReturnTests {
    /// Every event of `session` until its streams end.
    static func allEvents(_ session: WaitingSession) async -> [WaitingRoomEvent] {
        var events: [WaitingRoomEvent] = []
        for await event in session.events { events.append(event) }
        return events
    }

    @Test func completeThatFailsIsReported500ThenReturnedLate() async throws {
        try await Harness.run { h in
            let provider = try h.provider { $0.retryCount = 1 }
            let session = try provider.enqueue(h.entry())
            let reader = Task { await Self.allEvents(session) }
            guard case .passed = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            // the documented attempts (1 + retryCount) fail, then two background attempts fail
            h.emulator.inject(NetFUNNELFault(opcode: 5004, action: .dropConnection, count: 2))
            h.emulator.inject(NetFUNNELFault(opcode: 5004, action: .httpStatus(503), count: 2))
            let status = try await session.complete()
            #expect(status.code == 500, "nfComplete reports the failed return as documented")
            let events = await reader.value  // ends after the late return
            let names = events.map(\.name)
            #expect(names.suffix(2) == [.completed, .keyReturnedLate], "\(names)")
            if case .keyReturnedLate(let late)? = events.last { #expect(late.code == 200) }
            #expect(h.emulator.counters().requests["5004"] == 5)
            #expect(provider.environment.pendingReturns.statistics.returnedLate == 1)
            #expect(await provider.drainPendingReturns(timeout: .seconds(1)) == 0)
            h.expectNoLeaks()
        }
    }

    @Test func cancelWhoseReturnFailsReturnsTheWaitingKeyLate() async throws {
        try await Harness.run { h in
            let provider = try h.provider()
            let (a, b) = try await h.aPassedThenB(provider)
            await h.eventually("b waiting") { h.emulator.counters().waiting == 1 }
            h.emulator.inject(NetFUNNELFault(opcode: 5004, action: .malformedBody, count: 1))
            let reader = Task { await Self.allEvents(b) }
            b.cancel()
            #expect(await b.outcome().status.code == 499)
            let names = await reader.value.map(\.name)
            #expect(names.suffix(2) == [.closed, .keyReturnedLate], "\(names)")
            #expect(h.emulator.counters().waitersLeft == 1)
            _ = try await a.complete()
            h.expectNoLeaks()
        }
    }

    @Test func aFailureWhileWaitingReturnsTheKeyLate() async throws {
        try await Harness.run { h in
            let provider = try h.provider()
            let (a, b) = try await h.aPassedThenB(provider)
            await h.eventually("b waiting") { h.emulator.counters().waiting == 1 }
            h.emulator.inject(NetFUNNELFault(opcode: 5002, action: .dropConnection, count: 1))
            h.emulator.inject(NetFUNNELFault(opcode: 5004, action: .dropConnection, count: 1))
            let error = try await b.requireFailed("b")
            #expect(error.vendorCode == 1001)
            await h.eventually("b's key returned late") { h.emulator.counters().waiting == 0 }
            // the client counts it once the answer is back
            await h.eventually("the late return counted") { provider.environment.pendingReturns.statistics.returnedLate == 1 }
            _ = try await a.complete()
            h.expectNoLeaks()
        }
    }

    @Test func releaseOfATryPassKeyGoesOnInTheBackground() async throws {
        try await Harness.run { h in
            let provider = try h.provider()
            let result = try await provider.tryPass(h.entry())
            let pass = try #require(result.pass)
            h.emulator.inject(NetFUNNELFault(opcode: 5004, action: .dropConnection, count: 3))
            #expect(try await provider.release(pass).code == 500)
            #expect(await provider.drainPendingReturns(timeout: .seconds(30)) == 0)
            #expect(provider.environment.pendingReturns.statistics.returnedLate == 1)
            h.expectNoLeaks()
        }
    }

    @Test func shutdownWaitsABoundedTimeThenGivesUp() async throws {
        try await Harness.run { h in
            // real time here: the drain's bound is what is tested
            let provider = try NetFUNNELProvider(
                configuration: h.configuration { $0.backgroundReturnSeconds = 30 },
                environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared))
            let session = try provider.enqueue(h.entry())
            guard case .passed(let pass, _) = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            h.emulator.inject(NetFUNNELFault(opcode: 5004, action: .dropConnection))  // until cleared
            #expect(try await session.complete().code == 500)
            let started = ContinuousClock.now
            #expect(await provider.drainPendingReturns(timeout: .milliseconds(300)) == 1)
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(provider.environment.pendingReturns.statistics.gaveUp == 1)
            h.emulator.clearFaults()
            #expect(try await provider.release(pass).code == 200)  // clean up
            h.expectNoLeaks()
        }
    }

    @Test func zeroTurnsItOff() async throws {
        try await Harness.run { h in
            let provider = try h.provider { $0.backgroundReturnSeconds = 0 }
            let session = try provider.enqueue(h.entry())
            guard case .passed(let pass, _) = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            h.emulator.inject(NetFUNNELFault(opcode: 5004, action: .dropConnection, count: 1))
            #expect(try await session.complete().code == 500)
            #expect(provider.environment.pendingReturns.statistics.started == 0)
            #expect(h.emulator.counters().keysHeld == 1)
            #expect(try await provider.release(pass).code == 200)
            h.expectNoLeaks()
        }
    }

    @Test func scheduleDoublesWithinTheBudget() {
        let schedule = PendingReturns.Schedule(budget: .seconds(60), initialDelay: .seconds(1), maximumDelay: .seconds(10))
        #expect(schedule.delays == [1, 2, 4, 8, 10, 10, 10, 10].map { Duration.seconds($0) })
        #expect(PendingReturns.Schedule(budget: .zero).delays.isEmpty)
    }

    /// Issue 27 §1: the background return beats the key timeout. A key the server keeps for 20 s
    /// gets five tries in its first 6.25 s and one every 2.5 s after; an unknown timeout never
    /// waits more than 2.5 s between tries; ±20 % jitter; all within the budget.
    @Test func backgroundReturnsBeatTheKeyTimeout() {
        let configuration = NetFUNNELConfiguration(clientId: "x-0000", backgroundReturnSeconds: 60)
        let known = configuration.backgroundReturnSchedule(keyTimeout: .seconds(20))
        #expect(Array(known.delays.prefix(6)) == [250, 500, 1000, 2000, 2500, 2500].map { Duration.milliseconds($0) })
        #expect(known.delays.prefix(5).reduce(Duration.zero, +) == .milliseconds(6250))
        #expect(known.delays.reduce(Duration.zero, +) <= .seconds(60))
        #expect(known.delays.count == 26, "5 in the first 6.25 s, then every 2.5 s up to 60 s")
        let short = configuration.backgroundReturnSchedule(keyTimeout: .seconds(4))
        #expect(short.maximumDelay == .milliseconds(500) && short.delays.allSatisfy { $0 <= .milliseconds(500) })
        let unknown = configuration.backgroundReturnSchedule(keyTimeout: nil)
        #expect(unknown.maximumDelay == .milliseconds(2500) && unknown.delays.allSatisfy { $0 <= .milliseconds(2500) })
        #expect(configuration.backgroundReturnSchedule == unknown)
        for _ in 0..<1000 {
            let d = known.jittered(.seconds(2))
            #expect(d >= .milliseconds(1600) && d <= .milliseconds(2400))
        }
        #expect(NetFUNNELConfiguration(clientId: "x-0000", backgroundReturnSeconds: 0).backgroundReturnSchedule.delays.isEmpty)
    }

    /// The key timeout comes from the settings document (`timeoutSec` of the segment).
    @Test func theKeyTimeoutComesFromTheSettingsDocument() async throws {
        try await Harness.run(segments: ["seg": Harness.segment { $0.timeoutSeconds = 20 }]) { h in
            let provider = try h.provider()
            guard case .success(let settings)? = await provider.settings() else {
                Issue.record("no settings")
                return
            }
            #expect(settings.keyTimeouts[RoomKey(scope: Harness.project, room: "seg")] == 20)
            let client = try #require(provider.client)
            #expect(client.keyTimeout(for: h.entry()) == .seconds(20))
            #expect(client.keyTimeout(for: h.entry("other")) == nil)
        }
    }

    @Test func badBackgroundReturnSecondsNamesTheField() {
        #expect(throws: WaitingRoomError.self) {
            try NetFUNNELConfiguration(json: .object(["clientId": .string("x-0000"), "backgroundReturnSeconds": .number(601)]))
        }
        do {
            _ = try NetFUNNELConfiguration(json: .object(["clientId": .string("x-0000"), "backgroundReturnSeconds": .number(-1)]))
        } catch let error as WaitingRoomError {
            #expect(error.field == "netfunnel.backgroundReturnSeconds")
        } catch {
            Issue.record("\(error)")
        }
    }
}
