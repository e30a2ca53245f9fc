import WaitingRoomMetricsEndpoint

/// `--metrics-port`: serve the SDK's metrics as Prometheus text at
/// `http://127.0.0.1:PORT/metrics` for as long as the command runs (``MetricsEndpoint``).
/// Shared by `run`, `load` and `demo`.
struct MetricsOptions: CLIArguments {
    /// The port; nil: no endpoint (and no metrics backend: the SDK then measures nothing).
    var metricsPort: Int?

    static var arguments: [CLIArgument<Self>] {
        [
            .option(
                "metrics-port", \.metricsPort,
                help:
                    "Serve the SDK's metrics (Prometheus text) at http://127.0.0.1:PORT/metrics while the command runs (0 picks a free port; the address goes to stderr)."
            )
        ]
    }

    func validate() throws(UsageError) {
        if let metricsPort, !(0...65535).contains(metricsPort) { throw UsageError("--metrics-port must be 0…65535") }
    }

    /// Runs `body` with the endpoint serving, when `--metrics-port` was given: starts it first
    /// (bootstrapping swift-metrics before `body` makes any provider), prints
    /// `metrics: http://127.0.0.1:PORT/metrics` on stderr, and stops it however `body` ends
    /// (returns, throws an ``ExitStatus`` or any other error). Without the option, just runs `body`.
    ///
    /// - Throws: ``ExitStatus/usage`` when the port cannot be bound; else what `body` throws.
    func serving(command: String, _ body: () async throws -> Void) async throws {
        guard let metricsPort else { return try await body() }
        let terminal = Terminal()
        let endpoint: MetricsEndpoint
        do { endpoint = try await MetricsEndpoint.start(port: metricsPort, logger: CLILogging.logger(label: "waitingroom.metrics")) } catch
        {
            terminal.error("waitingroom \(command): --metrics-port \(metricsPort): \(error)")
            throw ExitStatus.usage
        }
        terminal.error("metrics: \(endpoint.url)")
        do {
            try await body()
        } catch {
            await endpoint.stop()
            throw error
        }
        await endpoint.stop()
    }
}
