/// The one mapping from a ``GateDecision`` to HTTP, used by every adapter: the Hummingbird and
/// Vapor middlewares and the reverse proxy forward or answer by ``init(_:)``; the
/// auth-subrequest server answers by ``subrequest(_:)``.
package enum GateAnswer: Sendable, Hashable {
    /// Call the protected handler (forward the request), then add these headers to its response
    /// (the session cookie, `x-queueit-failed`).
    case forward(adding: [GateHeader])
    /// Answer with this instead of calling the handler (a redirect to the queue, the AJAX form, a
    /// refusal, the cancel page).
    case respond(GateResponse)

    /// What an adapter in front of the handler does with `decision`.
    package init(_ decision: GateDecision) {
        if let response = decision.response {
            self = .respond(response)
        } else {
            self = .forward(adding: decision.passHeaders)
        }
    }

    /// The header an auth-subrequest answer names the verdict in (`pass`, `queue`, …), for logs
    /// and for proxies that route on it.
    package static let verdictHeader = "X-Waitingroom-Verdict"
    /// The header a 403 subrequest answer carries the status the gate itself would have answered
    /// with (`400`, `413`, `503`, …).
    package static let statusHeader = "X-Waitingroom-Status"

    /// The answer to an auth subrequest (nginx `auth_request`, Caddy `forward_auth`, Traefik
    /// `ForwardAuth`, Envoy `ext_authz`) for `decision`:
    /// - the request reaches the app: **200**, with the headers the proxy must add to the app's
    ///   response (`Set-Cookie`) and the verdict, nothing else;
    /// - the gate refused it (a 4xx or 503 of its own): **403**, with the reason as the body;
    /// - anything else (the queue, the AJAX form, a redirect without the token, the cancel page):
    ///   **401**; the proxy sends the browser to the start route, whose answer is the decision's
    ///   own (``GateAuthEndpoint``).
    package static func subrequest(_ decision: GateDecision) -> GateResponse {
        let verdict = GateHeader(verdictHeader, decision.verdict.rawValue)
        guard let response = decision.response else {
            // No no-cache headers on a pass: no proxy hands a 2xx subrequest answer to the browser
            // (nginx keeps what `auth_request_set` names, Caddy `copy_headers`, Traefik
            // `authResponseHeaders`, Envoy its allowed headers), and each one was a header line
            // for both sides to write and parse per request (issue 49). The 401 and 403 below
            // keep them: Caddy and Traefik return those answers to the browser as they are.
            return GateResponse(status: 200, headers: decision.passHeaders + [verdict])
        }
        if decision.verdict == .refuse {
            return GateResponse(
                status: 403,
                headers: [
                    verdict, GateHeader(statusHeader, String(response.status)),
                    GateHeader("Content-Type", "text/plain; charset=utf-8")
                ] + GateResponse.noCacheHeaders,
                body: decision.reason + "\n")
        }
        return GateResponse(status: 401, headers: [verdict] + GateResponse.noCacheHeaders)
    }
}
