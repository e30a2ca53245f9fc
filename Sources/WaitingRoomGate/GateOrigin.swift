import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where visitors reach the protected server and which proxies stand in front of it: what every
/// adapter (the Hummingbird middleware, the Vapor middleware) needs to turn a server's request
/// head into a ``GateRequest`` the same way, so the engines see the same URL and client address
/// whichever framework serves the request.
public struct GateOrigin: Sendable, Hashable {
    /// `scheme://host[:port]` as visitors reach this server, without a trailing slash; nil:
    /// `http://` and the request's `Host` (a request without one cannot be gated: 400). Triggers
    /// match, and visitors come back to, URLs built on it.
    package let publicBaseURL: String?
    /// Peers (IP addresses) whose `X-Forwarded-For` names the visitor: the last address in it
    /// that is not itself a trusted proxy. Empty: the peer is the visitor. Kept in the form
    /// ``canonicalIPAddress(_:)`` gives (IPv6 spellings differ: `::1`, `0:0:0:0:0:0:0:1`); an
    /// entry that is not an IP address (a host name, a CIDR range) is kept as given and matches
    /// only that exact text.
    package let trustedProxies: Set<String>

    /// The `Host` values (`host` or `host:port`, compared without case) this server answers to
    /// when there is no ``publicBaseURL``: a request for any other host is refused (400), so a
    /// visitor cannot choose the host a `HostName` trigger reads. Empty: any well-formed host
    /// (only safe when no trigger reads the host; `waitingroom gate` will not start so).
    package let allowedHosts: Set<String>

    /// `publicBaseURL` loses any trailing `/`; each trusted proxy is written in its canonical
    /// form; allowed hosts are kept in lower case.
    public init(publicBaseURL: String? = nil, trustedProxies: Set<String> = [], allowedHosts: Set<String> = []) {
        var base = publicBaseURL
        while base?.hasSuffix("/") == true { base?.removeLast() }
        self.publicBaseURL = base
        self.trustedProxies = Set(trustedProxies.map { Self.canonicalIPAddress($0) ?? $0 })
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
    }

    /// Why a request head cannot be gated, with the answer it gets (400).
    package struct HeadRefusal: Error, Sendable, Hashable {
        /// What was wrong, for the visitor and the log.
        package let reason: String
        /// The 400 the adapter sends.
        package var response: GateResponse { .refusal(400, reason) }

        package init(_ reason: String) { self.reason = reason }
    }

