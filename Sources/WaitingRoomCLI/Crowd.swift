import Foundation
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
        /// When the user started, from the start of the run.
        var started: Duration = .zero
    }

    let provider: any WaitingRoomProvider
    let room: RoomKey
    let control: ControlMode
    let hold: ClosedRange<Double>

    /// Starts `count` users, staggered by `stagger`; returns when all are done.
    ///
    /// Memory: each user is one child task that lives as long as the user waits (tens of
    /// thousands at once under `load`), so it holds only what it needs (the provider is shared,
    /// the entry is built inside the task) and its sleeps run in a function of their own, whose
    /// frame is not part of the waiting task's.
    func run(count: Int, stagger: Duration = .milliseconds(20), prefix: String = "crowd") async -> [Visit] {
        let origin = ContinuousClock.now
        return await withTaskGroup(of: Visit.self) { group in
            for i in 0..<count {
                let crowd = self
                group.addTask { await crowd.visit(index: i, stagger: stagger, prefix: prefix, origin: origin) }
            }
            var visits: [Visit] = []
            visits.reserveCapacity(count)
            for await visit in group { visits.append(visit) }
            return visits
        }
    }

    /// One virtual user: waits its turn, enqueues, waits for the outcome, holds the pass, returns it.
    /// The synchronous steps are functions of their own, so their temporaries stay on the
    /// thread's stack instead of in this task's frame, which lives as long as the user waits.
    private func visit(index: Int, stagger: Duration, prefix: String, origin: ContinuousClock.Instant) async -> Visit {
        if stagger > .zero { await Self.pause(stagger * index) }
        let started = ContinuousClock.now
        guard let session = enqueue(index: index, prefix: prefix) else {
            return Visit(outcome: "error", code: 0, waited: .zero, completed: false, started: started - origin)
        }
        let outcome = await session.outcome()
        let waited = ContinuousClock.now - started
        var completed = false
        if outcome.pass != nil {
            let held = holdSeconds()
            if held > 0 { await Self.pause(.milliseconds(Int64(held * 1000))) }
            completed = await Self.complete(session)
        }
        return Visit(outcome: outcome.name, code: outcome.status.code, waited: waited, completed: completed,
                     started: started - origin)
    }

    @inline(never)
    private func enqueue(index: Int, prefix: String) -> WaitingSession? {
        try? provider.enqueue(Entry(room: room, control: control, userId: "\(prefix)-\(index + 1)"))
    }

    @inline(never)
    private func holdSeconds() -> Double { Double.random(in: hold) }

    @inline(never)
    private static func complete(_ session: WaitingSession) async -> Bool {
        (try? await session.complete()) != nil
    }

    @inline(never)
    private static func pause(_ duration: Duration) async {
        try? await Task.sleep(for: duration)
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
