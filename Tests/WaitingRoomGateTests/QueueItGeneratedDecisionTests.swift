import Foundation
import QueueIt
import QueueItGateEngine
import Testing
import WaitingRoomGate
import WaitingRoomTesting

/// Seeded, generated requests against one rich integration configuration, each decided twice: by
/// the gate (`QueueItGate.decideNow`) and by a reference model of Queue-it's KnownUser connectors
/// written in this file, apart from the gate's code (no trigger, token, cookie or URL helper of the
/// gate is called to compute an expectation; the model only uses `QueueItHash.hmacHex` as its
/// HMAC-SHA256, and the generator mints inputs with `QueueItTokenMinter` and `QueueItAcceptedCookie`).
///
/// The model follows the connector facts of the research notes (docs/queueit-connectors.md,
/// cited as "notes §n"): KU-JS (queueit/KnownUser.V3.Javascript@aabfc34) where the connectors
/// disagree, since the gate follows KU-JS. Where the gate deliberately differs, the model follows
/// the README's "Protecting a server" proposals (cited as README G1…G7).
///
/// Repeatable: a fixed clock (`VirtualClock`, never advanced), one seed per request
/// (`baseSeed + index`), and `ledger: nil`, so a token is not single-use (README G3 off: the
/// connectors accept a token until its `ts`) and no request depends on an earlier one. The session
/// memo stays on (its answers are claimed to equal a fresh check; any difference shows up here).
@Suite struct QueueItGeneratedDecisionTests {
    static let requestCount = 2_000
    static let baseSeed: UInt64 = 0x5EED_2027_0000

    @Test func theGateDecidesAsTheConnectorModelOnGeneratedRequests() throws {
        let clock = VirtualClock(start: Date(timeIntervalSince1970: TimeInterval(Model.now)))
        let gate = try QueueItGate(
            customerId: Model.customer, secretKey: Model.secret,
            configuration: try QueueItIntegrationConfig(json: Model.configurationJSON()),
            options: QueueItGate.Options(platformVersion: Model.platformVersion, ledger: nil, clock: clock))
        var mismatches: [String] = []
        var kinds: [String: (count: Int, seed: UInt64)] = [:]
        var kindOrder: [String] = []
        var rules: [String: Int] = [:]
        var baseRules: [Model.Rule: Int] = [:]
        var coverage = Coverage()
        for index in 0..<Self.requestCount {
            let seed = Self.baseSeed &+ UInt64(index)
            let generated = try Generator.request(seed: seed)
            let request = generated.request
            coverage.record(request)
            if let kind = generated.cookieKind { coverage.cookieKinds[kind.rawValue, default: 0] += 1 }
            if let kind = generated.tokenKind { coverage.tokenKinds[kind.rawValue, default: 0] += 1 }
            let expected = Model.expect(request)
            rules[expected.rule, default: 0] += 1
            baseRules[expected.base, default: 0] += 1
            coverage.answers[expected.outcome.answer.kind, default: 0] += 1
            let decision = gate.decideNow(request)
            let got = Model.observe(decision)
            let differences = Model.differences(expected.outcome, got)
            guard !differences.isEmpty else { continue }
            let kind = "\(expected.base.rawValue) [\(differences.joined(separator: ", "))]"
            let text = """
                seed \(String(seed, radix: 16)) (\(generated.note)): \(Model.describe(request))
                  integration: \(expected.integration ?? "none"), rule: \(expected.rule)
                  expected: \(expected.outcome)
                  got:      \(got) (gate reason: \(decision.reason))
                """
            mismatches.append(text)
            if let seen = kinds[kind] {
                kinds[kind] = (seen.count + 1, seen.seed)
            } else {
                kinds[kind] = (1, seed)
                kindOrder.append(kind)
            }
        }
        let kindSummary = kindOrder.map { kind -> String in
            let seen = kinds[kind] ?? (0, 0)
            return "\(seen.count) × \(kind) (first: seed \(String(seen.seed, radix: 16)))"
        }.joined(separator: "\n")
        let mismatchCount = mismatches.count
        #expect(
            mismatchCount == 0,
            """
            \(mismatches.count) of \(Self.requestCount) generated requests differ from the connector model.
            Kinds:
            \(kindSummary)
            First \(min(15, mismatches.count)):
            \(mismatches.prefix(15).joined(separator: "\n"))
            """)

        // The set cannot silently shrink: every action, answer and rule of the model is reached.
        #expect(Self.requestCount >= 500)
        let ruleSummary = rules.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: "\n")
        for rule in Model.Rule.allCases {
            let count = baseRules[rule, default: 0]
            #expect(count >= 8, "rule reached only \(count) times: \(rule.rawValue)\n\(ruleSummary)")
        }
        for integration in Model.integrations {
            #expect(
                coverage.matched[integration.name, default: 0] >= 30,
                "integration \(integration.name) matched \(coverage.matched[integration.name, default: 0]) times")
        }
        #expect(coverage.matched["(none)", default: 0] >= 30, "no integration matched only \(coverage.matched["(none)", default: 0]) times")
        for answer in ["handler", "302", "ajax 200", "400", "403"] {
            #expect(
                coverage.answers[answer, default: 0] >= 8, "answer \(answer): \(coverage.answers[answer, default: 0]) (\(coverage.answers))"
            )
        }
        // Every validator and operator, both ways round (true and false), IsNegative and
        // IsIgnoreCase both ways, And and Or triggers both ways; unknown ones are never true.
        let partSummary = coverage.parts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.t) true, \($0.value.f) false" }
            .joined(separator: "\n")
        let expectedLabels = [
            "UrlValidator/PageUrl", "UrlValidator/PagePath", "UrlValidator/HostName", "CookieValidator",
            "UserAgentValidator", "HttpHeaderValidator", "Equals", "Contains", "Contains *", "EqualsAny",
            "ContainsAny", "ContainsAny [*]", "IsNegative true", "IsNegative false", "IsIgnoreCase true",
            "IsIgnoreCase false", "Contains * IsNegative false",
            "ContainsAny [*] IsNegative true", "ContainsAny [*] IsNegative false",
            "trigger And", "trigger Or"
        ]
        for label in expectedLabels {
            let c = coverage.parts[label] ?? (0, 0)
            #expect(c.t >= 10 && c.f >= 10, "\(label): \(c.t) true, \(c.f) false\n\(partSummary)")
        }
        // `Contains "*"` negated is true whatever the value (notes §1.1): never false.
        let negatedStar = coverage.parts["Contains * IsNegative true"] ?? (0, 0)
        #expect(negatedStar.t >= 100 && negatedStar.f == 0, "Contains * IsNegative true: \(negatedStar.t) true, \(negatedStar.f) false")
        for label in ["unknown validator", "unknown operator"] {
            let c = coverage.parts[label] ?? (0, 0)
            #expect(c.t == 0 && c.f >= 100, "\(label): \(c.t) true, \(c.f) false")
        }
        for kind in Generator.CookieKind.allCases {
            #expect(
                coverage.cookieKinds[kind.rawValue, default: 0] >= 15,
                "session cookie \(kind.rawValue): \(coverage.cookieKinds[kind.rawValue, default: 0])")
        }
        for kind in Generator.TokenKind.allCases {
            #expect(
                coverage.tokenKinds[kind.rawValue, default: 0] >= 15,
                "token \(kind.rawValue): \(coverage.tokenKinds[kind.rawValue, default: 0])")
        }
    }
}

// MARK: - The configuration (one source for the published JSON and the model)

/// One trigger part as Queue-it publishes it.
private struct Part: Sendable {
    var validator: String
    var urlPart: String? = nil
    var cookieName: String? = nil
    var headerName: String? = nil
    var op: String
    var value: String = ""
    var values: [String] = []
    var negative = false
    var ignoreCase = false

    var validatorLabel: String {
        switch validator {
        case "UrlValidator": return "UrlValidator/\(urlPart ?? "")"
        case "CookieValidator", "UserAgentValidator", "HttpHeaderValidator": return validator
        default: return "unknown validator"
        }
    }

    var operatorLabel: String {
        switch op {
        case "Contains": return value == "*" ? "Contains *" : "Contains"
        case "ContainsAny": return values == ["*"] ? "ContainsAny [*]" : "ContainsAny"
        case "Equals", "EqualsAny": return op
        default: return "unknown operator"
        }
    }
}

private struct Trigger: Sendable {
    var logical: String
    var parts: [Part]
}

