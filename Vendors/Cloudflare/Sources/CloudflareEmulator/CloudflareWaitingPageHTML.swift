import Cloudflare
import WaitingRoomEmulatorKit

/// The emulator's pages for requests that are not JSON mode: the waiting page (it refreshes
/// itself after `refreshIntervalSeconds`, as Cloudflare's does with its refresh header), the
/// static page of a rejecting room (no refresh), and the stand-in origin's page. No external assets.
enum CloudflareWaitingPageHTML {
    static let style = EmulatorPageStyle(
        background: "#f4f5f7", text: "#1d2330", muted: "#5b6475", track: "#e4e7ee",
        fill: "#f38020", status: "#404859")

    static func escape(_ s: String) -> String { EmulatorHTTP.escapeHTML(s) }

    /// The waiting page for room `room`.
    static func page(room: String, reply: CloudflareWaitingRoomReply, rejected: Bool) -> String {
        let refresh = reply.refreshIntervalSeconds ?? 20
        let head = rejected ? "" : "<meta http-equiv=\"refresh\" content=\"\(refresh)\">"
        let title = rejected ? "This page is not available" : "You are in line"
        let body =
            rejected
            ? "<p id=\"status\">The waiting room \(escape(room)) is not letting anyone in right now.</p>"
            : """
            <dl class="figures"><div><dt>Estimated wait</dt><dd id="eta">\(escape(reply.waitTimeFormatted ?? "unavailable"))</dd></div></dl>
            <p id="status">This page refreshes by itself every \(refresh) s; keep it open to keep your place.</p>
            """
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">\(head)<title>Waiting Room powered by Cloudflare (emulator)</title>
            <meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
            <style>\(style.css)</style></head>
            <body data-room="\(escape(room))"><main>
            <p class="vendor">Cloudflare Waiting Room · emulator</p>
            <h1>\(title)</h1>
            \(body)
            </main></body></html>
            """
    }

    /// The stand-in origin's page.
    static func origin(path: String, room: String?) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Protected page</title></head>
        <body><h1 id="through">You are through</h1><p>Page \(escape(path))\(room.map { ", room " + escape($0) } ?? "").</p></body></html>
        """
    }
}
