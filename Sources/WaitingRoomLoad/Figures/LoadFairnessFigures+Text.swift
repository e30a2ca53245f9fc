import Foundation

/// The fairness figures in `waitingroom load`'s text summary.
extension LoadFairnessFigures {
    /// The summary's lines.
    package var text: [String] {
        var lines = [
            "fairness (\(source)" + (startAt.map { "; sale start +\(String(format: "%.1f", $0)) s" } ?? "; no scheduled start") + "):"
        ]
        lines.append(
            "  arrivals: \(preStart) before the start (\(preStartAdmitted) admitted) · \(postStart) after it (\(postStartAdmitted) admitted)"
        )
        lines.append(
            "  order violations among post-start arrivals: \(orderViolations) of \(postStartPairs) pairs (goal 0)"
                + " · post-start admitted ahead of a pre-start user: \(postStartAheadOfPreStart) pairs (goal 0)")
        lines.append("  pre-start rank correlation (admission vs arrival order, goal ≈ 0): " + rankText)
        lines.append("  admission accuracy from the start: " + accuracyText)
        return lines
    }

    /// `ρ 0.012 · 95% CI [−0.050, 0.074] · n 1000`, or why it is n/a.
    package var rankText: String {
        let r = preStartRankCorrelation
        guard let rho = r.rho else { return r.note }
        var text = "ρ \(Self.format(rho))"
        if let low = r.low, let high = r.high { text += " · 95% CI [\(Self.format(low)), \(Self.format(high))]" }
        text += " · n \(r.n)"
        return r.note.isEmpty ? text : text + " (\(r.note))"
    }

    /// `1.00 overall against 600/min · per minute 1.00 0.99`, or `n/a: why`.
    package var accuracyText: String {
        guard let perMinute = accuracy.configuredPerMinute else { return accuracy.source }
        guard let overall = accuracy.overall else {
            return "n/a: no user was admitted (configured \(LoadOperatorFigures.number(perMinute))/min)"
        }
        return "\(LoadOperatorFigures.ratio(overall)) overall against \(LoadOperatorFigures.number(perMinute))/min"
            + (accuracy.minutes.isEmpty
                ? "" : " · per minute " + accuracy.minutes.map { LoadOperatorFigures.ratio($0.accuracy) }.joined(separator: " "))
    }

    /// `0.012`, `−0.050`.
    package static func format(_ value: Double) -> String {
        (value < 0 ? "−" : "") + String(format: "%.3f", abs(value))
    }
}
