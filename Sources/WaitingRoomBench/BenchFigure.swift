import Foundation
import WaitingRoom

/// One row of `waitingroom bench`: a figure, the baseline it is compared with in the same run,
/// the ratio of the two, and the goal the figure (or the ratio) is held to.
///
/// Machines here are shared and noisy, so a figure that matters is a ratio to a baseline measured
/// in the same run; two runs' JSON rows are compared by `suite` and `name` (names are stable).
struct BenchFigure: Sendable, CustomStringConvertible {
    /// What the figure is compared with, measured in the same run.
    struct Baseline: Sendable {
        var name: String
        var value: Double
        var unit: String
    }

    /// The bound a figure is held to.
    struct Goal: Sendable {
        /// Which number the bound is on.
        enum Measure: String, Sendable {
            case value, ratio
        }

        var measure: Measure
        /// The largest acceptable number (nil: no upper bound).
        var atMost: Double?
        /// The smallest acceptable number (nil: no lower bound).
        var atLeast: Double?

        /// `value ≤ bound` or `ratio ≤ bound`.
        static func value(atMost bound: Double) -> Goal { Goal(measure: .value, atMost: bound) }
        /// `ratio ≤ bound`.
        static func ratio(atMost bound: Double) -> Goal { Goal(measure: .ratio, atMost: bound) }
        /// `ratio ≥ bound`.
        static func ratio(atLeast bound: Double) -> Goal { Goal(measure: .ratio, atLeast: bound) }

        var text: String {
            var parts: [String] = []
            if let atLeast { parts.append("\(measure.rawValue) >= \(BenchFigure.format(atLeast))") }
            if let atMost { parts.append("\(measure.rawValue) <= \(BenchFigure.format(atMost))") }
            return parts.joined(separator: ", ")
        }

        func isMet(value: Double, ratio: Double?) -> Bool? {
            let number: Double
            switch measure {
            case .value: number = value
            case .ratio:
                guard let ratio else { return nil }
                number = ratio
            }
            guard number.isFinite else { return false }
            if let atMost, number > atMost { return false }
            if let atLeast, number < atLeast { return false }
            return true
        }
    }

    var name: String
    var value: Double
    var unit: String
    var baseline: Baseline?
    var goal: Goal?
    /// What the reader should know about how it was measured.
    var note: String?

    init(name: String, value: Double, unit: String, baseline: Baseline? = nil, goal: Goal? = nil, note: String? = nil) {
        self.name = name
        self.value = value
        self.unit = unit
        self.baseline = baseline
        self.goal = goal
        self.note = note
    }

    /// value / baseline, when there is a usable baseline.
    var ratio: Double? {
        guard let baseline, baseline.value != 0, baseline.value.isFinite, value.isFinite else { return nil }
        return value / baseline.value
    }

    /// Whether the goal is met (nil without a goal, or when the ratio it needs is missing).
    var goalMet: Bool? { goal?.isMet(value: value, ratio: ratio) }

    var description: String {
        var text = "\(name): \(Self.format(value)) \(unit)"
        if let baseline {
            text += " · baseline \(baseline.name) \(Self.format(baseline.value)) \(baseline.unit)"
            if let ratio { text += " · ratio \(Self.format(ratio))×" }
        }
        if let goal {
            text += " · goal \(goal.text)"
            if let met = goalMet { text += met ? " (met)" : " (NOT met)" }
        }
        if let note { text += " · \(note)" }
        return text
    }

    /// The row as the table's figure (``BenchSuites/Figure``): the baseline's name and any note
    /// join the figure's name, its value the `baseline`, the goal its text.
    var figure: BenchSuites.Figure {
        var label = name
        if let baseline { label += " [baseline: \(baseline.name)]" }
        if let note { label += " (\(note))" }
        return BenchSuites.Figure(name: label, value: value, unit: unit, baseline: baseline?.value, goal: goal?.text)
    }

    static func format(_ x: Double) -> String {
        guard x.isFinite else { return "n/a" }
        if x == x.rounded(), abs(x) < 1e12 { return String(Int64(x)) }
        return String(format: abs(x) < 10 ? "%.3f" : "%.1f", x)
    }
}
