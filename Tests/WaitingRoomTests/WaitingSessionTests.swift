import Foundation
import ScriptedVendor
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@Suite("WaitingSession")
struct WaitingSessionTests {
    let clock = VirtualClock()

    func provider(_ steps: [ScriptedProvider.Step], policy: DuplicatePolicy = .join) -> ScriptedProvider {
        ScriptedProvider(
            steps: steps, environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: clock, duplicatePolicy: policy))
    }

    @Test func threeSubscribersSeeTheSameEventsInOrder() async throws {
        let p = provider([
            .sleep(.seconds(1)),
            .emit(.progress(QueueProgress(ahead: 2), Fixture.status(201))),
            .emit(.progress(QueueProgress(ahead: 1), Fixture.status(201))),
            .finish(.passed(Fixture.keyPass(), Fixture.status(200, "pass")))
        ])
        let session = try p.enqueue(Fixture.entry)
        let streams = (0..<3).map { _ in session.events }
        await clock.advanceToNextWakeup()
        async let a = Fixture.collect(streams[0])
        async let b = Fixture.collect(streams[1])
        async let c = Fixture.collect(streams[2])
        let outcome = await session.outcome()
        #expect(outcome.name == "passed")
        try await session.complete()
        let (ea, eb, ec) = await (a, b, c)
        // the first stream also has what happened before the others were opened (idle, maybe connecting)
        let (sa, sb, sc) = (
            ea.filter { $0.name != .stateChanged }, eb.filter { $0.name != .stateChanged }, ec.filter { $0.name != .stateChanged }
        )
        #expect(sa == sb && sb == sc)
        #expect(ea.suffix(4) == eb.suffix(4) && eb.suffix(4) == ec.suffix(4))
        #expect(ea.filter { $0.name != .stateChanged }.map(\.name) == [.progress, .progress, .passed, .completed])
        let states = ea.compactMap { event -> SessionState? in
            if case .stateChanged(let state, _) = event { return state } else { return nil }
        }
        #expect(Array(states.suffix(3)) == [.waiting, .passed, .completed])
        // every event carries the vendor's code
        #expect(ea.contains { $0.status.code == 201 })
        #expect(ea.last?.status.code == 200)
    }

    /// Readers cancelled while the session emits: a stream's termination must not wait for the
    /// lock a yield holds (the two once deadlocked: the cancelling thread held the reader task's
    /// status lock and wanted the session's; the emitting thread the other way round). The limit
    /// catches a deadlock; it is 2 minutes because the run takes 24–27 s in the full parallel
    /// suite on two cores (under 2 s alone).
    @Test(.timeLimit(.minutes(2)))
    func readersCancelledWhileTheSessionEmits() async throws {
        for _ in 0..<5 {
            let steps =
                (0..<3_000).map { i in ScriptedProvider.Step.emit(.progress(QueueProgress(ahead: 3_000 - i), Fixture.status(201))) }
                + [.finish(.passed(Fixture.keyPass(), Fixture.status(200, "pass")))]
            let p = ScriptedProvider(
                steps: steps, environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: VirtualClock(autoAdvance: true))
            )
            let session = try p.enqueue(Fixture.entry)
            let readers = (0..<200).map { _ in
                let stream = session.events
                return Task {
                    var n = 0
                    for await _ in stream { n += 1 }
                    return n
                }
            }
            for (index, reader) in readers.enumerated() {
                if index % 3 == 0 { await Task.yield() }
                reader.cancel()
            }
            for reader in readers { _ = await reader.value }
            #expect(await session.outcome().name == "passed")
            try await session.complete()
            // a reader that stayed sees the whole run
            let last = await Fixture.collect(session.events)
            #expect(last.map(\.name).suffix(2) == [.passed, .completed])
        }
    }

    @Test func lateSubscriberFirstReceivesTheCurrentState() async throws {
        let p = provider([.emit(.progress(QueueProgress(ahead: 5), Fixture.status(201, "wait"))), .sleep(.seconds(10))])
        let session = try p.enqueue(Fixture.entry)
        let firstReader = session.events  // the first stream takes the events from the start
        #expect(await clock.waitForSleepers(1))
        var iterator = session.events.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first == .stateChanged(.waiting, Fixture.status(201, "wait")))
        session.cancel()
        _ = await session.outcome()
        // after the end, a new subscriber gets the final state, the outcome event replayed, and the stream ends
        let after = await Fixture.collect(session.events)
        #expect(after.map(\.name) == [.stateChanged, .closed])
        #expect(session.state == .closed)
        _ = firstReader
    }

    /// A subscriber that arrives after a pass that holds a key (the stream stays open until the
    /// key is returned) still sees `passed`, then `completed`, each once.
    @Test func lateSubscriberAfterAPassSeesThePassAndTheCompletion() async throws {
        let p = provider([.finish(.passed(Fixture.keyPass(), Fixture.status(200, "pass")))])
        let session = try p.enqueue(Fixture.entry)
        let firstReader = session.events
        _ = await session.outcome()
        var iterator = session.events.makeAsyncIterator()
        #expect(await iterator.next()?.name == .stateChanged)
        #expect(await iterator.next()?.name == .passed)
        _ = firstReader
        _ = try await session.complete()
        var rest: [EventName] = []
        while let event = await iterator.next() { rest.append(event.name) }
        #expect(rest == [.stateChanged, .completed])
        // and after the completion, a new subscriber gets the whole ending once
        let after = await Fixture.collect(session.events)
        #expect(after.map(\.name) == [.stateChanged, .passed, .completed])
    }

    /// The first stream opened after the session already ran to its outcome still gets every
    /// event from the start, progress included (a session starts as soon as `enqueue` returns).
    @Test func firstSubscriberAfterAFastRunGetsEveryEvent() async throws {
        let p = provider([
            .emit(.progress(QueueProgress(ahead: 2), Fixture.status(201))),
            .emit(.progress(QueueProgress(ahead: 1), Fixture.status(201))),
            .finish(.blocked(Fixture.status(301, "blocked")))
        ])
        let session = try p.enqueue(Fixture.entry)
        _ = await session.outcome()
        let events = await Fixture.collect(session.events)
        #expect(events.map(\.name) == [.stateChanged, .stateChanged, .stateChanged, .progress, .progress, .stateChanged, .blocked])
        #expect(events.first == .stateChanged(.idle, VendorStatus(vendor: session.vendorID, code: 0, message: "created")))
    }

    /// A session nobody reads keeps at most `earlyEventLimit` events for its first reader, the
    /// oldest progress dropped first; the outcome is kept.
    @Test func earlyEventsAreBounded() async throws {
        let steps: [ScriptedProvider.Step] =
            (0..<100).map { .emit(.progress(QueueProgress(ahead: 100 - $0), Fixture.status(201))) }
            + [.finish(.blocked(Fixture.status(301, "blocked")))]
        let session = try provider(steps).enqueue(Fixture.entry)
        _ = await session.outcome()
        let events = await Fixture.collect(session.events)
        #expect(events.count == WaitingSession.earlyEventLimit + 1)
        #expect(events.last?.name == .blocked)
        if case .progress(let last, _) = events.filter({ $0.name == .progress }).last { #expect(last.ahead == 1) }
    }

    @Test func bindUnbindAndUnbindAll() async throws {
        let p = provider([
            .sleep(.seconds(1)), .emit(.progress(QueueProgress(ahead: 1), Fixture.status(201))),
            .finish(.blocked(Fixture.status(301, "blocked")))
        ])
        let session = try p.enqueue(Fixture.entry)
        let progress = Recorder<WaitingRoomEvent>()
        let all = Recorder<WaitingRoomEvent>()
        let removed = Recorder<WaitingRoomEvent>()
        session.bind(.progress) { progress.append($0) }
        session.bind(nil) { all.append($0) }
        let gone = session.bind(.blocked) { removed.append($0) }
        #expect(session.unbind(gone))
        #expect(!session.unbind(gone))
        await clock.advanceToNextWakeup()
        let outcome = await session.outcome()
        #expect(outcome == .blocked(Fixture.status(301, "blocked")))
        #expect(progress.all.count == 1)
        #expect(all.all.contains(.blocked(Fixture.status(301, "blocked"))))
        #expect(removed.all.isEmpty)
        session.unbindAll()
    }

    @Test func completeTwiceReturnsTheFirstStatusWithoutASecondReturn() async throws {
        let p = provider([.finish(.passed(Fixture.keyPass(), Fixture.status(200)))])
        let session = try p.enqueue(Fixture.entry)
        _ = await session.outcome()
        let first = try await session.complete()
        let second = try await session.complete()
        #expect(first == second)
        #expect(session.state == .completed)
        #expect(await p.calls().filter { $0.hasPrefix("complete") }.count == 1)
    }

    @Test func cancelAfterTheOutcomeDoesNothing() async throws {
        let p = provider([.finish(.passed(Fixture.keyPass(), Fixture.status(200)))])
        let session = try p.enqueue(Fixture.entry)
        _ = await session.outcome()
        session.cancel()
        #expect(session.state == .passed)
        try await session.complete()
        session.cancel()
        #expect(session.state == .completed)
    }

    @Test func cancelWhileWaitingEndsClosed() async throws {
        let p = provider([.emit(.progress(QueueProgress(ahead: 3), Fixture.status(201)))])
        let session = try p.enqueue(Fixture.entry)
        let events = session.events
        session.cancel()
        let outcome = await session.outcome()
        #expect(outcome.name == "closed")
        #expect(outcome.status.code == 499)
        let seen = await Fixture.collect(events)
        #expect(seen.last?.name == .closed)
    }

    @Test func restartWhileWaitingStartsAgainInTheSameSession() async throws {
        let p = provider([
            .emit(.progress(QueueProgress(ahead: 3), Fixture.status(201))), .sleep(.seconds(5)),
            .finish(.passed(Fixture.keyPass(), Fixture.status(200)))
        ])
        let session = try p.enqueue(Fixture.entry)
        let events = session.events
        #expect(await clock.waitForSleepers(1))
        try await session.restart()
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        let outcome = await session.outcome()
        #expect(outcome.name == "passed")
        try await session.complete()
        let seen = await Fixture.collect(events)
        #expect(seen.filter { $0.name == .sessionRestarted }.count == 1)
        #expect(seen.filter { $0.name == .passed }.count == 1)
        #expect(await p.calls().filter { $0.hasPrefix("wait") }.count == 2)
    }

    @Test func anEndedSessionRefusesRestartAndCompleteWithATypedError() async throws {
        let p = provider([.finish(.blocked(Fixture.status(302)))])
        let session = try p.enqueue(Fixture.entry)
        _ = await session.outcome()
        await #expect(throws: WaitingRoomError.self) { try await session.restart() }
        do {
            try await session.complete()
            Issue.record("complete on a blocked session must throw")
        } catch let error as WaitingRoomError {
            #expect(error.kind == .invalidUse)
            #expect(error.message.contains("blocked"))
        }
    }

    @Test func duplicateEnqueueJoinsByDefault() async throws {
        let p = provider([.sleep(.seconds(5)), .finish(.passed(Fixture.keyPass(), Fixture.status(200)))])
        let first = try p.enqueue(Fixture.entry)
        let second = try p.enqueue(Fixture.entry)
        #expect(first === second)
        first.cancel()
        _ = await first.outcome()
        let third = try p.enqueue(Fixture.entry)
        #expect(third !== first)
        third.cancel()
    }

    @Test func duplicateEnqueueCanBeRejected() async throws {
        let p = provider([.sleep(.seconds(5))], policy: .reject)
        let first = try p.enqueue(Fixture.entry)
        #expect {
            _ = try p.enqueue(Fixture.entry)
        } throws: { error in
            (error as? WaitingRoomError)?.kind == .invalidUse
        }
        // a different user is not a duplicate
        let other = try p.enqueue(Entry(room: Fixture.room, userId: "user-2"))
        first.cancel()
        other.cancel()
    }
}
