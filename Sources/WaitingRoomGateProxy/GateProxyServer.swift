import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The gate as a reverse proxy (`waitingroom gate`): a NIO HTTP/1.1 server whose connections end in a
/// ``GateProxyConnection`` each, on the shared event-loop group (its loops also own the upstream
/// connections, so a forwarded request never leaves the loop it arrived on).
///
/// A ``Service`` for swift-service-lifecycle: on graceful shutdown (SIGINT, SIGTERM) it stops
/// accepting, lets the requests in flight finish (bounded by the exchange timeout), then closes
/// the idle connections both ways.
public final class GateProxyServer: Service, Sendable {
    let settings: GateProxySettings
    let listener: any Channel
    private let connections: GateProxyConnections
    /// Called with the bound port once it runs under its service group (signals are trapped by then).
    private let onRunning: @Sendable (Int) -> Void

    private init(
        settings: GateProxySettings, listener: any Channel, connections: GateProxyConnections, onRunning: @escaping @Sendable (Int) -> Void
    ) {
        self.settings = settings
        self.listener = listener
        self.connections = connections
        self.onRunning = onRunning
    }

    /// Binds `host:port` (port 0: a free one) on `group` and forwards what `configuration`'s
    /// engine lets through to its upstream. `onRunning` is told the bound port when ``run()``
    /// starts: a line printed then is printed only once SIGINT and SIGTERM lead to a graceful
    /// shutdown.
    public static func bind(
        host: String, port: Int, configuration: GateProxyConfiguration, group: any EventLoopGroup,
        onRunning: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> GateProxyServer {
        try await bind(host: host, port: port, settings: GateProxySettings(configuration, group: group), group: group, onRunning: onRunning)
    }

    static func bind(
        host: String, port: Int, settings: GateProxySettings, group: any EventLoopGroup,
        onRunning: @escaping @Sendable (Int) -> Void
    ) async throws -> GateProxyServer {
        let connections = GateProxyConnections()
        let listener = try await listen(host: host, port: port, group: group, connections: connections) {
            GateProxyConnection(settings: settings)
        }
        return GateProxyServer(settings: settings, listener: listener, connections: connections, onRunning: onRunning)
    }

    /// Binds a listener of the gate's servers on `host:port` (port 0: a free one) on `group`:
    /// each connection, kept in `connections`, gets NIO's request decoder and then the handler
    /// `connection` makes.
    ///
    /// NIO parses the requests (llhttp, with its bounds); the gate writes its answers as bytes
    /// itself (GateProxyWire), so a forwarded answer passes as it came. Parse errors are answered
    /// by the connection (400, then close). The decoder keeps at most `decoderBufferBound` bytes
    /// it has not parsed (a head in progress, or all a visitor sends after an `Upgrade` head,
    /// which NIO does not parse): over it the connection fails, it never grows with the input.
    static func listen(
        host: String, port: Int, group: any EventLoopGroup, connections: GateProxyConnections,
        connection: @escaping @Sendable () -> any ChannelHandler
    ) async throws -> any Channel {
        try await listen(address: .tcp(host: host, port: port), group: group, connections: connections, connection: connection)
    }

    /// ``listen(host:port:group:connections:connection:)`` on a TCP address or a Unix-domain
    /// socket file (no `TCP_NODELAY` there: a socket file has no Nagle to turn off).
    static func listen(
        address: GateListenAddress, group: any EventLoopGroup, connections: GateProxyConnections,
        connection: @escaping @Sendable () -> any ChannelHandler
    ) async throws -> any Channel {
        var bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.maxMessagesPerRead, value: 16)
        if case .tcp = address {
            bootstrap = bootstrap.serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        }
        let bound =
            bootstrap
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(
                        ByteToMessageHandler(
                            HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes),
                            maximumBufferSize: Self.decoderBufferBound))
                    try sync.addHandler(connection())
                    connections.add(channel)
                }
            }
        switch address {
        case .tcp(let host, let port): return try await bound.bind(host: host, port: port).get()
        case .unixSocket(let path): return try await bound.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
        }
    }

    /// The most request bytes the HTTP decoder holds unparsed: above NIO's 80 KiB head bound, so
    /// every head NIO accepts fits.
    static let decoderBufferBound = 128 * 1024

    /// The port it listens on.
    package var port: Int? { listener.localAddress?.port }

    /// Serves until graceful shutdown, then drains.
    public func run() async throws {
        try await Self.listen(on: listener, onRunning: onRunning)
        await drain()
    }

    /// Tells `onRunning` the port `listener` is bound to, then waits for it to close: closed on
    /// graceful shutdown (it takes no more connections; the ones it took stay open).
    static func listen(on listener: any Channel, onRunning: @Sendable (Int) -> Void) async throws {
        onRunning(listener.localAddress?.port ?? 0)
        try await withGracefulShutdownHandler {
            try await listener.closeFuture.get()
        } onGracefulShutdown: {
            listener.close(promise: nil)
        }
    }

    /// After the listener closed: waits for the requests in flight (at most the exchange timeout
    /// and a second, and not once the task is cancelled: a second signal), then closes every
    /// visitor connection and the pooled upstream ones.
    func drain() async {
        let bound = ContinuousClock.now + .nanoseconds(settings.exchangeTimeout.nanoseconds) + .seconds(1)
        while settings.slots.count > 0, ContinuousClock.now < bound, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))
        }
        for channel in connections.all() {
            try? await channel.close()
        }
        settings.pools.closeAll()
    }
}

/// The visitor connections open now, to close at shutdown. Added and removed on any event loop,
/// behind NIO's lock (ThreadSanitizer sees it; it cannot see `Synchronization.Mutex` on Linux).
final class GateProxyConnections: Sendable {
    private let open = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])

    /// Tracks `channel` until it closes.
    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        open.withLockedValue { $0[id] = channel }
        channel.closeFuture.whenComplete { [self] _ in _ = open.withLockedValue { $0.removeValue(forKey: id) } }
    }

    /// The open connections.
    func all() -> [any Channel] { open.withLockedValue { Array($0.values) } }
}
