import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit
import WaitingRoomEmulators

/// `waitingroom load --report FILE.html`: one self-contained HTML file (inline style, inline
/// script, inline SVG charts; it loads nothing). Tables are written out; the charts are drawn
/// by ``LoadReportScript`` from the same figures as `--json`, embedded as JSON.
package enum LoadReportHTML {
    /// The emulator kit's one HTML escape.
    static func escape(_ s: String) -> String { EmulatorHTTP.escapeHTML(s) }

    static func table(_ caption: String, _ header: (String, String), _ rows: [(String, String)]) -> String {
        let body =
            rows.isEmpty
            ? "<tr><td colspan=\"2\">(none: no embedded emulator counted them)</td></tr>"
            : rows.map { "<tr><th scope=\"row\">\(escape($0.0))</th><td class=\"num\">\(escape($0.1))</td></tr>" }.joined()
        return "<table><caption>\(escape(caption))</caption><thead><tr><th scope=\"col\">\(escape(header.0))</th>"
            + "<th scope=\"col\">\(escape(header.1))</th></tr></thead><tbody>\(body)</tbody></table>"
    }

    /// The report of `summary`, stamped `generatedAt`: a whole HTML document.
    package static func render(_ summary: LoadSummary, generatedAt: Date) -> String {
        let histogram = summary.histogram
        let f = LatencyHistogram.format
        let outcomes = summary.outcomes.sorted { $0.key < $1.key }.map { ($0.key, String($0.value)) }
        let percentiles: [(String, String)] =
            histogram.samples.isEmpty
            ? []
            : [
                ("p50", f(histogram.percentile(50))), ("p90", f(histogram.percentile(90))), ("p95", f(histogram.percentile(95))),
                ("p99", f(histogram.percentile(99))), ("max", f(histogram.samples.max() ?? 0)),
                ("passed users", String(histogram.samples.count))
            ]
        var keys = summary.keys.map { ($0.0, String($0.1)) }
        keys.insert(("faultsInstalled", String(summary.faultsInstalled)), at: 0)
        let data = JSONValue.object(summary.json.objectValue ?? [:]).jsonText.replacingOccurrences(of: "</", with: "<\\/")
        let stamp = ISO8601DateFormatter().string(from: generatedAt)
        let room = summary.settings.first { $0.0 == "room" }?.1 ?? ""
        let vendor = summary.settings.first { $0.0 == "vendor" }?.1 ?? ""
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
            <title>waitingroom load report: \(escape(vendor)) \(escape(room))</title>
            <style>\(LoadReportStyle.css)</style></head>
            <body>
            <header><h1>waitingroom load report</h1>
            <p>\(escape(vendor)) · \(escape(room)) · \(summary.users) users · wall \(escape(f(summary.wall.seconds))) · generated \(escape(stamp))</p></header>
            <main>
            <section class="cards" aria-label="Outcomes">
            \(outcomes.map { "<div class=\"card\"><span>\(escape($0.0))</span><b data-outcome=\"\(escape($0.0))\">\($0.1)</b></div>" }.joined())
            <div class="card"><span>p50 time to pass</span><b>\(escape(histogram.samples.isEmpty ? "–" : f(histogram.percentile(50))))</b></div>
            <div class="card"><span>p99 time to pass</span><b>\(escape(histogram.samples.isEmpty ? "–" : f(histogram.percentile(99))))</b></div>
            </section>
            <section class="charts">
            <figure><figcaption id="hist-caption">Time to pass (users per bucket)</figcaption>
            <svg id="chart-histogram" viewBox="0 0 640 220" role="img" aria-labelledby="hist-caption"></svg></figure>
            <figure><figcaption id="waiting-caption">Users waiting over time</figcaption>
            <svg id="chart-waiting" viewBox="0 0 640 220" role="img" aria-labelledby="waiting-caption"></svg></figure>
            <figure><figcaption id="admissions-caption">Admissions per second over time</figcaption>
            <svg id="chart-admissions" viewBox="0 0 640 220" role="img" aria-labelledby="admissions-caption"></svg></figure>
            </section>
            \(LoadReportOperators.section(summary.operators))
            \(summary.fairness.map(LoadReportFairness.section) ?? "")
            <section class="tables">
            \(table("Settings", ("setting", "value"), summary.settings))
            \(table("Outcomes", ("outcome", "users"), outcomes))
            \(summary.notPassed.isEmpty ? "" : table("Not passed, by the vendor's code", ("outcome, code: message", "users"),
                                                 summary.notPassed.map { ("\($0.outcome) \($0.code)" + ($0.message.isEmpty ? "" : ": \($0.message)"), String($0.users)) }))
            \(table("Time to pass", ("percentile", "seconds"), percentiles))
            \(table("Requests (emulator)", ("request", "count"), summary.requests.map { ($0.0, String($0.1)) }))
            \(table("Replies (emulator)", ("reply", "count"), summary.replies.map { ($0.0, String($0.1)) }))
            \(table("Faults and keys", ("figure", "count"), keys))
            </section>
            </main>
            <script type="application/json" id="report-data">\(data)</script>
            <script>\(SVGChartScript.js)</script>
            <script>\(LoadReportScript.js)</script>
            </body></html>
            """
    }
}