    /// `text` as an IPv4 or IPv6 address in the form the system writes peers' addresses in
    /// (`inet_ntop`: `::1`, `10.0.0.2`), or nil when it is not one (a host name, a CIDR range,
    /// `300.1.1.1`). Adapters and `waitingroom gate --trusted-proxy` check their list with it.
    package static func canonicalIPAddress(_ text: String) -> String? {
        var v4 = in_addr()
        var v6 = in6_addr()
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if inet_pton(AF_INET, text, &v4) == 1 {
            guard inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        } else {
            return nil
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The gate's view of one request head: `target` is the request line's path and query
    /// (`/cart?x=1`), `authority` the `Host`, `peer` the connection's remote IP address. The
    /// target is taken in its canonical form (``GateTarget/canonical(_:)``; the request's
    /// ``GateRequest/target``, which the adapter must hand the app). The body length is the one
    /// `Content-Length` (nil when absent, repeated or not a number; ``GateLimits`` refuses
    /// repeated ones). Throws when the target has no canonical form, or no URL can be built: no
    /// `publicBaseURL`, and no `Host`, one that is not `host[:port]` (``isAuthority(_:)``) or one
    /// not among ``allowedHosts``.
    package func request(
        method: String, target rawTarget: String, authority: String?, headers: [GateHeader],
        peer: String?
    ) throws(HeadRefusal) -> GateRequest {
        try request(method: method, target: rawTarget, scheme: "http", authority: authority, headers: headers, peer: peer)
    }

    /// ``request(method:target:authority:headers:peer:)`` for a request that reached a proxy in
    /// front of the gate over `scheme` (`http` or `https`; used when there is no ``publicBaseURL``).
    package func request(
        method: String, target rawTarget: String, scheme: String, authority: String?, headers: [GateHeader],
        peer: String?
    ) throws(HeadRefusal) -> GateRequest {
        try request(
            method: method, target: rawTarget, scheme: scheme, authority: authority, headers: headers, peer: peer,
            forwardedFor: nil)
    }

    /// With `forwardedFor` given (not nil), the visitor's address comes from it rather than from
    /// the headers' `X-Forwarded-For` (a route that has taken the proxy's fields out of `headers`).
    func request(
        method: String, target rawTarget: String, scheme: String, authority: String?, headers: [GateHeader],
        peer: String?, forwardedFor given: [String]?
    ) throws(HeadRefusal) -> GateRequest {
        let target: String
        if rawTarget == "*", method == "OPTIONS" {
            target = rawTarget
        } else {
            switch GateTarget.canonical(rawTarget) {
            case .success(let canonical): target = canonical
            case .failure(let refusal): throw HeadRefusal(refusal.description)
            }
        }
        // the URL in one allocation
        var url = ""
        if let publicBaseURL {
            url.reserveCapacity(publicBaseURL.utf8.count + target.utf8.count)
            url.append(publicBaseURL)
        } else {
            // `Host: x?` or `x/static/` would change the path the triggers see while the app
            // serves the request line's: a Host that is not host[:port] is refused
            guard let authority, Self.isAuthority(authority) else {
                throw HeadRefusal("the request has no Host header, or one that is not host[:port]")
            }
            if !allowedHosts.isEmpty, !allowedHosts.contains(authority.lowercased()) {
                throw HeadRefusal("this server does not answer for host \(authority)")
            }
            url.reserveCapacity(8 + authority.utf8.count + target.utf8.count)
            url.append(scheme == "https" ? "https://" : "http://")
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
        var request = GateRequest(
            method: method, url: url, headers: headers,
            clientIP: clientIP(peer: peer, forwardedFor: given ?? forwardedFor),
            bodyLength: lengths.count == 1 ? Int(lengths[0]) : nil)
        request.target = target
        return request
    }

    /// Whether `text` is a `Host` value, `host[:port]` (RFC 9110 §7.2, RFC 3986 §3.2.2): a
    /// registered name (letters, digits, `-._~`, `%` escapes, sub-delimiters) or an IP literal in
    /// brackets, then digits after a colon. Nothing that ends the authority in a URL (`/`, `?`,
    /// `#`) or changes it (`@`, spaces) can be in it.
    package static func isAuthority(_ text: String) -> Bool {
        var text = text
        // on the contiguous UTF-8 in place, one table look-up per byte (asked on every request)
        return text.withUTF8 { bytes -> Bool in
            guard !bytes.isEmpty, bytes.count <= 255 + 6 else { return false }
            var i = 0
            if bytes[0] == UInt8(ascii: "[") {
                guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), close > 1 else { return false }
                for j in 1..<close where !isLiteralByte(bytes[j]) { return false }
                i = close + 1
            } else {
                while i < bytes.count, bytes[i] != UInt8(ascii: ":") {
                    guard registeredNameBytes[Int(bytes[i])] else { return false }
                    i += 1
                }
                guard i > 0 else { return false }
            }
            if i == bytes.count { return true }
            guard bytes[i] == UInt8(ascii: ":"), bytes.count - i - 1 <= 5 else { return false }
            for j in (i + 1)..<bytes.count where !(bytes[j] >= UInt8(ascii: "0") && bytes[j] <= UInt8(ascii: "9")) { return false }
            return true
        }
    }

    /// A hex digit, `:` or `.`: what an IP literal in brackets may hold.
    private static func isLiteralByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"),
            UInt8(ascii: ":"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// For each byte, whether a registered name may hold it: letters, digits, `-._~`, `%` and the
    /// sub-delimiters.
    private static let registeredNameBytes: [Bool] = (0..<256).map { value in
        let byte = UInt8(value)
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default: return "-._~%!$&'()*+,;=".utf8.contains(byte)
        }
    }

    /// The visitor's address: the peer, or when the peer is a trusted proxy, the nearest
    /// untrusted address in `X-Forwarded-For` (all its values, in order, comma lists split).
    /// Whether `address` is one of ``trustedProxies``, in whatever spelling it comes. The
    /// spelling the list holds is looked up first: it is the one a socket's peer has, and the
    /// canonical form costs an `inet_pton`/`inet_ntop` (a `sprintf`) per look-up.
    package func isTrustedProxy(_ address: String) -> Bool {
        trustedProxies.contains(address) || trustedProxies.contains(Self.canonicalIPAddress(address) ?? address)
    }

    package func clientIP(peer: String?, forwardedFor: [String]) -> String? {
        guard let peer, !trustedProxies.isEmpty, trustedProxies.contains(peer) else { return peer }
        // nearest hop first: the last value's last item, then back (spaces and tabs around an
        // item trimmed, as RFC 7239 and X-Forwarded-For writers put them; empty items skipped)
        for value in forwardedFor.reversed() {
            for item in value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).reversed() {
                guard let hop = Self.trimmedHop(item) else { continue }
                if !isTrustedProxy(hop) { return hop }
            }
        }
        return peer
    }

    /// `item` without the spaces and tabs around it, or nil when nothing is left. (Byte-wise:
    /// Foundation's `trimmingCharacters(in:)` cost a tenth of an auth subrequest's time.)
    private static func trimmedHop(_ item: Substring.UTF8View.SubSequence) -> String? {
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = item.firstIndex(where: { !isBlank($0) }), let last = item.lastIndex(where: { !isBlank($0) }) else {
            return nil
        }
        return String(Substring(item[first...last]))
    }
}
