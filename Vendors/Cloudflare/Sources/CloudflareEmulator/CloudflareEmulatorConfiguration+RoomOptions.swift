import Cloudflare
import WaitingRoom

/// The room settings of issue 50 §2 by their API names: `cookie_attributes`,
/// `additional_routes`, `rules` (bypass rules), `turnstile_mode`, `turnstile_action`. Read and
/// written here so the room's core reader stays short.
extension CloudflareEmulatorConfiguration {
    /// The keys read here.
    static let roomOptionKeys: Set<String> = ["cookie_attributes", "additional_routes", "rules", "turnstile_mode", "turnstile_action"]

    /// Reads the keys of ``roomOptionKeys`` from `x` into `room`; bad input names its field.
    static func readRoomOptions(_ x: ConfigurationReader, into room: inout Room, path: String) throws {
        let v = CloudflareConfiguration.vendorID
        if let attributes = try x.object("cookie_attributes") {
            try attributes.rejectUnknownKeys(["samesite", "secure"])
            func value<T: RawRepresentable & CaseIterable>(_ key: String, _: T.Type) throws -> T? where T.RawValue == String {
                guard let text = try attributes.string(key) else { return nil }
                guard let value = T(rawValue: text) else {
                    throw WaitingRoomError.invalidConfiguration(
                        field: "\(path).cookie_attributes.\(key)",
                        "expected one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"", vendor: v)
                }
                return value
            }
            let a = CookieAttributes(
                samesite: try value("samesite", CookieAttributes.SameSite.self) ?? .auto,
                secure: try value("secure", CookieAttributes.Secure.self) ?? .auto)
            // the schema: "when using value none, the secure attribute cannot be set to never"
            if a.samesite == .none, a.secure == .never {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(path).cookie_attributes.secure", "cannot be \"never\" when samesite is \"none\"", vendor: v)
            }
            room.cookieAttributes = a
        }
        if let list = x.object["additional_routes"], list != .null {
            guard case .array(let items) = list else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(path).additional_routes", "expected an array of {host, path}", vendor: v)
            }
            var routes: [Route] = []
            for (i, item) in items.enumerated() {
                let field = "\(path).additional_routes[\(i)]"
                let r = try ConfigurationReader(item, path: field, vendor: v)
                try r.rejectUnknownKeys(["host", "path"])
                guard let host = try r.string("host"), !host.isEmpty, !host.contains("/"), !host.contains(":"), !host.contains("*") else {
                    throw WaitingRoomError.invalidConfiguration(
                        field: "\(field).host", "expected a host name without scheme, port or wildcard", vendor: v)
                }
                let routePath = try r.string("path") ?? "/"
                guard routePath.hasPrefix("/"), !routePath.contains("*"), !routePath.contains("?") else {
                    throw WaitingRoomError.invalidConfiguration(
                        field: "\(field).path", "expected a path starting with \"/\", without wildcards or a query", vendor: v)
                }
                routes.append(Route(host: host, path: routePath))
            }
            // the schema: cookie_suffix "is required if using additional_routes"
            if !routes.isEmpty, room.cookieSuffix == nil {
                throw WaitingRoomError.invalidConfiguration(field: "\(path).cookie_suffix", "is required with additional_routes", vendor: v)
            }
            room.additionalRoutes = routes
        }
        if let list = x.object["rules"], list != .null {
            guard case .array(let items) = list else {
                throw WaitingRoomError.invalidConfiguration(field: "\(path).rules", "expected an array of rules", vendor: v)
            }
            var rules: [BypassRule] = []
            for (i, item) in items.enumerated() {
                let field = "\(path).rules[\(i)]"
                let r = try ConfigurationReader(item, path: field, vendor: v)
                try r.rejectUnknownKeys(["id", "action", "expression", "description", "enabled", "last_updated", "version"])
                let action = try r.string("action") ?? ""
                guard action == BypassRule.action else {
                    throw WaitingRoomError.invalidConfiguration(
                        field: "\(field).action", "expected \"\(BypassRule.action)\", got \"\(action)\"", vendor: v)
                }
                guard let expression = try r.string("expression") else {
                    throw WaitingRoomError.invalidConfiguration(field: "\(field).expression", "is required", vendor: v)
                }
                rules.append(
                    try BypassRule(
                        id: try r.string("id") ?? "rule-\(i + 1)", expression: expression,
                        description: try r.string("description") ?? "", enabled: try r.bool("enabled") ?? true,
                        field: "\(field).expression"))
            }
            room.rules = rules
        }
        if let mode = try x.string("turnstile_mode") {
            guard let m = TurnstileMode(rawValue: mode) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(path).turnstile_mode",
                    "expected one of \(TurnstileMode.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(mode)\"", vendor: v)
            }
            room.turnstileMode = m
        }
        if let action = try x.string("turnstile_action") {
            guard let a = TurnstileAction(rawValue: action) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(path).turnstile_action",
                    "expected one of \(TurnstileAction.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(action)\"", vendor: v)
            }
            room.turnstileAction = a
        }
    }

    /// Writes the keys of ``roomOptionKeys`` into a room's JSON form.
    static func writeRoomOptions(_ room: Room, into o: inout [String: JSONValue]) {
        o["cookie_attributes"] = room.cookieAttributes.json
        o["additional_routes"] = .array(room.additionalRoutes.map(\.json))
        // bypass rules are their own resource at Cloudflare: written only when a room has some
        if !room.rules.isEmpty { o["rules"] = .array(room.rules.map(\.json)) }
        o["turnstile_mode"] = .string(room.turnstileMode.rawValue)
        o["turnstile_action"] = .string(room.turnstileAction.rawValue)
    }
}
