import Logging
import Tracing

/// What to do when `enqueue` is called for an entry that already has a session in flight
/// (the idea of iONess's duplicate-request handler).
public enum DuplicatePolicy: String, Hashable, Sendable, Codable {
    /// Return the session already in flight, so both callers see the same events and outcome.
    case join
    /// Refuse with a `.invalidUse` error naming the entry.
    case reject
}

/// The shared services a provider is built with: transport, clock, pass store, logging and
/// policies.
///
/// The core names no HTTP stack: the transport is given here, or, when left out, is the
/// process's default (``HTTPTransportSystem``: bootstrapped once at start-up, by the app or by
/// `VendorRegistry.standard`, which uses `AsyncHTTPTransport.shared` from `WaitingRoomHTTP`).
/// Every other field has a production default. A provider that needs no network can use
/// `NoNetworkTransport`.
public struct ProviderEnvironment: Sendable {
    /// Sends HTTP requests.
    public var transport: any HTTPTransport
    /// Time for polling, retries and expiry.
    public var clock: any WaitingRoomClock
    /// What outlives the process: passes, the journal of held keys and session leases
    /// (``MemoryPassStore`` unless the app gives a durable one).
    package var store: any StateStore
    /// Where passes are remembered (the `store`).
    public var passStore: any PassStore { store }
    /// The journal of keys taken from vendors' servers, in ``store`` (active only when the
    /// store is durable): what lets another process return them if this one dies.
    package var keyJournal: KeyJournal
    /// Whether a provider with a durable store returns, when it is created, the keys a dead
    /// process left in the journal (default true; `waitingroom returns` does it itself).
    package var recoversHeldKeysOnStart: Bool
    /// The SDK's metrics (``WaitingRoomMetrics``): by default the process's bootstrapped
    /// swift-metrics backend, nil (nothing measured, nothing paid) when none was bootstrapped.
    package var metrics: WaitingRoomMetrics?
    /// The tracer of sessions and vendor requests (swift-distributed-tracing): by default the
    /// bootstrapped `InstrumentationSystem.tracer`, nil when none was bootstrapped.
    package var tracer: (any Tracer)?
    /// The base logger; vendors log under `waitingroom.<vendor>`.
    package var logger: Logger
    /// Log keys and tokens in full (off by default: they are redacted).
    package var revealSecrets: Bool
    /// What `enqueue` does for an entry already in flight.
    public var duplicatePolicy: DuplicatePolicy
    /// Key returns still running in the background (see ``PendingReturns``); drain it before
    /// the process exits.
    package var pendingReturns: PendingReturns
    /// Whether the device can reach a vendor at all, asked when a request fails (Queue-it
    /// `-100`, NetFUNNEL `1001`, the `offline` connection state). Default:
    /// ``SystemConnectivityMonitor`` (the kernel's routes and interfaces; loopback is never
    /// offline); an app with its own network monitor sets its own.
    package var connectivity: any ConnectivityMonitor

    /// Creates an environment that sends its requests through `transport` (nil: the
    /// process's default, `HTTPTransportSystem/transport`). `passStore` may be any
    /// ``StateStore`` (the SQLite or PostgreSQL store for durability); a plain ``PassStore``
    /// keeps passes there and the journal and leases in memory. `leaseDuration` is how long
    /// this process's claims on keys and sessions stand without a heartbeat.
    public init(
        transport: (any HTTPTransport)? = nil,
        clock: any WaitingRoomClock = SystemClock(),
        passStore: (any PassStore)? = nil,
        logger: Logger = Logger(label: "waitingroom"),
        revealSecrets: Bool = false,
        duplicatePolicy: DuplicatePolicy = .join,
        pendingReturns: PendingReturns = PendingReturns(),
        connectivity: any ConnectivityMonitor = SystemConnectivityMonitor(),
        leaseDuration: Duration = .seconds(10),
        recoversHeldKeysOnStart: Bool = true,
        metrics: WaitingRoomMetrics? = WaitingRoomMetrics.bootstrapped,
        tracer: (any Tracer)? = ProviderEnvironment.bootstrappedTracer
    ) {
        self.metrics = metrics
        self.tracer = tracer
        self.recoversHeldKeysOnStart = recoversHeldKeysOnStart
        self.connectivity = connectivity
        let base = transport ?? HTTPTransportSystem.transport
        // With metrics or a tracer, labelled vendor requests are measured and traced.
        self.transport = metrics != nil || tracer != nil ? InstrumentedTransport(base: base, metrics: metrics, tracer: tracer) : base
        self.clock = clock
        let store: any StateStore
        switch passStore {
        case let stateStore as any StateStore: store = stateStore
        case let passes?: store = PassStoreAdapter(passes: passes, clock: clock)
        case nil: store = MemoryPassStore(clock: clock)
        }
        self.store = store
        self.keyJournal = KeyJournal(
            store: store, clock: clock, lease: leaseDuration,
            logger: Logger(label: "waitingroom.journal", factory: { [handler = logger.handler] _ in handler }))
        self.logger = logger
        self.revealSecrets = revealSecrets
        self.duplicatePolicy = duplicatePolicy
        self.pendingReturns = pendingReturns
    }

    /// The process's bootstrapped tracer, or nil when none was bootstrapped.
    @usableFromInline package static var bootstrappedTracer: (any Tracer)? {
        let tracer = InstrumentationSystem.tracer
        return tracer is NoOpTracer ? nil : tracer
    }

    /// The base logger for `vendor`: its handler, level and metadata kept, labelled
    /// `waitingroom.<vendor>` (the handler is the base logger's, so an app's handler,
    /// level and metadata apply to every vendor's lines).
    package func logger(for vendor: String) -> Logger {
        let handler = logger.handler
        return Logger(label: "waitingroom.\(vendor)", factory: { _ in handler })
    }

    /// `secret` as it may appear in logs (see ``Redaction``).
    package func redact(_ secret: String) -> String { Redaction.redact(secret, reveal: revealSecrets) }
}
