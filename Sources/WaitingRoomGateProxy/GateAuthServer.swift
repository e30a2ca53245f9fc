import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import WaitingRoomGate

/// The gate in auth-subrequest mode (`waitingroom gate --authz`): a NIO HTTP/1.1 server that
/// serves a ``GateAuthEndpoint`` (the subrequest, the browser's start route, health) to nginx
/// `auth_request`, Caddy `forward_auth`, Traefik `ForwardAuth`, Envoy `ext_authz` or ingress-nginx
/// `auth-url`; the proxy forwards to the app itself (`deploy/`).
///
/// A ``Service`` for swift-service-lifecycle: on graceful shutdown it stops accepting, then closes
/// the open connections (a subrequest is answered in well under the grace it is given).
public final class GateAuthServer: Service, Sendable {
    let listener: any Channel
    private let connections: GateProxyConnections
    private let onRunning: @Sendable (Int) -> Void

    private init(listener: any Channel, connections: GateProxyConnections, onRunning: @escaping @Sendable (Int) -> Void) {
        self.listener = listener
        self.connections = connections
        self.onRunning = onRunning
    }

    /// Binds `host:port` (port 0: a free one) on `group` and answers with `endpoint`. A connection
    /// idle for `idleTimeout` is closed. `onRunning` is told the bound port when ``run()`` starts.
    public static func bind(
        host: String, port: Int, endpoint: GateAuthEndpoint, group: any EventLoopGroup,
        idleTimeout: TimeAmount = .seconds(75), logger: Logger = Logger(label: "waitingroom.gate.authz"),
        onRunning: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> GateAuthServer {
        let connections = GateProxyConnections()
        // the reverse proxy's lean pipeline: NIO parses, the connection writes its answers as
        // bytes (GateAuthConnection); the decoder's unparsed bytes are bounded
        let listener = try await GateProxyServer.listen(host: host, port: port, group: group, connections: connections) {
            GateAuthConnection(endpoint: endpoint, idleTimeout: idleTimeout, logger: logger)
        }
        return GateAuthServer(listener: listener, connections: connections, onRunning: onRunning)
    }

    /// ``bind(host:port:endpoint:group:idleTimeout:logger:onRunning:)`` on a Unix-domain socket
    /// file at `path` (a stale file there is replaced; `onRunning` is told port 0). Its
    /// connections' peer is ``GateListenAddress/unixSocketPeer``.
    package static func bind(
        unixSocket path: String, endpoint: GateAuthEndpoint, group: any EventLoopGroup,
        idleTimeout: TimeAmount = .seconds(75), logger: Logger = Logger(label: "waitingroom.gate.authz"),
        onRunning: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> GateAuthServer {
        let connections = GateProxyConnections()
        let listener = try await GateProxyServer.listen(address: .unixSocket(path: path), group: group, connections: connections) {
            GateAuthConnection(endpoint: endpoint, idleTimeout: idleTimeout, logger: logger)
        }
        return GateAuthServer(listener: listener, connections: connections, onRunning: onRunning)
    }

    /// The port it listens on.
    package var port: Int? { listener.localAddress?.port }

    /// Serves until graceful shutdown, then closes the connections.
    public func run() async throws {
        try await GateProxyServer.listen(on: listener, onRunning: onRunning)
        try? await Task.sleep(for: .milliseconds(100))
        for channel in connections.all() {
            try? await channel.close()
        }
    }
}
