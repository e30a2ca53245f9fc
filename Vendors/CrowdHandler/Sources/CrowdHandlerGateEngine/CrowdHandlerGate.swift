import CrowdHandler
import Foundation
import WaitingRoom
import WaitingRoomGate

/// CrowdHandler's gatekeeper on the server (JavaScript SDK `gatekeeper.ts`, PHP `GateKeeper.php`;
/// `Vendors/CrowdHandler/README.md`). The visitor's session token comes from `ch-id` (the waiting
/// room adds it when it sends the visitor back) or the `crowdhandler` cookie.
///
/// - **full**: every request is checked with the API (``CrowdHandlerGatekeeper``, `POST`/`GET
///   /v1/requests`); promoted ⇒ pass, else 302 to the room's waiting page with the token.
/// - **hybrid**: a promotion signature (`ch-id-signature` + `ch-requested`, or the gate's cookie
///   that keeps them) checked locally with the private key (``CrowdHandlerSignature``) passes
///   without an API call while it is within the room's timeout; anything else goes to the API.
///
/// Failures follow the SDKs: a 4xx (not 429) always refuses (403 here); 5xx, 429, throttling,
/// timeouts and garbage pass when `trustOnFail` is on, else go to the safety-net room, else 503.
/// After a passed request the handler's status and time are recorded for a sampled share
/// (`PUT /v1/responses/{responseID}`).
public struct CrowdHandlerGate: GateEngine {
    /// How requests are validated (``CrowdHandlerGatekeeper/Mode``).
    public typealias Mode = CrowdHandlerGatekeeper.Mode

    /// Settings beyond the client configuration.
    public struct Options: Sendable {
        /// The session cookie's name (JavaScript SDK default `crowdhandler`).
        package var cookieName: String
        /// `Max-Age` of the session cookie in seconds; nil: a session cookie (the SDKs' default).
        package var cookieMaxAge: Int?
        /// Adds `Secure` to the session cookie.
        package var cookieSecure: Bool
        /// `Domain` of the session cookie (the PHP SDK sets the host without `www.`; the JS SDK a
        /// wildcard room's domain); nil: none, the host that answered.
        package var cookieDomain: String?
        /// After a promotion that came with `ch-*` parameters in the URL (the waiting room sends
        /// the visitor back so), a page load (GET, HEAD) is answered 302 to the URL without them,
        /// the cookie set: the token leaves the address bar and the app never sees it (the .NET
        /// SDK after a validation, the JS SDK after a promotion with `ch-requested`). Default true.
        package var redirectsAfterToken: Bool
        /// The share of passed requests whose handler answer is recorded (SDK default 0.2; 0: never).
        package var responseSampleRate: Double
        /// The time signatures are checked against.
        package var clock: any WaitingRoomClock
        /// Requests whose path and query match it pass with no API call and no cookie (static
        /// assets); nil: none. Default: the pattern the PHP, JavaScript and .NET SDKs share
        /// (``defaultIgnorePattern``).
        package var ignorePattern: String?

        public init(
            cookieName: String = "crowdhandler", cookieMaxAge: Int? = nil, cookieSecure: Bool = false, cookieDomain: String? = nil,
            responseSampleRate: Double = 0.2, clock: any WaitingRoomClock = SystemClock(),
            ignorePattern: String? = CrowdHandlerGate.defaultIgnorePattern, redirectsAfterToken: Bool = true
        ) {
            self.cookieName = cookieName
            self.cookieMaxAge = cookieMaxAge
            self.cookieSecure = cookieSecure
            self.cookieDomain = cookieDomain
            self.redirectsAfterToken = redirectsAfterToken
            self.responseSampleRate = responseSampleRate
            self.clock = clock
            self.ignorePattern = ignorePattern
        }
    }

    public var vendorID: String { CrowdHandlerConfiguration.vendorID }
    /// The API client's configuration (keys, URLs, `trustOnFail`, `safetyNetSlug`, timeout).
    package let configuration: CrowdHandlerConfiguration
    /// Full or hybrid.
    package let mode: Mode
    /// The room feed (`GET /v1/rooms`): each room's slug, `queueActivatesOn` and timeout, for hybrid checks.
    package let rooms: [CrowdHandlerRoom]
    /// Cookie and sampling settings.
    package let options: Options
    let transport: any HTTPTransport
    let signature: CrowdHandlerSignature?
    /// ``Options/ignorePattern``, compiled once (nil when none, or when it is not a valid pattern).
    let ignoreExpression: NSRegularExpression?

