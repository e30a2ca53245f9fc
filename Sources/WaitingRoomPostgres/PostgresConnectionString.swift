import Foundation
import WaitingRoom

/// A PostgreSQL connection URL, parsed: `postgres://user:password@host:port/database?sslmode=disable`.
///
/// The libpq URL form (`postgres://` or `postgresql://`), with these parts:
/// - `user` (required) and `password` (optional), percent-decoded;
/// - `host` (required): a name, an IPv4 address or a bracketed IPv6 address (`[::1]`); a
///   percent-encoded absolute path (`%2Fvar%2Frun%2Fpostgresql`) is the directory of a Unix
///   socket, as is the `host` query parameter when it starts with `/`;
/// - `port` (default 5432) and `database` (default: the user's name);
/// - query parameters: `sslmode` (`disable`, `allow`, `prefer` (default), `require`,
///   `verify-ca`, `verify-full`), `connect_timeout` (whole seconds, default 10),
///   `application_name` and `host`. Any other parameter is refused, so a typo is not ignored.
///
/// Every problem is a ``WaitingRoomError`` of kind `.invalidConfiguration` naming the field
/// `stateStore`; messages never repeat the password.
package struct PostgresConnectionString: Hashable, Sendable, CustomStringConvertible {
    /// How the connection is encrypted (libpq's `sslmode`).
    package enum TLSMode: String, Hashable, Sendable, CaseIterable {
        /// Plain text only.
        case disable
        /// Plain text (libpq tries TLS only when plain text is refused; plain text is tried here).
        case allow
        /// TLS when the server offers it, plain text otherwise; the certificate is not checked.
        case prefer
        /// TLS required; the certificate is not checked.
        case require
        /// TLS required; the certificate must chain to a trusted root (any host name).
        case verifyCA = "verify-ca"
        /// TLS required; the certificate must chain to a trusted root and name the host.
        case verifyFull = "verify-full"
    }

    /// The server's host name or address (nil for a Unix socket).
    package var host: String?
    /// The server's TCP port, or the number in the Unix socket's name.
    package var port: Int
    /// The Unix socket to connect to (`<directory>/.s.PGSQL.<port>`), when the host is a directory.
    package var unixSocketPath: String?
    /// The user to log in as.
    package var username: String
    /// The user's password, if any.
    package var password: String?
    /// The database to open (nil: the server's default, the user's name).
    package var database: String?
    /// The TLS mode.
    package var tlsMode: TLSMode
    /// How long connecting (and preparing the tables) may take before it is given up.
    package var connectTimeout: Duration
    /// The `application_name` reported to the server, if any.
    package var applicationName: String?

    /// The field errors name.
    static let field = "stateStore"

    /// Parses `url`; throws `.invalidConfiguration` (field `stateStore`) when it is not a
    /// usable PostgreSQL URL.
    package init(parsing url: String) throws {
        let (authority, path, query) = try Self.parts(of: url)
        let (hostPort, user, password) = try Self.userInfo(authority)
        var (host, port) = try Self.hostAndPort(hostPort)
        let database = try Self.decode(path, "database name")
        guard !database.contains("/") else { throw Self.invalid("the database name must not contain /") }
        let options = try QueryOptions(parsing: query)
        if let queryHost = options.host { host = queryHost }

        guard let user, !user.isEmpty else { throw Self.invalid("the URL names no user (postgres://user@host/database)") }
        guard !host.isEmpty else { throw Self.invalid("the URL names no host (postgres://user@host/database)") }
        self.username = user
        self.password = password
        self.port = port
        if host.hasPrefix("/") {
            self.host = nil
            self.unixSocketPath = (host.hasSuffix("/") ? String(host.dropLast()) : host) + "/.s.PGSQL.\(port)"
        } else {
            self.host = host
            self.unixSocketPath = nil
        }
        self.database = database.isEmpty ? nil : database
        self.tlsMode = options.tlsMode
        self.connectTimeout = options.timeout
        self.applicationName = options.applicationName
    }

    /// The URL's authority (`user:password@host:port`), path (the database) and query, once its
    /// scheme is checked.
    private static func parts(of url: String) throws -> (authority: Substring, path: Substring, query: Substring) {
        let trimmed = url.trimmingCharacters(in: .whitespaces)
        guard let schemeEnd = trimmed.range(of: "://") else {
            throw Self.invalid("a PostgreSQL URL looks like postgres://user:password@host:5432/database")
        }
        let scheme = trimmed[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw Self.invalid("the URL's scheme must be postgres:// or postgresql://, not \(scheme)://")
        }
        var rest = trimmed[schemeEnd.upperBound...]
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var authority = rest
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        }
        return (authority, path, query)
    }

    /// `user:password@host:port` as `host:port` and the decoded user and password (each nil when absent).
    private static func userInfo(_ authority: Substring) throws -> (hostPort: Substring, user: String?, password: String?) {
        guard let at = authority.lastIndex(of: "@") else { return (authority, nil, nil) }
        let userInfo = authority[..<at]
        let hostPort = authority[authority.index(after: at)...]
        guard let colon = userInfo.firstIndex(of: ":") else {
            return (hostPort, try Self.decode(userInfo, "user name"), nil)
        }
        let user = try Self.decode(userInfo[..<colon], "user name")
        let password = try Self.decode(userInfo[userInfo.index(after: colon)...], "password")
        return (hostPort, user, password)
    }

    /// `host:port` (the host a name, an address, `[IPv6]` or a percent-encoded directory) as the
    /// decoded host and the port (5432 when not given).
    private static func hostAndPort(_ hostPort: Substring) throws -> (host: String, port: Int) {
        var hostText: Substring = hostPort
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw Self.invalid("the IPv6 address in the URL lacks its closing ]") }
            hostText = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw Self.invalid("unexpected text after the IPv6 address in the URL") }
                portText = after.dropFirst()
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            hostText = hostPort[..<colon]
            portText = hostPort[hostPort.index(after: colon)...]
        }
        let host = try Self.decode(hostText, "host")
        guard let portText else { return (host, 5432) }
        guard let value = Int(portText), (1...65_535).contains(value) else {
            throw Self.invalid("the port must be a number from 1 to 65535, not \"\(portText)\"")
        }
        return (host, value)
    }

    /// The URL's query parameters: `sslmode`, `connect_timeout`, `application_name` and `host`.
    private struct QueryOptions {
        var tlsMode = TLSMode.prefer
        var timeout: Duration = .seconds(10)
        var applicationName: String?
        /// The `host` parameter (it stands for the URL's host).
        var host: String?

        /// Reads `query`; throws for an unknown parameter or a bad value.
        init(parsing query: Substring) throws {
            for item in query.split(separator: "&", omittingEmptySubsequences: true) {
                let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = try PostgresConnectionString.decode(parts[0], "query parameter")
                let value = try PostgresConnectionString.decode(parts.count > 1 ? parts[1] : "", "value of \(name)")
                switch name {
                case "sslmode":
                    guard let mode = TLSMode(rawValue: value) else {
                        throw PostgresConnectionString.invalid(
                            "sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(value)\"")
                    }
                    tlsMode = mode
                case "connect_timeout":
                    guard let seconds = Int(value), (1...3600).contains(seconds) else {
                        throw PostgresConnectionString.invalid(
                            "connect_timeout must be a whole number of seconds from 1 to 3600, not \"\(value)\"")
                    }
                    timeout = .seconds(seconds)
                case "application_name":
                    applicationName = value
                case "host":
                    host = value
                default:
                    throw PostgresConnectionString.invalid(
                        "unknown URL parameter \"\(name)\" (known: sslmode, connect_timeout, application_name, host)")
                }
            }
        }
    }

    /// Where the server is: `host:port` or the socket path (for messages).
    package var endpoint: String {
        if let unixSocketPath { return unixSocketPath }
        let name = host ?? ""
        return (name.contains(":") ? "[\(name)]" : name) + ":\(port)"
    }

    /// The URL again, with the password replaced by `***`.
    package var description: String {
        var text = "postgres://\(username)" + (password == nil ? "" : ":***") + "@"
        if let unixSocketPath {
            text += "/\(database ?? "")?host=\(unixSocketPath.dropLast(".s.PGSQL.\(port)".count + 1))"
            return text + "&sslmode=\(tlsMode.rawValue)"
        }
        return text + endpoint + "/\(database ?? "")?sslmode=\(tlsMode.rawValue)"
    }

    static func invalid(_ message: String) -> WaitingRoomError {
        .invalidConfiguration(field: field, message)
    }

    private static func decode(_ text: Substring, _ what: String) throws -> String {
        guard text.contains("%") else { return String(text) }
        guard let decoded = String(text).removingPercentEncoding else {
            throw invalid("the URL's \(what) has a broken percent escape")
        }
        return decoded
    }
}
