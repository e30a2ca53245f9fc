/// The gate behind a proxy that asks before it forwards (nginx `auth_request`, Caddy
/// `forward_auth`, Traefik `ForwardAuth`, Envoy `ext_authz`, ingress-nginx `auth-url`), shaped
/// like oauth2-proxy's `/oauth2/auth` and `/oauth2/start?rd=`: the same engines, decisions and
/// cookies as the reverse proxy and the middlewares, with the proxy doing the forwarding.
///
/// Three routes under `pathPrefix` (default `/.waitingroom`):
/// - **`/auth`**, the subrequest: the original request is read from the headers the proxies send
///   (`originalRequest(method:target:headers:peer:)`), decided as a preview (no single-use
///   credential is used up), and answered by `GateAnswer/subrequest(_:)`: 200 (with the
///   `Set-Cookie` the proxy adds to the app's answer), 401 (send the browser to `/start`), 403.
/// - **`/start?rd=URL`**, the browser's: `rd` must be on a public host (``GateOrigin``: the
///   public URL, or an allowed host; no open redirect). The request for `rd` is decided for real
///   and answered with the decision's own answer: the 302 to the queue (its target is `rd`), the
///   AJAX form, the 302 to `rd` without the `queueittoken` with the session cookie, the cancel
///   page, a refusal; when the decision lets the request through, a 302 back to `rd`.
/// - **`/healthz`**: 200.
///
/// Threading: a value; every property is immutable and `Sendable`; ask it from any thread.
public struct GateAuthEndpoint: Sendable {
    /// The vendor's check.
    package let engine: any GateEngine
    /// Bounds checked before the engine is asked.
    package let limits: GateLimits
    /// The public URL or allowed hosts (what `rd` may name) and the trusted proxies: the peers
    /// whose subrequests are answered and whose `X-Forwarded-For` / `X-Real-IP` name the visitor.
    /// With trusted proxies set, a subrequest from any other peer gets 403.
    package let origin: GateOrigin
    /// Where the routes live (no trailing slash).
    package let pathPrefix: String
    /// What answers a vendor's configuration push (`PUT {prefix}/configuration`, the body whole;
    /// Queue-it's platform pushes its integration configuration so); nil: that route is 404.
    package let configurationPush: (@Sendable ([UInt8]) async -> GateResponse)?

    public init(
        engine: any GateEngine, limits: GateLimits = .standard, origin: GateOrigin, pathPrefix: String = "/.waitingroom",
        configurationPush: (@Sendable ([UInt8]) async -> GateResponse)? = nil
    ) {
        self.engine = engine
        self.limits = limits
        self.origin = origin
        self.configurationPush = configurationPush
        var prefix = pathPrefix
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.pathPrefix = prefix
    }

    /// The endpoint's routes.
    package enum Route: Sendable, Hashable {
        case auth
        case start
        case health
        /// `PUT {prefix}/configuration`: a vendor pushes a configuration (``configurationPush``).
        case configuration
        /// Not one of the endpoint's paths (404).
        case unknown
    }

    /// The route a request target (path and query as received) is for.
    /// The endpoint's routes under ``pathPrefix``.
    private static let routes: [(String, Route)] = [
        ("/auth", .auth), ("/start", .start), ("/healthz", .health), ("/configuration", .configuration)
    ]

    package func route(_ target: String) -> Route {
        // byte-wise: the target is raw request bytes, compared as they came (no Unicode
        // equivalence: it cost a twentieth of an auth subrequest's time)
        let bytes = target.utf8
        let path = bytes.firstIndex(of: UInt8(ascii: "?")).map { bytes[..<$0] } ?? bytes[...]
        guard path.starts(with: pathPrefix.utf8) else { return .unknown }
        let rest = path.dropFirst(pathPrefix.utf8.count)
        // Envoy's ext_authz (HTTP) appends the original path to its `path_prefix`
        if rest.starts(with: "/auth/".utf8) { return .auth }
        for (name, route) in Self.routes where rest.elementsEqual(name.utf8) { return route }
        return .unknown
    }

