/// Where a gate server listens: a TCP `HOST:PORT`, or a Unix-domain socket file on the machine
/// of the proxy in front (`waitingroom gate --authz --listen unix:PATH`; nginx names it
/// `server unix:PATH;`, Caddy `unix//PATH`). A socket file spares both sides the loopback TCP
/// stack on every subrequest (issue 49); who may connect is whoever may open the file.
package enum GateListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// A TCP address (port 0: a free one).
    case tcp(host: String, port: Int)
    /// A Unix-domain socket file (a stale file at the path is replaced).
    case unixSocket(path: String)

    /// The longest socket path the kernel takes (`sun_path` holds 108 bytes with its NUL).
    package static let maxSocketPathBytes = GateUpstreamAddress.maxSocketPathBytes

    /// The peer a connection over a Unix-domain socket reports (it has no IP address): what
    /// ``GateOrigin/trustedProxies`` holds for a gate listening on a socket file, so that the
    /// proxy's `X-Forwarded-For` is read as it is over TCP from a trusted proxy.
    package static let unixSocketPeer = "unix"

    /// `unix:PATH` (a path of 1 to ``maxSocketPathBytes`` bytes, no NUL); nil for anything else.
    package init?(unixSocket text: String) {
        guard text.hasPrefix("unix:") else { return nil }
        let path = String(text.dropFirst("unix:".count))
        guard !path.isEmpty, path.utf8.count <= Self.maxSocketPathBytes, !path.utf8.contains(0) else { return nil }
        self = .unixSocket(path: path)
    }

    /// `HOST:PORT` or `unix:PATH`, as `--listen` spells it.
    package var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unixSocket(let path): "unix:\(path)"
        }
    }
}
