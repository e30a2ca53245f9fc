/// One request as a gate sees it, free of any web framework: what the Hummingbird middleware, a
/// Vapor adapter or the reverse proxy hands to a ``GateEngine``.
public struct GateRequest: Sendable, Hashable {
    /// The request method (`GET`, `POST`, …).
    package var method: String
    /// The absolute URL as the visitor's browser sees it (`https://shop.example/cart?x=1`): the
    /// gate matches triggers on it and sends the visitor back to it after the queue. Behind a
    /// proxy that rewrites the host or port, build it from the public host (KnownUser README).
    package var url: String
    /// The header fields in order, names as received (compared case-insensitively).
    package var headers: [GateHeader]
    /// The visitor's address (the peer, or the client a trusted proxy names), for IP binding.
    package var clientIP: String?
    /// The body's declared length (`Content-Length`), when known; nil for none or streamed.
    package var bodyLength: Int?
    /// The request target the decision was made on, in origin form (`/cart?x=1`): the canonical
    /// one (``GateTarget``) when built by ``GateOrigin``. An adapter hands the app exactly this
    /// target (the proxy forwards it; a middleware redirects a visitor whose target differs).
    /// Nil for a request built by hand.
    package var target: String?
    /// The first bytes of the body (at most ``GateEngine/bodyBytesToDecide``), when the engine
    /// asked for them and the adapter read them before deciding; nil otherwise.
    package var body: [UInt8]?
    /// A question asked ahead of the request, not the request (an auth subrequest): the engine
    /// decides as it would, but uses up no single-use credential (``GateCredentialLedger``); the
    /// request that follows (the start route's) is the one that uses it.
    package var isPreview = false

    public init(method: String = "GET", url: String, headers: [GateHeader] = [], clientIP: String? = nil, bodyLength: Int? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.clientIP = clientIP
        self.bodyLength = bodyLength
    }

    /// The first value of header `name` (case-insensitive), or nil.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// Every value of header `name` (case-insensitive), in order.
    package func headers(named name: String) -> [String] {
        headers.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// The value of cookie `name` in the `Cookie` headers (exact, case-sensitive name), or nil.
    package func cookie(_ name: String) -> String? {
        for header in headers where header.name.equalsIgnoringASCIICase("cookie") {
            if let value = GateCookies.value(named: name, inHeaderValue: header.value) { return value }
        }
        return nil
    }

    /// The value of query parameter `name` (first occurrence, percent-decoded), or nil.
    package func queryParameter(_ name: String) -> String? {
        guard let q = url.firstIndex(of: "?") else { return nil }
        var query = url[url.index(after: q)...]
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        for pair in query.split(separator: "&") {
            let eq = pair.firstIndex(of: "=") ?? pair.endIndex
            guard pair[..<eq] == name else { continue }
            let raw = eq == pair.endIndex ? "" : String(pair[pair.index(after: eq)...])
            return GatePercent.decode(raw, plusAsSpace: true)
        }
        return nil
    }

    /// The headers as `(name, value)` pairs (the vendor validators' form).
    package var headerPairs: [(String, String)] { headers.map { ($0.name, $0.value) } }
}

/// One header field.
public struct GateHeader: Sendable, Hashable {
    /// The field name, as received.
    public var name: String
    /// The field value.
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension String {
    /// Whether the two are equal with ASCII letters compared case-insensitively (header names),
    /// without allocating.
    package func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var a = self
        var b = other
        // on the contiguous UTF-8 in place (a zip of the two views cost more than the compare)
        return a.withUTF8 { x in
            b.withUTF8 { y in
                for i in 0..<x.count where x[i] != y[i] {
                    let lx = x[i] >= 0x41 && x[i] <= 0x5A ? x[i] | 0x20 : x[i]
                    let ly = y[i] >= 0x41 && y[i] <= 0x5A ? y[i] | 0x20 : y[i]
                    if lx != ly { return false }
                }
                return true
            }
        }
    }
}
