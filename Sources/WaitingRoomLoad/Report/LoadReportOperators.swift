import Foundation

/// The load report's operators' section (``LoadOperatorFigures``): cards for inflow, outflow,
/// the wait error and admission accuracy; the inflow/outflow chart (drawn by
/// ``LoadReportScript`` into `#chart-flow`); tables of inflow and outflow, of expected against
/// actual wait and of admission accuracy per minute.
package enum LoadReportOperators {
    static func escape(_ s: String) -> String { LoadReportHTML.escape(s) }

    /// A table with a header row; `empty` stands in a single row when `rows` is empty.
    static func grid(_ caption: String, id: String, _ header: [String], _ rows: [[String]], empty: String) -> String {
        let head = header.map { "<th scope=\"col\">\(escape($0))</th>" }.joined()
        let body =
            rows.isEmpty
            ? "<tr><td colspan=\"\(header.count)\">\(escape(empty))</td></tr>"
            : rows.map { row in
                row.enumerated().map { i, cell in
                    i == 0 ? "<th scope=\"row\">\(escape(cell))</th>" : "<td class=\"num\">\(escape(cell))</td>"
                }.joined()
            }.map { "<tr>\($0)</tr>" }.joined()
        return
            "<table id=\"\(escape(id))\"><caption>\(escape(caption))</caption><thead><tr>\(head)</tr></thead><tbody>\(body)</tbody></table>"
    }

    /// The inflow/outflow chart's figure.
    static let chart = """
        <figure><figcaption id="flow-caption">Inflow and outflow (users per second)</figcaption>
        <svg id="chart-flow" viewBox="0 0 640 220" role="img" aria-labelledby="flow-caption"></svg></figure>
        """

    /// The section: cards, then the two tables.
    package static func section(_ figures: LoadOperatorFigures) -> String {
        let f = LatencyHistogram.format
        let wait = figures.wait
        let accuracy = figures.admission
        let card: (String, String, String) -> String = { label, id, value in
            "<div class=\"card\"><span>\(escape(label))</span><b id=\"\(escape(id))\">\(escape(value))</b></div>"
        }
        let cards = [
            card("inflow (mean)", "op-inflow", LoadOperatorFigures.rate(figures.inflow.meanPerSecond)),
            card("outflow (mean)", "op-outflow", LoadOperatorFigures.rate(figures.outflow.meanPerSecond)),
            card("wait error p50 (actual − expected)", "op-wait-error", wait.error.map { LoadOperatorFigures.signed($0.p50) } ?? "n/a"),
            card("admission accuracy", "op-accuracy", accuracy.overall.map(LoadOperatorFigures.ratio) ?? "n/a")
        ].joined()
        let spreadRow: (String, LoadOperatorFigures.Spread?, (Double) -> String) -> [String]? = { name, spread, format in
            spread.map { [name, format($0.p50), format($0.p90), format($0.p99), format($0.mean)] }
        }
        let waitRows = [
            spreadRow("expected (shown)", wait.expected, f), spreadRow("actual (had)", wait.actual, f),
            spreadRow("error (actual − expected)", wait.error, LoadOperatorFigures.signed)
        ].compactMap { $0 }
        let flowRows = [
            [
                "inflow: users arriving", String(figures.inflow.total), LoadOperatorFigures.rate(figures.inflow.meanPerSecond),
                LoadOperatorFigures.rate(Double(figures.inflow.perSecond.max() ?? 0))
            ],
            [
                "outflow: users admitted", String(figures.outflow.total), LoadOperatorFigures.rate(figures.outflow.meanPerSecond),
                LoadOperatorFigures.rate(Double(figures.outflow.perSecond.max() ?? 0))
            ]
        ]
        let minuteRows = accuracy.minutes.map { m in
            [
                String(m.minute), String(format: "%.1f s", m.seconds), String(m.admitted), String(format: "%.1f", m.expected),
                LoadOperatorFigures.ratio(m.accuracy)
            ]
        }
        let caption =
            accuracy.configuredPerMinute.map {
                "Admission accuracy per minute (configured \(LoadOperatorFigures.number($0))/min · \(accuracy.source))"
            } ?? "Admission accuracy per minute"
        return """
            <section class="operators" aria-label="Operators' view">
            <h2>Operators' view</h2>
            <div class="cards">\(cards)</div>
            <div class="charts">\(chart)</div>
            <div class="tables">
            \(grid("Inflow and outflow", id: "op-flow", ["figure", "users", "mean", "peak second"], flowRows, empty: ""))
            \(grid("Expected vs actual wait: \(wait.usersWithExpectation) users shown an expected wait, \(wait.compared) of them passed",
                   id: "op-wait", ["wait", "p50", "p90", "p99", "mean"], waitRows,
                   empty: "n/a: no user who passed had been shown an expected wait"))
            \(grid(caption, id: "op-minutes", ["minute", "length", "admitted", "configured", "accuracy"],
                   minuteRows, empty: accuracy.configuredPerMinute == nil ? accuracy.source : "n/a: no user was admitted"))
            </div>
            <p class="note">Inflow counts users as they arrive (enqueue), outflow as they pass. Expected wait is the first
            estimate a progress event showed each user; actual wait runs from that moment to the pass. Accuracy is users
            admitted in each minute ÷ the room's configured rate over it (a remainder under
            \(Int(LoadOperatorFigures.shortestWindow)) s joins the minute before); it falls below 1 when the line runs empty.</p>
            </section>
            """
    }
}