    /// The answer to one request on the endpoint, when it needs no wait (most subrequests: an
    /// engine's ``GateEngine/immediateDecision(_:)``); nil: ask ``answer(method:target:headers:peer:)``.
    package func immediateAnswer(method: String, target: String, headers: [GateHeader], peer: String?) -> GateResponse? {
        switch prepare(method: method, target: target, headers: headers, peer: peer) {
        case .answered(let response): return response
        case .decide(let request, let route, let raw):
            guard let decision = engine.immediateDecision(request, within: limits) else { return nil }
            return finish(decision, request: request, route: route, rawTarget: raw)
        }
    }

    /// The answer to one request on the endpoint.
    package func answer(method: String, target: String, headers: [GateHeader], peer: String?) async -> GateResponse {
        switch prepare(method: method, target: target, headers: headers, peer: peer) {
        case .answered(let response): return response
        case .decide(let request, let route, let raw):
            let decision = await engine.decide(request, within: limits)
            return finish(decision, request: request, route: route, rawTarget: raw)
        }
    }

    /// The answer to a configuration push (`PUT {prefix}/configuration` with `body`).
    package func pushConfiguration(_ body: [UInt8]) async -> GateResponse {
        guard let configurationPush else { return .refusal(404, "this gate takes no configuration push") }
        return await configurationPush(body)
    }

    /// The most bytes a configuration push may carry (a hex-encoded configuration is twice its size).
    package static let maxPushBytes = 4 * 1024 * 1024

    enum Prepared {
        case answered(GateResponse)
        case decide(GateRequest, Route, rawTarget: String?)
    }

    func prepare(method: String, target: String, headers: [GateHeader], peer: String?) -> Prepared {
        switch route(target) {
        case .health:
            return .answered(GateResponse(status: 200, headers: [GateHeader("Content-Type", "text/plain; charset=utf-8")], body: "ok\n"))
        case .unknown:
            return .answered(.refusal(404, "not a route of the waiting-room gate"))
        case .configuration:
            // answered with the body by ``pushConfiguration(_:)``
            return .answered(.refusal(configurationPush == nil ? 404 : 405, "the configuration route takes PUT with a body"))
        case .auth:
            do throws(GateOrigin.HeadRefusal) {
                let (request, rawTarget) = try subrequest(method: method, target: target, headers: headers, peer: peer)
                return .decide(request, .auth, rawTarget: rawTarget)
            } catch {
                return .answered(GateAnswer.subrequest(.refuse(400, error.reason)))
            }
        case .start:
            guard method == "GET" || method == "HEAD" else { return .answered(.refusal(405, "the start route takes GET")) }
            do throws(GateOrigin.HeadRefusal) {
                return .decide(try startRequest(target: target, headers: headers, peer: peer), .start, rawTarget: nil)
            } catch {
                return .answered(error.response)
            }
        }
    }

    func finish(_ decision: GateDecision, request: GateRequest, route: Route, rawTarget: String?) -> GateResponse {
        if route == .auth {
            // the app is handed the target as the proxy received it: one that is not canonical
            // goes through the start route, which sends the browser to the canonical one
            if decision.reachesHandler, let canonical = request.target, let rawTarget, rawTarget != canonical {
                return GateAnswer.subrequest(
                    GateDecision(
                        verdict: .queue, response: .canonicalRedirect(to: canonical),
                        reason: "target not canonical"))
            }
            return GateAnswer.subrequest(decision)
        }
        switch GateAnswer(decision) {
        case .respond(let response):
            return response
        case .forward(let adding):
            return .redirect(to: request.url, extra: adding)
        }
    }

