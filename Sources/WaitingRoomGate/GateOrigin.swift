import Foundation

/// Where visitors reach the protected server and which proxies stand in front of it: what every
/// adapter (the Hummingbird middleware, the Vapor middleware) needs to turn a server's request
/// head into a ``GateRequest`` the same way, so the engines see the same URL and client address
/// whichever framework serves the request.
public struct GateOrigin: Sendable, Hashable {
    /// `scheme://host[:port]` as visitors reach this server, without a trailing slash; nil:
    /// `http://` and the request's `Host` (a request without one cannot be gated: 400). Triggers
    /// match, and visitors come back to, URLs built on it.
    public let publicBaseURL: String?
    /// Peers (IP addresses) whose `X-Forwarded-For` names the visitor: the last address in it
    /// that is not itself a trusted proxy. Empty: the peer is the visitor.
    public let trustedProxies: Set<String>

    /// `publicBaseURL` loses any trailing `/`.
    public init(publicBaseURL: String? = nil, trustedProxies: Set<String> = []) {
        var base = publicBaseURL
        while base?.hasSuffix("/") == true { base?.removeLast() }
        self.publicBaseURL = base
        self.trustedProxies = trustedProxies
    }

    /// The gate's view of one request head: `target` is the request line's path and query
    /// (`/cart?x=1`), `authority` the `Host`, `peer` the connection's remote IP address. The body
    /// length is the one `Content-Length` (nil when absent, repeated or not a number; ``GateLimits``
    /// refuses repeated ones). Nil when no URL can be built: no `publicBaseURL` and no `Host`.
    public func request(method: String, target: String, authority: String?, headers: [GateHeader], peer: String?) -> GateRequest? {
        // the URL in one allocation
        var url = ""
        if let publicBaseURL {
            url.reserveCapacity(publicBaseURL.utf8.count + target.utf8.count)
            url.append(publicBaseURL)
        } else {
            guard let authority, !authority.isEmpty else { return nil }
            url.reserveCapacity(7 + authority.utf8.count + target.utf8.count)
            url.append("http://")
            url.append(authority)
        }
        url.append(target)
        var forwardedFor: [String] = []
        var lengths: [String] = []
        for header in headers {
            if header.name.equalsIgnoringASCIICase("x-forwarded-for") {
                forwardedFor.append(header.value)
            } else if header.name.equalsIgnoringASCIICase("content-length") {
                lengths.append(header.value)
            }
        }
        return GateRequest(method: method, url: url, headers: headers,
                           clientIP: clientIP(peer: peer, forwardedFor: forwardedFor),
                           bodyLength: lengths.count == 1 ? Int(lengths[0]) : nil)
    }

    /// The visitor's address: the peer, or when the peer is a trusted proxy, the nearest
    /// untrusted address in `X-Forwarded-For` (all its values, in order, comma lists split).
    public func clientIP(peer: String?, forwardedFor: [String]) -> String? {
        guard let peer, !trustedProxies.isEmpty, trustedProxies.contains(peer) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return hops.reversed().first { !trustedProxies.contains($0) } ?? peer
    }
}
