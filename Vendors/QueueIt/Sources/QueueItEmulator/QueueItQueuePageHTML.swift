import Foundation
import WaitingRoomEmulatorKit

/// The emulator's queue page. A person sees the position, the visitors ahead and behind, an
/// ETA, a progress bar and the room's message, updated live: the page's script
/// (``QueueItQueuePageScript``) polls the status route `…/queueit/queue/{c}/{e}/status?q=…`
/// with `fetch()` and, on the visitor's turn, goes to the target URL with its `queueittoken`.
///
/// For the SDK's HTTP-follow driver (which runs no script) it also carries machine-readable
/// `<meta>` tags (`queueit-ahead`, `queueit-waiting`, `queueit-eta-seconds`) and, inside
/// `<noscript>`, a `<meta http-equiv="refresh">`: a browser with script never reloads the
/// page, a client without script reloads it and is redirected (302) on its turn.
enum QueueItQueuePageHTML {
    /// What the page shows.
    struct Figures: Sendable, Equatable {
        var customer: String
        var room: String
        var queueId: String
        var ahead: Int
        var waiting: Int
        var behind: Int
        var etaSeconds: Int?
        var progressPercent: Int
        var message: String
        var refreshSeconds: Int
    }

    /// The emulator kit's one HTML escape.
    static func escape(_ s: String) -> String { EmulatorHTTP.escapeHTML(s) }

    /// `about 12 s`, `about 3 min`, or unknown.
    static func etaText(_ seconds: Int?) -> String {
        guard let seconds else { return "unknown (nobody is being admitted right now)" }
        return seconds < 120 ? "about \(seconds) s" : "about \((seconds + 59) / 60) min"
    }

    /// The status route of a queue page URL: the path with `/status` appended, `q` kept.
    static func statusURL(selfURL: String, queueId: String) -> String {
        let path = selfURL.split(separator: "?", maxSplits: 1).first.map(String.init) ?? selfURL
        let q = queueId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? queueId
        return path + "/status?q=" + q
    }

    static func render(_ f: Figures, selfURL: String) -> String {
        let message = f.message.isEmpty ? "" : f.message
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
            <noscript><meta http-equiv="refresh" content="\(f.refreshSeconds);url=\(escape(selfURL))"></noscript>
            <meta name="queueit-ahead" content="\(f.ahead)">
            <meta name="queueit-waiting" content="\(f.waiting)">
            \(f.etaSeconds.map { "<meta name=\"queueit-eta-seconds\" content=\"\($0)\">" } ?? "")
            <title>Waiting room \(escape(f.room)) (emulator)</title>
            <style>\(QueueItQueuePageStyle.css)</style></head>
            <body class="queue">
            <main id="queue" data-status-url="\(escape(statusURL(selfURL: selfURL, queueId: f.queueId)))" data-poll-seconds="\(f.refreshSeconds)">
            <p class="vendor">Queue-it emulator</p>
            <h1>You are in the waiting room \(escape(f.room))</h1>
            <p id="message" class="message"\(message.isEmpty ? " hidden" : "")>\(escape(message))</p>
            <dl class="figures">
            <div><dt id="ahead-label">Visitors ahead of you</dt><dd id="ahead" aria-labelledby="ahead-label">\(f.ahead)</dd></div>
            <div><dt id="behind-label">Behind you</dt><dd id="behind" aria-labelledby="behind-label">\(f.behind)</dd></div>
            <div><dt id="eta-label">Expected wait</dt><dd id="eta" aria-labelledby="eta-label">\(escape(etaText(f.etaSeconds)))</dd></div>
            </dl>
            <p id="position" class="sr-only">Visitors ahead of you: <strong>\(f.ahead)</strong> (\(f.waiting) waiting).</p>
            <div class="bar" id="progress" role="progressbar" aria-label="Your progress through the line"
                 aria-valuemin="0" aria-valuemax="100" aria-valuenow="\(f.progressPercent)"><div class="fill" style="width:\(f.progressPercent)%"></div></div>
            <p id="status" role="status" aria-live="polite">This page updates itself and takes you on when it is your turn.</p>
            <p class="meta">Customer <code>\(escape(f.customer))</code> · queue id <code>\(escape(f.queueId))</code></p>
            <p class="links"><a href="queueit://close">Close</a> · <a href="queueit://restartSession">Start over</a> ·
            <a href="/what-is-this.html">What is this?</a></p>
            </main>
            <script>\(QueueItQueuePageScript.js)</script>
            </body></html>
            """
    }

    static func unknown(queueId: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>Unknown visitor (emulator)</title></head>
        <body class="exit"><h1>Unknown queue id</h1><p>No visitor <code>\(escape(queueId))</code> in this line.
        <a href="queueit://restartSession">Start over</a>.</p></body></html>
        """
    }

    static func target(customer: String, room: String, token: String?) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Target of \(escape(room)) (emulator)</title></head>
        <body><h1 id="welcome">Welcome through the waiting room \(escape(room))</h1>
        <p>Customer <code>\(escape(customer))</code>. queueittoken: <code id="token">\(escape(token ?? "none"))</code></p></body></html>
        """
    }
}
