import Foundation

/// `waitingroom load`'s text summary.
extension LoadSummary {
    /// The summary as `waitingroom load` prints it, one line each.
    public var text: [String] {
        var lines = [
            "users \(users) · wall \(LatencyHistogram.format(wall.seconds)) · "
                + outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " · ")
        ]
        for group in notPassed {
            let message = group.message.count > 200 ? String(group.message.prefix(200)) + "…" : group.message
            lines.append("  \(group.outcome) \(group.code) ×\(group.users)" + (message.isEmpty ? "" : ": \(message)"))
        }
        lines.append(
            "keys: " + keys.map { "\($0.0) \($0.1)" }.joined(separator: " · ")
                + (faultsInstalled > 0 ? " · faultsInstalled \(faultsInstalled)" : ""))
        lines.append("time to pass:")
        lines += histogram.render().map { "  " + $0 }
        lines += operators.text
        lines += fairness?.text ?? []
        return lines
    }
}
