/// The style sheet of the emulators' waiting pages (inline: the pages load nothing else): one
/// layout, each vendor's own colours.
package struct EmulatorPageStyle: Sendable {
    /// Page and figure background.
    package var background: String
    /// Body text.
    package var text: String
    /// Small print and labels.
    package var muted: String
    /// The progress bar's track and fill.
    package var track: String
    package var fill: String
    /// The status line.
    package var status: String
    /// Rules of the vendor's own, appended.
    package var extra: String

    package init(background: String, text: String, muted: String, track: String, fill: String, status: String, extra: String = "") {
        self.background = background
        self.text = text
        self.muted = muted
        self.track = track
        self.fill = fill
        self.status = status
        self.extra = extra
    }

    /// The style sheet.
    package var css: String {
        """
        body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:\(background);color:\(text)}
        main{max-width:40rem;margin:3rem auto;background:#fff;border-radius:12px;padding:2rem 2.5rem;box-shadow:0 2px 12px rgba(0,0,0,.08)}
        .vendor{margin:0;color:\(muted);font-size:.85rem}
        h1{font-size:1.5rem;margin:.3rem 0 1rem}
        .message{background:#fff7e0;border-left:4px solid #e0a800;padding:.6rem .9rem;margin:0 0 1rem}
        .figures{display:flex;gap:1rem;margin:0 0 1.2rem;padding:0}
        .figures div{flex:1;background:\(background);border-radius:8px;padding:.7rem .9rem}
        dt{font-size:.8rem;color:\(muted)}
        dd{margin:.2rem 0 0;font-size:1.6rem;font-weight:600}
        #eta{font-size:1.1rem}
        .bar{height:14px;background:\(track);border-radius:7px;overflow:hidden}
        .fill{height:100%;background:\(fill);transition:width .6s ease}
        #status{color:\(status);font-size:.95rem}
        \(extra)
        """
    }
}