    /// - Parameters:
    ///   - mode: `.hybrid` needs `configuration.privateKey` and `rooms` (``CrowdHandlerClient/rooms()``).
    package init(
        configuration: CrowdHandlerConfiguration, transport: any HTTPTransport, mode: Mode = .full,
        rooms: [CrowdHandlerRoom] = [], options: Options = Options()
    ) throws(WaitingRoomError) {
        if mode == .hybrid, (configuration.privateKey ?? "").isEmpty {
            throw .invalidConfiguration(
                field: "privateKey", "hybrid mode needs the private key", vendor: CrowdHandlerConfiguration.vendorID)
        }
        self.configuration = configuration
        self.mode = mode
        self.rooms = rooms
        self.options = options
        self.transport = transport
        self.signature = configuration.privateKey.map(CrowdHandlerSignature.init(privateKey:))
        if let pattern = options.ignorePattern {
            guard let compiled = try? NSRegularExpression(pattern: pattern) else {
                throw .invalidConfiguration(
                    field: "ignorePattern", "not a valid regular expression: \(pattern)",
                    vendor: CrowdHandlerConfiguration.vendorID)
            }
            self.ignoreExpression = compiled
        } else {
            self.ignoreExpression = nil
        }
    }

    /// A gate whose room feed is read from the API now (for hybrid mode).
    public static func withRoomFeed(
        configuration: CrowdHandlerConfiguration, transport: any HTTPTransport, mode: Mode = .hybrid,
        options: Options = Options()
    ) async throws(WaitingRoomError) -> CrowdHandlerGate {
        let rooms = try await CrowdHandlerClient(configuration: configuration, transport: transport).rooms()
        return try CrowdHandlerGate(configuration: configuration, transport: transport, mode: mode, rooms: rooms, options: options)
    }

    /// The `ch-*` parameters the waiting room adds (JavaScript SDK `CH_PARAM_KEYS`): kept out of
    /// the URL the API is asked about and the visitor is sent back to.
    package static let parameterNames: Set<String> = ["ch-code", "ch-fresh", "ch-id", "ch-id-signature", "ch-public-key", "ch-requested"]

    /// Static assets: a path and query with no `?` that ends in one of these extensions (the
    /// PHP SDK's `GateKeeper::$ignore`, the JavaScript SDK's `gk.ts` `ignore`, the .NET SDK's
    /// `Exclusions`, which has `ICO` in capitals).
    public static let defaultIgnorePattern =
        #"^((?!.*\?).*(\.(avi|css|eot|gif|ico|jpg|jpeg|js|json|mov|mp4|mpeg|mpg|ogg|ogv|pdf|png|svg|ttf|txt|wmv|woff|woff2|xml))$)"#

