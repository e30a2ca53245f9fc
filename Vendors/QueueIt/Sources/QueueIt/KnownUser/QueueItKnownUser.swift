import Foundation

/// What a KnownUser connector's `x-queueit-redirect` header tells the app (docs/queueit-protocol.md §7.1 step 3).
package struct QueueItRedirectInfo: Sendable, Hashable {
    /// `c`: customer id.
    package var customerId: String
    /// `e`: waiting room (event) id.
    package var waitingRoomId: String
    /// `l`: layout name.
    package var layoutName: String?
    /// `cid`: culture / language.
    package var language: String?
    /// `enqueuetoken`: an enqueue token to queue with.
    package var enqueueToken: String?
    /// The redirect URL's `scheme://host[:port]` (used as `waitingRoomDomain`, the behind-proxy rule).
    package var waitingRoomDomain: String
    /// The redirect URL's path before `/error/…` or `/cancel/…`, without slashes (behind-proxy prefix).
    package var pathPrefix: String?
    /// The decoded redirect URL.
    package var redirectURL: String

    /// Parses the header value: the URL, percent-encoded once (KU-JS `encodeURIComponent` or KU-J
    /// form encoding); an unencoded `http(s)://` value is accepted as is.
    package static func parse(headerValue: String) -> QueueItRedirectInfo? {
        let trimmed = headerValue.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 16_384 else { return nil }
        let lower = trimmed.lowercased()
        let decoded =
            lower.hasPrefix("http://") || lower.hasPrefix("https://") ? trimmed : QueueItPercent.decode(trimmed, plusAsSpace: true)
        guard let comps = URLComponents(string: decoded), let scheme = comps.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = comps.host, !host.isEmpty
        else { return nil }
        let items = QueueItPercent.queryItems(Substring(comps.percentEncodedQuery ?? ""))
        func item(_ n: String) -> String? {
            items.first(where: { $0.name == n }).map(\.value).flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let c = item("c"), let e = item("e") else { return nil }
        var path = comps.percentEncodedPath
        for marker in ["/error/", "/cancel/"] {
            if let r = path.range(of: marker) { path = String(path[..<r.lowerBound]) }
        }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let authority = comps.port.map { "\(hostPart):\($0)" } ?? hostPart
        return QueueItRedirectInfo(
            customerId: c, waitingRoomId: e, layoutName: item("l"), language: item("cid"),
            enqueueToken: item("enqueuetoken"), waitingRoomDomain: "\(scheme)://\(authority)",
            pathPrefix: QueueItEndpoint.sanitizePathPrefix(QueueItPercent.decode(path)), redirectURL: decoded)
    }
}

/// Settings of the Swift-server KnownUser-style validator.
package struct QueueItKnownUserSettings: Sendable, Hashable {
    package var customerId: String
    package var secretKey: String
    /// The protected waiting room.
    package var eventId: String
    /// Where visitors queue: `https://{customerId}.queue-it.net` by default, or a proxy base URL
    /// (`scheme://host[:port][/prefix]`).
    package var queueBaseURL: String
    /// Cookie validity when the token has no `cv_` (KnownUser `CookieValidityMinute`).
    package var cookieValidityMinutes: Int
    /// Re-issue the cookie with a fresh issue time on each valid request (when it has no fixed validity).
    package var extendCookieValidity: Bool
    package var layoutName: String?
    package var culture: String?
    /// `man` in the redirect URL.
    package var actionName: String
    /// `cver` in the redirect URL.
    package var configVersion: Int
    /// `Domain` attribute of the cookie.
    package var cookieDomain: String?
    /// `Secure` on the cookie (the integration's `IsCookieSecure`).
    package var cookieSecure: Bool
    /// `HttpOnly` on the cookie (the integration's `IsCookieHttpOnly`).
    package var cookieHttpOnly: Bool
    /// `SameSite` on the cookie (`Lax`, `Strict`, `None`); nil: none (no connector writes one).
    package var cookieSameSite: String?
    /// Refuse session cookies whose fields are not in the forms Queue-it issues
    /// (``QueueItAcceptedCookie/hasIssuedForm``). Default false, as the connectors; the gate sets it.
    package var requiresIssuedCookieForm: Bool
    /// Where the queue sends the visitor afterwards (the action's redirect logic): the request's
    /// URL (`t` in the redirect) or the waiting room's own event target URL (`t` omitted; KU-JS).
    package var redirectLogic: QueueItRedirectLogic
    /// When set, queue redirects carry `enqueuetoken`: an enqueue token (``QueueItEnqueueTokenMinter``)
    /// for this customer and room, bound to the client IP, valid this long. (proposal) What a
    /// connector puts in it is not public; real redirects show `c`, `e`, `ip` and a short `exp`.
    package var enqueueTokenValidity: Duration?

    /// `ver` in the redirect URL.
    package static let connectorVersion = "v3-swift-1.0.0"

    package init(
        customerId: String, secretKey: String, eventId: String, queueBaseURL: String? = nil,
        cookieValidityMinutes: Int = 20, extendCookieValidity: Bool = true,
        layoutName: String? = nil, culture: String? = nil, actionName: String = "Queue",
        configVersion: Int = 1, cookieDomain: String? = nil, cookieSecure: Bool = false, cookieHttpOnly: Bool = false,
        redirectLogic: QueueItRedirectLogic = .targetURL, enqueueTokenValidity: Duration? = nil, cookieSameSite: String? = nil,
        requiresIssuedCookieForm: Bool = false
    ) {
        self.customerId = customerId
        self.secretKey = secretKey
        self.eventId = eventId
        var base = queueBaseURL ?? "https://\(customerId).queue-it.net"
        while base.hasSuffix("/") { base.removeLast() }
        self.queueBaseURL = base
        self.cookieValidityMinutes = cookieValidityMinutes
        self.extendCookieValidity = extendCookieValidity
        self.layoutName = layoutName
        self.culture = culture
        self.actionName = actionName
        self.configVersion = configVersion
        self.cookieDomain = cookieDomain
        self.cookieSecure = cookieSecure
        self.cookieHttpOnly = cookieHttpOnly
        self.redirectLogic = redirectLogic
        self.enqueueTokenValidity = enqueueTokenValidity
        self.cookieSameSite = cookieSameSite
        self.requiresIssuedCookieForm = requiresIssuedCookieForm
    }
}

/// Where the queue sends a visitor back to (KnownUser action setting "redirect logic").
package enum QueueItRedirectLogic: String, Sendable, Hashable, CaseIterable {
    /// The protected page the visitor asked for: `t={target}` in the redirect.
    case targetURL
    /// The waiting room's configured event target URL: no `t` (KU-JS omits it).
    case eventTargetURL
}

/// What the server should do with a request.
package struct QueueItKnownUserDecision: Sendable, Hashable {
    /// Whether the request may proceed to the protected resource.
    package var isPassed: Bool
    /// Where to send the visitor when not passed (the decoded URL).
    package var redirectURL: String?
    /// Whether the request was an "ajax" call (`x-queueit-ajaxpageurl` present).
    package var isAjax: Bool
    /// Why a token or cookie was rejected, if one was.
    package var rejection: QueueItValidationError?
    /// The queue id of a passed visitor.
    package var queueId: String?
    /// The redirect type of a passed visitor.
    package var redirectType: String?
    /// `Set-Cookie` header values to send.
    package var setCookies: [String]

    /// The headers to add to the response: `Set-Cookie`s, and for a redirect either
    /// `x-queueit-redirect` (ajax: the URL encoded like KU-JS) with `Access-Control-Expose-Headers`
    /// and no-cache headers, or `Location` (answer 302 then).
    package var responseHeaders: [(String, String)] {
        var h: [(String, String)] = setCookies.map { ("Set-Cookie", $0) }
        if let url = redirectURL, !isPassed {
            if isAjax {
                h.append(("x-queueit-redirect", QueueItPercent.encodeComponent(url)))
                h.append(("Access-Control-Expose-Headers", "x-queueit-redirect"))
                h.append(("Cache-Control", "no-cache, no-store, must-revalidate, max-age=0"))
                h.append(("Pragma", "no-cache"))
                h.append(("Expires", "Fri, 01 Jan 1990 00:00:00 GMT"))
            } else {
                h.append(("Location", url))
            }
        }
        return h
    }

    package static func == (a: Self, b: Self) -> Bool {
        a.isPassed == b.isPassed && a.redirectURL == b.redirectURL && a.isAjax == b.isAjax && a.rejection == b.rejection
            && a.queueId == b.queueId && a.redirectType == b.redirectType && a.setCookies == b.setCookies
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(isPassed)
        hasher.combine(redirectURL)
        hasher.combine(setCookies)
    }
}

/// A KnownUser-style request validator for Swift servers (docs/queueit-protocol.md §7.2–7.4): checks the
/// `QueueITAccepted` cookie, then a `queueittoken` query parameter, and otherwise sends the visitor
/// to the queue. Ajax calls (header `x-queueit-ajaxpageurl`) get an `x-queueit-redirect` header.
package struct QueueItRequestValidator: Sendable {
    package let settings: QueueItKnownUserSettings
    /// The `queueittoken` check, keyed once (keep one request validator per settings).
    let tokenValidator: QueueItTokenValidator
    /// The session cookie's name for the settings' event.
    package let cookieName: String

    package init(settings: QueueItKnownUserSettings) {
        self.settings = settings
        self.tokenValidator = QueueItTokenValidator(secretKey: settings.secretKey, eventId: settings.eventId)
        self.cookieName = QueueItAcceptedCookie.name(forEvent: settings.eventId)
    }

    /// Validates one request.
    /// - Parameters:
    ///   - url: the full request URL as the client sent it.
    ///   - headers: request headers (`Cookie`, `x-queueit-ajaxpageurl` are read; names case-insensitive).
    ///   - clientIP: the client's address, checked against `hip` when present.
    package func validate(url: String, headers: [(String, String)], clientIP: String?, now: Date) -> QueueItKnownUserDecision {
        let s = settings
        let nowEpoch = Int64(now.timeIntervalSince1970.rounded(.down))
        let ajaxHeader = headers.first(where: { $0.0.lowercased() == "x-queueit-ajaxpageurl" })?.1 ?? ""
        let isAjax = !ajaxHeader.isEmpty
        let (urlWithoutToken, token) = Self.splitToken(url)
        let targetURL = isAjax ? QueueItPercent.decode(ajaxHeader) : urlWithoutToken
        let cookieRaw = Self.cookie(named: cookieName, in: headers)
        var setCookies: [String] = []
        var decision = QueueItKnownUserDecision(
            isPassed: false, redirectURL: nil, isAjax: isAjax, rejection: nil,
            queueId: nil, redirectType: nil, setCookies: [])
        // Why a cookie that was found was not accepted.
        var cookieRejection: QueueItValidationError?
        var rejectedCookie: QueueItAcceptedCookie?
        // 1. A valid cookie lets the request through.
        if let raw = cookieRaw, !raw.isEmpty {
            if let c = QueueItAcceptedCookie.parse(raw),
                (try? c.validate(
                    secretKey: s.secretKey, eventId: s.eventId, now: now,
                    cookieValidityMinutes: s.cookieValidityMinutes, clientIP: clientIP,
                    requiringIssuedForm: s.requiresIssuedCookieForm)) != nil
            {
                return passing(c, isAjax: isAjax, now: now)
            }
            // Found but invalid: cancel it (unless a valid token replaces it below).
            if let c = QueueItAcceptedCookie.parse(raw) {
                rejectedCookie = c
                do throws(QueueItValidationError) {
                    try c.validate(
                        secretKey: s.secretKey, eventId: s.eventId, now: now,
                        cookieValidityMinutes: s.cookieValidityMinutes, clientIP: clientIP,
                        requiringIssuedForm: s.requiresIssuedCookieForm)
                } catch { cookieRejection = error }
            } else {
                cookieRejection = .sessionState
            }
            setCookies.append(cancelCookie(name: cookieName))
        }
        // 2. A queueittoken in the URL.
        if let token {
            return tokenDecision(
                token, url: url, targetURL: targetURL, clientIP: clientIP, now: now,
                decision: decision, setCookies: setCookies)
        }
        // 3. A cookie bound to another address, and no token: Queue-it's session-state error page
        // (KU-JS `UserInQueueService.validateQueueRequest`), the cookie cleared.
        if cookieRejection == .ip, let c = rejectedCookie {
            decision.rejection = .sessionState
            decision.redirectURL =
                "\(s.queueBaseURL)/error/connector/sessionstate/?\(commonQuery())"
                + "&icr=\(enc(ipBindingReason(clientIP: clientIP, hashedIP: c.hashedIP, now: now)))&ts=\(nowEpoch)"
                + targetParameter("t", targetURL)
            decision.setCookies = setCookies
            return decision
        }
        // 4. Queue.
        decision.redirectURL = queueURL(target: targetURL, enqueueToken: enqueueToken(clientIP: clientIP, now: now))
        decision.setCookies = setCookies
        return decision
    }

    /// Step 2 of ``validate(url:headers:clientIP:now:)``: a request with a `queueittoken` (a
    /// debug token's diagnostics first), passed with a new cookie or sent to the error page.
    /// `decision` and `setCookies` are what step 1 left.
    func tokenDecision(
        _ token: String, url: String, targetURL: String, clientIP: String?, now: Date,
        decision: QueueItKnownUserDecision, setCookies: [String]
    ) -> QueueItKnownUserDecision {
        let s = settings
        let nowEpoch = Int64(now.timeIntervalSince1970.rounded(.down))
        var decision = decision
        var setCookies = setCookies
        // rt_debug: connector diagnostics (KU-JS `ConnectorDiagnostics`): a setup problem, a bad
        // hash or an expired token goes to Queue-it's diagnostics page; a good one sets the
        // `queueitdebug` cookie (20 min) and is then validated as usual.
        if QueueItToken(token).redirectTypeField == "debug" {
            if s.customerId.isEmpty || s.secretKey.isEmpty {
                decision.redirectURL = Self.diagnosticsSetupURL
                decision.setCookies = setCookies
                return decision
            }
            do throws(QueueItValidationError) {
                try tokenValidator.validate(token, now: now, clientIP: clientIP)
            } catch  where error == .hash || error == .timestamp {
                decision.rejection = error
                decision.redirectURL = diagnosticsURL(code: error)
                decision.setCookies = setCookies
                return decision
            } catch {}
            setCookies.append(debugCookie(token: token, url: url, now: now))
        }
        do {
            let t = try tokenValidator.validate(token, now: now, clientIP: clientIP)
            let rt = t.redirectTypeField ?? "queue"
            // `cv_0` is no fixed validity (KU-JS `getValidTokenResult` keeps a fixed validity only when > 0)
            let fixed = t.cookieValidityMinutes.flatMap { $0 > 0 ? $0 : nil }
            let cookie = QueueItAcceptedCookie(
                eventId: s.eventId, queueId: t.queueId ?? "", fixedValidityMinutes: fixed,
                redirectType: rt, issueTime: nowEpoch, hashedIP: t.hashedIP, secretKey: s.secretKey)
            decision.isPassed = true
            decision.queueId = t.queueId
            decision.redirectType = rt.lowercased()
            decision.setCookies =
                setCookies.filter { $0.hasPrefix(Self.debugCookieName + "=") }
                + [setCookie(name: cookieName, value: cookie.value, now: now)]
            return decision
        } catch {
            decision.rejection = error
            // `icr` only says why the token's IP binding failed (KU-JS `validateToken`); the
            // cookie's reason is never reported on a token error
            let icr =
                error == .ip ? ipBindingReason(clientIP: clientIP, hashedIP: QueueItToken(token).hashedIP, now: now, withTime: false) : nil
            decision.redirectURL = errorURL(code: error, token: token, target: targetURL, now: nowEpoch, bindingReason: icr)
            decision.setCookies = setCookies
            return decision
        }
    }

    func commonQuery() -> String {
        let s = settings
        var q =
            "c=\(enc(s.customerId))&e=\(enc(s.eventId))&ver=\(enc(QueueItKnownUserSettings.connectorVersion))&cver=\(s.configVersion)&man=\(enc(s.actionName))"
        if let cid = s.culture, !cid.isEmpty { q += "&cid=\(enc(cid))" }
        if let l = s.layoutName, !l.isEmpty { q += "&l=\(enc(l))" }
        return q
    }

    /// `&t={target}`, or nothing when the redirect logic is the event target URL.
    func targetParameter(_ name: String, _ target: String) -> String {
        settings.redirectLogic == .eventTargetURL || target.isEmpty ? "" : "&\(name)=\(enc(target))"
    }

    /// `{base}/?c=…&e=…&ver=…&cver=…&man=…[&cid][&l][&enqueuetoken={token}][&t={target}]` (KU-JS
    /// `getQueueResult`; `t` omitted for the event-target-URL redirect logic).
    package func queueURL(target: String, enqueueToken: String? = nil) -> String {
        "\(settings.queueBaseURL)/?\(commonQuery())" + (enqueueToken.map { "&enqueuetoken=\(enc($0))" } ?? "")
            + targetParameter("t", target)
    }

    /// `{base}/error/{code}/?c=…[&icr={reason}]&queueittoken={token}&ts={now}[&t={target}]` (KU-JS
    /// `getErrorResult`). `icr` is there only for a token bound to another address
    /// (``ipBindingReason(clientIP:hashedIP:now:)``), as in KU-JS `validateToken`.
    package func errorURL(
        code: QueueItValidationError, token: String, target: String, now: Int64,
        bindingReason: String? = nil
    ) -> String {
        "\(settings.queueBaseURL)/error/\(code.rawValue)/?\(commonQuery())"
            + (bindingReason.map { "&icr=\(enc($0))" } ?? "")
            + "&queueittoken=\(enc(token))&ts=\(now)" + targetParameter("t", target)
    }

    /// KU-JS's IP-binding reason: `ip,cip:{the client IP's characters in hex},hip:{hip}`, and for
    /// the session-state error `,st:{now in milliseconds}` (`SessionValidationResult`,
    /// `CookieStateInfo`; the token's `ip` error carries no `st`).
    package func ipBindingReason(clientIP: String?, hashedIP: String?, now: Date, withTime: Bool = true) -> String {
        let hex = (clientIP ?? "").utf8.map { String(format: "%02x", $0) }.joined()
        var reason = "ip,cip:\(hex),hip:\(hashedIP ?? "")"
        if withTime { reason += ",st:\(Int64((now.timeIntervalSince1970 * 1000).rounded(.down)))" }
        return reason
    }

    /// The enqueue token a queue redirect carries, when ``QueueItKnownUserSettings/enqueueTokenValidity`` is set.
    func enqueueToken(clientIP: String?, now: Date) -> String? {
        guard let validity = settings.enqueueTokenValidity else { return nil }
        return QueueItEnqueueTokenMinter(secretKey: settings.secretKey).mint(
            customerId: settings.customerId, eventId: settings.eventId, issuedAt: now,
            expiresAt: now.addingTimeInterval(validity.seconds), ipAddress: clientIP)
    }

    /// KU-JS `ConnectorDiagnostics`: where a debug token with a setup problem goes.
    package static let diagnosticsSetupURL = "https://api2.queue-it.net/diagnostics/connector/error/?code=setup"

    /// KU-JS `ConnectorDiagnostics`: where a debug token with a bad hash or past expiry goes.
    package func diagnosticsURL(code: QueueItValidationError) -> String {
        let c = enc(settings.customerId)
        return "https://\(c).api2.queue-it.net/\(c)/diagnostics/connector/error/?code=\(code.rawValue)"
    }

    /// The diagnostics cookie's name and lifetime (KU-JS: `queueitdebug`, 20 minutes).
    package static let debugCookieName = "queueitdebug"
    package static let debugCookieMinutes = 20

    /// `queueitdebug={values}`: (proposal) `|`-separated `key=value` pairs of what was validated,
    /// each value percent-encoded (KU-JS writes its own diagnostics list; its content is not a contract).
    package func debugCookie(token: String, url: String, now: Date) -> String {
        let pairs = [
            ("SdkVersion", QueueItKnownUserSettings.connectorVersion), ("Runtime", "swift"),
            ("QueueitToken", token), ("OriginalUrl", url), ("Now", "\(Int64(now.timeIntervalSince1970))")
        ]
        let value = pairs.map { "\($0.0)=\(enc($0.1))" }.joined(separator: "|")
        var c = "\(Self.debugCookieName)=\(value); Max-Age=\(Self.debugCookieMinutes * 60); Path=/"
        if let d = settings.cookieDomain, !d.isEmpty { c += "; Domain=\(d)" }
        return c
    }

    /// The cancel action (KU-JS `validateCancelRequest`): with a `QueueITAccepted` cookie whose hash
    /// and event are good and, when it is bound to an address, from that address (KU-JS
    /// `UserInQueueStateCookieRepository.getState` checks `hip` for the cancel too; its age does not
    /// matter), the cookie is cancelled and the visitor is sent to
    /// `{base}/cancel/{c}/{e}[/{queueId}]?c=…&e=…&ver=…&cver=…&man=…[&r={target}]` (no `/` before
    /// `?`: every connector's `validateCancelRequest` and its unit test); without one nothing
    /// happens (`isPassed`, no redirect, the cookie left alone).
    package func cancel(url: String, headers: [(String, String)], clientIP: String?, now: Date) -> QueueItKnownUserDecision {
        let s = settings
        let ajaxHeader = headers.first(where: { $0.0.lowercased() == "x-queueit-ajaxpageurl" })?.1 ?? ""
        let isAjax = !ajaxHeader.isEmpty
        let targetURL = isAjax ? QueueItPercent.decode(ajaxHeader) : Self.splitToken(url).0
        let cookieName = QueueItAcceptedCookie.name(forEvent: s.eventId)
        var decision = QueueItKnownUserDecision(
            isPassed: true, redirectURL: nil, isAjax: isAjax, rejection: nil,
            queueId: nil, redirectType: nil, setCookies: [])
        guard let raw = Self.cookie(named: cookieName, in: headers), let c = QueueItAcceptedCookie.parse(raw),
            (try? c.validate(
                secretKey: s.secretKey, eventId: s.eventId, now: Date(timeIntervalSince1970: TimeInterval(c.issueTime)),
                cookieValidityMinutes: s.cookieValidityMinutes, clientIP: clientIP,
                requiringIssuedForm: s.requiresIssuedCookieForm)) != nil
        else {
            return decision
        }
        var query =
            "c=\(enc(s.customerId))&e=\(enc(s.eventId))&ver=\(enc(QueueItKnownUserSettings.connectorVersion))&cver=\(s.configVersion)&man=\(enc(s.actionName))"
        if !targetURL.isEmpty { query += "&r=\(enc(targetURL))" }
        let queuePart = c.queueId.isEmpty ? "" : "/\(enc(c.queueId))"
        decision.isPassed = false
        decision.queueId = c.queueId
        decision.redirectType = c.redirectType
        decision.redirectURL = "\(s.queueBaseURL)/cancel/\(enc(s.customerId))/\(enc(s.eventId))\(queuePart)?\(query)"
        decision.setCookies = [cancelCookie(name: cookieName)]
        return decision
    }

    func enc(_ s: String) -> String { QueueItPercent.encodeComponent(s) }

    /// The decision for a session cookie already found valid (``QueueItAcceptedCookie/validate(secretKey:eventId:now:cookieValidityMinutes:clientIP:)``):
    /// the request passes, and with `extendCookieValidity` and no fixed validity the cookie is
    /// issued again with the time `now` (step 1 of ``validate(url:headers:clientIP:now:)``).
    package func passing(_ cookie: QueueItAcceptedCookie, isAjax: Bool, now: Date) -> QueueItKnownUserDecision {
        let s = settings
        var setCookies: [String] = []
        if cookie.fixedValidityMinutes == nil && s.extendCookieValidity {
            let fresh = QueueItAcceptedCookie(
                eventId: s.eventId, queueId: cookie.queueId, fixedValidityMinutes: nil,
                redirectType: cookie.redirectType, issueTime: Int64(now.timeIntervalSince1970.rounded(.down)),
                hashedIP: cookie.hashedIP, secretKey: s.secretKey)
            setCookies.append(setCookie(name: cookieName, value: fresh.value, now: now))
        }
        return QueueItKnownUserDecision(
            isPassed: true, redirectURL: nil, isAjax: isAjax, rejection: nil,
            queueId: cookie.queueId, redirectType: cookie.redirectType, setCookies: setCookies)
    }

    func setCookie(name: String, value: String, now: Date) -> String {
        var c = "\(name)=\(value); Expires=\(Self.httpDate(now.addingTimeInterval(86_400))); Path=/"
        if let d = settings.cookieDomain, !d.isEmpty { c += "; Domain=\(d)" }
        if settings.cookieSecure { c += "; Secure" }
        if settings.cookieHttpOnly { c += "; HttpOnly" }
        if let sameSite = settings.cookieSameSite, !sameSite.isEmpty { c += "; SameSite=\(sameSite)" }
        return c
    }

    /// The cookie cleared, with the attributes it was set with (KU-JS `cancelQueueCookie` passes
    /// the integration's `IsCookieHttpOnly` and `IsCookieSecure`).
    func cancelCookie(name: String) -> String {
        var c = "\(name)=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"
        if let d = settings.cookieDomain, !d.isEmpty { c += "; Domain=\(d)" }
        if settings.cookieSecure { c += "; Secure" }
        if settings.cookieHttpOnly { c += "; HttpOnly" }
        if let sameSite = settings.cookieSameSite, !sameSite.isEmpty { c += "; SameSite=\(sameSite)" }
        return c
    }

    /// Splits `queueittoken` off a URL: (URL without it, the decoded token).
    package static func splitToken(_ url: String) -> (String, String?) {
        // on the UTF-8 bytes (`?` is ASCII, so its index is a character boundary)
        guard let qm = url.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (url, nil) }
        if isUnchangedWithoutToken(url.utf8[url.utf8.index(after: qm)...]) { return (url, nil) }
        var rest = url[url.index(after: qm)...]
        var fragment = ""
        if let h = rest.firstIndex(of: "#") {
            fragment = String(rest[h...])
            rest = rest[..<h]
        }
        var kept: [Substring] = []
        var token: String?
        for pair in rest.split(separator: "&", omittingEmptySubsequences: true) {
            if pair.hasPrefix("queueittoken=") {
                if token == nil { token = QueueItPercent.decode(String(pair.dropFirst("queueittoken=".count))) }
            } else {
                kept.append(pair)
            }
        }
        let base = String(url[..<qm]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&")) + fragment
        return (base, token.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Whether a query (and fragment) has no `queueittoken` pair and no empty pair, so that
    /// ``splitToken(_:)`` would give the URL back unchanged (most requests: no copy is made).
    static func isUnchangedWithoutToken(_ rest: Substring.UTF8View) -> Bool {
        let amp = UInt8(ascii: "&")
        var query = rest
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { query = rest[..<hash] }
        guard let first = query.first, first != amp, query.last != amp else { return false }
        var previous: UInt8 = 0
        for byte in query {
            if byte == amp, previous == amp { return false }
            previous = byte
        }
        let marker = Array("queueittoken=".utf8)
        var pairStart = true
        var i = query.startIndex
        while i != query.endIndex {
            if pairStart, query[i...].starts(with: marker) { return false }
            pairStart = query[i] == amp
            i = query.index(after: i)
        }
        return true
    }

    /// The value of cookie `name` in the `Cookie` headers (the name exact, spaces and tabs around
    /// each pair dropped).
    package static func cookie(named name: String, in headers: [(String, String)]) -> String? {
        for (k, v) in headers where k.utf8.count == 6 && k.lowercased() == "cookie" {
            if let value = cookie(named: name, inHeaderValue: v) { return value }
        }
        return nil
    }

    /// The value of cookie `name` in one `Cookie` header value, read on its UTF-8 bytes (`;`, `=`,
    /// space and tab are ASCII, so every piece is whole characters).
    package static func cookie(named name: String, inHeaderValue headerValue: String) -> String? {
        guard !name.utf8.contains(UInt8(ascii: "=")) else { return nil }
        var header = headerValue
        var wanted = name
        return header.withUTF8 { h in
            wanted.withUTF8 { n -> String? in
                var i = 0
                while i < h.count {
                    while i < h.count, h[i] == UInt8(ascii: " ") || h[i] == UInt8(ascii: "\t") { i += 1 }
                    let start = i
                    while i < h.count, h[i] != UInt8(ascii: ";") { i += 1 }
                    let end = i
                    i += 1
                    // `name=` opens the pair (a name has no `=`, so this is the pair's first one)
                    guard end - start > n.count, h[start + n.count] == UInt8(ascii: "="),
                        n.isEmpty || memcmp(h.baseAddress! + start, n.baseAddress!, n.count) == 0
                    else { continue }
                    let valueStart = start + n.count + 1
                    var valueEnd = end
                    while valueEnd > valueStart, h[valueEnd - 1] == UInt8(ascii: " ") || h[valueEnd - 1] == UInt8(ascii: "\t") {
                        valueEnd -= 1
                    }
                    return String(decoding: UnsafeBufferPointer(rebasing: h[valueStart..<valueEnd]), as: UTF8.self)
                }
                return nil
            }
        }
    }

    static func httpDate(_ d: Date) -> String { QueueItHTTPDate.string(d) }
}
