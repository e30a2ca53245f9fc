import Foundation
import WaitingRoomGate

/// Queue-it's integration configuration, as the Go platform publishes it
/// (`https://{customerId}.queue-it.net/status/integrationconfig/{customerId}`) and the KnownUser
/// connectors read it (KU-JS `IntegrationConfigModel`): a version and a list of integrations,
/// each with triggers and one action. JSON keys are Queue-it's (PascalCase); unknown keys are
/// ignored, as the connectors do.
public struct QueueItIntegrationConfig: Sendable, Hashable, Decodable {
    /// `Version`: sent as `cver` in redirects.
    package var version: Int
    /// `Integrations`, in the order they are tried: the first whose trigger matches wins.
    package var integrations: [QueueItIntegration]

    package init(version: Int, integrations: [QueueItIntegration]) {
        self.version = version
        self.integrations = integrations
    }

    enum CodingKeys: String, CodingKey {
        case version = "Version"
        case integrations = "Integrations"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // a number that is not whole (3.5) fails in Foundation as "not valid JSON", without a path
        if let number = try c.decodeIfPresent(Double.self, forKey: .version) {
            guard number.rounded() == number, let whole = Int(exactly: number) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .version, in: c, debugDescription: "Version must be a whole number, not \(number)")
            }
            version = whole
        } else {
            version = 0
        }
        integrations = try c.decodeIfPresent([QueueItIntegration].self, forKey: .integrations) ?? []
    }

    /// Reads the published JSON. Throws ``QueueItIntegrationConfigError`` naming what is wrong
    /// (KU-JS refuses a configuration without a `Version` too).
    package init(json: [UInt8]) throws(QueueItIntegrationConfigError) {
        guard json.count <= Self.maxBytes else { throw .tooLarge(bytes: json.count) }
        let decoded: QueueItIntegrationConfig
        do { decoded = try JSONDecoder().decode(QueueItIntegrationConfig.self, from: Data(json)) } catch {
            throw .malformed(String(describing: error))
        }
        guard decoded.version > 0 else { throw .missingVersion }
        for integration in decoded.integrations where integration.actionType != .ignore {
            if integration.eventId.isEmpty { throw .missingField(integration: integration.name, field: "EventId") }
            if integration.queueDomain.isEmpty { throw .missingField(integration: integration.name, field: "QueueDomain") }
        }
        self = decoded
    }

    /// Reads the published JSON from text.
    public init(json: String) throws(QueueItIntegrationConfigError) {
        try self.init(json: Array(json.utf8))
    }

    /// The largest configuration read (4 MiB).
    package static let maxBytes = 4 * 1024 * 1024

    /// The first integration with a trigger that matches `request` (its URL without `queueittoken`).
    package func match(_ request: GateRequest, urlWithoutToken: String) -> QueueItIntegration? {
        integrations.first { $0.triggers.contains { $0.matches(request, url: urlWithoutToken) } }
    }
}

/// Why an integration configuration cannot be used.
public enum QueueItIntegrationConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Larger than ``QueueItIntegrationConfig/maxBytes``.
    case tooLarge(bytes: Int)
    /// Not JSON of the published shape (the decoder's reason).
    case malformed(String)
    /// No `Version` (or 0).
    case missingVersion
    /// A Queue or Cancel integration without `EventId` or `QueueDomain`.
    case missingField(integration: String, field: String)

    public var description: String {
        switch self {
        case .tooLarge(let n): return "the integration configuration is \(n) bytes; at most \(QueueItIntegrationConfig.maxBytes) are read"
        case .malformed(let why): return "the integration configuration is not Queue-it's JSON: \(why)"
        case .missingVersion: return "the integration configuration has no Version (publish it again from the Go platform)"
        case .missingField(let i, let f): return "integration '\(i)' has no \(f); every Queue and Cancel action needs one"
        }
    }
}

