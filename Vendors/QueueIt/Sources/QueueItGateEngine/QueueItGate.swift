import Foundation
import Logging
import QueueIt
import Synchronization
import WaitingRoom
import WaitingRoomGate

/// Queue-it's KnownUser flow on the server (docs/queueit-protocol.md §7; KU-JS `KnownUser`,
/// `UserInQueueService`, `IntegrationEvaluator`): the first integration whose trigger matches the
/// request decides. Queue: a valid `QueueITAccepted` cookie or `queueittoken` passes (the cookie is
/// set or extended), anything else goes to the queue (an invalid token to Queue-it's error page);
/// Cancel: a session cookie is dropped and the visitor sent to the cancel page; Ignore: untouched.
/// Calls with `x-queueit-ajaxpageurl` get the AJAX form (200 and `x-queueit-redirect`), page loads
/// a 302; both carry no-cache headers.
///
/// The token, cookie and URL work is `QueueIt`'s ``QueueItRequestValidator`` (one per integration,
/// keyed once). On top of it the gate adds (each a proposal, see the README's "Protecting a
/// server"): a token naming another customer (`c_`) is refused, an accepted token is single-use
/// (``GateReplayLedger``), a visitor's `enqueuetoken` is checked and used once, a malformed AJAX
/// header is refused, and queue URLs carry `kupver`.
public struct QueueItGate: GateEngine {
    /// Settings beyond the integration configuration.
    public struct Options: Sendable {
        /// `kupver` in queue URLs (proposal: the platform the connector runs on).
        package var platformVersion: String
        /// After a valid `queueittoken` on a page load (GET or HEAD, not AJAX), answer 302 to the
        /// URL without it (with the cookie) instead of serving the page (the KU-JS sample does, "to
        /// avoid sharing of user specific token").
        package var redirectsAfterToken: Bool
        /// Where single-use tokens are remembered (this process's ``GateReplayLedger`` by default;
        /// a shared store behind several instances); nil: tokens may be replayed until their `ts`
        /// (the connectors' behaviour).
        package var ledger: GateCredentialLedger?
        /// When set, queue redirects carry a fresh enqueue token bound to the visitor's IP, valid this long.
        package var enqueueTokenValidity: Duration?
        /// The time tokens and cookies are checked against.
        package var clock: any WaitingRoomClock
        /// How many valid session cookies each integration remembers its decision for, for the
        /// rest of the second it was made in (a page's burst of requests checks the cookie once;
        /// the answers are the same as without it). 0: every request is checked afresh.
        package var sessionMemoCapacity: Int
        /// Lets `OPTIONS` requests (CORS preflights, which carry no cookie) through unchecked, as
        /// KU-JS's sample and Queue-it's edge connectors do. Default true.
        package var ignoresOptionsRequests: Bool
        /// What a request gets when the gate cannot decide (a Queue or Cancel integration without a
        /// `QueueDomain`, a validator that gives neither a pass nor a redirect): `true` (default,
        /// the connectors' samples) lets it through with `x-queueit-failed: true` on the answer and
        /// an error logged; `false` answers 503.
        package var failsOpen: Bool
        /// `SameSite` of the session cookie (`Lax`, `Strict`, `None`); nil: none, as every
        /// connector writes it. `HttpOnly` and `Secure` come from the integration
        /// (`IsCookieHttpOnly`, `IsCookieSecure`).
        package var cookieSameSite: String?
        /// Where failures and unknown action types are logged.
        package var logger: Logger
        /// The most bytes of a body a `RequestBodyValidator` part compares (the bytes after them
        /// are not looked at). Default 51,200, the KU-.NET sample's bound.
        package var maxBodyBytesRead: Int
        /// Refuse session cookies whose queue id and `Hip` are not in the forms Queue-it issues
        /// (``QueueItAcceptedCookie/hasIssuedForm``): their fields cannot be re-split under a
        /// valid hash. Default true (proposal; the connectors do not check).
        package var requiresIssuedCookieForm: Bool

