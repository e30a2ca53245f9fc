import Foundation

/// The operators' figures in `waitingroom load`'s text summary (and the report's cards).
extension LoadOperatorFigures {
    /// The summary's lines: inflow and outflow, expected vs actual wait, admission accuracy.
    package var text: [String] {
        var lines = ["operators:"]
        lines.append(
            "  inflow \(inflow.total) users · \(Self.rate(inflow.meanPerSecond)) mean · "
                + "outflow \(outflow.total) passed · \(Self.rate(outflow.meanPerSecond)) mean")
        var expected = "  expected wait: \(wait.usersWithExpectation) users shown one"
        if let error = wait.error, let shown = wait.expected, let had = wait.actual {
            expected +=
                " · \(wait.compared) passed: shown p50 \(LatencyHistogram.format(shown.p50)), had p50 \(LatencyHistogram.format(had.p50))"
                + " · error (actual − expected) p50 \(Self.signed(error.p50)) p90 \(Self.signed(error.p90)) p99 \(Self.signed(error.p99))"
        }
        lines.append(expected)
        lines.append("  admission accuracy: " + accuracyText)
        return lines
    }

    /// `0.97 overall against 120/min (…) · per minute 0.95 0.99`, or `n/a: why`.
    package var accuracyText: String {
        guard let perMinute = admission.configuredPerMinute else { return admission.source }
        guard let overall = admission.overall else { return "n/a: no user was admitted (configured \(Self.number(perMinute))/min)" }
        return "\(Self.ratio(overall)) overall against \(Self.number(perMinute))/min (\(admission.source))"
            + (admission.minutes.count > 1
                ? " · per minute " + admission.minutes.map { Self.ratio($0.accuracy) }.joined(separator: " ") : "")
    }

    /// `12.5/s`.
    package static func rate(_ perSecond: Double) -> String { String(format: "%.1f/s", perSecond) }

    /// `0.97`.
    package static func ratio(_ value: Double) -> String { String(format: "%.2f", value) }

    /// `120`, `0.5`.
    package static func number(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e12 ? String(Int(value)) : String(format: "%.2f", value)
    }

    /// `+1.20 s`, `−350 ms`: a wait's error with its sign.
    package static func signed(_ seconds: Double) -> String {
        (seconds < 0 ? "−" : "+") + LatencyHistogram.format(abs(seconds))
    }
}
