/// An answer the gate gives in place of the protected handler.
public struct GateResponse: Sendable, Hashable {
    /// The HTTP status (302 for a redirect, 200 for Queue-it's AJAX form, 4xx for a refusal).
    public var status: Int
    /// The header fields, in order (`Location`, `Set-Cookie`, no-cache, …).
    public var headers: [GateHeader]
    /// The body (a short text for people; empty for redirects).
    public var body: String

    package init(status: Int, headers: [GateHeader] = [], body: String = "") {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The no-cache headers KnownUser's samples put on every redirect (KU-JS README: `Cache-Control:
    /// no-cache, no-store, must-revalidate`, `Pragma: no-cache`, `Expires` in the past).
    package static let noCacheHeaders: [GateHeader] = [
        GateHeader("Cache-Control", "no-cache, no-store, must-revalidate"),
        GateHeader("Pragma", "no-cache"),
        GateHeader("Expires", "Fri, 01 Jan 1990 00:00:00 GMT")
    ]

    /// A 302 to `location` that no cache keeps, with `extra` headers (e.g. `Set-Cookie`) first.
    package static func redirect(to location: String, extra: [GateHeader] = []) -> GateResponse {
        GateResponse(status: 302, headers: extra + [GateHeader("Location", location)] + noCacheHeaders)
    }

    /// A 308 to `target`, the canonical form of the request's target (``GateTarget``): a
    /// middleware's answer to a path the framework would serve under a form the gate did not
    /// decide on. 308 keeps the method and body (RFC 9110 §15.4.9).
    package static func canonicalRedirect(to target: String) -> GateResponse {
        GateResponse(status: 308, headers: [GateHeader("Location", target)] + noCacheHeaders)
    }

    /// A refusal: `status` (4xx) with a plain-text reason that says what was wrong.
    package static func refusal(_ status: Int, _ reason: String, extra: [GateHeader] = []) -> GateResponse {
        GateResponse(
            status: status, headers: extra + [GateHeader("Content-Type", "text/plain; charset=utf-8")] + noCacheHeaders,
            body: reason + "\n")
    }

    /// The first value of header `name` (case-insensitive).
    package func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}
