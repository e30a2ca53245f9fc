/// The emulator's queue page. Besides the visible text it carries machine-readable `<meta>`
/// tags (`queueit-ahead`, `queueit-waiting`, `queueit-eta-seconds`) that the HTTP-follow driver
/// reads for progress events, and a `<meta http-equiv="refresh">` that reloads the page.
enum QueueItQueuePageHTML {
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.count)
        for ch in s {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(ch)
            }
        }
        return out
    }

    static func render(customer: String, room: String, queueId: String, ahead: Int, waiting: Int,
                       etaSeconds: Int?, refreshSeconds: Int, selfURL: String) -> String {
        let eta = etaSeconds.map { "about \($0) s" } ?? "unknown (nobody is being admitted right now)"
        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta http-equiv="refresh" content="\(refreshSeconds);url=\(escape(selfURL))">
        <meta name="queueit-ahead" content="\(ahead)">
        <meta name="queueit-waiting" content="\(waiting)">
        \(etaSeconds.map { "<meta name=\"queueit-eta-seconds\" content=\"\($0)\">" } ?? "")
        <title>Waiting room \(escape(room)) (emulator)</title></head>
        <body class="queue">
        <h1>You are in the waiting room \(escape(room))</h1>
        <p>Customer <code>\(escape(customer))</code>, queue id <code>\(escape(queueId))</code>.</p>
        <p id="position">Visitors ahead of you: <strong>\(ahead)</strong> (\(waiting) waiting).</p>
        <p id="eta">Expected wait: \(eta).</p>
        <p>This page refreshes itself every \(refreshSeconds) s and takes you on when it is your turn.</p>
        <p><a href="queueit://close">Close</a> · <a href="queueit://restartSession">Start over</a> ·
        <a href="/what-is-this.html">What is this?</a></p>
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
        <html lang="en"><head><meta charset="utf-8"><title>Target of \(escape(room)) (emulator)</title></head>
        <body><h1>Welcome through the waiting room \(escape(room))</h1>
        <p>Customer <code>\(escape(customer))</code>. queueittoken: <code>\(escape(token ?? "none"))</code></p></body></html>
        """
    }
}
