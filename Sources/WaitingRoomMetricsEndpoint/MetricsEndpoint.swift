import CoreMetrics
import Hummingbird
import Logging
import NIOCore
import Prometheus
import WaitingRoomEmulators

/// `GET /metrics` on 127.0.0.1 while a command runs (`--metrics-port`, ``MetricsOptions``): the
/// SDK's swift-metrics (``WaitingRoom/WaitingRoomMetrics``), kept by swift-prometheus and served
/// as Prometheus text (exposition format 0.0.4), with a `# HELP` line for every family
/// (``MetricsHelpText``).
///
/// The server is the project's one Hummingbird setup (``WaitingRoomEmulators/EmulatorServer``:
/// port 0 picks a free port and the bound one is read back; ``stop()`` shuts it down gracefully
/// and waits), with one route.
package struct MetricsEndpoint: Sendable {
    /// The `Content-Type` of the text exposition format.
    package static let contentType = "text/plain; version=0.0.4"

    /// The process's registry. The first read bootstraps swift-metrics with it
    /// (`MetricsSystem.bootstrap(PrometheusMetricsFactory(registry:))`); a `static let` is
    /// initialised once, thread-safely, so the bootstrap happens exactly once per process however
    /// many endpoints start. Read it before any provider (or `ProviderEnvironment`) is made: the
    /// SDK picks up the bootstrapped backend when its environment is created.
    package static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()

    private let server: EmulatorServer

    /// `http://127.0.0.1:PORT/metrics`.
    package var url: String { "\(server.baseURL)/metrics" }

    /// The bound port.
    package var port: Int { server.port }

    /// Bootstraps the metrics backend (once per process) and serves `GET /metrics` on
    /// `127.0.0.1:port` (0: a free port); returns once the port is bound.
    ///
    /// - Throws: `.invalidConfiguration` naming `port` when the address cannot be bound.
    package static func start(port: Int, logger: Logger) async throws -> MetricsEndpoint {
        let registry = Self.registry
        let headers: HTTPFields = [.contentType: contentType]
        let server = try await EmulatorServer.start(host: "127.0.0.1", port: port, logger: logger) { router in
            router.get("/metrics") { _, _ -> Response in
                var text: [UInt8] = []
                registry.emit(into: &text)
                let body = MetricsHelpText.adding(to: text)
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
            }
        }
        return MetricsEndpoint(server: server)
    }

    /// Stops serving (an open scrape finishes) and waits until the server has stopped.
    package func stop() async {
        await server.stop()
    }
}
