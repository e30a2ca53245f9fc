import WaitingRoom
import WaitingRoomGate

/// The pages `waitingroom gate` answers with itself: 502 when the upstream cannot be reached
/// (refused, timed out, reset before its answer's head) and 503 over the concurrency bound. Never
/// cached, short and plain, every interpolated word escaped with ``HTMLText/escape(_:)``.
enum GateProxyErrorPage {
    /// A 502 naming the upstream and what went wrong, in a few words.
    static func badGateway(upstream: String, problem: String) -> GateResponse {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>502 Bad Gateway</title></head>
            <body><h1>502 Bad Gateway</h1>
            <p>The gate could not get an answer from the site behind it (\(HTMLText.escape(upstream))): \(HTMLText.escape(problem)).</p>
            <p>Please try again in a moment.</p></body></html>

            """
        return GateResponse(
            status: 502, headers: [GateHeader("Content-Type", "text/html; charset=utf-8"), GateHeader("Cache-Control", "no-store")],
            body: html)
    }

    /// A 503 for a request over the gate's concurrency bound.
    static func busy(limit: Int) -> GateResponse {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>503 Service Unavailable</title></head>
            <body><h1>503 Service Unavailable</h1><p>The gate is forwarding \(limit) requests already. Please try again in a moment.</p></body></html>

            """
        return GateResponse(
            status: 503,
            headers: [
                GateHeader("Content-Type", "text/html; charset=utf-8"), GateHeader("Cache-Control", "no-store"),
                GateHeader("Retry-After", "1")
            ],
            body: html)
    }

    /// A 408 for a request whose body did not arrive within the body timeout; the connection ends.
    static func bodyTooSlow() -> GateResponse {
        GateResponse.refusal(408, "the request body did not arrive in time")
    }

    /// A 400 for a request with more than one `Host` (RFC 9112 §3.2: which one the gate checked
    /// and which one the app serves could differ).
    static func twoHosts() -> GateResponse {
        GateResponse.refusal(400, "the request has more than one Host header")
    }

    /// A 400 for a request target that is not a path (`/…`), an `http(s)://` URL, or `*` for
    /// OPTIONS: CONNECT's `host:port`, `x/y`. It would pass the gate's triggers unmatched.
    static func badTarget() -> GateResponse {
        GateResponse.refusal(400, "the request target is not a path")
    }
}
