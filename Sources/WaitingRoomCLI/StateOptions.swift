import Foundation
import WaitingRoom
import WaitingRoomPostgres
import WaitingRoomSQLite

/// `--state` (and `--lease`): where passes, held keys and session leases outlive the process.
/// Shared by `run`, `load`, `check`, `demo` and `returns`.
struct StateOptions: CLIArguments {
    var state: String?
    var lease = 10.0

    static var arguments: [CLIArgument<Self>] {
        [
            .option(
                "state", \.state,
                help:
                    "Keep passes and held keys in PATH (SQLite, crash-safe; *.json: a JSON file) or postgres://USER@HOST:PORT/DB (shared by instances).",
                completion: .files),
            .option("lease", \.lease, help: "Seconds a claim on held keys and sessions stands without a heartbeat.")
        ]
    }

    func validate() throws(UsageError) {
        guard (1...3600).contains(lease) else { throw UsageError("--lease must be 1…3600 seconds") }
        if let state, state.isEmpty { throw UsageError("--state needs a path or a postgres:// address") }
    }

    /// Opens the store `--state` names (nil: none given, the memory store).
    func openStore(clock: any WaitingRoomClock = SystemClock()) async throws -> (any StateStore)? {
        guard let state else { return nil }
        return try await Self.open(state, clock: clock)
    }

    /// Whether `spec` names a PostgreSQL database (`postgres://`, `postgresql://`) rather than a file.
    static func isDatabaseURL(_ spec: String) -> Bool {
        let lowered = spec.lowercased()
        return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    /// Opens `spec`: `postgres://`/`postgresql://` ⇒ PostgreSQL, `*.json` ⇒ ``FilePassStore``,
    /// anything else ⇒ an SQLite file.
    static func open(_ spec: String, clock: any WaitingRoomClock = SystemClock()) async throws -> any StateStore {
        if isDatabaseURL(spec) {
            return try await PostgresStateStore.connect(url: spec, clock: clock, logger: CLILogging.logger(label: "waitingroom.state"))
        }
        if spec.lowercased().hasSuffix(".json") {
            let store = FilePassStore(path: spec, clock: clock, logger: CLILogging.logger(label: "waitingroom.state"))
            try await store.open()  // a file that is not a store file is refused now, untouched
            return store
        }
        return try await SQLiteStateStore.open(path: spec, clock: clock, logger: CLILogging.logger(label: "waitingroom.state"))
    }

    /// An environment on `store` (the memory store when nil) with this lease.
    func environment(store: (any StateStore)?, transport: (any HTTPTransport)? = nil, recoverOnStart: Bool = true) -> ProviderEnvironment {
        ProviderEnvironment(
            transport: transport, passStore: store, leaseDuration: .milliseconds(Int64(lease * 1000)),
            recoversHeldKeysOnStart: recoverOnStart)
    }
}