        public init(
            platformVersion: String = QueueItGate.defaultPlatformVersion, redirectsAfterToken: Bool = true,
            ledger: GateCredentialLedger? = GateCredentialLedger(GateReplayLedger()), enqueueTokenValidity: Duration? = nil,
            clock: any WaitingRoomClock = SystemClock(), sessionMemoCapacity: Int = 10_000, ignoresOptionsRequests: Bool = true,
            failsOpen: Bool = true, cookieSameSite: String? = nil, requiresIssuedCookieForm: Bool = true,
            maxBodyBytesRead: Int = 51_200, logger: Logger = Logger(label: "waitingroom.gate.queueit")
        ) {
            self.platformVersion = platformVersion
            self.redirectsAfterToken = redirectsAfterToken
            self.ledger = ledger
            self.enqueueTokenValidity = enqueueTokenValidity
            self.clock = clock
            self.sessionMemoCapacity = sessionMemoCapacity
            self.ignoresOptionsRequests = ignoresOptionsRequests
            self.failsOpen = failsOpen
            self.cookieSameSite = cookieSameSite
            self.requiresIssuedCookieForm = requiresIssuedCookieForm
            self.maxBodyBytesRead = maxBodyBytesRead
            self.logger = logger
        }
    }

    /// `kupver` by default (proposal).
    public static let defaultPlatformVersion = "swift-hummingbird-2"
    /// The AJAX request header (KU-JS `QueueITAjaxHeaderKey`).
    package static let ajaxHeader = "x-queueit-ajaxpageurl"
    /// The AJAX answer's header with the (encoded) redirect URL.
    package static let redirectHeader = "x-queueit-redirect"
    /// The request header a token may come in when the query has none (Queue-it's edge
    /// connectors, e.g. Cloudflare's `QUEUEIT_TOKEN_HEADER`).
    package static let tokenHeader = "x-queueittoken"
    /// The header naming the connector on the gate's own answers (KU-JS sample: `nodejs`).
    package static let connectorHeader = GateHeader("x-queueit-connector", "swift")
    /// The header on an answer the gate let through because it could not decide (KU-JS sample).
    package static let failedHeader = GateHeader("x-queueit-failed", "true")

    public var vendorID: String { QueueItConfiguration.vendorID }

    /// ``Options/maxBodyBytesRead`` when a trigger has a `RequestBodyValidator` part, else 0
    /// (worked out once: adapters ask on every request).
    public let bodyBytesToDecide: Int

    /// The header names the configuration's `HttpHeaderValidator` triggers read.
    public let consultedHeaderNames: Set<String>
    /// The Queue-it customer id (`c`).
    package let customerId: String
    /// The published integration configuration.
    package let configuration: QueueItIntegrationConfig
    /// Settings beyond the configuration.
    package let options: Options
    let secretKey: String
    /// Each integration with its validator, in the configuration's order, shared (a request walks them without copying the
    /// integrations' strings).
    private let rules: [Rule]

    /// Requests let through by an integration whose `ActionType` is unknown (each also logged).
    private let unknownActions = Counter()
    /// Requests let through, or refused, because the gate could not decide.
    private let failures = Counter()

    /// How many requests an integration with an unknown `ActionType` let through (it acts as Ignore).
    package var unknownActionCount: Int { unknownActions.value }
    /// How many requests the gate could not decide (``Options/failsOpen``).
    package var failureCount: Int { failures.value }

    /// A count many requests add to at once.
    final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    /// An integration, its validator and the decisions it gave valid cookies this second.
    final class Rule: Sendable {
        let integration: QueueItIntegration
        let validator: QueueItRequestValidator
        let memo: QueueItSessionMemo
        /// Whether a Queue or Cancel action has a queue domain to send visitors to.
        let hasQueueDomain: Bool

        init(integration: QueueItIntegration, validator: QueueItRequestValidator, memo: QueueItSessionMemo) {
            self.integration = integration
            self.validator = validator
            self.memo = memo
            self.hasQueueDomain = !integration.queueDomain.trimmingCharacters(in: .whitespaces).isEmpty
        }
    }