private struct Integration: Sendable {
    var name: String
    var action: String
    var eventId: String
    var queueDomain: String
    var cookieDomain = ""
    var httpOnly = false
    var secure = false
    var layout: String? = nil
    var culture: String? = nil
    var extend = true
    var validity = 10
    var redirectLogic = "AllowTParameter"
    var forced = ""
    var triggers: [Trigger]
}

// MARK: - The reference model

/// "KU-JS" below is queueit/KnownUser.V3.Javascript@aabfc34: `src/KnownUser.ts`,
/// `src/UserInQueueService.ts`, `src/UserInQueueStateCookieRepository.ts`, `src/QueueITHelpers.ts`,
/// `src/Models.ts`, `src/IntegrationConfig/IntegrationConfigHelpers.ts` and the README's Express
/// sample; "notes §n" is the section of the research notes that states the fact for all connectors.
private enum Model {
    static let customer = "acme"
    static let secret = "generated-decisions-secret-0123456789abcdef"
    static let otherSecret = "someone-elses-secret-key"
    /// The fixed clock's time (epoch seconds).
    static let now: Int64 = 1_800_000_000
    static let configVersion = 42
    static let platformVersion = "swift-generated-1"
    /// `ver`: each connector sends its own SDK version (KU-JS `src/UserInQueueService.ts`
    /// `SDK_VERSION`, notes §0); the gate names itself so.
    static let connectorVersion = "v3-swift-1.0.0"
    static let cookiePrefix = "QueueITAccepted-SDFrts345E-V3_"
    static let ajaxHeader = "x-queueit-ajaxpageurl"

    /// In order: Ignore, Cancel, then four Queue actions. Every validator (UrlValidator with
    /// PageUrl, PagePath, HostName; CookieValidator; UserAgentValidator; HttpHeaderValidator),
    /// every operator (Equals, Contains with and without `*`, EqualsAny, ContainsAny with and
    /// without `*`), IsNegative and IsIgnoreCase both ways, And and Or; plus an unknown operator
    /// and an unknown validator, both negated.
    static let integrations: [Integration] = [
        Integration(
            name: "static-assets", action: "Ignore", eventId: "", queueDomain: "",
            triggers: [
                Trigger(
                    logical: "Or",
                    parts: [
                        Part(validator: "UrlValidator", urlPart: "PagePath", op: "Contains", value: "/static/", ignoreCase: true),
                        Part(validator: "UrlValidator", urlPart: "PagePath", op: "EqualsAny", values: ["/favicon.ico", "/robots.txt"])
                    ]),
                Trigger(
                    logical: "And",
                    parts: [
                        Part(validator: "UserAgentValidator", op: "Contains", value: "healthcheck", ignoreCase: true),
                        Part(validator: "HttpHeaderValidator", headerName: "x-internal", op: "Equals", value: "yes")
                    ]),
                Trigger(
                    logical: "Or",
                    parts: [
                        Part(validator: "UrlValidator", urlPart: "PagePath", op: "StartsWith", value: "/", negative: true),
                        Part(validator: "GeoIpValidator", op: "Equals", value: "DK", negative: true)
                    ])
            ]),
        Integration(
            name: "logout", action: "Cancel", eventId: "sale", queueDomain: "acme.queue-it.net", cookieDomain: ".shop.example",
            triggers: [
                Trigger(
                    logical: "And",
                    parts: [
                        Part(validator: "UrlValidator", urlPart: "PagePath", op: "Equals", value: "/account/logout", ignoreCase: true),
                        Part(validator: "UrlValidator", urlPart: "HostName", op: "Contains", value: "shop")
                    ]),
                Trigger(
                    logical: "Or",
                    parts: [
                        Part(validator: "UrlValidator", urlPart: "PageUrl", op: "Contains", value: "leave=queue"),
                        Part(
                            validator: "HttpHeaderValidator", headerName: "x-cancel-queue", op: "ContainsAny", values: ["now", "please"],
                            ignoreCase: true)
                    ])
            ]),
        Integration(
            name: "vip-members", action: "Queue", eventId: "vip", queueDomain: "queue.example.com/acme", layout: "VIP (gold) layout",
            culture: "en-US", extend: false, validity: 20, redirectLogic: "EventTargetUrl",
            triggers: [
                Trigger(
                    logical: "And",
                    parts: [
                        Part(validator: "CookieValidator", cookieName: "member", op: "Contains", value: "*"),
                        Part(validator: "UrlValidator", urlPart: "PagePath", op: "Contains", value: "/shop/", ignoreCase: true),
                        Part(
                            validator: "CookieValidator", cookieName: "member", op: "EqualsAny", values: ["silver", "bronze"],
                            negative: true, ignoreCase: true)
                    ])
            ]),
        Integration(
            name: "sale", action: "Queue", eventId: "sale", queueDomain: "acme.queue-it.net", cookieDomain: ".shop.example",
            httpOnly: true, secure: true, culture: "",
            triggers: [
                Trigger(
                    logical: "And",
                    parts: [
                        Part(
                            validator: "UrlValidator", urlPart: "HostName", op: "EqualsAny", values: ["shop.example", "www.shop.example"],
                            ignoreCase: true),
                        Part(validator: "UserAgentValidator", op: "Contains", value: "bot", negative: true, ignoreCase: true),
                        Part(validator: "CookieValidator", cookieName: "optout", op: "Contains", value: "*", negative: true),
                        Part(validator: "UrlValidator", urlPart: "PagePath", op: "Contains", value: "/shop/")
                    ]),
                Trigger(
                    logical: "Or",
                    parts: [
                        Part(validator: "UrlValidator", urlPart: "PageUrl", op: "ContainsAny", values: ["/api/", "/checkout"]),
                        Part(validator: "HttpHeaderValidator", headerName: "x-queue-me", op: "Equals", value: "1")
                    ])
            ]),
        Integration(
            name: "campaign", action: "Queue", eventId: "campaign", queueDomain: "https://campaign.example/", culture: "da-DK",
            validity: 5, redirectLogic: "ForcedTargetUrl", forced: "https://shop.example/campaign/landing?src=queue",
            triggers: [
                Trigger(
                    logical: "And",
                    parts: [
                        Part(
                            validator: "UrlValidator", urlPart: "PagePath", op: "EqualsAny", values: ["/promo", "/promo/"], ignoreCase: true
                        ),
                        Part(
                            validator: "UrlValidator", urlPart: "PageUrl", op: "ContainsAny", values: ["preview=1", "draft"],
                            negative: true, ignoreCase: true),
                        Part(validator: "UrlValidator", urlPart: "HostName", op: "Equals", value: "other.test", negative: true)
                    ]),
                Trigger(
                    logical: "And",
                    parts: [
                        Part(validator: "HttpHeaderValidator", headerName: "x-campaign", op: "ContainsAny", values: ["*"]),
                        Part(validator: "CookieValidator", cookieName: "member", op: "Equals", value: "gold", negative: true)
                    ])
            ]),
        Integration(
            name: "api-json", action: "Queue", eventId: "sale", queueDomain: "acme.queue-it.net",
            triggers: [
                Trigger(
                    logical: "And",
                    parts: [
                        Part(validator: "HttpHeaderValidator", headerName: "accept", op: "Contains", value: "json", ignoreCase: true),
                        Part(validator: "HttpHeaderValidator", headerName: "x-no-queue", op: "ContainsAny", values: ["*"], negative: true),
                        Part(validator: "UrlValidator", urlPart: "PagePath", op: "Equals", value: "/health", negative: true),
                        Part(validator: "UserAgentValidator", op: "Equals", value: "Monitor/1.0", negative: true)
                    ])
            ])
    ]

