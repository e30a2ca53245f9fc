import Foundation
import NIOConcurrencyHelpers
import WaitingRoom

/// Virtual users that wait in a room, hold their pass for a while and give it back: the crowd in
/// `demo` and the load in `load`.
struct Crowd: Sendable {
    /// What one virtual user experienced.
    struct Visit: Sendable {
        var outcome: String
        var code: Int
        var waited: Duration
        var completed: Bool
        /// When the user started (enqueued), from the start of the run.
        var started: Duration = .zero
        /// The first expected wait the vendor showed the user, and when (nil: no progress event
        /// carried an ETA).
        var expectation: ExpectedWait? = nil
        /// When the vendor first answered the user with a queue page or progress, from the start
        /// of the run (nil: its outcome was the first answer, or none came).
        var answered: Duration? = nil
        /// The vendor's message with an outcome other than passed (why the user did not pass);
        /// nil for a pass, so a passing crowd keeps no text.
        var message: String? = nil

        /// When the user arrived (enqueued), in seconds from the start of the run: inflow.
        var enqueuedAt: Double { started.seconds }
        /// When the user reached the outcome, in seconds from the start of the run: for a
        /// passed user, the pass time (outflow).
        var outcomeAt: Double { (started + waited).seconds }
        /// When the vendor first answered the user, in seconds from the start of the run: its
        /// first queue page or progress, else its outcome. Users who start together reach the
        /// vendor in an order of their own (the client's connections and threads decide it), so
        /// this, not ``enqueuedAt``, is the order the vendor saw them in, as closely as the users
        /// can tell.
        var answeredAt: Double { answered?.seconds ?? outcomeAt }
    }

    let provider: any WaitingRoomProvider
    let room: RoomKey
    let control: ControlMode
    let hold: ClosedRange<Double>

    /// Starts `count` users, staggered by `stagger`; returns when all are done.
    ///
    /// Memory: a waiting user costs the driver no task. Each user's session reports its outcome
    /// to a callback (``WaitingSession/whenOutcome(_:)``); only a user that passed gets a task,
    /// for the seconds it holds the pass and gives it back. (A task per user suspended in
    /// `outcome()` kept ~3 KB of async frames for as long as the user waited, tens of thousands
    /// at once under `load`.)
    func run(count: Int, stagger: Duration = .milliseconds(20), prefix: String = "crowd") async -> [Visit] {
        await run(arrivals: (0..<count).map { stagger * $0 }, prefix: prefix)
    }

    /// Starts one user at each of `arrivals` (from the start, in order; `load --arrivals`);
    /// returns when all are done.
    func run(arrivals: [Duration], prefix: String = "crowd", origin: ContinuousClock.Instant = .now) async -> [Visit] {
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
            visits.add(Visit(outcome: "error", code: 0, waited: .zero, completed: false, started: started - origin,
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
            let visit = Visit(outcome: outcome.name, code: outcome.status.code, waited: waited, completed: false,
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

/// The visits of one crowd, as they end; ``all()`` returns once every user has one.
final class VisitLog: Sendable {
    /// Behind NIO's lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    private let state: NIOLockedValueBox<(visits: [Crowd.Visit], waiter: CheckedContinuation<[Crowd.Visit], Never>?)>
    private let expected: Int

    init(expected: Int) {
        self.expected = expected
        var visits: [Crowd.Visit] = []
        visits.reserveCapacity(expected)
        state = NIOLockedValueBox((visits, nil))
    }

    func add(_ visit: Crowd.Visit) {
        let finished = state.withLockedValue { state -> (CheckedContinuation<[Crowd.Visit], Never>, [Crowd.Visit])? in
            state.visits.append(visit)
            guard state.visits.count == expected, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.visits)
        }
        if let (waiter, visits) = finished { waiter.resume(returning: visits) }
    }

    func all() async -> [Crowd.Visit] {
        await withCheckedContinuation { (continuation: CheckedContinuation<[Crowd.Visit], Never>) in
            let ready = state.withLockedValue { state -> [Crowd.Visit]? in
                if state.visits.count >= expected { return state.visits }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// A latency histogram with fixed bucket edges, printed as text.
struct LatencyHistogram {
    private(set) var samples: [Double] = []   // seconds

    mutating func add(_ d: Duration) { samples.append(d.seconds) }

    func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        let index = min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))
        return sorted[index]
    }

    /// Text lines: one bar per bucket, then p50/p90/p99/max.
    /// Upper bucket edges in seconds (the last is open).
    static let edges: [Double] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, .infinity]

    /// Samples per bucket of ``edges``.
    var counts: [Int] {
        var counts = Array(repeating: 0, count: Self.edges.count)
        for s in samples { counts[Self.edges.firstIndex { s <= $0 } ?? Self.edges.count - 1] += 1 }
        return counts
    }

    /// A bucket's label: `≤ 500 ms`, `> 60.00 s`.
    static func label(bucket i: Int) -> String {
        edges[i].isInfinite ? "> \(format(edges[i - 1]))" : "≤ \(format(edges[i]))"
    }

    func render(width: Int = 40) -> [String] {
        guard !samples.isEmpty else { return ["(no samples)"] }
        let edges = Self.edges
        let counts = self.counts
        let most = max(1, counts.max() ?? 1)
        var lines: [String] = []
        var lower = 0.0
        for (i, edge) in edges.enumerated() where counts[i] > 0 {
            let label = edge.isInfinite ? "> \(Self.format(lower))" : "≤ \(Self.format(edge))"
            let bar = String(repeating: "█", count: max(1, counts[i] * width / most))
            lines.append(label.padding(toLength: 10, withPad: " ", startingAt: 0) + " \(bar) \(counts[i])")
            lower = edge
        }
        lines.append("p50 \(Self.format(percentile(50)))  p90 \(Self.format(percentile(90)))  p99 \(Self.format(percentile(99)))  max \(Self.format(samples.max() ?? 0))  n=\(samples.count)")
        return lines
    }

    static func format(_ seconds: Double) -> String {
        seconds < 1 ? String(format: "%.0f ms", seconds * 1000) : String(format: "%.2f s", seconds)
    }
}