    /// - Parameters:
    ///   - customerId: the Queue-it customer id (`c`).
    ///   - secretKey: the customer's secret key (Go platform); tokens and cookies are signed with it.
    ///   - configuration: the published integration configuration.
    public init(customerId: String, secretKey: String, configuration: QueueItIntegrationConfig, options: Options = Options())
        throws(WaitingRoomError)
    {
        guard !customerId.isEmpty else {
            throw .invalidConfiguration(field: "customerId", "the Queue-it customer id is required", vendor: QueueItConfiguration.vendorID)
        }
        guard !secretKey.isEmpty else {
            throw .invalidConfiguration(field: "secretKey", "the Queue-it secret key is required", vendor: QueueItConfiguration.vendorID)
        }
        self.customerId = customerId
        self.secretKey = secretKey
        self.configuration = configuration
        self.options = options
        self.rules = configuration.integrations.map { i in
            Rule(
                integration: i,
                validator: QueueItRequestValidator(
                    settings: QueueItKnownUserSettings(
                        customerId: customerId, secretKey: secretKey, eventId: i.eventId, queueBaseURL: i.queueBaseURL,
                        cookieValidityMinutes: max(1, i.cookieValidityMinute), extendCookieValidity: i.extendCookieValidity,
                        layoutName: i.layoutName, culture: i.culture, actionName: i.name, configVersion: configuration.version,
                        cookieDomain: i.cookieDomain, cookieSecure: i.isCookieSecure, cookieHttpOnly: i.isCookieHttpOnly,
                        redirectLogic: i.redirectLogic == "EventTargetUrl" ? .eventTargetURL : .targetURL,
                        enqueueTokenValidity: options.enqueueTokenValidity, cookieSameSite: options.cookieSameSite,
                        requiresIssuedCookieForm: options.requiresIssuedCookieForm)),
                memo: QueueItSessionMemo(capacity: options.sessionMemoCapacity))
        }
        let parts = configuration.integrations.flatMap { $0.triggers.flatMap(\.parts) }
        self.bodyBytesToDecide = parts.contains { $0.validatorType == "RequestBodyValidator" } ? options.maxBodyBytesRead : 0
        self.consultedHeaderNames = Set(parts.compactMap(\.httpHeaderName))
        for integration in configuration.integrations {
            if let action = integration.unknownActionType {
                options.logger.warning(
                    "Queue-it integration has an unknown ActionType; it acts as Ignore",
                    metadata: [
                        "integration": "\(integration.name)", "actionType": "\(action)"
                    ])
            }
        }
    }

    public func decide(_ request: GateRequest) async -> GateDecision {
        let now = epochNow()
        guard let ledger = options.ledger else {
            var view = GateCredentialView.none(now: now)
            return decideNow(request, credentials: &view)
        }
        return await ledger.decide(request, now: now) { view in decideNow(request, credentials: &view) }
    }

    /// The decision when it needs no wait: always with no ledger or the in-process one; with a
    /// shared ledger, when the request carries no token (most requests).
    public func immediateDecision(_ request: GateRequest) -> GateDecision? {
        let now = epochNow()
        guard let ledger = options.ledger else {
            var view = GateCredentialView.none(now: now)
            return decideNow(request, credentials: &view)
        }
        return ledger.decideNow(request, now: now) { view in decideNow(request, credentials: &view) }
    }

    /// ``immediateDecision(_:)`` when there is one; otherwise (a shared ledger and a token in the
    /// request) the decision as a preview, with the token counted as unused and nothing recorded:
    /// use ``decide(_:)`` to have the ledger read.
    package func decideNow(_ request: GateRequest) -> GateDecision {
        if let decision = immediateDecision(request) { return decision }
        var view = GateCredentialView.none(now: epochNow())
        return decideNow(request, credentials: &view)
    }

    func epochNow() -> Int64 { Int64(options.clock.now().timeIntervalSince1970.rounded(.down)) }

    /// The decision, synchronously, on what `credentials` says of single-use tokens (nothing here
    /// waits on the network).
    func decideNow(_ request: GateRequest, credentials: inout GateCredentialView) -> GateDecision {
        if options.ignoresOptionsRequests, request.method == "OPTIONS" { return .pass("OPTIONS is not gated") }
        var (urlWithoutToken, token) = QueueItRequestValidator.splitToken(request.url)
        var request = request
        // the query names `queueittoken` (even empty): a page let through is sent on without it
        // (the KU-JS sample compares the URL with the URL without the token)
        var tokenInQuery = urlWithoutToken != request.url
        if token == nil, let header = request.header(Self.tokenHeader), !header.isEmpty {
            token = header
            tokenInQuery = false
            request.url =
                urlWithoutToken + (urlWithoutToken.contains("?") ? "&" : "?") + "queueittoken=" + QueueItPercent.encodeComponent(header)
        }
        // A debug token is verified first, on every request that carries one, whatever matches
        // (KU-JS `KnownUser.validateRequestByIntegrationConfig` runs `ConnectorDiagnostics.verify`
        // before the triggers): a bad one goes to Queue-it's diagnostics page and leaves the
        // session cookie alone; a good one turns on the `queueitdebug` cookie for this answer.
        var diagnostics: String?
        if let token, QueueItToken(token).redirectTypeField == "debug", let first = rules.first {
            let eventId = QueueItToken(token).eventId ?? ""
            do throws(QueueItValidationError) {
                try QueueItTokenValidator(secretKey: secretKey, eventId: eventId).validate(token, now: options.clock.now(), clientIP: nil)
                diagnostics = first.validator.debugCookie(token: token, url: request.url, now: options.clock.now())
            } catch  where error == .hash || error == .timestamp {
                return GateDecision(
                    verdict: .queue, response: .redirect(to: first.validator.diagnosticsURL(code: error), extra: [Self.connectorHeader]),
                    reason: "debug token: \(error.rawValue)")
            } catch {
                diagnostics = first.validator.debugCookie(token: token, url: request.url, now: options.clock.now())
            }
        }
        var decision = decideOnTriggers(
            request, urlWithoutToken: urlWithoutToken, token: token, tokenInQuery: tokenInQuery, credentials: &credentials)
        if let diagnostics {
            // one `queueitdebug` cookie, whichever path the decision took (the validator writes its own on a token it checks)
            let isDebugCookie = { (h: GateHeader) in
                h.name == "Set-Cookie" && h.value.hasPrefix(QueueItRequestValidator.debugCookieName + "=")
            }
            decision.passHeaders.removeAll(where: isDebugCookie)
            decision.response?.headers.removeAll(where: isDebugCookie)
            decision.addCookie(diagnostics)
        }
        return decision
    }

