import Logging
import WaitingRoom

extension ProviderEnvironment {
    /// Creates an environment that sends its requests through ``AsyncHTTPTransport/shared``
    /// (the production default); every other field as in the core's
    /// ``ProviderEnvironment/init(transport:clock:passStore:logger:revealSecrets:duplicatePolicy:pendingReturns:connectivity:)``.
    public init(
        clock: any WaitingRoomClock = SystemClock(),
        passStore: (any PassStore)? = nil,
        logger: Logger = Logger(label: "waitingroom"),
        revealSecrets: Bool = false,
        duplicatePolicy: DuplicatePolicy = .join,
        pendingReturns: PendingReturns = PendingReturns(),
        connectivity: any ConnectivityMonitor = SystemConnectivityMonitor()
    ) {
        self.init(
            transport: AsyncHTTPTransport.shared, clock: clock, passStore: passStore, logger: logger,
            revealSecrets: revealSecrets, duplicatePolicy: duplicatePolicy, pendingReturns: pendingReturns,
            connectivity: connectivity)
    }
}

extension VendorRegistry {
    /// Makes a provider for vendor `id` from a JSON configuration, in the production
    /// environment (``AsyncHTTPTransport/shared``, ``SystemClock``, a memory pass store).
    public func makeProvider(vendor id: String, configuration: JSONValue) throws -> any WaitingRoomProvider {
        try makeProvider(vendor: id, configuration: configuration, environment: ProviderEnvironment())
    }

    /// Makes a provider from a dictionary of plain values, in the production environment.
    public func makeProvider(vendor id: String, dictionary: [String: Any]) throws -> any WaitingRoomProvider {
        try makeProvider(vendor: id, dictionary: dictionary, environment: ProviderEnvironment())
    }

    /// Makes a provider from a typed configuration, in the production environment.
    public func makeProvider<C: ProviderConfiguration>(_ configuration: C) throws -> any WaitingRoomProvider {
        try makeProvider(configuration, environment: ProviderEnvironment())
    }
}
