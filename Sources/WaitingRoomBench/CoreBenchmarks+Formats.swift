import Foundation
import WaitingRoom

/// A figure as `waitingroom bench --markdown` and `--json` print it.
extension CoreBenchmarks.Figure {
    /// One figure as a Markdown table row (`|` in names escaped).
    package func markdownRow(suite: String) -> String {
        let figure = self
        func cell(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }
        func number(_ x: Double) -> String {
            guard x.isFinite else { return "n/a" }
            if x == x.rounded(), abs(x) < 1e12 { return String(Int64(x)) }
            return String(format: abs(x) < 10 ? "%.3f" : "%.1f", x)
        }
        if let skipped = figure.skipped {
            return "| \(suite) | \(cell(figure.name)) | skipped: \(cell(skipped)) | | | \(figure.goal ?? "") | |"
        }
        let met = figure.met.map { $0 ? "yes" : "**no**" } ?? ""
        return "| \(suite) | \(cell(figure.name)) | \(number(figure.value)) \(cell(figure.unit)) | "
            + "\(figure.baseline.map { number($0) } ?? "") | \(figure.ratio.map { number($0) + "×" } ?? "") | "
            + "\(figure.goal ?? "") | \(met) |"
    }

    /// One figure as JSON: `suite`, `name`, `value`, `unit`, and when known `baseline`, `ratio`,
    /// `goal`, `skipped` (numbers that are not finite are `null`).
    package func json(suite: String) -> JSONValue {
        let figure = self
        func number(_ value: Double) -> JSONValue { value.isFinite ? .number(value) : .null }
        var object: [String: JSONValue] = [
            "suite": .string(suite), "name": .string(figure.name), "value": number(figure.value), "unit": .string(figure.unit)
        ]
        if let baseline = figure.baseline { object["baseline"] = number(baseline) }
        if let ratio = figure.ratio { object["ratio"] = number(ratio) }
        if let goal = figure.goal { object["goal"] = .string(goal) }
        if let skipped = figure.skipped { object["skipped"] = .string(skipped) }
        if let met = figure.met { object["met"] = .bool(met) }
        return .object(object)
    }
}