    func decideOnTriggers(
        _ request: GateRequest, urlWithoutToken: String, token: String?, tokenInQuery: Bool,
        credentials: inout GateCredentialView
    ) -> GateDecision {
        guard
            let rule = rules.first(where: { rule in
                rule.integration.triggers.contains { $0.matches(request, url: urlWithoutToken) }
            })
        else {
            return .pass("no trigger matched")
        }
        let integration = rule.integration
        let ajax = request.header(Self.ajaxHeader) ?? ""
        let isAjax = !ajax.isEmpty
        // (G6) the AJAX page becomes the `t` of a redirect: checked for the actions that redirect
        // (KU-JS `handleIgnoreAction` never reads it)
        if isAjax, integration.actionType != .ignore, !Self.isAbsoluteHTTPURL(QueueItPercent.decode(ajax)) {
            return .refuse(400, "\(Self.ajaxHeader) must be the page's absolute http(s) URL, percent-encoded")
        }
        // a Queue or Cancel action with no queue domain has nowhere to send anyone: the gate cannot decide
        if integration.actionType != .ignore, !rule.hasQueueDomain {
            return cannotDecide("the integration has no QueueDomain", integration: integration, cookies: [])
        }
        switch integration.actionType {
        case .ignore:
            if let action = integration.unknownActionType {
                unknownActions.add()
                options.logger.warning(
                    "request let through by an integration with an unknown ActionType",
                    metadata: [
                        "integration": "\(integration.name)", "actionType": "\(action)"
                    ])
                return GateDecision(verdict: .ignore, reason: "unknown action type '\(action)' of '\(integration.name)' acts as Ignore")
            }
            return GateDecision(verdict: .ignore, reason: "ignore action '\(integration.name)'")
        case .cancel:
            let d = rule.validator.cancel(
                url: request.url, headers: request.headerPairs, clientIP: request.clientIP,
                now: options.clock.now())
            guard !d.isPassed, let url = d.redirectURL else {
                return GateDecision(verdict: .cancel, reason: "cancel action '\(integration.name)': no session cookie")
            }
            return GateDecision(
                verdict: .cancel, response: redirect(to: url, isAjax: isAjax, cookies: d.setCookies),
                reason: "cancel action '\(integration.name)'", sessionID: d.queueId)
        case .queue:
            return queue(
                request, rule: rule, urlWithoutToken: urlWithoutToken, token: token, tokenInQuery: tokenInQuery, isAjax: isAjax, ajax: ajax,
                credentials: &credentials)
        }
    }

