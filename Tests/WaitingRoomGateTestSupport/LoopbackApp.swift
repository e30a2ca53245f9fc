import Hummingbird
import Logging
import ServiceLifecycle

/// A Hummingbird app served over loopback (127.0.0.1 port 0 unless told otherwise) for the gate's
/// tests. Stopped gracefully, never by cancelling its task: a cancelled server can drop a
/// connection it has accepted but not yet served, and NIO traps on that (swift-nio #3481,
/// "Deinited NIOAsyncWriter without calling finish()"; it crashed one full test run).
package final class LoopbackApp: Sendable {
    /// The bound port (0 for a Unix-domain socket).
    package let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.group = group
        self.task = task
    }

    /// Starts serving `router` at `address` and returns once it is bound.
    package static func start<Context: RequestContext>(
        _ router: Router<Context>, address: BindAddress = .hostname("127.0.0.1", port: 0), logger: Logger? = nil
    ) async throws -> LoopbackApp where Context: InitializableFromSource<ApplicationRequestContextSource> {
        let ports = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: address),
            onServerRunning: { channel in
                ports.continuation.yield(channel.localAddress?.port ?? 0)
                ports.continuation.finish()
            }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: app.logger))
        let task = Task { try await group.run() }
        var port = 0
        for await p in ports.stream { port = p }
        return LoopbackApp(port: port, group: group, task: task)
    }

    /// Serves `router` (see ``start(_:address:logger:)``) while `body` runs with its port, then
    /// stops it (also when `body` throws).
    package static func serve<Context: RequestContext>(
        _ router: Router<Context>, logger: Logger? = nil, _ body: (Int) async throws -> Void
    ) async throws where Context: InitializableFromSource<ApplicationRequestContextSource> {
        let app = try await start(router, logger: logger)
        do {
            try await body(app.port)
        } catch {
            await app.stop()
            throw error
        }
        await app.stop()
    }

    /// Stops the server gracefully and waits until it has stopped.
    package func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}

extension Router {
    /// A GET and a POST route for each of `paths` that counts its request in `counter` and
    /// answers `upstream {path}`.
    package func addCountedRoutes(_ paths: [String], counter: UpstreamCounter) {
        for path in paths {
            get(RouterPath(path)) { _, _ in
                counter.hit(path)
                return "upstream \(path)"
            }
            post(RouterPath(path)) { _, _ in
                counter.hit(path)
                return "upstream \(path)"
            }
        }
    }
}