    public func decide(_ request: GateRequest) async -> GateDecision {
        if let ignore = ignoreExpression {
            let pathAndQuery = Self.pathAndQuery(of: request.url)
            if ignore.firstMatch(in: pathAndQuery, range: NSRange(pathAndQuery.startIndex..., in: pathAndQuery)) != nil {
                return .pass("a static asset (ignore pattern), no API call")
            }
        }
        let url = Self.removingParameters(request.url)
        // the gate's cookie, or the PHP SDK's (`ch-id`): a visitor keeps their place either way
        let cookie = (request.cookie(options.cookieName) ?? request.cookie("ch-id")).map(GateSessionCookie.init(value:))
        let token = request.queryParameter("ch-id").flatMap { $0.isEmpty ? nil : $0 } ?? cookie?.token
        if let token, token.utf8.count > 512 || token.contains(where: { $0 == ";" || $0 == "," || $0 == " " }) {
            return .refuse(400, "the CrowdHandler token is malformed")
        }
        // Hybrid: a signature that comes back from the room, or the one the gate's cookie keeps.
        if mode == .hybrid, let signature, let token {
            let fresh = request.queryParameter("ch-id-signature").flatMap { sig in request.queryParameter("ch-requested").map { (sig, $0) }
            }
            // Only the room that guards this URL can vouch for it: a promotion signed for another
            // room of the feed (a room with no queue, say) opens nothing here.
            if let room = Self.room(guarding: url, in: rooms) {
                for (sig, requested) in [fresh, cookie?.signed].compactMap({ $0 })
                where signature.validate(signature: sig, token: token, requested: requested, room: room, now: options.clock.now()) == .valid
                {
                    let kept = GateSessionCookie(token: token, signed: (sig, requested))
                    return promoted(
                        .pass("signature valid (\(room.slug)), no API call", headers: [setCookie(kept)], sessionID: token),
                        request: request, cleanURL: url)
                }
            }
        }
        var perRequest = configuration
        perRequest.privateKey = nil  // the API check needs no signature key (not hashed per request)
        perRequest.ip = request.clientIP
        perRequest.agent = request.header("User-Agent") ?? configuration.agent
        if let lang = request.header("Accept-Language")?.split(separator: ",").first, !lang.isEmpty {
            perRequest.lang = lang.trimmingCharacters(in: .whitespaces)
        }
        let gatekeeper: CrowdHandlerGatekeeper
        do {
            gatekeeper = try CrowdHandlerGatekeeper(
                configuration: perRequest, transport: transport, clock: options.clock, mode: .full, token: token)
        } catch {
            return .refuse(500, "the CrowdHandler gate is misconfigured: \(error)")
        }
        let r = await gatekeeper.validateRequest(url: url)
        // full mode keeps the plain token (the SDKs' cookie); hybrid the promotion's signature too
        let signed = mode == .hybrid ? r.hash.flatMap { h in r.requested.map { (h, $0) } } : nil
        let kept = GateSessionCookie(token: r.token ?? token ?? "", signed: signed)
        // a failed check says nothing new about the visitor: their cookie is left as it is
        let cookies = kept.token.isEmpty || r.error != nil ? [] : [setCookie(kept)]
        if r.promoted {
            let reason = r.error.map { "API failed (\($0.vendorCode ?? 0)); trustOnFail lets the visitor in" } ?? "promoted"
            var d = GateDecision.pass(reason, headers: cookies, sessionID: r.token)
            d.vendorResponseID = r.responseID
            return r.error == nil ? promoted(d, request: request, cleanURL: url) : d
        }
        if let error = r.error, error.kind == .rejected {
            return GateDecision(
                verdict: .refuse, response: .refusal(403, "CrowdHandler refused this request (\(error.vendorCode ?? 403))"),
                reason: "API refused (\(error.vendorCode ?? 0))", sessionID: r.token)
        }
        if let room = await gatekeeper.redirectIfNotPromoted() {
            let reason = r.error != nil ? "API failed; safety-net room \(r.slug ?? "")" : "waiting room \(r.slug ?? "")"
            return GateDecision(verdict: .queue, response: .redirect(to: room, extra: cookies), reason: reason, sessionID: r.token)
        }
        if let error = r.error {
            // no trust and no safety-net room: CrowdHandler's catch-all waiting room, as every SDK
            // does (PHP `GateKeeper::getRedirectUrl` with no slug, JS `gk.ts`, .NET `GK.cs`)
            let room = configuration.waitingRoomURL(slug: "", targetURL: url, token: r.token ?? token)
            return GateDecision(
                verdict: .queue, response: .redirect(to: room),
                reason: "API failed (\(error.vendorCode ?? 0)), no trustOnFail and no safety-net room: the catch-all waiting room",
                sessionID: r.token)
        }
        // Not promoted, yet no room named: nothing guards this URL (proposal: pass).
        return .pass("no room guards this URL", headers: cookies, sessionID: r.token)
    }

    /// A promotion's decision, or, when the URL carried `ch-*` parameters and the request is a
    /// page load, a 302 to `cleanURL` (the URL without them) with the same cookie
    /// (``Options/redirectsAfterToken``).
    func promoted(_ decision: GateDecision, request: GateRequest, cleanURL: String) -> GateDecision {
        guard options.redirectsAfterToken, request.method == "GET" || request.method == "HEAD", cleanURL != request.url,
            request.queryParameter("ch-id") != nil
        else { return decision }
        var d = GateDecision(
            verdict: .pass, response: .redirect(to: cleanURL, extra: decision.passHeaders),
            reason: decision.reason + ": redirect to the URL without the ch-* parameters", sessionID: decision.sessionID)
        d.vendorResponseID = nil
        return d
    }