/// One integration: an action (Queue, Cancel or Ignore) on one waiting room, with its triggers.
package struct QueueItIntegration: Sendable, Hashable, Decodable {
    /// KnownUser action types (KU-JS `ActionType`); anything else acts as Ignore (KU-JS `default:`).
    package enum ActionType: String, Sendable, Hashable, Decodable {
        case queue = "Queue"
        case cancel = "Cancel"
        case ignore = "Ignore"

        package init(from decoder: any Decoder) throws {
            self = ActionType(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .ignore
        }
    }

    /// `Name`: the action's name, sent as `man`.
    package var name: String
    /// `EventId`: the waiting room.
    package var eventId: String
    /// `QueueDomain`: `{customer}.queue-it.net` or a custom domain. (proposal) A value that starts
    /// with `http://` or `https://` keeps its scheme (the emulator serves plain HTTP); otherwise
    /// `https://` is put in front, as the connectors do.
    package var queueDomain: String
    /// `CookieDomain`: the session cookie's `Domain`.
    package var cookieDomain: String?
    /// `IsCookieHttpOnly`.
    package var isCookieHttpOnly: Bool
    /// `IsCookieSecure`.
    package var isCookieSecure: Bool
    /// `LayoutName`: sent as `l`.
    package var layoutName: String?
    /// `Culture`: sent as `cid`.
    package var culture: String?
    /// `ExtendCookieValidity` (default true).
    package var extendCookieValidity: Bool
    /// `CookieValidityMinute` (default 10, KnownUser's `QueueEventConfig`).
    package var cookieValidityMinute: Int
    /// `RedirectLogic`: `AllowTParameter` (the request URL), `EventTargetUrl` (no `t`) or `ForcedTargetUrl`.
    package var redirectLogic: String
    /// `ForcedTargetUrl`, for that redirect logic.
    package var forcedTargetURL: String?
    /// `ActionType`.
    package var actionType: ActionType
    /// `Triggers`: any one matching selects this integration.
    package var triggers: [QueueItTrigger]
    /// The `ActionType` text when it is none of `Queue`, `Cancel`, `Ignore` (or absent: `""`); the
    /// integration then acts as Ignore (KU-JS `default:`; KU-Java, -.NET and -PHP queue instead,
    /// KU-Python throws), and ``QueueItGate`` logs and counts every request it lets through so.
    package var unknownActionType: String?

    package init(
        name: String, eventId: String, queueDomain: String, actionType: ActionType = .queue, triggers: [QueueItTrigger],
        cookieDomain: String? = nil, isCookieHttpOnly: Bool = false, isCookieSecure: Bool = false, layoutName: String? = nil,
        culture: String? = nil, extendCookieValidity: Bool = true, cookieValidityMinute: Int = 10,
        redirectLogic: String = "AllowTParameter", forcedTargetURL: String? = nil
    ) {
        self.name = name
        self.eventId = eventId
        self.queueDomain = queueDomain
        self.actionType = actionType
        self.triggers = triggers
        self.cookieDomain = cookieDomain
        self.isCookieHttpOnly = isCookieHttpOnly
        self.isCookieSecure = isCookieSecure
        self.layoutName = layoutName
        self.culture = culture
        self.extendCookieValidity = extendCookieValidity
        self.cookieValidityMinute = cookieValidityMinute
        self.redirectLogic = redirectLogic
        self.forcedTargetURL = forcedTargetURL
    }

    enum CodingKeys: String, CodingKey {
        case name = "Name"
        case eventId = "EventId"
        case queueDomain = "QueueDomain"
        case cookieDomain = "CookieDomain"
        case isCookieHttpOnly = "IsCookieHttpOnly"
        case isCookieSecure = "IsCookieSecure"
        case layoutName = "LayoutName"
        case culture = "Culture"
        case extendCookieValidity = "ExtendCookieValidity"
        case cookieValidityMinute = "CookieValidityMinute"
        case redirectLogic = "RedirectLogic"
        case forcedTargetURL = "ForcedTargetUrl"
        case actionType = "ActionType"
        case triggers = "Triggers"
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decodeIfPresent(String.self, forKey: .name) ?? ""
        eventId = try c.decodeIfPresent(String.self, forKey: .eventId) ?? ""
        queueDomain = try c.decodeIfPresent(String.self, forKey: .queueDomain) ?? ""
        cookieDomain = try c.decodeIfPresent(String.self, forKey: .cookieDomain)
        isCookieHttpOnly = try c.decodeIfPresent(Bool.self, forKey: .isCookieHttpOnly) ?? false
        isCookieSecure = try c.decodeIfPresent(Bool.self, forKey: .isCookieSecure) ?? false
        layoutName = try c.decodeIfPresent(String.self, forKey: .layoutName)
        culture = try c.decodeIfPresent(String.self, forKey: .culture)
        extendCookieValidity = try c.decodeIfPresent(Bool.self, forKey: .extendCookieValidity) ?? true
        cookieValidityMinute = try c.decodeIfPresent(Int.self, forKey: .cookieValidityMinute) ?? 10
        // past the bound, minutes × 60 overflowed and every cookie read as expired: each visitor
        // was sent back to the queue forever (proposal: Queue-it documents no upper bound)
        guard cookieValidityMinute <= Self.cookieValidityMinuteBound else {
            throw DecodingError.dataCorruptedError(
                forKey: .cookieValidityMinute, in: c,
                debugDescription: "expected at most \(Self.cookieValidityMinuteBound) minutes (ten years), got \(cookieValidityMinute)")
        }
        redirectLogic = try c.decodeIfPresent(String.self, forKey: .redirectLogic) ?? "AllowTParameter"
        forcedTargetURL = try c.decodeIfPresent(String.self, forKey: .forcedTargetURL)
        let action = try c.decodeIfPresent(String.self, forKey: .actionType)
        actionType = action.flatMap(ActionType.init(rawValue:)) ?? .ignore
        unknownActionType = action.flatMap(ActionType.init(rawValue:)) == nil ? (action ?? "") : nil
        triggers = try c.decodeIfPresent([QueueItTrigger].self, forKey: .triggers) ?? []
    }

    /// The largest `CookieValidityMinute` a configuration may give: ten years.
    package static let cookieValidityMinuteBound = 10 * 365 * 24 * 60

    /// `https://{QueueDomain}` (or the domain's own scheme, see ``queueDomain``), without a trailing slash.
    package var queueBaseURL: String {
        var base = queueDomain.hasPrefix("http://") || queueDomain.hasPrefix("https://") ? queueDomain : "https://" + queueDomain
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }
}