    /// The configuration in the form the Go platform publishes it (QueueItGateFixture's shape).
    static func configurationJSON() -> String {
        func q(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        func part(_ p: Part) -> String {
            var fields = ["\"ValidatorType\": \(q(p.validator))"]
            if let u = p.urlPart { fields.append("\"UrlPart\": \(q(u))") }
            if let c = p.cookieName { fields.append("\"CookieName\": \(q(c))") }
            if let h = p.headerName { fields.append("\"HttpHeaderName\": \(q(h))") }
            fields.append("\"Operator\": \(q(p.op))")
            fields.append("\"ValueToCompare\": \(q(p.value))")
            fields.append("\"ValuesToCompare\": [\(p.values.map(q).joined(separator: ", "))]")
            fields.append("\"IsNegative\": \(p.negative)")
            fields.append("\"IsIgnoreCase\": \(p.ignoreCase)")
            return "{" + fields.joined(separator: ", ") + "}"
        }
        func integration(_ i: Integration) -> String {
            let triggers = i.triggers.map { t in
                "{\"LogicalOperator\": \(q(t.logical)), \"TriggerParts\": [\(t.parts.map(part).joined(separator: ", "))]}"
            }
            return """
                {"Name": \(q(i.name)), "ActionType": \(q(i.action)), "EventId": \(q(i.eventId)), "QueueDomain": \(q(i.queueDomain)),
                 "CookieDomain": \(q(i.cookieDomain)), "IsCookieHttpOnly": \(i.httpOnly), "IsCookieSecure": \(i.secure),
                 "LayoutName": \(i.layout.map(q) ?? "null"), "Culture": \(i.culture.map(q) ?? "null"), "ExtendCookieValidity": \(i.extend),
                 "CookieValidityMinute": \(i.validity), "RedirectLogic": \(q(i.redirectLogic)), "ForcedTargetUrl": \(q(i.forced)),
                 "Triggers": [\(triggers.joined(separator: ", "))]}
                """
        }
        return """
            {"Description": "generated decisions", "CustomerId": \(q(customer)), "AccountId": \(q(customer)), "Version": \(configVersion),
             "PublishDate": "2027-01-15T08:00:00Z", "ConfigDataVersion": "1.0.0.1",
             "Integrations": [\(integrations.map(integration).joined(separator: ",\n"))]}
            """
    }

    // MARK: request parts (KU-JS sample context provider and SDK helpers)

    /// The URL without `queueittoken` and the token: the KU-JS README sample's
    /// `getRequestUrlWithoutToken` (`URLSearchParams.delete("queueittoken")`, notes §12) and
    /// `req.query.queueittoken` (notes §5). The generated queries are plain `name=value` pairs,
    /// which `URLSearchParams` writes back unchanged.
    static func stripToken(_ url: String) -> (url: String, token: String?, hadTokenPair: Bool) {
        guard let qm = url.firstIndex(of: "?") else { return (url, nil, false) }
        var kept: [Substring] = []
        var token: String?
        var had = false
        for pair in url[url.index(after: qm)...].split(separator: "&") {
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            if name == "queueittoken" {
                had = true
                if token == nil { token = decodeURIComponent(String(pair.dropFirst("queueittoken=".count))) ?? "" }
            } else {
                kept.append(pair)
            }
        }
        guard had else { return (url, nil, false) }
        return (String(url[..<qm]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&")), token, true)
    }

    /// A request header, case-insensitive; nil when absent, which the validators read as ""
    /// (KU-JS README sample `getHeader`: Express `req.header`, `|| ""`; notes §1.3).
    static func header(_ r: GateRequest, _ name: String) -> String? {
        r.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// A cookie's value by exact name, the first one (KU-JS README sample `getCookieValue`:
    /// cookie-parser, which keeps the first of a name; notes §1.3). cookie-parser also URL-decodes:
    /// the trigger cookies generated hold nothing to decode, the session cookie is decoded in `cookieState`.
    static func cookie(_ r: GateRequest, _ name: String) -> String? {
        for h in r.headers where h.name.lowercased() == "cookie" {
            for pair in h.value.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard let eq = trimmed.firstIndex(of: "=") else { continue }
                if trimmed[..<eq] == name { return String(trimmed[trimmed.index(after: eq)...]) }
            }
        }
        return nil
    }

    /// HostName and PagePath: groups 4 and 5 of KU-JS `UrlValidatorHelper`'s RFC 3986 regex
    /// (`src/IntegrationConfig/IntegrationConfigHelpers.ts` `getHostNameFromUrl`/`getPathFromUrl`;
    /// the host keeps its case and `:port`, notes §1.3).
    static func hostAndPath(_ url: String) -> (host: String, path: String) {
        var rest = Substring(url)
        if let colon = rest.firstIndex(of: ":"), colon != rest.startIndex, !rest[..<colon].contains(where: { "/?#".contains($0) }) {
            rest = rest[rest.index(after: colon)...]
        }
        var host = ""
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex
            host = String(rest[..<end])
            rest = rest[end...]
        }
        let end = rest.firstIndex { "?#".contains($0) } ?? rest.endIndex
        return (host, String(rest[..<end]))
    }

    // MARK: triggers (KU-JS `IntegrationEvaluator`, `ComparisonOperatorHelper`)

    /// The value a part compares, or nil for an unknown validator, which is false (KU-JS
    /// `IntegrationEvaluator.evaluateTriggerPart` `default: return false`; notes §1.4).
    static func partValue(_ p: Part, _ r: GateRequest, url: String) -> String? {
        switch p.validator {
        case "UrlValidator":
            // KU-JS `UrlValidatorHelper.getUrlPart`: PageUrl is the URL without the token; an
            // unknown UrlPart is "" (notes §1.3)
            switch p.urlPart {
            case "PageUrl": return url
            case "PagePath": return hostAndPath(url).path
            case "HostName": return hostAndPath(url).host
            default: return ""
            }
        case "CookieValidator": return cookie(r, p.cookieName ?? "") ?? ""  // KU-JS `CookieValidatorHelper.getCookie`
        case "UserAgentValidator": return header(r, "user-agent") ?? ""  // KU-JS sample `getUserAgent`
        case "HttpHeaderValidator": return header(r, p.headerName ?? "") ?? ""  // KU-JS `HttpHeaderValidatorHelper`
        default: return nil
        }
    }

    static func evaluate(_ p: Part, _ r: GateRequest, url: String) -> Bool {
        guard let value = partValue(p, r, url: url) else { return false }
        return compare(p, value)
    }

    /// KU-JS `ComparisonOperatorHelper.evaluate` (notes §1.1, §1.2): missing parts are "",
    /// an unknown operator is false before any negation.
    static func compare(_ p: Part, _ value: String) -> Bool {
        switch p.op {
        case "Equals":
            return equals(value, p.value, ignoreCase: p.ignoreCase) != p.negative
        case "Contains":
            return contains(value, p.value, negative: p.negative, ignoreCase: p.ignoreCase)
        case "EqualsAny":
            // KU-JS `equalsAny`: compares without negation, then `!IsNegative` on a hit, else `IsNegative`
            for v in p.values where equals(value, v, ignoreCase: p.ignoreCase) { return !p.negative }
            return p.negative
        case "ContainsAny":
            // KU-JS `containsAny`: `contains(…, negation off)`, so `["*"]` negated is false for a non-empty value
            for v in p.values where contains(value, v, negative: false, ignoreCase: p.ignoreCase) { return !p.negative }
            return p.negative
        default:
            return false
        }
    }

    /// KU-JS `ComparisonOperatorHelper.equalS`: exact, or both upper-cased.
    static func equals(_ value: String, _ other: String, ignoreCase: Bool) -> Bool {
        ignoreCase ? value.uppercased() == other.uppercased() : value == other
    }

    /// KU-JS `ComparisonOperatorHelper.contains`: `*` with a non-empty value is true before
    /// negation (notes §1.1); otherwise `indexOf` (upper-cased when ignoring case), then negation.
    static func contains(_ value: String, _ needle: String, negative: Bool, ignoreCase: Bool) -> Bool {
        if needle == "*" && !value.isEmpty { return true }
        let hit = ignoreCase ? value.uppercased().contains(needle.uppercased()) : value.contains(needle)
        return negative ? !hit : hit
    }

    /// KU-JS `IntegrationEvaluator.evaluateTrigger`: exactly `Or` is OR, anything else AND.
    static func evaluate(_ t: Trigger, _ r: GateRequest, url: String) -> Bool {
        t.logical == "Or" ? t.parts.contains { evaluate($0, r, url: url) } : t.parts.allSatisfy { evaluate($0, r, url: url) }
    }

    /// KU-JS `IntegrationEvaluator.getMatchedIntegrationConfig`: the first integration, in array
    /// order, with a trigger that holds (notes §1.4).
    static func firstMatch(_ r: GateRequest, url: String) -> Integration? {
        integrations.first { i in i.triggers.contains { evaluate($0, r, url: url) } }
    }

    // MARK: session cookie (KU-JS `UserInQueueStateCookieRepository`)

    struct StoredCookie: Sendable {
        var eventId, queueId, fixed, redirectType, issueTime, hip, hash: String
    }

    enum CookieState: Sendable {
        case notFound
        case valid(StoredCookie)
        case invalid(String)
        case boundToAnotherIP(hip: String)

        var label: String {
            switch self {
            case .notFound: return "none"
            case .valid: return "valid"
            case .invalid(let why): return why
            case .boundToAnotherIP: return "bound to another IP"
            }
        }
    }

    /// KU-JS `getState` and `isCookieValid` (notes §3.3): not found when absent or empty; then
    /// hash (over the fields as stored) → EventId (ignoring case) → time (when `validity` is given;
    /// FixedValidityMins wins) → IP (`Hip` against HMAC of the client IP, when both are present).
    static func cookieState(_ raw: String?, eventId: String, validity: Int?, clientIP: String?) -> CookieState {
        guard var value = raw, !value.isEmpty else { return .notFound }
        // cookie-parser URL-decodes a value with `%` (Java and ASP.NET write it encoded; notes §3.1)
        if value.contains("%"), let decoded = decodeURIComponent(value) { value = decoded }
        // KU-JS `CookieHelper.toMapFromValue`: split on `&`, then `=`, parts [0] and [1]; the last of a key wins
        var map: [String: String] = [:]
        for item in value.split(separator: "&", omittingEmptySubsequences: false) {
            let kv = item.split(separator: "=", omittingEmptySubsequences: false)
            map[String(kv[0])] = kv.count > 1 ? String(kv[1]) : ""
        }
        let c = StoredCookie(
            eventId: map["EventId"] ?? "", queueId: map["QueueId"] ?? "", fixed: map["FixedValidityMins"] ?? "",
            redirectType: map["RedirectType"] ?? "", issueTime: map["IssueTime"] ?? "", hip: map["Hip"] ?? "",
            hash: map["Hash"] ?? "")
        // KU-JS `generateHash`: EventId + QueueId + FixedValidityMins + RedirectType + IssueTime + Hip, no separators (notes §3.2)
        guard hmac(c.eventId + c.queueId + c.fixed + c.redirectType + c.issueTime + c.hip) == c.hash else { return .invalid("hash") }
        guard eventId.lowercased() == c.eventId.lowercased() else { return .invalid("eventid") }
        if let validity {
            let minutes = c.fixed.isEmpty ? Int64(validity) : (Int64(c.fixed) ?? 0)
            guard let issued = Int64(c.issueTime), issued + minutes * 60 >= now else { return .invalid("expired") }
        }
        if !c.hip.isEmpty, let ip = clientIP, !ip.isEmpty, hmac(ip) != c.hip { return .boundToAnotherIP(hip: c.hip) }
        return .valid(c)
    }

    // MARK: queueittoken (KU-JS `QueueParameterHelper.extractQueueParams`, `UserInQueueService.validateToken`)

    struct Token: Sendable {
        var fields: [String: String]
        var withoutHash: String
    }

    /// Pieces split on `~`, then `_`, used only with exactly two parts; the hash covers the token
    /// with the literal `~h_{h}` removed (notes §4.1).
    static func parseToken(_ token: String) -> Token {
        var fields: [String: String] = [:]
        for piece in token.split(separator: "~", omittingEmptySubsequences: false) {
            let kv = piece.split(separator: "_", omittingEmptySubsequences: false)
            guard kv.count == 2 else { continue }
            fields[String(kv[0])] = String(kv[1])
        }
        let marker = "~h_" + (fields["h"] ?? "undefined")
        var withoutHash = token
        if let r = withoutHash.range(of: marker) { withoutHash.replaceSubrange(r, with: "") }
        return Token(fields: fields, withoutHash: withoutHash)
    }

    enum TokenCheck: Sendable {
        case valid
        case invalid(code: String, icr: String?)
    }

    /// KU-JS `validateToken` (notes §4.1): hash → eventid (exact) → `ts < now` → `hip`; an IP
    /// mismatch carries `icr=ip,cip:{hex},hip:{token hip}` (`setIpBindingValidationDetails`, notes §3.6).
    static func check(_ t: Token, eventId: String, clientIP: String?) -> TokenCheck {
        guard let h = t.fields["h"], hmac(t.withoutHash) == h else { return .invalid(code: "hash", icr: nil) }
        guard t.fields["e"] == eventId else { return .invalid(code: "eventid", icr: nil) }
        guard (t.fields["ts"].flatMap { Int64($0) } ?? 0) >= now else { return .invalid(code: "timestamp", icr: nil) }
        if let hip = t.fields["hip"], !hip.isEmpty, let ip = clientIP, !ip.isEmpty, hmac(ip) != hip {
            return .invalid(code: "ip", icr: "ip,cip:\(bin2hex(ip)),hip:\(hip)")
        }
        return .valid
    }

    // MARK: URLs (KU-JS `UserInQueueService.getQueryString`, `generateRedirectUrl`)

    /// `https://{QueueDomain}` with a `/` added when missing (KU-JS `generateRedirectUrl`, notes
    /// §13); README G1: a domain that has its own `http://` or `https://` keeps it.
    static func base(_ i: Integration) -> String {
        var b = i.queueDomain.hasPrefix("http://") || i.queueDomain.hasPrefix("https://") ? i.queueDomain : "https://" + i.queueDomain
        if !b.hasSuffix("/") { b += "/" }
        return b
    }

    /// `c, e, ver, cver, man[, cid][, l][, icr]` (KU-JS `getQueryString`; `cid`/`l` only when non-empty).
    static func query(_ i: Integration, withLayout: Bool = true, icr: String? = nil) -> String {
        var q = "c=\(encode(customer))&e=\(encode(i.eventId))&ver=\(connectorVersion)&cver=\(configVersion)&man=\(encode(i.name))"
        if withLayout, let cid = i.culture, !cid.isEmpty { q += "&cid=\(encode(cid))" }
        if withLayout, let l = i.layout, !l.isEmpty { q += "&l=\(encode(l))" }
        if let icr { q += "&icr=\(encode(icr))" }
        return q
    }

    static func target(_ t: String, _ name: String = "t") -> String { t.isEmpty ? "" : "&\(name)=\(encode(t))" }

    /// KU-JS `getQueueResult` (`{domain}/?…[&t]`, notes §13), plus README G2's `&kupver` last.
    static func queueURL(_ i: Integration, target t: String) -> String {
        base(i) + "?" + query(i) + target(t) + "&kupver=\(encode(platformVersion))"
    }

    /// KU-JS `getErrorResult`: `{domain}/error/{code}/?…[&icr]&queueittoken={token}&ts={now}[&t]`
    /// (notes §13; `icr` only from the token's IP check, notes §15.4).
    static func errorURL(_ i: Integration, code: String, token: String, icr: String?, target t: String) -> String {
        base(i) + "error/\(code)/?" + query(i, icr: icr) + "&queueittoken=\(token)&ts=\(now)" + target(t)
    }

    /// KU-JS `validateQueueRequest` → `getErrorResult` with the cookie's state
    /// (`CookieStateInfo.result`, notes §3.6): `error/connector/sessionstate/`, no `queueittoken`,
    /// `icr=ip,cip:{hex},hip:{Hip},st:{ms}`.
    static func sessionStateURL(_ i: Integration, hip: String, clientIP: String, target t: String) -> String {
        base(i) + "error/connector/sessionstate/?" + query(i, icr: "ip,cip:\(bin2hex(clientIP)),hip:\(hip),st:\(now * 1000)")
            + "&ts=\(now)" + target(t)
    }

    /// KU-JS `validateCancelRequest` (notes §2.1): `{domain}/cancel/{c}/{e}[/{q}]?c&e&ver&cver&man[&r]`,
    /// no `/` before `?`, no `cid`/`l`.
    static func cancelURL(_ i: Integration, queueId: String, target t: String) -> String {
        base(i) + "cancel/\(customer)/\(i.eventId)" + (queueId.isEmpty ? "" : "/\(queueId)") + "?" + query(i, withLayout: false)
            + target(t, "r")
    }

    // MARK: the decision

    enum Answer: Sendable, Equatable, CustomStringConvertible {
        /// The request reaches the handler.
        case handler
        /// 302 with `Location`.
        case found(String)
        /// 200 with `x-queueit-redirect` (the raw header) and whether `Access-Control-Expose-Headers` names it.
        case ajax(String, exposed: Bool)
        /// Any other answer of the gate's own (400, 403, …).
        case status(Int)

        var kind: String {
            switch self {
            case .handler: return "handler"
            case .found: return "302"
            case .ajax: return "ajax 200"
            case .status(let s): return "\(s)"
            }
        }

        var description: String {
            switch self {
            case .handler: return "handler"
            case .found(let l): return "302 \(l)"
            case .ajax(let v, let exposed): return "200 x-queueit-redirect: \(v)\(exposed ? "" : " (not exposed)")"
            case .status(let s): return "\(s)"
            }
        }
    }

    struct SetCookie: Sendable, Equatable, CustomStringConvertible {
        var name: String
        var eventId, queueId: String
        var fixed: String?
        var redirectType, issueTime: String
        var hip: String?
        var hashValid: Bool
        var domain: String?
        var secure: Bool
        var httpOnly: Bool

        var description: String {
            "set \(name) EventId=\(eventId) QueueId=\(queueId) FixedValidityMins=\(fixed ?? "-") RedirectType=\(redirectType) "
                + "IssueTime=\(issueTime) Hip=\(hip.map { String($0.prefix(8)) + "…" } ?? "-") hash \(hashValid ? "good" : "BAD") "
                + "Domain=\(domain ?? "-")\(secure ? " Secure" : "")\(httpOnly ? " HttpOnly" : "")"
        }
    }

    enum CookieEffect: Sendable, Equatable, CustomStringConvertible {
        case none
        case set(SetCookie)
        case cleared(name: String, domain: String?, secure: Bool, httpOnly: Bool)
        case several([String])
        /// The model makes no claim (a README proposal that says nothing about the cookie).
        case unchecked

        var description: String {
            switch self {
            case .none: return "no session cookie"
            case .set(let c): return c.description
            case .cleared(let name, let domain, let secure, let httpOnly):
                return "clear \(name) Domain=\(domain ?? "-")\(secure ? " Secure" : "")\(httpOnly ? " HttpOnly" : "")"
            case .several(let values): return "several: \(values)"
            case .unchecked: return "cookie not checked"
            }
        }
    }

    struct Outcome: Sendable, CustomStringConvertible {
        var verdict: GateVerdict
        var answer: Answer
        var cookie: CookieEffect
        /// Whether a redirect carries the samples' no-cache headers; nil: not checked.
        var noCache: Bool? = nil

        var description: String {
            "\(verdict.rawValue), \(answer), \(cookie)" + (noCache.map { $0 ? ", no-cache" : ", cacheable" } ?? "")
        }
    }

    /// The model's rules; each expectation names one (a prefix of `Expectation.rule`).
    enum Rule: String, CaseIterable {
        case noMatch = "no trigger matched"
        case ignore = "Ignore"
        case cancelRedirect = "Cancel: cookie valid → cancel redirect"
        case cancelNothing = "Cancel: no valid cookie → nothing"
        case ajaxRefused = "G6: malformed x-queueit-ajaxpageurl → 400"
        case cookiePass = "Queue: cookie valid → pass"
        case cookiePassRedirect = "Queue: cookie valid, token in URL → 302 without it"
        case tokenPass = "Queue: token valid → pass"
        case tokenPassRedirect = "Queue: token valid → 302 without it"
        case otherCustomer = "G4: token for another customer → queue"
        case tokenError = "Queue: token rejected → error redirect"
        case invitationRefused = "G5: enqueuetoken refused → 403"
        case sessionState = "Queue: cookie bound to another IP, no token → sessionstate error"
        case queue = "Queue: no token, no valid cookie → queue redirect"
    }

    struct Expectation: Sendable {
        var integration: String?
        var rule: String
        /// The rule without its detail (what a mismatch kind is named by).
        var base: Rule
        var outcome: Outcome
    }

    static func expect(_ r: GateRequest) -> Expectation {
        let stripped = stripToken(r.url)
        guard let i = firstMatch(r, url: stripped.url) else {
            // KU-JS `validateRequestByIntegrationConfig`: no match → a result without action; the sample renders the page
            return Expectation(
                integration: nil, rule: Rule.noMatch.rawValue, base: .noMatch,
                outcome: Outcome(verdict: .pass, answer: .handler, cookie: .none))
        }
        func result(_ rule: Rule, _ detail: String = "", _ outcome: Outcome) -> Expectation {
            Expectation(integration: i.name, rule: rule.rawValue + detail, base: rule, outcome: outcome)
        }
        // KU-JS `KnownUser.isQueueAjaxCall`: the header is truthy (non-empty) (notes §11)
        let ajax = header(r, ajaxHeader) ?? ""
        let isAjax = !ajax.isEmpty
        let page = isAjax ? decodeURIComponent(ajax) : nil
        // KU-JS `handleIgnoreAction`: Ignore result, no cookie read or written, the header is not decoded (notes §10)
        if i.action == "Ignore" { return result(.ignore, "", Outcome(verdict: .ignore, answer: .handler, cookie: .none)) }
        // README G6: for the actions that use it as the target, the AJAX page URL must decode to an absolute http(s) URL
        if isAjax, !isAbsoluteHTTP(page) {
            return result(.ajaxRefused, " (\(i.action))", Outcome(verdict: .refuse, answer: .status(400), cookie: .unchecked))
        }
        let name = cookiePrefix + i.eventId
        let raw = cookie(r, name)
        let domain = i.cookieDomain.isEmpty ? nil : i.cookieDomain
        // KU-JS `cancelQueueCookie`: the same name, an empty value, expiry 0, with the
        // integration's CookieDomain, IsCookieHttpOnly and IsCookieSecure (notes §2.2)
        let cleared = CookieEffect.cleared(name: name, domain: domain, secure: i.secure, httpOnly: i.httpOnly)
        func answer(_ url: String) -> Answer {
            // sample: AJAX → `x-queueit-redirect` = `getAjaxRedirectUrl()` (encodeUrl of the URL) and
            // `Access-Control-Expose-Headers`; a page load → 302 (KU-JS README; notes §11)
            isAjax ? .ajax(encode(url), exposed: true) : .found(url)
        }
        if i.action == "Cancel" {
            // KU-JS `handleCancelAction`: `generateTargetUrl` (the decoded AJAX page or the URL without token)
            let t = page ?? stripped.url
            // KU-JS `validateCancelRequest`: `getState(eventId, -1, secret, validateTime: false)`; the IP still counts (notes §2.2)
            if case .valid(let c) = cookieState(raw, eventId: i.eventId, validity: nil, clientIP: r.clientIP) {
                return result(
                    .cancelRedirect, "",
                    Outcome(
                        verdict: .cancel, answer: answer(cancelURL(i, queueId: c.queueId, target: t)),
                        cookie: cleared, noCache: true))
            }
            return result(.cancelNothing, "", Outcome(verdict: .cancel, answer: .handler, cookie: .none))
        }
        // Queue. KU-JS `handleQueueAction`: the target by RedirectLogic (notes §12)
        let t: String
        switch i.redirectLogic {
        case "ForcedTargetUrl": t = i.forced
        case "EventTargetUrl": t = ""
        default: t = page ?? stripped.url
        }
        let state = cookieState(raw, eventId: i.eventId, validity: i.validity, clientIP: r.clientIP)
        let found = raw.map { !$0.isEmpty } ?? false
        // KU-JS `validateQueueRequest` step 5: a found cookie is cleared unless a valid token came (notes §14)
        let clearIfFound: CookieEffect = found ? cleared : .none
        func stored(queueId: String, fixed: String?, redirectType: String, hip: String?) -> CookieEffect {
            // KU-JS `UserInQueueStateCookieRepository.store`/`createCookie`: EventId, QueueId,
            // [FixedValidityMins], RedirectType lower-cased, IssueTime now, [Hip]; the integration's
            // CookieDomain ("" → none, KU-JS sample), IsCookieSecure, IsCookieHttpOnly (notes §3.1, §3.4)
            .set(
                SetCookie(
                    name: name, eventId: i.eventId, queueId: queueId, fixed: fixed, redirectType: redirectType.lowercased(),
                    issueTime: "\(now)", hip: hip, hashValid: true, domain: domain, secure: i.secure, httpOnly: i.httpOnly))
        }
        func pass(_ rule: Rule, _ redirectRule: Rule, _ cookie: CookieEffect) -> Expectation {
            // KU-JS README sample: a pass on a URL that had `queueittoken` (Queue action) is answered
            // 302 to the URL without it (notes §12); README G7: GET and HEAD page loads only
            if stripped.hadTokenPair, !isAjax, r.method == "GET" || r.method == "HEAD" {
                return result(redirectRule, "", Outcome(verdict: .pass, answer: .found(stripped.url), cookie: cookie))
            }
            return result(rule, "", Outcome(verdict: .pass, answer: .handler, cookie: cookie))
        }
        // KU-JS `validateQueueRequest` step 1: a valid cookie passes; re-stored with a fresh
        // IssueTime when it has no FixedValidityMins and ExtendCookieValidity (notes §3.5)
        if case .valid(let c) = state {
            let extend = c.fixed.isEmpty && i.extend
            return pass(
                .cookiePass, .cookiePassRedirect,
                extend ? stored(queueId: c.queueId, fixed: nil, redirectType: c.redirectType, hip: c.hip.isEmpty ? nil : c.hip) : .none)
        }
        // KU-JS `extractQueueParams`: an empty token is no token
        if let token = stripped.token, !token.isEmpty {
            let parsed = parseToken(token)
            // README G4: a token whose `c_` names another customer goes to the queue (the README says nothing of the cookie)
            if let c = parsed.fields["c"], c != customer {
                return result(
                    .otherCustomer, "", Outcome(verdict: .queue, answer: answer(queueURL(i, target: t)), cookie: .unchecked, noCache: true))
            }
            switch check(parsed, eventId: i.eventId, clientIP: r.clientIP) {
            case .valid:
                // KU-JS `getValidTokenResult` → `store(q, cv, rt, hip)`; `cv` through `parseInt`, 0 → none (notes §4.2)
                let cv = parsed.fields["cv"].flatMap { Int($0) }.flatMap { $0 == 0 ? nil : String($0) }
                let hip = parsed.fields["hip"].flatMap { $0.isEmpty ? nil : $0 }
                return pass(
                    .tokenPass, .tokenPassRedirect,
                    stored(queueId: parsed.fields["q"] ?? "", fixed: cv, redirectType: parsed.fields["rt"] ?? "", hip: hip))
            case .invalid(let code, let icr):
                // KU-JS `getErrorResult` with the token's result; the found cookie is cleared
                return result(
                    .tokenError, " (\(code); cookie \(state.label))",
                    Outcome(
                        verdict: .queue, answer: answer(errorURL(i, code: code, token: token, icr: icr, target: t)),
                        cookie: clearIfFound, noCache: true))
            }
        }
        // README G5: an `enqueuetoken` the visitor brings is checked; a bad one is answered 403
        if let invitation = queryParameter(r.url, "enqueuetoken"), !invitation.isEmpty {
            return result(.invitationRefused, "", Outcome(verdict: .refuse, answer: .status(403), cookie: .unchecked))
        }
        // KU-JS `validateQueueRequest` step 3: a cookie bound to another IP and no token → sessionstate error (notes §3.6)
        if case .boundToAnotherIP(let hip) = state, let ip = r.clientIP {
            return result(
                .sessionState, "",
                Outcome(
                    verdict: .queue, answer: answer(sessionStateURL(i, hip: hip, clientIP: ip, target: t)),
                    cookie: clearIfFound, noCache: true))
        }
        // KU-JS `getQueueResult`: to the queue; a found (refused) cookie is cleared (notes §3.6, §14)
        return result(
            .queue, " (cookie \(state.label))",
            Outcome(
                verdict: .queue, answer: answer(queueURL(i, target: t)),
                cookie: clearIfFound, noCache: true))
    }

    /// What the gate answered, in the model's terms.
    static func observe(_ d: GateDecision) -> Outcome {
        let headers = (d.response?.headers ?? []) + d.passHeaders
        let cookies = headers.filter { $0.name.lowercased() == "set-cookie" && $0.value.hasPrefix(cookiePrefix) }.map(\.value)
        let effect: CookieEffect
        switch cookies.count {
        case 0: effect = .none
        case 1: effect = parseSetCookie(cookies[0])
        default: effect = .several(cookies)
        }
        guard let response = d.response else { return Outcome(verdict: d.verdict, answer: .handler, cookie: effect) }
        let answer: Answer
        if response.status == 302, let location = response.header("Location") {
            answer = .found(location)
        } else if response.status == 200, let value = response.header("x-queueit-redirect") {
            answer = .ajax(value, exposed: response.header("Access-Control-Expose-Headers") == "x-queueit-redirect")
        } else {
            answer = .status(response.status)
        }
        let noCache = (response.header("Cache-Control") ?? "").contains("no-store") && response.header("Pragma") == "no-cache"
        return Outcome(verdict: d.verdict, answer: answer, cookie: effect, noCache: noCache)
    }

    static func parseSetCookie(_ header: String) -> CookieEffect {
        let pieces = header.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let first = pieces.first ?? ""
        let eq = first.firstIndex(of: "=") ?? first.endIndex
        let name = String(first[..<eq])
        var value = eq == first.endIndex ? "" : String(first[first.index(after: eq)...])
        var domain: String?
        var secure = false
        var httpOnly = false
        for attribute in pieces.dropFirst() {
            let lower = attribute.lowercased()
            if lower.hasPrefix("domain=") { domain = String(attribute.dropFirst("domain=".count)) }
            if lower == "secure" { secure = true }
            if lower == "httponly" { httpOnly = true }
        }
        if value.isEmpty { return .cleared(name: name, domain: domain, secure: secure, httpOnly: httpOnly) }
        if value.contains("%"), let decoded = decodeURIComponent(value) { value = decoded }
        var map: [String: String] = [:]
        for item in value.split(separator: "&") {
            let kv = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            map[String(kv[0])] = kv.count > 1 ? String(kv[1]) : ""
        }
        let e = map["EventId"] ?? ""
        let q = map["QueueId"] ?? ""
        let rt = map["RedirectType"] ?? ""
        let it = map["IssueTime"] ?? ""
        let fixed = map["FixedValidityMins"]
        let hip = map["Hip"]
        // the hash a connector checks: KU-JS `generateHash` over the stored fields (notes §3.2)
        let good = hmac(e.lowercased() + q + (fixed ?? "") + rt + it + (hip ?? "")) == map["Hash"]
        return .set(
            SetCookie(
                name: name, eventId: e, queueId: q, fixed: fixed, redirectType: rt, issueTime: it, hip: hip, hashValid: good,
                domain: domain, secure: secure, httpOnly: httpOnly))
    }

    static func differences(_ expected: Outcome, _ got: Outcome) -> [String] {
        var d: [String] = []
        if expected.verdict != got.verdict { d.append("verdict") }
        if expected.answer != got.answer {
            switch (expected.answer, got.answer) {
            case (.found(let a), .found(let b)), (.ajax(let a, _), .ajax(let b, _)):
                d.append("URL: " + urlDifference(a, b))
            default:
                d.append("answer \(expected.answer.kind) → \(got.answer.kind)")
            }
        }
        if expected.cookie != .unchecked, expected.cookie != got.cookie {
            d.append("cookie: " + cookieDifference(expected.cookie, got.cookie))
        }
        if let n = expected.noCache, n != got.noCache { d.append("no-cache headers") }
        return d
    }

    /// A short name for how two cookie effects differ.
    static func cookieDifference(_ a: CookieEffect, _ b: CookieEffect) -> String {
        switch (a, b) {
        case (.cleared(let n1, let d1, let s1, let h1), .cleared(let n2, let d2, let s2, let h2)):
            var what: [String] = []
            if n1 != n2 { what.append("name") }
            if d1 != d2 { what.append("Domain") }
            if s1 != s2 { what.append("Secure") }
            if h1 != h2 { what.append("HttpOnly") }
            return "clearing differs in " + what.joined(separator: ", ")
        case (.set(let x), .set(let y)):
            var what: [String] = []
            if x.name != y.name { what.append("name") }
            if x.eventId != y.eventId { what.append("EventId") }
            if x.queueId != y.queueId { what.append("QueueId") }
            if x.fixed != y.fixed { what.append("FixedValidityMins") }
            if x.redirectType != y.redirectType { what.append("RedirectType") }
            if x.issueTime != y.issueTime { what.append("IssueTime") }
            if x.hip != y.hip { what.append("Hip") }
            if x.hashValid != y.hashValid { what.append("Hash") }
            if x.domain != y.domain { what.append("Domain") }
            if x.secure != y.secure { what.append("Secure") }
            if x.httpOnly != y.httpOnly { what.append("HttpOnly") }
            return "stored cookie differs in " + what.joined(separator: ", ")
        default:
            func name(_ e: CookieEffect) -> String {
                switch e {
                case .none: return "none"
                case .set: return "set"
                case .cleared: return "cleared"
                case .several: return "several"
                case .unchecked: return "unchecked"
                }
            }
            return "\(name(a)) → \(name(b))"
        }
    }

    /// A short name for how two URLs differ (their paths, or which query parameters).
    static func urlDifference(_ a: String, _ b: String) -> String {
        let (ea, eb) = (decodeURIComponent(a) ?? a, decodeURIComponent(b) ?? b)
        let pa = ea.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        let pb = eb.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        if pa != pb { return "path" }
        func pairs(_ s: String) -> [(name: String, value: String)] {
            (s.split(separator: "?", maxSplits: 1).dropFirst().first ?? "").split(separator: "&").map { pair in
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (String(kv[0]), kv.count > 1 ? String(kv[1]) : "")
            }
        }
        let (qa, qb) = (pairs(ea), pairs(eb))
        if qa.map(\.name) != qb.map(\.name) {
            return "parameters \(qa.map(\.name).joined(separator: ",")) → \(qb.map(\.name).joined(separator: ","))"
        }
        let differing = zip(qa, qb).filter { $0.0.value != $0.1.value }.map(\.0.name)
        return "value of \(differing.joined(separator: ","))"
    }

    // MARK: helpers of the model

    static func hmac(_ message: String) -> String { QueueItHash.hmacHex(secretKey: secret, message: message) }

    /// KU-JS `Utils.bin2hex`: each UTF-16 unit as at least two lower-case hex digits.
    static func bin2hex(_ s: String) -> String {
        s.utf16.map { unit -> String in
            let h = String(unit, radix: 16)
            return h.count < 2 ? "0" + h : h
        }.joined()
    }

    /// KU-JS `Utils.encodeUrl`: `encodeURIComponent`, then `!'()*` escaped too (the generated
    /// values hold none of those but `(` and `)`, which both write `%28`, `%29`).
    static func encode(_ s: String) -> String {
        let keep = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~".utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in s.utf8 {
            if keep.contains(b) { out.append(b) } else { out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]] }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `decodeURIComponent`: nil where it throws (a `%` without two hex digits, bytes that are not UTF-8).
    static func decodeURIComponent(_ s: String) -> String? {
        func hexValue(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, let h = hexValue(bytes[i + 1]), let l = hexValue(bytes[i + 2]) else { return nil }
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// README G6: an absolute `http(s)` URL with a host.
    static func isAbsoluteHTTP(_ s: String?) -> Bool {
        guard let s, !s.contains(" ") else { return false }
        let lower = s.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return false }
        return !hostAndPath(s).host.isEmpty
    }

    /// A query parameter's value (README G5 reads `enqueuetoken` from the query).
    static func queryParameter(_ url: String, _ name: String) -> String? {
        guard let qm = url.firstIndex(of: "?") else { return nil }
        for pair in url[url.index(after: qm)...].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if kv[0] == name { return kv.count > 1 ? decodeURIComponent(String(kv[1])) ?? String(kv[1]) : "" }
        }
        return nil
    }

    static func describe(_ r: GateRequest) -> String {
        "\(r.method) \(r.url) ip=\(r.clientIP ?? "-") [" + r.headers.map { "\($0.name): \($0.value)" }.joined(separator: " | ") + "]"
    }
}

// MARK: - Coverage

private struct Coverage {
    var parts: [String: (t: Int, f: Int)] = [:]
    var matched: [String: Int] = [:]
    var answers: [String: Int] = [:]
    var cookieKinds: [String: Int] = [:]
    var tokenKinds: [String: Int] = [:]

