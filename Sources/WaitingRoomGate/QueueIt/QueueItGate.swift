import Foundation
import QueueIt
import WaitingRoom

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
        public var platformVersion: String
        /// After a valid `queueittoken` on a page load (GET or HEAD, not AJAX), answer 302 to the
        /// URL without it (with the cookie) instead of serving the page (the KU-JS sample does, "to
        /// avoid sharing of user specific token").
        public var redirectsAfterToken: Bool
        /// Where single-use tokens are remembered; nil: tokens may be replayed until their `ts` (the
        /// connectors' behaviour).
        public var ledger: GateReplayLedger?
        /// When set, queue redirects carry a fresh enqueue token bound to the visitor's IP, valid this long.
        public var enqueueTokenValidity: Duration?
        /// The time tokens and cookies are checked against.
        public var clock: any WaitingRoomClock
        /// How many valid session cookies each integration remembers its decision for, for the
        /// rest of the second it was made in (a page's burst of requests checks the cookie once;
        /// the answers are the same as without it). 0: every request is checked afresh.
        public var sessionMemoCapacity: Int

        public init(platformVersion: String = QueueItGate.defaultPlatformVersion, redirectsAfterToken: Bool = true,
                    ledger: GateReplayLedger? = GateReplayLedger(), enqueueTokenValidity: Duration? = nil,
                    clock: any WaitingRoomClock = SystemClock(), sessionMemoCapacity: Int = 10_000) {
            self.platformVersion = platformVersion
            self.redirectsAfterToken = redirectsAfterToken
            self.ledger = ledger
            self.enqueueTokenValidity = enqueueTokenValidity
            self.clock = clock
            self.sessionMemoCapacity = sessionMemoCapacity
        }
    }

    /// `kupver` by default (proposal).
    public static let defaultPlatformVersion = "swift-hummingbird-2"
    /// The AJAX request header (KU-JS `QueueITAjaxHeaderKey`).
    public static let ajaxHeader = "x-queueit-ajaxpageurl"
    /// The AJAX answer's header with the (encoded) redirect URL.
    public static let redirectHeader = "x-queueit-redirect"

    public var vendorID: String { QueueItConfiguration.vendorID }

    /// The header names the configuration's `HttpHeaderValidator` triggers read.
    public var consultedHeaderNames: Set<String> {
        Set(configuration.integrations.flatMap { $0.triggers.flatMap { $0.parts.compactMap(\.httpHeaderName) } })
    }
    /// The Queue-it customer id (`c`).
    public let customerId: String
    /// The published integration configuration.
    public let configuration: QueueItIntegrationConfig
    /// Settings beyond the configuration.
    public let options: Options
    let secretKey: String
    /// Each integration with its validator, in the configuration's order, shared (a request walks them without copying the
    /// integrations' strings).
    private let rules: [Rule]

    /// An integration, its validator and the decisions it gave valid cookies this second.
    final class Rule: Sendable {
        let integration: QueueItIntegration
        let validator: QueueItRequestValidator
        let memo: QueueItSessionMemo

        init(integration: QueueItIntegration, validator: QueueItRequestValidator, memo: QueueItSessionMemo) {
            self.integration = integration
            self.validator = validator
            self.memo = memo
        }
    }

    /// - Parameters:
    ///   - customerId: the Queue-it customer id (`c`).
    ///   - secretKey: the customer's secret key (Go platform); tokens and cookies are signed with it.
    ///   - configuration: the published integration configuration.
    public init(customerId: String, secretKey: String, configuration: QueueItIntegrationConfig, options: Options = Options()) throws(WaitingRoomError) {
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
            Rule(integration: i, validator: QueueItRequestValidator(settings: QueueItKnownUserSettings(
                customerId: customerId, secretKey: secretKey, eventId: i.eventId, queueBaseURL: i.queueBaseURL,
                cookieValidityMinutes: max(1, i.cookieValidityMinute), extendCookieValidity: i.extendCookieValidity,
                layoutName: i.layoutName, culture: i.culture, actionName: i.name, configVersion: configuration.version,
                cookieDomain: i.cookieDomain, cookieSecure: i.isCookieSecure, cookieHttpOnly: i.isCookieHttpOnly,
                redirectLogic: i.redirectLogic == "EventTargetUrl" ? .eventTargetURL : .targetURL,
                enqueueTokenValidity: options.enqueueTokenValidity)), memo: QueueItSessionMemo(capacity: options.sessionMemoCapacity))
        }
    }

    public func decide(_ request: GateRequest) async -> GateDecision {
        decideNow(request)
    }

    /// Always ``decideNow(_:)``: KnownUser decides from the request alone.
    public func immediateDecision(_ request: GateRequest) -> GateDecision? {
        decideNow(request)
    }

    /// The decision, synchronously (nothing here waits on the network).
    public func decideNow(_ request: GateRequest) -> GateDecision {
        let (urlWithoutToken, token) = QueueItRequestValidator.splitToken(request.url)
        guard let rule = rules.first(where: { rule in
            rule.integration.triggers.contains { $0.matches(request, url: urlWithoutToken) }
        }) else {
            return .pass("no trigger matched")
        }
        let integration = rule.integration
        let ajax = request.header(Self.ajaxHeader) ?? ""
        let isAjax = !ajax.isEmpty
        if isAjax, !Self.isAbsoluteHTTPURL(QueueItPercent.decode(ajax)) {
            return .refuse(400, "\(Self.ajaxHeader) must be the page's absolute http(s) URL, percent-encoded")
        }
        switch integration.actionType {
        case .ignore:
            return GateDecision(verdict: .ignore, reason: "ignore action '\(integration.name)'")
        case .cancel:
            let d = rule.validator.cancel(url: request.url, headers: request.headerPairs, clientIP: request.clientIP,
                                              now: options.clock.now())
            guard !d.isPassed, let url = d.redirectURL else {
                return GateDecision(verdict: .cancel, reason: "cancel action '\(integration.name)': no session cookie")
            }
            return GateDecision(verdict: .cancel, response: redirect(to: url, isAjax: isAjax, cookies: d.setCookies),
                                reason: "cancel action '\(integration.name)'", sessionID: d.queueId)
        case .queue:
            return queue(request, rule: rule, urlWithoutToken: urlWithoutToken, token: token, isAjax: isAjax, ajax: ajax)
        }
    }

    func queue(_ request: GateRequest, rule: Rule, urlWithoutToken: String, token: String?, isAjax: Bool, ajax: String) -> GateDecision {
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
        let validCookie = remembered != nil ? nil : rawCookie.flatMap(QueueItAcceptedCookie.parse).flatMap { c in
            (try? c.validate(secretKey: secretKey, eventId: integration.eventId, now: now,
                             cookieValidityMinutes: max(1, integration.cookieValidityMinute), clientIP: request.clientIP)) != nil ? c : nil
        }
        let cookieValid = remembered != nil || validCookie != nil
        // A token is only read when no valid session cookie came with it (KU-JS order).
        if !cookieValid, let token {
            let parsed = QueueItToken(token)
            if let c = parsed.customerId, c != customerId {
                return queueAgain(validator, target: target, isAjax: isAjax, reason: "token: for another customer")
            }
            if let ledger = options.ledger, let h = parsed.hash, ledger.wasUsed(h, now: nowEpoch) {
                return queueAgain(validator, target: target, isAjax: isAjax, reason: "token: already used")
            }
        }
        // An enqueue token the visitor brings (an invitation) is checked and used once.
        var invitation: String?
        if !cookieValid, token == nil, let given = request.queryParameter("enqueuetoken"), !given.isEmpty {
            let checker = QueueItEnqueueTokenValidator(secretKey: secretKey, customerId: customerId, eventId: integration.eventId)
            let checked: QueueItEnqueueToken
            do { checked = try checker.validate(given, now: now) } catch {
                return .refuse(403, "enqueue token refused: \(error)")
            }
            if let ip = checked.header.ipAddress, !ip.isEmpty, ip != request.clientIP {
                return .refuse(403, "enqueue token refused: it is bound to another IP address")
            }
            let expires = checked.header.expiresMillis.map { $0 / 1000 } ?? nowEpoch + 86_400
            if let ledger = options.ledger, !ledger.use("ti:" + checked.header.tokenIdentifier, expiresAt: expires, now: nowEpoch) {
                return .refuse(403, "enqueue token refused: its id was already used")
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
            var url = request.url
            var headers = request.headerPairs
            if let forced {
                url = forced + (token.map { (forced.contains("?") ? "&" : "?") + "queueittoken=" + QueueItPercent.encodeComponent($0) } ?? "")
                headers.removeAll { $0.0.lowercased() == Self.ajaxHeader }
            }
            d = validator.validate(url: url, headers: headers, clientIP: request.clientIP, now: now)
        }
        let cookies = d.setCookies.map { GateHeader("Set-Cookie", $0) }
        if d.isPassed {
            var reason = cookieValid ? "cookie valid" : "token valid"
            if !cookieValid, let token, let ledger = options.ledger, let h = QueueItToken(token).hash {
                _ = ledger.use(h, expiresAt: QueueItToken(token).expiresAtEpoch ?? nowEpoch + 600, now: nowEpoch)
            }
            if token != nil, !isAjax, options.redirectsAfterToken, request.method == "GET" || request.method == "HEAD" {
                reason += ": redirect to the URL without queueittoken"
                return GateDecision(verdict: .pass, response: .redirect(to: urlWithoutToken, extra: cookies), reason: reason,
                                    sessionID: d.queueId)
            }
            return .pass(reason, headers: cookies, sessionID: d.queueId)
        }
        guard var redirectURL = d.redirectURL else {
            return .pass("no redirect", headers: cookies)
        }
        let reason: String
        if let rejection = d.rejection {
            reason = "token: \(rejection.rawValue)"
        } else {
            if let invitation { redirectURL = validator.queueURL(target: target, enqueueToken: invitation) }
            redirectURL = withPlatformVersion(redirectURL, validator: validator)
            reason = rawCookie == nil ? "no session" : "cookie refused"
        }
        return GateDecision(verdict: .queue, response: redirect(to: redirectURL, isAjax: isAjax, cookies: d.setCookies), reason: reason)
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
        let setCookies = cookies.map { GateHeader("Set-Cookie", $0) }
        guard isAjax else { return .redirect(to: url, extra: setCookies) }
        return GateResponse(status: 200, headers: setCookies + [
            GateHeader(Self.redirectHeader, QueueItPercent.encodeComponent(url)),
            GateHeader("Access-Control-Expose-Headers", Self.redirectHeader),
        ] + GateResponse.noCacheHeaders)
    }

    static func isAbsoluteHTTPURL(_ text: String) -> Bool {
        guard let u = URLComponents(string: text), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = u.host, !host.isEmpty else { return false }
        return true
    }
}
