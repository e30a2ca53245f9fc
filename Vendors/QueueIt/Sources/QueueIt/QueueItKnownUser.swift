import Foundation

/// What a KnownUser connector's `x-queueit-redirect` header tells the app (reference §7.1 step 3).
public struct QueueItRedirectInfo: Sendable, Hashable {
    /// `c`: customer id.
    public var customerId: String
    /// `e`: waiting room (event) id.
    public var waitingRoomId: String
    /// `l`: layout name.
    public var layoutName: String?
    /// `cid`: culture / language.
    public var language: String?
    /// `enqueuetoken`: an enqueue token to queue with.
    public var enqueueToken: String?
    /// The redirect URL's `scheme://host[:port]` (used as `waitingRoomDomain`, the behind-proxy rule).
    public var waitingRoomDomain: String
    /// The redirect URL's path before `/error/…` or `/cancel/…`, without slashes (behind-proxy prefix).
    public var pathPrefix: String?
    /// The decoded redirect URL.
    public var redirectURL: String

    /// Parses the header value: the URL, percent-encoded once (KU-JS `encodeURIComponent` or KU-J
    /// form encoding); an unencoded `http(s)://` value is accepted as is.
    public static func parse(headerValue: String) -> QueueItRedirectInfo? {
        let trimmed = headerValue.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 16_384 else { return nil }
        let lower = trimmed.lowercased()
        let decoded = lower.hasPrefix("http://") || lower.hasPrefix("https://") ? trimmed : QueueItPercent.decode(trimmed, plusAsSpace: true)
        guard let comps = URLComponents(string: decoded), let scheme = comps.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = comps.host, !host.isEmpty else { return nil }
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
public struct QueueItKnownUserSettings: Sendable, Hashable {
    public var customerId: String
    public var secretKey: String
    /// The protected waiting room.
    public var eventId: String
    /// Where visitors queue: `https://{customerId}.queue-it.net` by default, or a proxy base URL
    /// (`scheme://host[:port][/prefix]`).
    public var queueBaseURL: String
    /// Cookie validity when the token has no `cv_` (KnownUser `CookieValidityMinute`).
    public var cookieValidityMinutes: Int
    /// Re-issue the cookie with a fresh issue time on each valid request (when it has no fixed validity).
    public var extendCookieValidity: Bool
    public var layoutName: String?
    public var culture: String?
    /// `man` in the redirect URL.
    public var actionName: String
    /// `cver` in the redirect URL.
    public var configVersion: Int
    /// `Domain` attribute of the cookie.
    public var cookieDomain: String?
    public var cookieSecure: Bool
    public var cookieHttpOnly: Bool

    /// `ver` in the redirect URL.
    public static let connectorVersion = "v3-swift-1.0.0"

    public init(customerId: String, secretKey: String, eventId: String, queueBaseURL: String? = nil,
                cookieValidityMinutes: Int = 20, extendCookieValidity: Bool = true,
                layoutName: String? = nil, culture: String? = nil, actionName: String = "Queue",
                configVersion: Int = 1, cookieDomain: String? = nil, cookieSecure: Bool = false, cookieHttpOnly: Bool = false) {
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
    }
}

/// What the server should do with a request.
public struct QueueItKnownUserDecision: Sendable, Hashable {
    /// Whether the request may proceed to the protected resource.
    public var isPassed: Bool
    /// Where to send the visitor when not passed (the decoded URL).
    public var redirectURL: String?
    /// Whether the request was an "ajax" call (`x-queueit-ajaxpageurl` present).
    public var isAjax: Bool
    /// Why a token or cookie was rejected, if one was.
    public var rejection: QueueItValidationError?
    /// The queue id of a passed visitor.
    public var queueId: String?
    /// The redirect type of a passed visitor.
    public var redirectType: String?
    /// `Set-Cookie` header values to send.
    public var setCookies: [String]

    /// The headers to add to the response: `Set-Cookie`s, and for a redirect either
    /// `x-queueit-redirect` (ajax: the URL encoded like KU-JS) with `Access-Control-Expose-Headers`
    /// and no-cache headers, or `Location` (answer 302 then).
    public var responseHeaders: [(String, String)] {
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

    public static func == (a: Self, b: Self) -> Bool {
        a.isPassed == b.isPassed && a.redirectURL == b.redirectURL && a.isAjax == b.isAjax && a.rejection == b.rejection
            && a.queueId == b.queueId && a.redirectType == b.redirectType && a.setCookies == b.setCookies
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(isPassed); hasher.combine(redirectURL); hasher.combine(setCookies)
    }
}

/// A KnownUser-style request validator for Swift servers (reference §7.2–7.4): checks the
/// `QueueITAccepted` cookie, then a `queueittoken` query parameter, and otherwise sends the visitor
/// to the queue. Ajax calls (header `x-queueit-ajaxpageurl`) get an `x-queueit-redirect` header.
public struct QueueItRequestValidator: Sendable {
    public let settings: QueueItKnownUserSettings

    public init(settings: QueueItKnownUserSettings) { self.settings = settings }

    /// Validates one request.
    /// - Parameters:
    ///   - url: the full request URL as the client sent it.
    ///   - headers: request headers (`Cookie`, `x-queueit-ajaxpageurl` are read; names case-insensitive).
    ///   - clientIP: the client's address, checked against `hip` when present.
    public func validate(url: String, headers: [(String, String)], clientIP: String?, now: Date) -> QueueItKnownUserDecision {
        let s = settings
        let nowEpoch = Int64(now.timeIntervalSince1970.rounded(.down))
        let ajaxHeader = headers.first(where: { $0.0.lowercased() == "x-queueit-ajaxpageurl" })?.1 ?? ""
        let isAjax = !ajaxHeader.isEmpty
        let (urlWithoutToken, token) = Self.splitToken(url)
        let targetURL = isAjax ? QueueItPercent.decode(ajaxHeader) : urlWithoutToken
        let cookieName = QueueItAcceptedCookie.name(forEvent: s.eventId)
        let cookieRaw = Self.cookie(named: cookieName, in: headers)
        var setCookies: [String] = []
        var decision = QueueItKnownUserDecision(isPassed: false, redirectURL: nil, isAjax: isAjax, rejection: nil,
                                                queueId: nil, redirectType: nil, setCookies: [])
        // 1. A valid cookie lets the request through.
        if let raw = cookieRaw, !raw.isEmpty {
            if let c = QueueItAcceptedCookie.parse(raw),
               (try? c.validate(secretKey: s.secretKey, eventId: s.eventId, now: now,
                                cookieValidityMinutes: s.cookieValidityMinutes, clientIP: clientIP)) != nil {
                if c.fixedValidityMinutes == nil && s.extendCookieValidity {
                    let fresh = QueueItAcceptedCookie(eventId: s.eventId, queueId: c.queueId, fixedValidityMinutes: nil,
                                                      redirectType: c.redirectType, issueTime: nowEpoch,
                                                      hashedIP: c.hashedIP, secretKey: s.secretKey)
                    setCookies.append(setCookie(name: cookieName, value: fresh.value, now: now))
                }
                decision.isPassed = true
                decision.queueId = c.queueId
                decision.redirectType = c.redirectType
                decision.setCookies = setCookies
                return decision
            }
            // Found but invalid: cancel it (unless a valid token replaces it below).
            setCookies.append(cancelCookie(name: cookieName))
        }
        // 2. A queueittoken in the URL.
        if let token {
            do {
                let t = try QueueItTokenValidator(secretKey: s.secretKey, eventId: s.eventId)
                    .validate(token, now: now, clientIP: clientIP)
                let rt = t.redirectTypeField ?? "queue"
                let cookie = QueueItAcceptedCookie(eventId: s.eventId, queueId: t.queueId ?? "", fixedValidityMinutes: t.cookieValidityMinutes,
                                                   redirectType: rt, issueTime: nowEpoch, hashedIP: t.hashedIP, secretKey: s.secretKey)
                decision.isPassed = true
                decision.queueId = t.queueId
                decision.redirectType = rt.lowercased()
                decision.setCookies = [setCookie(name: cookieName, value: cookie.value, now: now)]
                return decision
            } catch {
                decision.rejection = error
                decision.redirectURL = errorURL(code: error, token: token, target: targetURL, now: nowEpoch)
                decision.setCookies = setCookies
                return decision
            }
        }
        // 3. Queue.
        decision.redirectURL = queueURL(target: targetURL)
        decision.setCookies = setCookies
        return decision
    }

    func commonQuery() -> String {
        let s = settings
        var q = "c=\(enc(s.customerId))&e=\(enc(s.eventId))&ver=\(enc(QueueItKnownUserSettings.connectorVersion))&cver=\(s.configVersion)&man=\(enc(s.actionName))"
        if let cid = s.culture, !cid.isEmpty { q += "&cid=\(enc(cid))" }
        if let l = s.layoutName, !l.isEmpty { q += "&l=\(enc(l))" }
        return q
    }

    /// `{base}/?c=…&e=…&ver=…&cver=…&man=…[&cid][&l]&t={target}`.
    public func queueURL(target: String) -> String {
        "\(settings.queueBaseURL)/?\(commonQuery())&t=\(enc(target))"
    }

    /// `{base}/error/{code}/?c=…&queueittoken={token}&ts={now}&t={target}`.
    public func errorURL(code: QueueItValidationError, token: String, target: String, now: Int64) -> String {
        "\(settings.queueBaseURL)/error/\(code.rawValue)/?\(commonQuery())&queueittoken=\(enc(token))&ts=\(now)&t=\(enc(target))"
    }

    func enc(_ s: String) -> String { QueueItPercent.encodeComponent(s) }

    func setCookie(name: String, value: String, now: Date) -> String {
        var c = "\(name)=\(value); Expires=\(Self.httpDate(now.addingTimeInterval(86_400))); Path=/"
        if let d = settings.cookieDomain, !d.isEmpty { c += "; Domain=\(d)" }
        if settings.cookieSecure { c += "; Secure" }
        if settings.cookieHttpOnly { c += "; HttpOnly" }
        return c
    }

    func cancelCookie(name: String) -> String {
        var c = "\(name)=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"
        if let d = settings.cookieDomain, !d.isEmpty { c += "; Domain=\(d)" }
        return c
    }

    /// Splits `queueittoken` off a URL: (URL without it, the decoded token).
    public static func splitToken(_ url: String) -> (String, String?) {
        guard let qm = url.firstIndex(of: "?") else { return (url, nil) }
        var rest = url[url.index(after: qm)...]
        var fragment = ""
        if let h = rest.firstIndex(of: "#") { fragment = String(rest[h...]); rest = rest[..<h] }
        var kept: [Substring] = []
        var token: String?
        for pair in rest.split(separator: "&", omittingEmptySubsequences: true) {
            if pair.hasPrefix("queueittoken=") {
                if token == nil { token = QueueItPercent.decode(String(pair.dropFirst("queueittoken=".count))) }
            } else { kept.append(pair) }
        }
        let base = String(url[..<qm]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&")) + fragment
        return (base, token.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The value of cookie `name` in the `Cookie` headers.
    public static func cookie(named name: String, in headers: [(String, String)]) -> String? {
        for (k, v) in headers where k.lowercased() == "cookie" {
            for part in v.split(separator: ";") {
                let p = part.trimmingCharacters(in: .whitespaces)
                guard let eq = p.firstIndex(of: "=") else { continue }
                if p[..<eq] == name { return String(p[p.index(after: eq)...]) }
            }
        }
        return nil
    }

    static func httpDate(_ d: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return f.string(from: d)
    }
}