    mutating func add(_ label: String, _ value: Bool) {
        var c = parts[label] ?? (0, 0)
        if value { c.t += 1 } else { c.f += 1 }
        parts[label] = c
    }

    /// Every part of every integration evaluated on the request (as the model sees it).
    mutating func record(_ r: GateRequest) {
        let url = Model.stripToken(r.url).url
        for integration in Model.integrations {
            for trigger in integration.triggers {
                add("trigger \(trigger.logical)", Model.evaluate(trigger, r, url: url))
                for p in trigger.parts {
                    let v = Model.evaluate(p, r, url: url)
                    add(p.validatorLabel, v)
                    add(p.operatorLabel, v)
                    if p.operatorLabel.hasSuffix("*]") || p.operatorLabel.hasSuffix("*") {
                        add("\(p.operatorLabel) IsNegative \(p.negative)", v)
                    }
                    if p.validatorLabel != "unknown validator", p.operatorLabel != "unknown operator" {
                        add("IsNegative \(p.negative)", v)
                        add("IsIgnoreCase \(p.ignoreCase)", v)
                    }
                }
            }
        }
        matched[Model.firstMatch(r, url: url)?.name ?? "(none)", default: 0] += 1
    }
}

// MARK: - The generator

private enum Generator {
    struct Generated {
        var request: GateRequest
        var note: String
        var cookieKind: CookieKind?
        var tokenKind: TokenKind?
    }