    /// The visitor's request as a proxy's subrequest describes it, as a preview
    /// (``GateRequest/isPreview``):
    /// - the method: `X-Original-Method` (nginx), else `X-Forwarded-Method` (Caddy, Traefik),
    ///   else the subrequest's;
    /// - the URL: `X-Original-URL` (absolute; ingress-nginx), else `X-Original-URI` (nginx) or
    ///   `X-Forwarded-Uri` (Caddy, Traefik), else what follows `/auth` in the subrequest's own
    ///   target (Envoy's `path_prefix` form), on `X-Forwarded-Proto` and `X-Forwarded-Host` (else
    ///   the subrequest's `Host`); the ``GateOrigin/publicBaseURL`` replaces scheme and host when set;
    /// - the visitor's address: `X-Forwarded-For`, else `X-Real-IP`, from a trusted proxy only;
    /// - every other header as the visitor sent it (the proxies pass them on), `Host` replaced by
    ///   the original host.
    /// Throws (the subrequest gets 403) when the peer is not a trusted proxy (if any are set), no
    /// original URI is given, or it has no canonical form.
    package func originalRequest(method: String, target: String, headers: [GateHeader], peer: String?) throws(GateOrigin.HeadRefusal)
        -> GateRequest
    {
        try subrequest(method: method, target: target, headers: headers, peer: peer).request
    }

    /// ``originalRequest(method:target:headers:peer:)`` and the target as the proxy received it
    /// (what the app is handed), from one pass over the subrequest's fields.
    func subrequest(method: String, target: String, headers: [GateHeader], peer: String?)
        throws(GateOrigin.HeadRefusal) -> (request: GateRequest, rawTarget: String)
    {
        if !origin.trustedProxies.isEmpty, !(peer.map { origin.isTrustedProxy($0) } ?? false) {
            throw GateOrigin.HeadRefusal("the auth route answers the configured proxies only")
        }
        let fields = GateSubrequestFields(headers)
        let originalMethod = fields.originalMethod ?? fields.forwardedMethod ?? method
        var scheme = fields.forwardedProto?.lowercased() == "https" ? "https" : "http"
        var authority = fields.forwardedHost ?? fields.host
        let rawTarget: String
        if let url = fields.originalURL, let parts = Self.absoluteURL(url) {
            (scheme, authority, rawTarget) = (parts.scheme, parts.authority, parts.target)
        } else if let uri = fields.originalURI ?? fields.forwardedURI, uri.hasPrefix("/") {
            rawTarget = uri
        } else if target.hasPrefix(pathPrefix + "/auth/") {
            // Envoy: the original path and query after the prefix, the original method as the request's
            rawTarget = String(target.dropFirst(pathPrefix.count + "/auth".count))
        } else {
            throw GateOrigin.HeadRefusal("the subrequest names no original URI (X-Original-URI, X-Forwarded-Uri or X-Original-URL)")
        }
        var visitorHeaders = fields.visitor
        if let authority { visitorHeaders.insert(GateHeader("Host", authority), at: 0) }
        var forwardedFor = fields.forwardedFor
        if forwardedFor.isEmpty, let realIP = fields.realIP { forwardedFor = [realIP] }
        // the visitor's address from the proxy's X-Forwarded-For (or X-Real-IP), read once
        var request = try origin.request(
            method: originalMethod, target: rawTarget, scheme: scheme, authority: authority,
            headers: visitorHeaders, peer: peer, forwardedFor: forwardedFor)
        request.isPreview = true
        return (request, rawTarget)
    }

    /// The proxies' own fields, not the visitor's (left out of what the engine sees).
    static let proxyFields = GateSubrequestFields.proxyFields

