import Foundation
import ScriptedVendor
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomTesting

/// `WaitingSession.whenOutcome(_:)`: the callback form of `outcome()` (what `load` uses so a
/// waiting user costs no task of its own).
@Suite("WaitingSession.whenOutcome")
struct WhenOutcomeTests {
    let clock = VirtualClock()

    func provider(_ steps: [ScriptedProvider.Step]) -> ScriptedProvider {
        ScriptedProvider(steps: steps, environment: ProviderEnvironment(transport: NoNetworkTransport(), clock: clock))
    }

    /// Collects what callbacks receive, and lets a test wait for a number of them.
    final class Received: Sendable {
        private let state = Mutex<[Outcome]>([])
        func add(_ outcome: Outcome) { state.withLock { $0.append(outcome) } }
        var outcomes: [Outcome] { state.withLock { $0 } }
    }

    @Test func calledOnceWithTheOutcomeAfterTheOutcomeEvent() async throws {
        let p = provider([
            .sleep(.seconds(1)),
            .emit(.progress(QueueProgress(ahead: 1), Fixture.status(201))),
            .finish(.passed(Fixture.keyPass(), Fixture.status(200, "pass")))
        ])
        let session = try p.enqueue(Fixture.entry)
        let received = Received()
        let events = Mutex<[EventName]>([])
        session.bind(nil) { event in events.withLock { $0.append(event.name) } }
        session.whenOutcome { outcome in
            // the outcome event was emitted before the callback runs
            #expect(events.withLock { $0.contains(.passed) })
            received.add(outcome)
        }
        session.whenOutcome { received.add($0) }
        #expect(received.outcomes.isEmpty, "nothing before the outcome")
        await clock.advanceToNextWakeup()
        let outcome = await session.outcome()
        #expect(outcome.name == "passed")
        #expect(received.outcomes.map(\.name) == ["passed", "passed"])
        #expect(received.outcomes.first?.status.code == 200)
        _ = try await session.complete()
        #expect(received.outcomes.count == 2, "called once each, not again on completion")
    }

    @Test func calledAtOnceWhenTheOutcomeIsThereAlready() async throws {
        let p = provider([.finish(.blocked(Fixture.status(301, "blocked")))])
        let session = try p.enqueue(Fixture.entry)
        _ = await session.outcome()
        let received = Received()
        session.whenOutcome { received.add($0) }
        #expect(received.outcomes.map(\.name) == ["blocked"], "synchronously, on the calling thread")
    }

    @Test func aCancelledWaitReportsItsOutcomeToo() async throws {
        let p = provider([.sleep(.seconds(60)), .finish(.passed(Fixture.keyPass(), Fixture.status(200, "pass")))])
        let session = try p.enqueue(Fixture.entry)
        let received = Received()
        session.whenOutcome { received.add($0) }
        session.cancel()
        let outcome = await session.outcome()
        #expect(received.outcomes.map(\.name) == [outcome.name])
        #expect(outcome.pass == nil)
    }
}
