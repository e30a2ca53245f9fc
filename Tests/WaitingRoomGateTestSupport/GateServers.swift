import Foundation
import Logging
import NIOPosix
import ServiceLifecycle
import WaitingRoomGate
import WaitingRoomGateProxy

/// The gate's own servers in this process, as a test runs them: the reverse proxy in front of an
/// app, or the auth-subrequest server for nginx and Caddy. Stopped gracefully however the body ends.
public enum GateServers {
    /// Runs `body` with a ``GateProxyServer`` on 127.0.0.1 port 0 forwarding to `upstreamPort`.
    public static func withProxy<T: Sendable>(
        engine: any GateEngine, limits: GateLimits, origin: GateOrigin, upstreamPort: Int,
        _ body: @Sendable (Int) async throws -> T
    ) async throws -> T {
        let configuration = GateProxyConfiguration(
            upstream: .tcp(host: "127.0.0.1", port: upstreamPort), engine: engine, limits: limits,
            origin: origin, maxConnectionsPerClient: 0, logger: quietLogger)
        let server = try await GateProxyServer.bind(
            host: "127.0.0.1", port: 0, configuration: configuration,
            group: MultiThreadedEventLoopGroup.singleton)
        return try await serve(server, port: server.port ?? 0, body)
    }

    /// Runs `body` with a ``GateAuthServer`` on 127.0.0.1 port 0 answering with `endpoint`.
    public static func withAuth<T: Sendable>(_ endpoint: GateAuthEndpoint, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        let server = try await GateAuthServer.bind(
            host: "127.0.0.1", port: 0, endpoint: endpoint, group: MultiThreadedEventLoopGroup.singleton,
            logger: quietLogger)
        return try await serve(server, port: server.port ?? 0, body)
    }

    /// Runs `body` with a ``GateAuthServer`` on a Unix-domain socket file at `path` (removed after).
    public static func withAuth<T: Sendable>(
        _ endpoint: GateAuthEndpoint, unixSocket path: String, _ body: @Sendable () async throws -> T
    ) async throws -> T {
        let server = try await GateAuthServer.bind(
            unixSocket: path, endpoint: endpoint, group: MultiThreadedEventLoopGroup.singleton, logger: quietLogger)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // nginx's and Caddy's workers run as another user than the tests (root): connecting
        // takes write access to the file, which the process's umask left to its owner
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: path)
        return try await serve(server, port: 0) { _ in try await body() }
    }

    static func serve<T: Sendable>(_ service: any Service, port: Int, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: service)], gracefulShutdownSignals: [], logger: quietLogger))
        let task = Task { try await group.run() }
        do {
            let result = try await body(port)
            await group.triggerGracefulShutdown()
            _ = await task.result
            return result
        } catch {
            await group.triggerGracefulShutdown()
            _ = await task.result
            throw error
        }
    }

    static let quietLogger: Logger = {
        var logger = Logger(label: "waitingroom.gate.test")
        logger.logLevel = .critical
        return logger
    }()
}
