import WaitingRoom

extension CloudflareEmulatorConfiguration {
    /// One of a room's `additional_routes`: a host and a path the room also covers, subpaths
    /// included (API schema `additional_routes`: "an implied wildcard at the end of the path").
    package struct Route: Sendable, Hashable {
        /// The host, lowercase, without scheme or port (Cloudflare requires one).
        package var host: String
        /// The path (default `/`).
        package var path: String

        package init(host: String, path: String = "/") {
            self.host = host.lowercased()
            self.path = path
        }

        /// Whether the route covers `path` on `host` (nil: the request named no host).
        package func covers(host requestHost: String?, path requestPath: String) -> Bool {
            guard requestHost == host else { return false }
            return CloudflareEmulatorConfiguration.path(path, covers: requestPath)
        }

        /// The JSON form.
        package var json: JSONValue { .object(["host": .string(host), "path": .string(path)]) }
    }

    /// Whether a room path `prefix` covers `path`: the same path or one under it (`/` covers all).
    static func path(_ prefix: String, covers path: String) -> Bool {
        prefix == "/" || path == prefix || path.hasPrefix(prefix.hasSuffix("/") ? prefix : prefix + "/")
    }
}
