import Logging
import NIOCore
import WaitingRoomGate

/// What a ``GateProxyServer`` is set up with: where it forwards, who decides, and its bounds.
public struct GateProxyConfiguration: Sendable {
    /// The app the proxy forwards to.
    package var upstream: GateUpstreamAddress
    /// The vendor's check.
    package var engine: any GateEngine
    /// Bounds checked before the engine is asked (header bytes, body length).
    package var limits: GateLimits
    /// The public URL, the allowed hosts and the trusted proxies.
    package var origin: GateOrigin
    /// The most requests in flight at once; over it a visitor gets 503 at once.
    package var maxConnections: Int
    /// The most connections one client address may hold open (0: no bound; a trusted proxy is
    /// not bounded).
    package var maxConnectionsPerClient: Int
    /// The longest a connection to the upstream may take to open.
    package var connectTimeout: TimeAmount
    /// The longest one exchange with the upstream may take, from asking for a connection to the
    /// answer's last byte.
    package var exchangeTimeout: TimeAmount
    /// How long a visitor's connection may sit idle between requests before it is closed.
    package var idleTimeout: TimeAmount
    /// How long a request's body may take to arrive, from its head to its end (slow uploads get 408).
    package var bodyTimeout: TimeAmount
    /// Where decisions (at `debug`) and failures are logged.
    package var logger: Logger

    public init(
        upstream: GateUpstreamAddress, engine: any GateEngine, limits: GateLimits = GateLimits(), origin: GateOrigin,
        maxConnections: Int = 1_024, maxConnectionsPerClient: Int = 64, connectTimeout: TimeAmount = .seconds(5),
        exchangeTimeout: TimeAmount = .seconds(60), idleTimeout: TimeAmount = .seconds(60), bodyTimeout: TimeAmount = .seconds(30),
        logger: Logger = Logger(label: "waitingroom.gate")
    ) {
        self.upstream = upstream
        self.engine = engine
        self.limits = limits
        self.origin = origin
        self.maxConnections = maxConnections
        self.maxConnectionsPerClient = maxConnectionsPerClient
        self.connectTimeout = connectTimeout
        self.exchangeTimeout = exchangeTimeout
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.logger = logger
    }
}

extension GateProxySettings {
    /// The shared state of one server built from `configuration`, its upstream pools on `group`'s loops.
    convenience init(_ configuration: GateProxyConfiguration, group: any EventLoopGroup) {
        self.init(
            upstream: configuration.upstream, engine: configuration.engine, limits: configuration.limits,
            origin: configuration.origin, slots: GateProxySlots(limit: configuration.maxConnections),
            clients: GateProxyClientBound(limit: configuration.maxConnectionsPerClient),
            pools: GateUpstreamPools(
                group: group, address: configuration.upstream, connectTimeout: configuration.connectTimeout,
                maxIdlePerLoop: configuration.maxConnections),
            exchangeTimeout: configuration.exchangeTimeout, idleTimeout: configuration.idleTimeout,
            bodyTimeout: configuration.bodyTimeout, logger: configuration.logger)
    }
}
