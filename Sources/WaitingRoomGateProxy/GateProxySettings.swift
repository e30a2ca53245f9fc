import Logging
import NIOCore
import WaitingRoomGate

/// What every visitor connection of one `waitingroom gate` shares: the upstream, the vendor's
/// engine and its bounds, the concurrency slots, the per-loop upstream pools and the timeouts.
/// Immutable apart from the slots and pools, which guard themselves.
final class GateProxySettings: Sendable {
    /// How pages and logs name the upstream (`http://host:port` or `unix:path`).
    let upstreamBase: String
    /// The `Host` sent to the upstream.
    let upstreamHost: String
    let engine: any GateEngine
    let limits: GateLimits
    let origin: GateOrigin
    let slots: GateProxySlots
    /// The per-address connection bound.
    let clients: GateProxyClientBound
    let pools: GateUpstreamPools
    /// The longest one exchange with the upstream may take, from asking for a connection to the
    /// answer's last byte.
    let exchangeTimeout: TimeAmount
    /// How long a visitor's connection may sit idle between requests before it is closed.
    let idleTimeout: TimeAmount
    /// How long a request's body may take to arrive, from its head to its end (slow uploads).
    let bodyTimeout: TimeAmount
    let logger: Logger
    /// Fields a visitor's `Connection` header cannot have dropped (lowercase):
    /// ``GateProxyHeaders/neverDropped`` and the ones the engine reads.
    let keptFieldNames: Set<String>
    /// Whether each decision is logged (the logger is at `debug` or finer), read once.
    let logsDecisions: Bool

    init(
        upstream: GateUpstreamAddress, engine: any GateEngine, limits: GateLimits, origin: GateOrigin,
        slots: GateProxySlots, clients: GateProxyClientBound = GateProxyClientBound(limit: 0), pools: GateUpstreamPools,
        exchangeTimeout: TimeAmount, idleTimeout: TimeAmount, bodyTimeout: TimeAmount = .seconds(30), logger: Logger
    ) {
        self.upstreamBase = upstream.description
        self.upstreamHost = upstream.hostHeader
        self.engine = engine
        self.limits = limits
        self.origin = origin
        self.slots = slots
        self.pools = pools
        self.exchangeTimeout = exchangeTimeout
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.clients = clients
        self.logger = logger
        self.logsDecisions = logger.logLevel <= .debug
        self.keptFieldNames = GateProxyHeaders.neverDropped.union(engine.consultedHeaderNames.map { $0.lowercased() })
    }
}