    /// Session cookie states (for the matched integration's event three times in four).
    enum CookieKind: String, CaseIterable {
        case valid, validSevenMinutes, fixedValid, fixedExpired, expired, tampered, wrongSecret, otherEventInside
        case boundHere, boundElsewhere, boundElsewhereExpired, garbage, empty, encoded
    }

    /// `queueittoken` kinds (for the matched integration's event three times in four).
    enum TokenKind: String, CaseIterable {
        case valid, safetynet, fixed3, fixed0, extendable, boundHere, boundElsewhere, expired, expiresNow
        case badHash, tamperedBody, otherEvent, otherSecret, otherCustomer, ownCustomer, garbage, empty
    }

    static let hosts = [
        "shop.example", "shop.example", "shop.example", "shop.example", "SHOP.example", "www.shop.example",
        "shop.example:8443", "api.shop.example", "other.test"
    ]
    static let paths = [
        "/", "/shop/item/42", "/shop/item/42", "/shop/item/7", "/shop/cart", "/shop/cart", "/api/cart", "/checkout", "/SHOP/item/7",
        "/shop/static/app.css", "/static/logo.png",
        "/Static/Logo.PNG", "/favicon.ico", "/FAVICON.ico", "/robots.txt", "/account/logout", "/Account/LOGOUT",
        "/account/profile", "/api/cart", "/api/v2/items", "/checkout", "/checkout/pay", "/promo", "/promo/", "/PROMO",
        "/promo/x", "/health", "/about", ""
    ]
    static let queryPairs = ["a=1", "a=1", "page=2", "ref=mail", "ref=mail", "leave=queue", "preview=1", "draft=yes", "DRAFT=1"]
    static let ips: [String?] = ["192.0.2.10", "192.0.2.10", "192.0.2.10", "198.51.100.20", "2001:db8::5", nil]
    static let userAgents: [String?] = [
        nil, "Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (X11; Linux x86_64)",
        "Googlebot/2.1", "SomeBOT/1", "HealthCheck/1.0", "kube-healthcheck", "Monitor/1.0", "curl/8.0"
    ]
    static let ajaxValues: [String?] = [
        nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
        Model.encode("https://shop.example/shop/item/42?a=1"), "https://shop.example/checkout",
        Model.encode("https://shop.example/search?q=a%20b"), Model.encode("https://shop.example/shop/cart"),
        "not-a-url", "%E0%A4%A", "", "javascript%3Aalert(1)"
    ]
    static let elsewhere = "203.0.113.99"

