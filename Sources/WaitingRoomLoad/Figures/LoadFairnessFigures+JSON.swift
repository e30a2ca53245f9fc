import WaitingRoom

/// The fairness figures as `--json` prints them (and the report embeds them), under `"fairness"`:
///
/// ```
/// "fairness": {"source": "…", "startAtSeconds": 5 | null,
///   "preStart": {"users": 1000, "admitted": 1000,
///                "rankCorrelation": {"n": 1000, "rho": 0.01 | null, "ci95": [-0.05, 0.07] | null, "note": ""}},
///   "postStart": {"users": 1000, "admitted": 1000, "pairs": 499500, "orderViolations": 0,
///                 "aheadOfPreStart": 0},
///   "admissionAccuracy": {"configuredPerMinute": …, "source": …, "overall": …, "perMinute": [...]}}
/// ```
extension LoadFairnessFigures {
    /// The `"fairness"` member.
    package var json: JSONValue {
        let r = preStartRankCorrelation
        let rounded = LoadOperatorFigures.rounded
        let ci: JSONValue = if let low = r.low, let high = r.high { .array([.number(rounded(low)), .number(rounded(high))]) } else { .null }
        return .object([
            "source": .string(source),
            "startAtSeconds": startAt.map { .number(rounded($0)) } ?? .null,
            "preStart": .object([
                "users": .number(Double(preStart)), "admitted": .number(Double(preStartAdmitted)),
                "rankCorrelation": .object([
                    "n": .number(Double(r.n)), "rho": r.rho.map { .number(rounded($0)) } ?? .null, "ci95": ci, "note": .string(r.note)
                ])
            ]),
            "postStart": .object([
                "users": .number(Double(postStart)), "admitted": .number(Double(postStartAdmitted)),
                "pairs": .number(Double(postStartPairs)), "orderViolations": .number(Double(orderViolations)),
                "aheadOfPreStart": .number(Double(postStartAheadOfPreStart))
            ]),
            "admissionAccuracy": LoadOperatorFigures.json(accuracy)
        ])
    }
}
