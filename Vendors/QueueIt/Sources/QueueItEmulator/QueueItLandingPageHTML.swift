import Foundation
import WaitingRoomEmulatorKit

/// The queue landing's own pages (``QueueItEmulator/handleLanding(_:)``): what a browser sees
/// when a connector's redirect cannot put it in a line. A visitor who can queue never sees these:
/// it is sent on to the queue page.
enum QueueItLandingPageHTML {
    /// Why the landing answers with a page of its own.
    enum Page: Sendable, Equatable {
        /// No `c` or `e` in the query (400).
        case missingEvent
        /// No such customer or event (404).
        case unknownEvent(customer: String, event: String)
        /// `t` is not an absolute http(s) URL (400).
        case badTarget(String)
        /// The event refused the arrival, with the enqueue call's status and reason (403 without a
        /// valid enqueue token, 503 when full, …).
        case refused(status: Int, message: String)
        /// The cancel address without a usable `r` (200).
        case cancelled

        /// The HTTP status of the page.
        var status: Int {
            switch self {
            case .missingEvent, .badTarget: 400
            case .unknownEvent: 404
            case .refused(let status, _): status
            case .cancelled: 200
            }
        }

        var title: String {
            switch self {
            case .missingEvent: "No waiting room named"
            case .unknownEvent: "Unknown waiting room"
            case .badTarget: "Unusable target address"
            case .refused: "You cannot enter this waiting room"
            case .cancelled: "You have left the waiting room"
            }
        }

        var text: String {
            switch self {
            case .missingEvent:
                "This address needs the customer (c) and the waiting room (e) in its query, as a KnownUser connector sends them."
            case .unknownEvent(let c, let e): "Customer \(c) has no waiting room \(e) in this emulator."
            case .badTarget(let t): "The target (t) must be an absolute http or https address, not \(t)."
            case .refused(_, let message): message
            case .cancelled: "Your place in the line was given up."
            }
        }
    }

    static func render(_ page: Page) -> String {
        let escape = EmulatorHTTP.escapeHTML
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
            <title>\(escape(page.title)) (emulator)</title><style>\(QueueItQueuePageStyle.css)</style></head>
            <body><main>
            <p class="vendor">Queue-it emulator</p>
            <h1>\(escape(page.title))</h1>
            <p id="reason" role="status">\(escape(page.text))</p>
            </main></body></html>
            """
    }
}