    /// The first room of the feed, in the feed's order, that guards `url`, as CrowdHandler's
    /// JavaScript and .NET SDKs choose it (`configParse.ts` `parse`, `GK.cs` `MatchRoom`): its
    /// `domain` (when the feed gives one) is the URL's host, and its `urlPattern` matches the
    /// path and query by its `patternType` (`regex`, `contains`, `all`; another type matches
    /// nothing). Nil when none does.
    static func room(guarding url: String, in rooms: [CrowdHandlerRoom]) -> CrowdHandlerRoom? {
        let pathAndQuery = Self.pathAndQuery(of: url)
        return rooms.first { room in
            if let domain = room.domain, !domain.isEmpty, !Self.hasOrigin(url, domain) { return false }
            let pattern = room.urlPattern ?? ""
            switch (room.patternType ?? "contains").lowercased() {
            case "all": return true
            case "regex":
                guard let regex = try? NSRegularExpression(pattern: pattern) else { return false }
                return regex.firstMatch(in: pathAndQuery, range: NSRange(pathAndQuery.startIndex..., in: pathAndQuery)) != nil
            case "contains":
                return !pattern.isEmpty && pathAndQuery.contains(pattern)
            default:
                return false
            }
        }
    }

    /// `/path?query` of an absolute URL (without its fragment).
    static func pathAndQuery(of url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let tail = rest[slash...].prefix { $0 != "#" }
        return tail.hasPrefix("?") ? "/" + tail : String(tail)
    }

    /// Whether `url` is on `domain` (`https://shop.example` or a bare host), compared without case.
    static func hasOrigin(_ url: String, _ domain: String) -> Bool {
        let host = { (text: String) -> String in
            var rest = Substring(text.lowercased())
            if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
            return String(rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" })
        }
        return host(url) == host(domain)
    }

    public func handlerAnswered(_ request: GateRequest, decision: GateDecision, status: Int, elapsed: Duration) async {
        guard let id = decision.vendorResponseID, !id.isEmpty, options.responseSampleRate > 0,
            Double.random(in: 0..<1) < options.responseSampleRate
        else { return }
        let rate = max(1, Int((1 / options.responseSampleRate).rounded()))
        _ = try? await CrowdHandlerClient(configuration: configuration, transport: transport)
            .recordResponse(responseID: id, code: status, time: elapsed, sampleRate: rate)
    }

    func setCookie(_ cookie: GateSessionCookie) -> GateHeader {
        var c = "\(options.cookieName)=\(cookie.value); Path=/; SameSite=Lax"
        if let age = options.cookieMaxAge { c += "; Max-Age=\(age)" }
        if let domain = options.cookieDomain, !domain.isEmpty { c += "; Domain=\(domain)" }
        if options.cookieSecure { c += "; Secure" }
        return GateHeader("Set-Cookie", c)
    }

    /// `url` without the `ch-*` parameters.
    static func removingParameters(_ url: String) -> String {
        guard let q = url.firstIndex(of: "?") else { return url }
        var rest = url[url.index(after: q)...]
        var fragment = ""
        if let h = rest.firstIndex(of: "#") {
            fragment = String(rest[h...])
            rest = rest[..<h]
        }
        let kept = rest.split(separator: "&").filter { pair in
            let name = pair.prefix { $0 != "=" }
            return !parameterNames.contains(String(name))
        }
        return String(url[..<q]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&")) + fragment
    }
}

/// The gate's CrowdHandler cookie: the token, and in hybrid mode the last promotion signature and
/// its time, `{token}~{requested}~{signature}` (proposal: the SDKs keep signatures in their own
/// cookie form; ours lets later requests be checked locally within the room's timeout).
struct GateSessionCookie {
    var token: String
    var signed: (String, String)?

    init(token: String, signed: (String, String)?) {
        self.token = token
        self.signed = signed
    }

    init(value: String) {
        let parts = value.split(separator: "~", omittingEmptySubsequences: false).map(String.init)
        token = parts.first ?? ""
        signed = parts.count == 3 ? (parts[2], parts[1]) : nil
    }

    var value: String {
        guard let (sig, requested) = signed else { return token }
        return "\(token)~\(requested)~\(sig)"
    }
}
