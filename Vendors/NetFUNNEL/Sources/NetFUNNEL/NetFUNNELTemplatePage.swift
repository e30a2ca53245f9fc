import WaitingRoom

/// A waiting-room page a host can render itself, for `useNetfunnelTemplate: true`.
///
/// The agent shows the console's template page (`vwr_html`, the settings document's
/// `vwrPageUrl`, or the SaaS page) in its own view and feeds it the live numbers; how it does is
/// not public (docs/netfunnel-protocol.md §7.4). A headless host gets the page's address in the session's one
/// `queueOpened` event and the numbers in its `progress` events; one that shows a page of its own
/// (a web view, a server answering a browser) renders this one from each `progress` event:
/// self-contained HTML (no script, no external resource), every value escaped.
///
/// The address is not meant to be loaded for a user who is already waiting: the console's page
/// (and the emulator's stand-in for it) takes a ticket of its own, the URL-triggered
/// integration's way, so the user would stand in line twice.
package enum NetFUNNELTemplatePage {
    /// The page for one waiting user.
    ///
    /// - Parameters:
    ///   - progress: the last `progress` event's numbers (`ahead`, `behind`, `etaText`, `percent`).
    ///   - room: the project and segment, shown small.
    ///   - liveMessage: the operator's broadcast text, if any.
    ///   - refreshSeconds: when set, the page reloads itself (`<meta http-equiv="refresh">`)
    ///     for hosts that serve it over HTTP; nil for hosts that re-render it.
    package static func html(progress: QueueProgress, room: RoomKey, liveMessage: String? = nil, refreshSeconds: Int? = nil) -> String {
        let ahead = progress.ahead.map(String.init) ?? "–"
        let behind = progress.behind.map(String.init) ?? "–"
        let wait = progress.etaText ?? "–"
        let percent = min(100, max(0, Int((progress.percent ?? 0).rounded())))
        let refresh = refreshSeconds.map { "<meta http-equiv=\"refresh\" content=\"\(max(1, $0))\">" } ?? ""
        let message = liveMessage.flatMap { $0.isEmpty ? nil : "<p id=\"message\">\(escape($0))</p>" } ?? ""
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">\(refresh)<title>Waiting room</title>
            <style>body{font-family:sans-serif;margin:3em auto;max-width:28em;text-align:center}\
            progress{width:100%}small{color:#666}</style></head>
            <body><main>
            <h1>You are in line</h1>
            <p><strong id="ahead">\(ahead)</strong> ahead of you, <span id="behind">\(behind)</span> behind</p>
            <p>Estimated wait <strong id="wait">\(escape(wait))</strong></p>
            <progress id="progress" max="100" value="\(percent)">\(percent)%</progress>
            \(message)
            <p><small>\(escape(room.scope)) · \(escape(room.room))</small></p>
            </main></body></html>
            """
    }

    static func escape(_ text: String) -> String { HTMLText.escape(text) }
}
