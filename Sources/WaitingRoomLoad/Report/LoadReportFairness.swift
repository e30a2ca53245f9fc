import Foundation

/// The load report's fairness section (``LoadFairnessFigures``), laid out as the operators'
/// section (``LoadReportOperators``): cards for order violations, the pre-start rank correlation
/// and admission accuracy from the start; tables of the figures and of accuracy per minute.
enum LoadReportFairness {
    static func escape(_ s: String) -> String { LoadReportHTML.escape(s) }

    static func section(_ figures: LoadFairnessFigures) -> String {
        let card: (String, String, String) -> String = { label, id, value in
            "<div class=\"card\"><span>\(escape(label))</span><b id=\"\(escape(id))\">\(escape(value))</b></div>"
        }
        let r = figures.preStartRankCorrelation
        let rho = r.rho.map(LoadFairnessFigures.format) ?? "n/a"
        let ci = r.low.flatMap { low in r.high.map { "[\(LoadFairnessFigures.format(low)), \(LoadFairnessFigures.format($0))]" } } ?? "n/a"
        let cards = [
            card("order violations (post-start)", "fair-violations", String(figures.orderViolations)),
            card("post-start ahead of pre-start", "fair-ahead", String(figures.postStartAheadOfPreStart)),
            card("pre-start rank correlation ρ", "fair-rho", rho),
            card("ρ 95% CI", "fair-ci", ci),
            card("admission accuracy from the start", "fair-accuracy", figures.accuracy.overall.map(LoadOperatorFigures.ratio) ?? "n/a")
        ].joined()
        let rows: [[String]] = [
            ["sale start", figures.startAt.map { "+\(String(format: "%.1f", $0)) s" } ?? "none"],
            ["pre-start arrivals (admitted)", "\(figures.preStart) (\(figures.preStartAdmitted))"],
            ["post-start arrivals (admitted)", "\(figures.postStart) (\(figures.postStartAdmitted))"],
            ["order violations among post-start arrivals (goal 0)", "\(figures.orderViolations) of \(figures.postStartPairs) pairs"],
            ["post-start admitted ahead of a pre-start user (goal 0)", "\(figures.postStartAheadOfPreStart) pairs"],
            ["pre-start rank correlation (goal ≈ 0)", figures.rankText],
            ["admission accuracy from the start", figures.accuracyText]
        ]
        let minuteRows = figures.accuracy.minutes.map { m in
            [
                String(m.minute), String(format: "%.1f s", m.seconds), String(m.admitted), String(format: "%.1f", m.expected),
                LoadOperatorFigures.ratio(m.accuracy)
            ]
        }
        return """
            <section class="operators fairness" aria-label="Fairness">
            <h2>Fairness</h2>
            <div class="cards">\(cards)</div>
            <div class="tables">
            \(LoadReportOperators.grid("Fairness (\(figures.source))", id: "fair-figures", ["figure", "value"], rows, empty: ""))
            \(LoadReportOperators.grid("Admission accuracy per minute from the start", id: "fair-minutes",
                                      ["minute", "length", "admitted", "configured", "accuracy"], minuteRows,
                                      empty: figures.accuracy.configuredPerMinute == nil ? figures.accuracy.source : "n/a: no user was admitted"))
            </div>
            <p class="note">An order violation is a pair of users who both arrived after the start, where the one that arrived
            first was admitted after the other (ties do not count). The rank correlation is Spearman's ρ of the pre-start users'
            admission order against their arrival order, with a 95% confidence interval from Fisher's z (atanh ρ ± 1.96/√(n − 3),
            n ≥ \(LoadFairnessFigures.smallestSample)): a shuffled pre-queue gives ρ near 0, an interval containing 0.</p>
            </section>
            """
    }
}