    func queue(
        _ request: GateRequest, rule: Rule, urlWithoutToken: String, token: String?, tokenInQuery: Bool, isAjax: Bool,
        ajax: String, credentials: inout GateCredentialView
    ) -> GateDecision {
        let integration = rule.integration
        let validator = rule.validator
        let now = options.clock.now()
        let nowEpoch = Int64(now.timeIntervalSince1970.rounded(.down))
        let forced = integration.redirectLogic == "ForcedTargetUrl" ? integration.forcedTargetURL : nil
        let target = forced ?? (isAjax ? QueueItPercent.decode(ajax) : urlWithoutToken)
        let rawCookie = request.cookie(validator.cookieName)
        // The same valid cookie, from the same address, earlier this second: the same decision.
        let memoKey = rawCookie.map { QueueItSessionMemo.Key(cookie: $0, clientIP: request.clientIP, isAjax: isAjax) }
        let remembered = memoKey.flatMap { rule.memo.decision(for: $0, second: nowEpoch) }
        // The session cookie, when it is valid: checked once here, and the validator is then only
        // asked to re-issue it (its step 1) rather than to read it again.
        let validCookie = remembered != nil ? nil : validSessionCookie(rawCookie, request, integration: integration, now: now)
        let cookieValid = remembered != nil || validCookie != nil
        // A token is only read when no valid session cookie came with it (KU-JS order).
        if !cookieValid, let token {
            let parsed = QueueItToken(token)
            if let c = parsed.customerId, c != customerId {
                return queueAgain(validator, target: target, isAjax: isAjax, reason: "token: for another customer")
            }
            if let h = parsed.hash, credentials.wasUsed(h) {
                return queueAgain(validator, target: target, isAjax: isAjax, reason: "token: already used")
            }
        }
        // An enqueue token the visitor brings (an invitation) is checked and used once.
        var invitation: String?
        if !cookieValid, token == nil, let given = request.queryParameter("enqueuetoken"), !given.isEmpty {
            if let refusal = useInvitation(given, request, integration: integration, now: now, credentials: &credentials) {
                return refusal
            }
            invitation = given
        }
        let d: QueueItKnownUserDecision
        if let remembered {
            d = remembered
        } else if let validCookie {
            d = validator.passing(validCookie, isAjax: isAjax, now: now)
            if let memoKey { rule.memo.remember(d, for: memoKey, second: nowEpoch) }
        } else {
            d = validateWithoutCookie(request, validator: validator, forced: forced, token: token, now: now)
        }
        let cookies = d.setCookies.map { GateHeader("Set-Cookie", $0) }
        if d.isPassed {
            var reason = cookieValid ? "cookie valid" : "token valid"
            if !cookieValid, let token, let h = QueueItToken(token).hash {
                credentials.willUse(
                    h, expiresAt: QueueItToken(token).expiresAtEpoch ?? nowEpoch + 600,
                    ifReplayed: queueAgain(validator, target: target, isAjax: isAjax, reason: "token: already used"))
            }
            if tokenInQuery, !isAjax, options.redirectsAfterToken, request.method == "GET" || request.method == "HEAD" {
                reason += ": redirect to the URL without queueittoken"
                return GateDecision(
                    verdict: .pass, response: .redirect(to: urlWithoutToken, extra: cookies), reason: reason,
                    sessionID: d.queueId)
            }
            return .pass(reason, headers: cookies, sessionID: d.queueId)
        }
        guard var redirectURL = d.redirectURL else {
            return cannotDecide("the validator gave neither a pass nor a redirect", integration: integration, cookies: cookies)
        }
        let reason: String
        if d.rejection == .sessionState, token == nil {
            reason = "cookie: bound to another address"
        } else if let rejection = d.rejection {
            reason = "token: \(rejection.rawValue)"
        } else {
            if let invitation { redirectURL = validator.queueURL(target: target, enqueueToken: invitation) }
            redirectURL = withPlatformVersion(redirectURL, validator: validator)
            reason = rawCookie == nil ? "no session" : "cookie refused"
        }
        return GateDecision(verdict: .queue, response: redirect(to: redirectURL, isAjax: isAjax, cookies: d.setCookies), reason: reason)
    }

    /// The visitor's session cookie when it is valid for `integration` (its event, its validity,
    /// its address), else nil.
    private func validSessionCookie(
        _ rawCookie: String?, _ request: GateRequest, integration: QueueItIntegration, now: Date
    ) -> QueueItAcceptedCookie? {
        rawCookie.flatMap(QueueItAcceptedCookie.parse).flatMap { c in
            (try? c.validate(
                secretKey: secretKey, eventId: integration.eventId, now: now,
                cookieValidityMinutes: max(1, integration.cookieValidityMinute), clientIP: request.clientIP,
                requiringIssuedForm: options.requiresIssuedCookieForm)) != nil ? c : nil
        }
    }

