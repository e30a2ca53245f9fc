import Foundation

/// A latency histogram with fixed bucket edges, printed as text.
package struct LatencyHistogram: Sendable, Equatable {
    /// The samples, in seconds, in the order added.
    package private(set) var samples: [Double] = []

    /// An empty histogram.
    package init() {}

    /// Adds one sample.
    package mutating func add(_ d: Duration) { samples.append(d.seconds) }

    /// The nearest-rank percentile `p` (0…100) of the samples, in seconds (0 when there are none).
    package func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        let index = min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))
        return sorted[index]
    }

    /// Upper bucket edges in seconds (the last is open).
    package static let edges: [Double] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, .infinity]

    /// Samples per bucket of ``edges``.
    package var counts: [Int] {
        var counts = Array(repeating: 0, count: Self.edges.count)
        for s in samples { counts[Self.edges.firstIndex { s <= $0 } ?? Self.edges.count - 1] += 1 }
        return counts
    }

    /// A bucket's label: `≤ 500 ms`, `> 60.00 s`.
    package static func label(bucket i: Int) -> String {
        edges[i].isInfinite ? "> \(format(edges[i - 1]))" : "≤ \(format(edges[i]))"
    }

    /// Text lines: one bar per bucket, then p50/p90/p99/max.
    package func render(width: Int = 40) -> [String] {
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
        lines.append(
            "p50 \(Self.format(percentile(50)))  p90 \(Self.format(percentile(90)))  p99 \(Self.format(percentile(99)))  max \(Self.format(samples.max() ?? 0))  n=\(samples.count)"
        )
        return lines
    }

    /// `350 ms`, `1.20 s`.
    package static func format(_ seconds: Double) -> String {
        seconds < 1 ? String(format: "%.0f ms", seconds * 1000) : String(format: "%.2f s", seconds)
    }
}
