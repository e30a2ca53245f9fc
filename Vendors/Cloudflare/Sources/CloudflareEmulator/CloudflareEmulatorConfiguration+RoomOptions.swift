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
        if let attributes = try x.object("cookie_attributes") {
            room.cookieAttributes = try readCookieAttributes(attributes, path: "\(path).cookie_attributes")
        }
        if let list = x.object["additional_routes"], list != .null {
            let routes = try readAdditionalRoutes(list, path: "\(path).additional_routes")
            // the schema: cookie_suffix "is required if using additional_routes"
            if !routes.isEmpty, room.cookieSuffix == nil {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(path).cookie_suffix", "is required with additional_routes", vendor: CloudflareConfiguration.vendorID)
            }
            room.additionalRoutes = routes
        }
        if let list = x.object["rules"], list != .null {
            room.rules = try readRules(list, path: "\(path).rules")
        }
        if let mode = try choice(x, "turnstile_mode", TurnstileMode.self, field: "\(path).turnstile_mode") {
            room.turnstileMode = mode
        }
        if let action = try choice(x, "turnstile_action", TurnstileAction.self, field: "\(path).turnstile_action") {
            room.turnstileAction = action
        }
    }

    /// The value of `key` in `x` as one of `T`'s cases (nil when absent); another text is an
    /// error naming `field` and the cases.
    private static func choice<T: RawRepresentable & CaseIterable>(
        _ x: ConfigurationReader, _ key: String, _: T.Type, field: String
    ) throws -> T? where T.RawValue == String {
        guard let text = try x.string(key) else { return nil }
        guard let value = T(rawValue: text) else {
            throw WaitingRoomError.invalidConfiguration(
                field: field, "expected one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"",
                vendor: CloudflareConfiguration.vendorID)
        }
        return value
    }

    /// `cookie_attributes`: `samesite` and `secure`, each `auto` when absent.
    private static func readCookieAttributes(_ attributes: ConfigurationReader, path: String) throws -> CookieAttributes {
        try attributes.rejectUnknownKeys(["samesite", "secure"])
        let a = CookieAttributes(
            samesite: try choice(attributes, "samesite", CookieAttributes.SameSite.self, field: "\(path).samesite") ?? .auto,
            secure: try choice(attributes, "secure", CookieAttributes.Secure.self, field: "\(path).secure") ?? .auto)
        // the schema: "when using value none, the secure attribute cannot be set to never"
        if a.samesite == .none, a.secure == .never {
            throw WaitingRoomError.invalidConfiguration(
                field: "\(path).secure", "cannot be \"never\" when samesite is \"none\"", vendor: CloudflareConfiguration.vendorID)
        }
        return a
    }

    /// `additional_routes`: an array of `{host, path}`, the host without scheme, port or wildcard,
    /// the path absolute, without wildcards or a query.
    private static func readAdditionalRoutes(_ list: JSONValue, path: String) throws -> [Route] {
        try readArray(list, path: path, of: "{host, path}") { r, field, _ in
            try r.rejectUnknownKeys(["host", "path"])
            guard let host = try r.string("host"), !host.isEmpty, !host.contains("/"), !host.contains(":"), !host.contains("*") else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(field).host", "expected a host name without scheme, port or wildcard",
                    vendor: CloudflareConfiguration.vendorID)
            }
            let routePath = try r.string("path") ?? "/"
            guard routePath.hasPrefix("/"), !routePath.contains("*"), !routePath.contains("?") else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(field).path", "expected a path starting with \"/\", without wildcards or a query",
                    vendor: CloudflareConfiguration.vendorID)
            }
            return Route(host: host, path: routePath)
        }
    }

    /// `rules`: the bypass rules, each with the `bypass_waiting_room` action and an expression.
    private static func readRules(_ list: JSONValue, path: String) throws -> [BypassRule] {
        try readArray(list, path: path, of: "rules") { r, field, i in
            let v = CloudflareConfiguration.vendorID
            try r.rejectUnknownKeys(["id", "action", "expression", "description", "enabled", "last_updated", "version"])
            let action = try r.string("action") ?? ""
            guard action == BypassRule.action else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(field).action", "expected \"\(BypassRule.action)\", got \"\(action)\"", vendor: v)
            }
            guard let expression = try r.string("expression") else {
                throw WaitingRoomError.invalidConfiguration(field: "\(field).expression", "is required", vendor: v)
            }
            return try BypassRule(
                id: try r.string("id") ?? "rule-\(i + 1)", expression: expression,
                description: try r.string("description") ?? "", enabled: try r.bool("enabled") ?? true,
                field: "\(field).expression")
        }
    }

    /// The elements of the array `list` (at `path`), each read by `element` from its reader, its
    /// field (`path[i]`) and its index; anything but an array is an error expecting an array `of`.
    private static func readArray<Element>(
        _ list: JSONValue, path: String, of what: String, _ element: (ConfigurationReader, String, Int) throws -> Element
    ) throws -> [Element] {
        let v = CloudflareConfiguration.vendorID
        guard case .array(let items) = list else {
            throw WaitingRoomError.invalidConfiguration(field: path, "expected an array of \(what)", vendor: v)
        }
        return try items.enumerated().map { i, item in
            let field = "\(path)[\(i)]"
            return try element(try ConfigurationReader(item, path: field, vendor: v), field, i)
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
