import Foundation

/// One request to the emulator's protected site, as the room model sees it: what routes it to a
/// room (host and path), what bypass rules read (method, query, headers, the client's address)
/// and what JSON mode and the cookie need.
struct CloudflareEmulatorRequest: Sendable {
    /// The path under the site prefix (`/shop/cart`).
    var path: String
    /// The query parameters (the stand-in origin reads `revoke`).
    var query: [String: String] = [:]
    /// The raw query string (`http.request.uri.query`), without `?`.
    var rawQuery: String = ""
    /// `GET`, `POST`, …
    var method: String = "GET"
    /// The `Host` the request named, lowercased, without its port; nil when it named none.
    var host: String?
    /// The request's headers, names lowercased, in order.
    var headers: [(name: String, value: String)] = []
    /// The client's address (`ip.src`), when known: the `CF-Connecting-IP` request header
    /// (proposal; the emulator's routes do not see the peer's socket address).
    var clientIP: String?

    /// The first value of header `name` (any case).
    func header(_ name: String) -> String? {
        let n = name.lowercased()
        return headers.first { $0.name == n }?.value
    }

    /// Every value of header `name` (any case).
    func headerValues(_ name: String) -> [String] {
        let n = name.lowercased()
        return headers.filter { $0.name == n }.map(\.value)
    }

    /// `Accept`, exactly as sent.
    var accept: String? { header("accept") }
    /// Every `Cookie` header joined with `; `, nil when none.
    var cookieHeader: String? {
        let all = headerValues("cookie")
        return all.isEmpty ? nil : all.joined(separator: "; ")
    }

    /// Whether the browser says the page is loaded into an iframe (`Sec-Fetch-Dest: iframe`,
    /// Fetch Metadata): how the emulator decides to partition the cookie (proposal).
    var isEmbedded: Bool { header("sec-fetch-dest")?.lowercased() == "iframe" }

    /// The emulator's knob for Turnstile (proposal): `X-Emulator-Turnstile: fail` makes this
    /// client fail the challenge; anything else, or no header, passes.
    var failsTurnstile: Bool { header("x-emulator-turnstile")?.lowercased() == "fail" }
}
