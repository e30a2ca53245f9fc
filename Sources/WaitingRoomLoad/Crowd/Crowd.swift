import Foundation
import WaitingRoom

/// Virtual users that wait in a room, hold their pass for a while and give it back: the crowd in
/// `demo` and the load in `load`.
package struct Crowd: Sendable {
    /// What one virtual user experienced.
    package struct Visit: Sendable {
        /// The outcome's name (`passed`, `blocked`, `failed`, …; ``WaitingRoom/Outcome``).
        package var outcome: String
        /// The vendor's status code with the outcome.
        package var code: Int
        /// From enqueueing to the outcome.
        package var waited: Duration
        /// Whether a passed user gave its pass back (``WaitingRoom/WaitingSession/complete()``).
        package var completed: Bool
        /// When the user started (enqueued), from the start of the run.
        package var started: Duration = .zero
        /// The first expected wait the vendor showed the user, and when (nil: no progress event
        /// carried an ETA).
        package var expectation: ExpectedWait? = nil
        /// When the vendor first answered the user with a queue page or progress, from the start
        /// of the run (nil: its outcome was the first answer, or none came).
        package var answered: Duration? = nil
        /// The vendor's message with an outcome other than passed (why the user did not pass);
        /// nil for a pass, so a passing crowd keeps no text.
        package var message: String? = nil

        /// A visit as a user saw it.
        package init(
            outcome: String, code: Int, waited: Duration, completed: Bool, started: Duration = .zero,
            expectation: ExpectedWait? = nil, answered: Duration? = nil, message: String? = nil
        ) {
            self.outcome = outcome
            self.code = code
            self.waited = waited
            self.completed = completed
            self.started = started
            self.expectation = expectation
            self.answered = answered
            self.message = message
        }

        /// When the user arrived (enqueued), in seconds from the start of the run: inflow.
        package var enqueuedAt: Double { started.seconds }
        /// When the user reached the outcome, in seconds from the start of the run: for a
        /// passed user, the pass time (outflow).
        package var outcomeAt: Double { (started + waited).seconds }
        /// When the vendor first answered the user, in seconds from the start of the run: its
        /// first queue page or progress, else its outcome. Users who start together reach the
        /// vendor in an order of their own (the client's connections and threads decide it), so
        /// this, not ``enqueuedAt``, is the order the vendor saw them in, as closely as the users
        /// can tell.
        package var answeredAt: Double { answered?.seconds ?? outcomeAt }
    }

    /// The provider every user enqueues with (one visitor each: give it a ``CrowdStore``).
    package let provider: any WaitingRoomProvider
    /// The room they wait in.
    package let room: RoomKey
    /// Its control mode.
    package let control: ControlMode
    /// Seconds a passed user holds the pass before giving it back, drawn per user from this range.
    package let hold: ClosedRange<Double>

    /// A crowd of `provider`'s users in `room`, each holding its pass for a time drawn from `hold`.
    package init(provider: any WaitingRoomProvider, room: RoomKey, control: ControlMode = .basic, hold: ClosedRange<Double>) {
        self.provider = provider
        self.room = room
        self.control = control
        self.hold = hold
    }

    /// Starts `count` users, staggered by `stagger`; returns when all are done.
    ///
    /// Memory: a waiting user costs the driver no task. Each user's session reports its outcome
    /// to a callback (``WaitingSession/whenOutcome(_:)``); only a user that passed gets a task,
    /// for the seconds it holds the pass and gives it back. (A task per user suspended in
    /// `outcome()` kept ~3 KB of async frames for as long as the user waited, tens of thousands
    /// at once under `load`.)
    package func run(count: Int, stagger: Duration = .milliseconds(20), prefix: String = "crowd") async -> [Visit] {
        await run(arrivals: (0..<count).map { stagger * $0 }, prefix: prefix)
    }

    /// Starts one user at each of `arrivals` (from the start, in order; `load --arrivals`);
    /// returns when all are done.
    package func run(arrivals: [Duration], prefix: String = "crowd", origin: ContinuousClock.Instant = .now) async -> [Visit] {
        let visits = VisitLog(expected: arrivals.count)
        for (index, offset) in arrivals.enumerated() {
            if offset > .zero { await Self.pause(until: origin + offset) }
            start(index: index, prefix: prefix, origin: origin, into: visits)
        }
        return await visits.all()
    }

    /// One virtual user: enqueues; when the outcome comes, holds the pass and returns it.
    private func start(index: Int, prefix: String, origin: ContinuousClock.Instant, into visits: VisitLog) {
        let started = ContinuousClock.now
        guard let session = enqueue(index: index, prefix: prefix) else {
            visits.add(
                Visit(
                    outcome: "error", code: 0, waited: .zero, completed: false, started: started - origin,
                    message: "the provider refused the entry"))
            return
        }
        // The first answer and the first ETA shown (the order the vendor saw the users in;
        // operators' expected vs actual wait): two atomic words per user.
        let probe = ExpectedWaitProbe()
        session.bind(nil) { event in
            switch event {
            case .progress(let progress, _):
                let now = ContinuousClock.now - origin
                probe.recordAnswer(at: now)
                if let eta = progress.eta { probe.record(eta: eta, shownAt: now) }
            case .queueOpened:
                probe.recordAnswer(at: ContinuousClock.now - origin)
            default:
                break
            }
        }
        // The callback lives as long as the user waits: it keeps the hold range, not the crowd.
        let hold = self.hold
        session.whenOutcome { outcome in
            let waited = ContinuousClock.now - started
            let visit = Visit(
                outcome: outcome.name, code: outcome.status.code, waited: waited, completed: false,
                started: started - origin, expectation: probe.value, answered: probe.firstAnswer,
                message: outcome.pass == nil ? outcome.status.message : nil)
            guard outcome.pass != nil else {
                visits.add(visit)
                return
            }
            let held = Self.holdSeconds(hold)
            Task {
                if held > 0 { await Self.pause(.milliseconds(Int64(held * 1000))) }
                var done = visit
                done.completed = await Self.complete(session)
                visits.add(done)
            }
        }
    }

    @inline(never)
    private func enqueue(index: Int, prefix: String) -> WaitingSession? {
        try? provider.enqueue(Entry(room: room, control: control, userId: "\(prefix)-\(index + 1)"))
    }

    @inline(never)
    private static func holdSeconds(_ hold: ClosedRange<Double>) -> Double { Double.random(in: hold) }

    @inline(never)
    private static func complete(_ session: WaitingSession) async -> Bool {
        (try? await session.complete()) != nil
    }

    @inline(never)
    private static func pause(_ duration: Duration) async {
        try? await Task.sleep(for: duration)
    }

    @inline(never)
    private static func pause(until instant: ContinuousClock.Instant) async {
        try? await Task.sleep(until: instant, clock: .continuous)
    }
}
