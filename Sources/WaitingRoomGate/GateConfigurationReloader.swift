import CoreMetrics
import Foundation
import Logging
import NIOConcurrencyHelpers
import WaitingRoom

/// Keeps a gate's configuration current without a restart: a new one (pulled at an interval,
/// re-read from its file on `SIGHUP`, or pushed by the vendor) is built into a new engine and
/// swapped into a ``GateEngineSwitch`` at once; on any failure (the download fails or times out,
/// the document is not a configuration, a push is not signed) the one in force stays, the failure
/// is logged and counted.
///
/// Metrics (swift-metrics; `waitingroom gate --metrics-port` serves them):
/// - `waitingroom_gate_config_version` (gauge): the version in force (the vendor's number, e.g.
///   Queue-it's `Version`);
/// - `waitingroom_gate_config_loaded_timestamp_seconds` (gauge): when it was put in force (its age
///   is `time() -` this; a gauge of the age itself would only move when written);
/// - `waitingroom_gate_config_loads_total` (counter): configurations put in force;
/// - `waitingroom_gate_config_failures_total` (counter): loads that failed.
/// Each carries `source` (`file`, `url`, `push`) where it applies.
///
/// Threading: every method may be called from any thread; the state is behind NIO's lock.
package final class GateConfigurationReloader: Sendable {
    /// A configuration built into an engine.
    package struct Loaded: Sendable {
        package var engine: any GateEngine
        /// The configuration's version, as the vendor numbers it.
        package var version: Int

        package init(engine: any GateEngine, version: Int) {
            self.engine = engine
            self.version = version
        }
    }

    struct State {
        var version: Int
        var loadedAt: Date
        var loads = 0
        var failures = 0
        var lastFailure: String?
    }

    /// Where the engine in force lives.
    package let engineSwitch: GateEngineSwitch
    let logger: Logger
    private let state: NIOLockedValueBox<State>

    /// Starts with `initial` in force.
    package init(initial: Loaded, logger: Logger = Logger(label: "waitingroom.gate.config")) {
        engineSwitch = GateEngineSwitch(initial.engine)
        self.logger = logger
        state = NIOLockedValueBox(State(version: initial.version, loadedAt: Date()))
        Gauge(label: "waitingroom_gate_config_version").record(initial.version)
        Gauge(label: "waitingroom_gate_config_loaded_timestamp_seconds").record(Date().timeIntervalSince1970)
    }

    /// The version in force.
    package var version: Int { state.withLockedValue { $0.version } }
    /// When the configuration in force was put in force.
    package var loadedAt: Date { state.withLockedValue { $0.loadedAt } }
    /// How many loads failed (the configuration in force stayed).
    package var failureCount: Int { state.withLockedValue { $0.failures } }
    /// How many configurations were put in force after the first.
    package var loadCount: Int { state.withLockedValue { $0.loads } }
    /// The last failure's text.
    package var lastFailure: String? { state.withLockedValue { $0.lastFailure } }

    /// Puts `loaded` in force (from `source`: `file`, `url`, `push`).
    package func install(_ loaded: Loaded, source: String) {
        engineSwitch.replace(with: loaded.engine)
        let now = Date()
        let previous = state.withLockedValue { s in
            defer {
                s.version = loaded.version
                s.loadedAt = now
                s.loads += 1
            }
            return s.version
        }
        Gauge(label: "waitingroom_gate_config_version").record(loaded.version)
        Gauge(label: "waitingroom_gate_config_loaded_timestamp_seconds").record(now.timeIntervalSince1970)
        Counter(label: "waitingroom_gate_config_loads_total", dimensions: [("source", source)]).increment()
        if previous != loaded.version {
            logger.info(
                "gate configuration in force", metadata: ["version": "\(loaded.version)", "previous": "\(previous)", "source": "\(source)"])
        }
    }

    /// Records that a load from `source` failed; the configuration in force stays.
    package func failed(_ error: any Error, source: String) {
        state.withLockedValue { s in
            s.failures += 1
            s.lastFailure = "\(error)"
        }
        Counter(label: "waitingroom_gate_config_failures_total", dimensions: [("source", source)]).increment()
        logger.error(
            "gate configuration not loaded; the one in force stays",
            metadata: [
                "source": "\(source)", "error": "\(error)", "version": "\(version)"
            ])
    }

    /// Loads with `load` and puts the result in force, or records the failure. Returns whether it
    /// was put in force.
    @discardableResult
    package func reload(source: String, _ load: @Sendable () async throws -> Loaded) async -> Bool {
        do {
            install(try await load(), source: source)
            return true
        } catch {
            failed(error, source: source)
            return false
        }
    }

    /// Pulls with `load` every `interval` until the task is cancelled. The waits are the core's
    /// `SystemClock` sleeps (woken by an event loop, never by a free cooperative thread).
    package func pull(
        every interval: Duration, clock: any WaitingRoomClock = SystemClock(),
        _ load: @escaping @Sendable () async throws -> Loaded
    ) async {
        while !Task.isCancelled {
            do { try await clock.sleep(for: interval) } catch { return }
            await reload(source: "url", load)
        }
    }
}