    /// Checks the enqueue token `given` (an invitation) and marks its id used; the refusal when
    /// it is invalid, bound to another address or already used, else nil.
    private func useInvitation(
        _ given: String, _ request: GateRequest, integration: QueueItIntegration, now: Date,
        credentials: inout GateCredentialView
    ) -> GateDecision? {
        let nowEpoch = Int64(now.timeIntervalSince1970.rounded(.down))
        let checker = QueueItEnqueueTokenValidator(secretKey: secretKey, customerId: customerId, eventId: integration.eventId)
        let checked: QueueItEnqueueToken
        do { checked = try checker.validate(given, now: now) } catch {
            return .refuse(403, "enqueue token refused: \(error)")
        }
        if let ip = checked.header.ipAddress, !ip.isEmpty, ip != request.clientIP {
            return .refuse(403, "enqueue token refused: it is bound to another IP address")
        }
        let expires = checked.header.expiresMillis.map { $0 / 1000 } ?? nowEpoch + 86_400
        let reused = GateDecision.refuse(403, "enqueue token refused: its id was already used")
        let id = "ti:" + checked.header.tokenIdentifier
        if credentials.wasUsed(id) { return reused }
        credentials.willUse(id, expiresAt: expires, ifReplayed: reused)
        return nil
    }

    /// The validator's decision for a request without a valid session cookie: on the request's
    /// URL, or on the forced target URL (with the token, and without the Ajax header) when set.
    private func validateWithoutCookie(
        _ request: GateRequest, validator: QueueItRequestValidator, forced: String?, token: String?, now: Date
    ) -> QueueItKnownUserDecision {
        var url = request.url
        var headers = request.headerPairs
        if let forced {
            url =
                forced + (token.map { (forced.contains("?") ? "&" : "?") + "queueittoken=" + QueueItPercent.encodeComponent($0) } ?? "")
            headers.removeAll { $0.0.lowercased() == Self.ajaxHeader }
        }
        return validator.validate(url: url, headers: headers, clientIP: request.clientIP, now: now)
    }

    /// A request the gate cannot decide: let through with `x-queueit-failed: true` (fail open, the
    /// connectors' samples) or answered 503 (``Options/failsOpen`` false); logged and counted.
    func cannotDecide(_ problem: String, integration: QueueItIntegration, cookies: [GateHeader]) -> GateDecision {
        failures.add()
        options.logger.error(
            "Queue-it gate could not decide",
            metadata: [
                "integration": "\(integration.name)", "problem": "\(problem)", "failsOpen": "\(options.failsOpen)"
            ])
        guard options.failsOpen else {
            return GateDecision(
                verdict: .refuse,
                response: .refusal(
                    503, "the waiting room check failed; try again in a minute",
                    extra: [Self.failedHeader]), reason: "failed closed: \(problem)")
        }
        return .pass("failed open: \(problem)", headers: cookies + [Self.failedHeader])
    }

    /// Back to the queue without reading the token any further.
    func queueAgain(_ validator: QueueItRequestValidator, target: String, isAjax: Bool, reason: String) -> GateDecision {
        let url = withPlatformVersion(validator.queueURL(target: target), validator: validator)
        return GateDecision(verdict: .queue, response: redirect(to: url, isAjax: isAjax, cookies: []), reason: reason)
    }

    /// `&kupver={platformVersion}` added to a queue URL (proposal).
    func withPlatformVersion(_ url: String, validator: QueueItRequestValidator) -> String {
        guard url.hasPrefix(validator.settings.queueBaseURL + "/?"), !options.platformVersion.isEmpty else { return url }
        return url + "&kupver=" + QueueItPercent.encodeComponent(options.platformVersion)
    }

    /// A page load: 302 with `Location`. An AJAX call: 200 with `x-queueit-redirect` (the URL,
    /// encoded like KU-JS), exposed to scripts by `Access-Control-Expose-Headers`. Both no-cache.
    func redirect(to url: String, isAjax: Bool, cookies: [String]) -> GateResponse {
        let setCookies = cookies.map { GateHeader("Set-Cookie", $0) } + [Self.connectorHeader]
        guard isAjax else { return .redirect(to: url, extra: setCookies) }
        return GateResponse(
            status: 200,
            headers: setCookies + [
                GateHeader(Self.redirectHeader, QueueItPercent.encodeComponent(url)),
                GateHeader("Access-Control-Expose-Headers", Self.redirectHeader)
            ] + GateResponse.noCacheHeaders)
    }

    static func isAbsoluteHTTPURL(_ text: String) -> Bool {
        guard let u = URLComponents(string: text), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = u.host, !host.isEmpty
        else { return false }
        return true
    }
}
