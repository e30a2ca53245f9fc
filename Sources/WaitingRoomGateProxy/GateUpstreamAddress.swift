import Foundation

/// Where the reverse proxy (``GateProxyServer``) forwards to: a TCP `http://HOST:PORT`, or a Unix-domain socket
/// `unix:PATH` on the same machine (the app listens on a socket file, as apps behind nginx,
/// gunicorn or puma commonly do; a loopback TCP hop costs both sides more).
public enum GateUpstreamAddress: Sendable, Equatable, CustomStringConvertible {
    /// `http://HOST:PORT`.
    case tcp(host: String, port: Int)
    /// A Unix-domain socket file.
    case unixSocket(path: String)

    /// The longest socket path the kernel takes (`sun_path` holds 108 bytes with its NUL).
    package static let maxSocketPathBytes = 107

    /// `http://HOST[:PORT][/]` (plain HTTP, no path or query) or `unix:PATH`; nil otherwise.
    package init?(parsing text: String) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst("unix:".count))
            guard !path.isEmpty, path.utf8.count <= Self.maxSocketPathBytes, !path.utf8.contains(0) else { return nil }
            self = .unixSocket(path: path)
            return
        }
        guard let url = URL(string: text), url.scheme == "http", let host = url.host, !host.isEmpty,
            url.query == nil, url.user == nil, url.path.isEmpty || url.path == "/"
        else { return nil }
        let port = url.port ?? 80
        guard (1...65535).contains(port) else { return nil }
        self = .tcp(host: host, port: port)
    }

    /// How pages and logs name the upstream: `http://HOST:PORT` or `unix:PATH`.
    public var description: String {
        switch self {
        case .tcp(let host, let port): "http://\(Self.hostHeader(host: host, port: port))"
        case .unixSocket(let path): "unix:\(path)"
        }
    }

    /// The `Host` the upstream is sent: `HOST:PORT` (port 80 left out, IPv6 in brackets), or
    /// `localhost` over a socket (proposal: a socket has no host name; the visitor's own `Host`
    /// travels in `X-Forwarded-Host`).
    package var hostHeader: String {
        switch self {
        case .tcp(let host, let port): Self.hostHeader(host: host, port: port)
        case .unixSocket: "localhost"
        }
    }

    /// The `Host` value for `host` and `port`: IPv6 literals in brackets, port 80 left out.
    static func hostHeader(host: String, port: Int) -> String {
        let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return port == 80 ? name : "\(name):\(port)"
    }
}
