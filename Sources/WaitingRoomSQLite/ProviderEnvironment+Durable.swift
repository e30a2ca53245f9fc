import Logging
import WaitingRoom

extension ProviderEnvironment {
    /// An environment whose state outlives the process: passes, the key journal and session
    /// leases in the SQLite file at `path` (created with mode 0600 if missing; WAL mode), the
    /// embedded store an app gets when it asks for durability. Every other field as in
    /// ``ProviderEnvironment/init(transport:clock:passStore:logger:revealSecrets:duplicatePolicy:pendingReturns:connectivity:leaseDuration:recoversHeldKeysOnStart:metrics:tracer:)``.
    ///
    /// - Throws: `.invalidConfiguration` (field `stateStore`) when the file cannot be used.
    public static func durable(
        path: String, transport: (any HTTPTransport)? = nil, clock: any WaitingRoomClock = SystemClock(),
        logger: Logger = Logger(label: "waitingroom"), leaseDuration: Duration = .seconds(10)
    ) async throws -> ProviderEnvironment {
        let store = try await SQLiteStateStore.open(path: path, clock: clock, logger: logger)
        return ProviderEnvironment(transport: transport, clock: clock, passStore: store, logger: logger, leaseDuration: leaseDuration)
    }
}
