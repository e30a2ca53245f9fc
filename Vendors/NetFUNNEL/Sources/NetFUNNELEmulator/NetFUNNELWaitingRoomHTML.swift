import Foundation
import WaitingRoomEmulatorKit

/// The emulator's waiting-room page (`/_emulator/netfunnel/waiting-room.html?sid=…&aid=…[&target=…]`),
/// the stand-in for the template page NetFUNNEL names in `vwr_html` (proposal: the real page's
/// internals are not public, docs/netfunnel-protocol.md §7.4). It is a URL-triggered agent in the page:
/// its script (``NetFUNNELWaitingRoomScript``) takes a key with 5101, polls 5002 with `fetch()`
/// every `ttl` seconds of the latest reply, shows the position (`nwait` counts the visitor's own
/// place), the users behind (`nnext`), an ETA from `tps`, a progress bar and the segment's
/// `live_message`; on 200 it returns the key with 5004 (the completion handshake of a
/// URL-triggered integration, whose keys are returned automatically) and goes to the target.
enum NetFUNNELWaitingRoomHTML {
    /// The emulator kit's one HTML escape.
    static func escape(_ s: String) -> String { EmulatorHTTP.escapeHTML(s) }

    /// A target a page may go to: a same-site path or an http(s) URL; anything else is nil.
    static func safeTarget(_ target: String?) -> String? {
        guard let target, !target.isEmpty else { return nil }
        if target.hasPrefix("/") && !target.hasPrefix("//") { return target }
        let lower = target.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://"), URL(string: target)?.host != nil { return target }
        return nil
    }

    static func component(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// The page for segment `aid` of project `sid`; `liveMessage` is the segment's message when the page is served.
    static func render(project: String, segment: String, target: String?, liveMessage: String) -> String {
        let destination =
            safeTarget(target)
            ?? "/_emulator/netfunnel/target.html?sid=\(component(project))&aid=\(component(segment))"
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
            <title>NetFUNNEL emulator waiting room \(escape(segment))</title>
            <style>\(NetFUNNELWaitingRoomStyle.css)</style></head>
            <body>
            <main id="room" data-sid="\(escape(project))" data-aid="\(escape(segment))" data-target="\(escape(destination))">
            <p class="vendor">NetFUNNEL emulator · project <code>\(escape(project))</code> · segment <code>\(escape(segment))</code></p>
            <h1 id="title">Please wait: you are in line</h1>
            <p id="message" class="message"\(liveMessage.isEmpty ? " hidden" : "")>\(escape(liveMessage))</p>
            <dl class="figures">
            <div><dt id="ahead-label">Users ahead of you</dt><dd id="ahead" aria-labelledby="ahead-label">…</dd></div>
            <div><dt id="behind-label">Behind you</dt><dd id="behind" aria-labelledby="behind-label">…</dd></div>
            <div><dt id="eta-label">Expected wait</dt><dd id="eta" aria-labelledby="eta-label">…</dd></div>
            </dl>
            <div class="bar" id="progress" role="progressbar" aria-label="Your progress through the line"
                 aria-valuemin="0" aria-valuemax="100" aria-valuenow="0"><div class="fill" style="width:0%"></div></div>
            <p id="status" role="status" aria-live="polite">Taking a place in line…</p>
            <p class="meta">Result code <code id="code">–</code> · polls <span id="polls">0</span></p>
            <noscript><p>This waiting room needs JavaScript: it asks the NetFUNNEL server for your place every few seconds.</p></noscript>
            </main>
            <script>\(NetFUNNELWaitingRoomScript.js)</script>
            </body></html>
            """
    }

    /// The default target: where the page sends a user after the key was returned.
    static func target(project: String, segment: String, result: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Target of \(escape(segment)) (NetFUNNEL emulator)</title>
        <style>\(NetFUNNELWaitingRoomStyle.css)</style></head>
        <body><main><p class="vendor">NetFUNNEL emulator</p>
        <h1 id="welcome">Welcome through segment \(escape(segment))</h1>
        <p>Project <code>\(escape(project))</code>. Entry result: <code id="result">\(escape(result))</code>.</p></main></body></html>
        """
    }

    /// The error page the settings document names (`errorUrl`): what an app shows after
    /// `nfError` / `nfNetworkError` (proposal: the real page is the console's).
    static let errorPage = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Service unavailable (NetFUNNEL emulator)</title>
        <style>\(NetFUNNELWaitingRoomStyle.css)</style></head>
        <body><main><p class="vendor">NetFUNNEL emulator</p>
        <h1 id="error">The waiting room could not be reached</h1>
        <p>Please try again in a moment.</p></main></body></html>
        """
}
