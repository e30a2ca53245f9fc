import Hummingbird
import WaitingRoom

/// The page `waitingroom gate` answers with when the upstream cannot be reached (refused, timed
/// out, reset before its answer's head): 502 Bad Gateway, never cached, short and plain, every
/// interpolated word escaped with ``HTMLText/escape(_:)``.
enum GateProxyErrorPage {
    /// A 502 naming the upstream and what went wrong, in a few words.
    static func badGateway(upstream: String, problem: String) -> Response {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>502 Bad Gateway</title></head>
            <body><h1>502 Bad Gateway</h1>
            <p>The gate could not get an answer from the site behind it (\(HTMLText.escape(upstream))): \(HTMLText.escape(problem)).</p>
            <p>Please try again in a moment.</p></body></html>

            """
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .badGateway, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// A 503 for a request over the gate's concurrency bound.
    static func busy(limit: Int) -> Response {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>503 Service Unavailable</title></head>
            <body><h1>503 Service Unavailable</h1><p>The gate is forwarding \(limit) requests already. Please try again in a moment.</p></body></html>

            """
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.retryAfter] = "1"
        return Response(status: .serviceUnavailable, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
