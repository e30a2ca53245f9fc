import WaitingRoom

/// The operators' figures as `--json` prints them (and the report embeds them):
///
/// ```
/// "inflow":  {"total": 50, "meanPerSecond": 12.5, "perSecond": [50, 0, 0, 0]},
/// "outflow": {"total": 48, "meanPerSecond": 12.0, "perSecond": [10, 12, 14, 12]},
/// "expectedWait": {"usersWithExpectation": 40, "compared": 40,
///                  "expected": {"p50": …, "p90": …, "p99": …, "mean": …} | null,
///                  "actual": {…} | null, "error": {…} | null},
/// "admissionAccuracy": {"configuredPerMinute": 120 | null, "source": "…", "overall": 0.97 | null,
///                       "perMinute": [{"minute": 1, "seconds": 60, "admitted": 116, "expected": 120, "accuracy": 0.97}]}
/// ```
///
/// Seconds throughout; `null` where there is nothing to measure, and then `source` says why
/// admission accuracy is n/a.
extension LoadOperatorFigures {
    /// The top-level members `--json` adds.
    package var json: [String: JSONValue] {
        [
            "inflow": Self.json(inflow),
            "outflow": Self.json(outflow),
            "expectedWait": .object([
                "usersWithExpectation": .number(Double(wait.usersWithExpectation)),
                "compared": .number(Double(wait.compared)),
                "expected": Self.json(wait.expected), "actual": Self.json(wait.actual), "error": Self.json(wait.error)
            ]),
            "admissionAccuracy": Self.json(admission)
        ]
    }

    /// Admission accuracy (also the fairness figures' accuracy from the start).
    package static func json(_ admission: AdmissionAccuracy) -> JSONValue {
        .object([
            "configuredPerMinute": admission.configuredPerMinute.map { .number($0) } ?? .null,
            "source": .string(admission.source),
            "overall": admission.overall.map { .number(Self.rounded($0)) } ?? .null,
            "perMinute": .array(
                admission.minutes.map { m in
                    .object([
                        "minute": .number(Double(m.minute)), "seconds": .number(Self.rounded(m.seconds)),
                        "admitted": .number(Double(m.admitted)), "expected": .number(Self.rounded(m.expected)),
                        "accuracy": .number(Self.rounded(m.accuracy))
                    ])
                })
        ])
    }

    package static func json(_ flow: Flow) -> JSONValue {
        .object([
            "total": .number(Double(flow.total)),
            "meanPerSecond": .number(rounded(flow.meanPerSecond)),
            "perSecond": .array(flow.perSecond.map { .number(Double($0)) })
        ])
    }

    package static func json(_ spread: Spread?) -> JSONValue {
        guard let spread else { return .null }
        return .object([
            "p50": .number(rounded(spread.p50)), "p90": .number(rounded(spread.p90)),
            "p99": .number(rounded(spread.p99)), "mean": .number(rounded(spread.mean))
        ])
    }

    /// To the millisecond (or thousandth), so the JSON stays short.
    package static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}