    static func request(seed: UInt64) throws -> Generated {
        var rng = SeededRandom(seed: seed)
        let scheme = rng.pick(["https", "https", "https", "http"])
        let host = rng.pick(hosts)
        let path = rng.pick(paths)
        var query: [String] = []
        for _ in 0..<rng.pick([0, 0, 1, 1, 2]) { query.append(rng.pick(queryPairs)) }
        if rng.chance(6) { query.append("enqueuetoken=junk") }
        let clientIP = rng.pick(ips)
        let method = rng.pick(["GET", "GET", "GET", "GET", "HEAD", "POST"])

        var headers: [GateHeader] = []
        func add(_ names: [String], _ values: [String?]) {
            if let value = rng.pick(values) { headers.append(GateHeader(rng.pick(names), value)) }
        }
        add(["User-Agent", "user-agent"], userAgents)
        add(["x-internal", "X-Internal"], [nil, nil, nil, nil, "yes", "YES"])
        add(
            ["x-cancel-queue", "X-Cancel-Queue"],
            [nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, "now", "PLEASE", "later"])
        add(["x-queue-me", "X-Queue-Me"], [nil, nil, nil, nil, nil, "1", "0"])
        add(["accept", "Accept"], [nil, nil, "application/json", "text/html", "Application/JSON; q=1"])
        add(["x-no-queue", "X-No-Queue"], [nil, nil, nil, nil, "", "1"])
        add(["x-campaign", "X-Campaign"], [nil, nil, nil, nil, nil, "spring", ""])
        add(["x-queueit-ajaxpageurl", "X-QueueIT-AjaxPageUrl"], ajaxValues)
        var cookies: [String] = []
        if let m = rng.pick([nil, nil, nil, "gold", "gold", "silver", "SILVER", "", "platinum"] as [String?]) {
            cookies.append("member=\(m)")
        }
        if let o = rng.pick([nil, nil, nil, "1", ""] as [String?]) { cookies.append("optout=\(o)") }

        // The integration these would match: tokens and session cookies take no part in the
        // triggers, so the session cookie and token can be made for its event most of the time.
        let url = scheme + "://" + host + path + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        let probe = GateRequest(
            method: method, url: url, headers: headers + [GateHeader("Cookie", cookies.joined(separator: "; "))], clientIP: clientIP)
        let matchedEvent = Model.firstMatch(probe, url: url)?.eventId ?? ""
        func event() -> String {
            !matchedEvent.isEmpty && rng.chance(75) ? matchedEvent : rng.pick(["sale", "sale", "vip", "campaign"])
        }
        var notes: [String] = []
        var cookieKind: CookieKind?
        var tokenKind: TokenKind?
        if rng.chance(60) {
            // bound to another address twice as often: with no token it is the sessionstate error
            let kind = rng.pick(CookieKind.allCases + [.boundElsewhere])
            cookieKind = kind
            let e = event()
            let value = sessionCookie(
                kind, event: e, queueId: rng.guid(), redirectType: rng.pick(["queue", "queue", "safetynet"]),
                clientIP: clientIP)
            cookies.append(Model.cookiePrefix + e + "=" + value)
            notes.append("cookie=\(kind.rawValue)@\(e)")
        }
        if rng.chance(12) {
            let e = rng.pick(["sale", "vip", "campaign"])
            cookies.append(
                Model.cookiePrefix + e + "="
                    + sessionCookie(.valid, event: e, queueId: rng.guid(), redirectType: "queue", clientIP: clientIP))
            notes.append("extra cookie@\(e)")
        }
        var withToken = query
        if rng.chance(45) {
            let kind = rng.pick(TokenKind.allCases)
            tokenKind = kind
            let e = event()
            let value = try token(kind, event: e, queueId: rng.guid(), clientIP: clientIP)
            withToken.insert("queueittoken=\(value)", at: Int(rng.next() % UInt64(withToken.count + 1)))
            notes.append("token=\(kind.rawValue)@\(e)")
        }
        // the cookies in a random order, sometimes over two `Cookie` fields
        for i in stride(from: cookies.count - 1, to: 0, by: -1) { cookies.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
        if cookies.count >= 2, rng.chance(25) {
            let cut = 1 + Int(rng.next() % UInt64(cookies.count - 1))
            headers.append(GateHeader("Cookie", cookies[..<cut].joined(separator: "; ")))
            headers.append(GateHeader("cookie", cookies[cut...].joined(separator: "; ")))
        } else if !cookies.isEmpty {
            headers.append(GateHeader("Cookie", cookies.joined(separator: "; ")))
        }
        let full = scheme + "://" + host + path + (withToken.isEmpty ? "" : "?" + withToken.joined(separator: "&"))
        return Generated(
            request: GateRequest(method: method, url: full, headers: headers, clientIP: clientIP),
            note: notes.isEmpty ? "no session cookie, no token" : notes.joined(separator: ", "),
            cookieKind: cookieKind, tokenKind: tokenKind)
    }

    static func sessionCookie(_ kind: CookieKind, event: String, queueId: String, redirectType: String, clientIP: String?) -> String {
        func make(eventId: String? = nil, fixed: Int? = nil, age: Int64 = 60, hip: String? = nil, secret: String = Model.secret) -> String {
            QueueItAcceptedCookie(
                eventId: eventId ?? event, queueId: queueId, fixedValidityMinutes: fixed, redirectType: redirectType,
                issueTime: Model.now - age, hashedIP: hip, secretKey: secret
            ).value
        }
        switch kind {
        case .valid: return make()
        case .validSevenMinutes: return make(age: 7 * 60)  // valid for 10 and 20 minutes, expired for 5
        case .fixedValid: return make(fixed: 3)
        case .fixedExpired: return make(fixed: 1, age: 120)
        case .expired: return make(age: 3_600)
        case .tampered: return flipLast(make())
        case .wrongSecret: return make(secret: Model.otherSecret)
        case .otherEventInside: return make(eventId: "winter")
        case .boundHere: return make(hip: Model.hmac(clientIP ?? "192.0.2.10"))
        case .boundElsewhere: return make(hip: Model.hmac(elsewhere))
        case .boundElsewhereExpired: return make(age: 3_600, hip: Model.hmac(elsewhere))
        case .garbage: return "abc"
        case .empty: return ""
        case .encoded: return Model.encode(make())
        }
    }

    static func token(_ kind: TokenKind, event: String, queueId: String, clientIP: String?) throws -> String {
        let minter = QueueItTokenMinter(secretKey: Model.secret)
        let later = Model.now + 300
        func valid() throws -> String { try minter.mint(eventId: event, queueId: queueId, expiresAt: later, redirectType: .queue) }
        switch kind {
        case .valid: return try valid()
        case .safetynet: return try minter.mint(eventId: event, queueId: queueId, expiresAt: later, redirectType: .safetynet)
        case .fixed3:
            return try minter.mint(eventId: event, queueId: queueId, expiresAt: later, redirectType: .queue, cookieValidityMinutes: 3)
        case .fixed0:
            return try minter.mint(eventId: event, queueId: queueId, expiresAt: later, redirectType: .queue, cookieValidityMinutes: 0)
        case .extendable:
            return try minter.mint(eventId: event, queueId: queueId, expiresAt: later, redirectType: .queue, extendableCookie: true)
        case .boundHere:
            return try minter.mint(
                eventId: event, queueId: queueId, expiresAt: later, redirectType: .queue, clientIP: clientIP ?? "192.0.2.10")
        case .boundElsewhere:
            return try minter.mint(eventId: event, queueId: queueId, expiresAt: later, redirectType: .queue, clientIP: elsewhere)
        case .expired: return try minter.mint(eventId: event, queueId: queueId, expiresAt: Model.now - 30, redirectType: .queue)
        case .expiresNow: return try minter.mint(eventId: event, queueId: queueId, expiresAt: Model.now, redirectType: .queue)
        case .badHash: return flipLast(try valid())
        case .tamperedBody: return try valid().replacingOccurrences(of: "q_\(queueId)~", with: "q_\(queueId)0~")
        case .otherEvent: return try minter.mint(eventId: "winter", queueId: queueId, expiresAt: later, redirectType: .queue)
        case .otherSecret:
            return try QueueItTokenMinter(secretKey: Model.otherSecret).mint(
                eventId: event, queueId: queueId, expiresAt: later, redirectType: .queue)
        case .otherCustomer: return minter.sign(body: "c_rival~e_\(event)~q_\(queueId)~ts_\(later)~ce_false~rt_queue")
        case .ownCustomer: return minter.sign(body: "c_\(Model.customer)~e_\(event)~q_\(queueId)~ts_\(later)~ce_false~rt_queue")
        case .garbage: return "not-a-token"
        case .empty: return ""
        }
    }

    /// The text with its last character changed (a hex digit stays one).
    static func flipLast(_ s: String) -> String {
        guard let last = s.last else { return s }
        return String(s.dropLast()) + (last == "0" ? "1" : "0")
    }
}

extension SeededRandom {
    fileprivate mutating func pick<T>(_ values: [T]) -> T { values[Int(next() % UInt64(values.count))] }
    fileprivate mutating func chance(_ percent: Int) -> Bool { Int(next() % 100) < percent }
    /// A queue id in the form Queue-it issues them (a GUID, `8-4-4-4-12` lower-case hex digits).
    fileprivate mutating func guid() -> String {
        [8, 4, 4, 4, 12].map { n in String((0..<n).map { _ in Array("0123456789abcdef")[Int(next() % 16)] }) }.joined(separator: "-")
    }
}