    /// The request for the start route's `rd`: a GET of that URL with the browser's headers.
    /// Throws (400) for no `rd`, one that is not an absolute http(s) URL or a path, or one whose
    /// host is not a public one.
    package func startRequest(target: String, headers: [GateHeader], peer: String?) throws(GateOrigin.HeadRefusal) -> GateRequest {
        guard let rd = Self.redirectTarget(inQuery: target) else {
            throw GateOrigin.HeadRefusal("the start route needs rd=URL (the page to come back to)")
        }
        func field(_ name: String) -> String? {
            headers.first { $0.name.equalsIgnoringASCIICase(name) }?.value
        }
        let trusted = peer.map { origin.isTrustedProxy($0) } ?? false
        var scheme = trusted && field("x-forwarded-proto")?.lowercased() == "https" ? "https" : "http"
        var authority = (trusted ? field("x-forwarded-host") : nil) ?? field("host")
        let rawTarget: String
        if let parts = Self.absoluteURL(rd) {
            // the host in rd must be one visitors reach this site at: the public URL's, else an allowed one
            if let base = origin.publicBaseURL {
                guard let baseParts = Self.absoluteURL(base + "/"), baseParts.scheme == parts.scheme,
                    baseParts.authority.lowercased() == parts.authority.lowercased()
                else {
                    throw GateOrigin.HeadRefusal("rd must be on \(base)")
                }
            } else if origin.allowedHosts.isEmpty || !origin.allowedHosts.contains(parts.authority.lowercased()) {
                throw GateOrigin.HeadRefusal("rd names a host this gate does not answer for")
            }
            (scheme, authority, rawTarget) = (parts.scheme, parts.authority, parts.target)
        } else if rd.hasPrefix("/"), !rd.hasPrefix("//") {
            rawTarget = rd
        } else {
            throw GateOrigin.HeadRefusal("rd must be an absolute http(s) URL or a path")
        }
        var visitorHeaders = headers.filter { header in
            !header.name.equalsIgnoringASCIICase("host") && !header.name.equalsIgnoringASCIICase("x-forwarded-for")
                && !Self.proxyFields.contains(where: { header.name.equalsIgnoringASCIICase($0) })
        }
        if let authority { visitorHeaders.insert(GateHeader("Host", authority), at: 0) }
        let forwardedFor = headers.filter { $0.name.equalsIgnoringASCIICase("x-forwarded-for") }.map(\.value)
        return try origin.request(
            method: "GET", target: rawTarget, scheme: scheme, authority: authority, headers: visitorHeaders,
            peer: peer, forwardedFor: forwardedFor)
    }

    /// The `rd` parameter of a start route's target. Percent-encoded (`rd=https%3A%2F%2F…`), it
    /// ends at the next `&`; given raw (`rd=https://shop.example/cart?a=1&b=2`, what nginx's
    /// `$request_uri` gives unencoded), it runs to the end of the query, so it must come last.
    package static func redirectTarget(inQuery target: String) -> String? {
        guard let q = target.firstIndex(of: "?") else { return nil }
        let query = target[target.index(after: q)...]
        var start: Substring.Index?
        if query.hasPrefix("rd=") {
            start = query.index(query.startIndex, offsetBy: 3)
        } else if let r = query.range(of: "&rd=") {
            start = r.upperBound
        }
        guard let start else { return nil }
        let rest = query[start...]
        let lower = rest.prefix(8).lowercased()
        if lower.hasPrefix("http%3a") || lower.hasPrefix("https%3a") || lower.hasPrefix("%2f") {
            let value = rest.firstIndex(of: "&").map { rest[..<$0] } ?? rest
            return GatePercent.decode(String(value))
        }
        return rest.isEmpty ? nil : String(rest)
    }

    /// `scheme://authority/target` split, for `http` and `https` URLs with an authority that is
    /// `host[:port]` (``GateOrigin/isAuthority(_:)``; no user info) and a target starting with `/`
    /// (an empty one is `/`); nil otherwise.
    static func absoluteURL(_ text: String) -> (scheme: String, authority: String, target: String)? {
        let scheme: String
        let rest: Substring
        if text.lowercased().hasPrefix("https://") {
            (scheme, rest) = ("https", text.dropFirst(8))
        } else if text.lowercased().hasPrefix("http://") {
            (scheme, rest) = ("http", text.dropFirst(7))
        } else {
            return nil
        }
        let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = String(rest[..<end])
        guard GateOrigin.isAuthority(authority) else { return nil }
        var target = String(rest[end...])
        if target.hasPrefix("#") { target = "" }
        if !target.hasPrefix("/") { target = "/" + target }
        return (scheme, authority, target)
    }
}
