import Foundation
import WaitingRoom

/// The figures of a load run beyond the text summary, shared by `--json` and `--report`: the
/// time-to-pass histogram, queue length and admissions over time (from the users' own start and
/// pass times, so they hold for an emulator and a real URL alike), and requests and replies per
/// request kind (from the embedded emulator's counters).
extension LoadSummary {
    /// One point of the timeline.
    package struct TimelinePoint: Sendable, Equatable {
        /// Seconds from the start of the run.
        package var t: Double
        /// Users started and not yet at an outcome.
        package var waiting: Int
        /// Users passed in the interval before `t`, per second.
        package var admissionsPerSecond: Double
    }

    /// The interval of the timeline: about 60 points over the run, at least 0.1 s.
    package var timelineInterval: Double {
        let end = visits.map { ($0.started + $0.waited).seconds }.max() ?? 0
        let raw = max(end, wall.seconds) / 60
        return max(0.1, (raw * 10).rounded(.up) / 10)
    }

    /// Queue length and admissions per second over the run.
    package var timeline: [TimelinePoint] {
        let dt = timelineInterval
        let spans = visits.map { (start: $0.started.seconds, end: ($0.started + $0.waited).seconds, passed: $0.outcome == "passed") }
        let end = spans.map(\.end).max() ?? 0
        let steps = Int((max(end, 0) / dt).rounded(.up)) + 1
        var points: [TimelinePoint] = []
        for k in 0...steps {
            let t = Double(k) * dt
            let waiting = spans.filter { $0.start <= t && t < $0.end }.count
            let passed = k == 0 ? 0 : spans.filter { $0.passed && $0.end >= t - dt && $0.end < t }.count
            points.append(TimelinePoint(t: (t * 1000).rounded() / 1000, waiting: waiting, admissionsPerSecond: Double(passed) / dt))
        }
        return points
    }

    /// Requests per kind, as the emulator counted them (empty without an embedded emulator).
    package var requests: [(String, Int)] { emulator?.requests ?? [] }

    /// Replies per result, as the emulator counted them (empty without an embedded emulator).
    package var replies: [(String, Int)] { emulator?.replies ?? [] }

    /// Inflow, outflow, expected vs actual wait and admission accuracy (``LoadOperatorFigures``).
    package var operators: LoadOperatorFigures {
        LoadOperatorFigures(visits: visits, runSeconds: wall.seconds, rate: roomRate)
    }

    /// The figures `--json` adds to the summary and the report draws.
    package var figures: [String: JSONValue] {
        let histogram = self.histogram
        let counts = histogram.counts
        let buckets: [JSONValue] = LatencyHistogram.edges.indices.map { i in
            .object([
                "le": LatencyHistogram.edges[i].isInfinite ? .null : .number(LatencyHistogram.edges[i]),
                "label": .string(LatencyHistogram.label(bucket: i)), "count": .number(Double(counts[i]))
            ])
        }
        return [
            "settings": .object(Dictionary(settings.map { ($0.0, JSONValue.string($0.1)) }, uniquingKeysWith: { a, _ in a })),
            "p95": .number(histogram.percentile(95)),
            "max": .number(histogram.samples.max() ?? 0),
            "mean": .number(histogram.samples.isEmpty ? 0 : histogram.samples.reduce(0, +) / Double(histogram.samples.count)),
            "histogram": .array(buckets),
            "timeline": .object([
                "interval": .number(timelineInterval),
                "points": .array(
                    timeline.map {
                        .object([
                            "t": .number($0.t), "waiting": .number(Double($0.waiting)),
                            "admissionsPerSecond": .number($0.admissionsPerSecond)
                        ])
                    })
            ]),
            "requests": .object(Dictionary(requests.map { ($0.0, JSONValue.number(Double($0.1))) }, uniquingKeysWith: { a, _ in a })),
            "replies": .object(Dictionary(replies.map { ($0.0, JSONValue.number(Double($0.1))) }, uniquingKeysWith: { a, _ in a }))
        ].merging(operators.json) { current, _ in current }
    }
}
