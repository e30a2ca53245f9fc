import Foundation
import Hummingbird
import QueueIt
import WaitingRoomEmulatorKit

/// The queue landing page: the address a KnownUser connector sends a browser to
/// (docs/queueit-protocol.md §7.2; KU-JS `UserInQueueService.getQueueResult`, `getErrorResult`,
/// `validateCancelRequest`), served by the emulator so that a browser can wait in front of a
/// protected server (`waitingroom gate`, `GateMiddleware`).
///
/// - `GET /?c={customer}&e={event}[&t={target}][&enqueuetoken=…][&l=…][&cid=…][&ver=…]…`: the
///   visitor arrives in the event, exactly like an enqueue call (admission rate, capacity, a room
///   held shut, enqueue-token rooms), and is sent (302) to the emulator's queue page, which shows
///   the position, updates itself and, on the visitor's turn, goes to `t` with a `queueittoken`
///   signed with the customer's secret key. An event that does not queue (safety net, disabled,
///   idle, after the event) sends the visitor to `t` with its token at once.
/// - `GET /error/{code}/?c=…&e=…[&t=…]…`: a refused token or cookie: queued again the same way.
/// - `GET /cancel/{c}/{e}[/{queueId}]?…[&r={target}]`: the session was cancelled; back to `r`.
///
/// Which parts are Queue-it's and which are the emulator's (proposals) is in `Vendors/QueueIt/README.md`.
extension QueueItEmulator {
    /// Adds the landing, error and cancel routes to `router` (called by ``addRoutes(to:)``).
    func addLandingRoutes(to router: Router<BasicRequestContext>) {
        let landing: @Sendable (Request, BasicRequestContext) async throws -> Response = { [self] req, _ in
            await self.handleLanding(req)
        }
        router.get("/", use: landing)
        // A refused token or cookie (`/error/{code}/`, the code may hold a slash): queued again.
        router.get("/error/**", use: landing)
        router.get("/cancel/**") { req, _ in
            Self.handleCancel(req)
        }
    }

    /// A visitor arriving from a connector's redirect (the landing or the error address).
    func handleLanding(_ req: Request) async -> Response {
        if let fault = model.takeFault(for: .queue), let answer = await Self.apply(fault, on: .queue) {
            return answer
        }
        let query = req.uri.queryParameters
        func parameter(_ name: String) -> String? {
            query[Substring(name)].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let c = parameter("c"), let e = parameter("e") else {
            return Self.landingPage(.missingEvent)
        }
        guard model.secretKey(customer: c) != nil, model.room(customer: c, room: e) != nil else {
            return Self.landingPage(.unknownEvent(customer: c, event: e))
        }
        var target: String?
        if let t = parameter("t") {
            guard Self.isAbsoluteHTTPURL(t) else { return Self.landingPage(.badTarget(t)) }
            target = t
        }
        let userAgent = req.headers[.userAgent].flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"
        let body = QueueItEnqueueBody(
            userId: "landing-" + UUID().uuidString.lowercased(), userAgent: userAgent,
            sdkVersion: parameter("ver") ?? "KnownUser", layoutName: parameter("l"),
            language: parameter("cid"), enqueueToken: parameter("enqueuetoken"))
        let answer = model.enqueue(
            customer: c, room: e, body: body.encoded(), base: Self.base(req), prefix: nil,
            clientIP: Self.clientIP(req), target: target)
        guard answer.status == 200, let reply = QueueItEnqueueResponse.parse(answer.body) else {
            let message = (try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])?["error"] as? String
            return Self.landingPage(.refused(status: answer.status, message: message ?? "the event refused the visitor"))
        }
        if let token = reply.token, let destination = reply.eventTargetUrl {
            return Self.landingRedirect(Self.adding(token: token, to: destination))
        }
        guard let queueURL = reply.queueUrl else {
            return Self.landingPage(.refused(status: 500, message: "the event gave neither a queue page nor a token"))
        }
        return Self.landingRedirect(queueURL)
    }

    /// The cancel page: back to `r` (an absolute http(s) URL), else a page saying the visitor left.
    static func handleCancel(_ req: Request) -> Response {
        if let r = req.uri.queryParameters["r"].map(String.init), isAbsoluteHTTPURL(r) {
            return landingRedirect(r)
        }
        return landingPage(.cancelled)
    }

    /// A 302 to `location`, never cached.
    static func landingRedirect(_ location: String) -> Response {
        response(302, [], type: "text/html; charset=utf-8", headers: [("Location", location), ("Cache-Control", "no-store")])
    }

    /// One of the landing's own pages.
    static func landingPage(_ page: QueueItLandingPageHTML.Page) -> Response {
        response(
            page.status, Array(QueueItLandingPageHTML.render(page).utf8), type: "text/html; charset=utf-8",
            headers: [("Cache-Control", "no-store")])
    }

    /// `url` with `queueittoken={token}` added to its query (before any fragment). A token's
    /// characters (`[A-Za-z0-9_~.-]`) need no encoding.
    static func adding(token: String, to url: String) -> String {
        var base = Substring(url)
        var fragment: Substring = ""
        if let hash = url.firstIndex(of: "#") {
            base = url[..<hash]
            fragment = url[hash...]
        }
        let separator = base.contains("?") ? "&" : "?"
        return "\(base)\(separator)queueittoken=\(QueueItPercent.encodeComponent(token))\(fragment)"
    }

    static func isAbsoluteHTTPURL(_ text: String) -> Bool {
        guard let u = URLComponents(string: text), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = u.host, !host.isEmpty
        else { return false }
        return true
    }
}
