import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import WaitingRoom

/// A running HTTP server for emulator routes, bound to a host and port (port 0 picks a free
/// one). Stops when ``stop()`` is called or its task is cancelled.
public final class EmulatorServer: Sendable {
    /// The bound host.
    public let host: String
    /// The bound port.
    public let port: Int
    private let task: Task<Void, any Error>
    private let group: ServiceGroup

    /// `http://host:port`.
    public var baseURL: String { "http://\(host):\(port)" }

    private init(host: String, port: Int, task: Task<Void, any Error>, group: ServiceGroup) {
        self.host = host
        self.port = port
        self.task = task
        self.group = group
    }

    /// Starts serving the routes `install` adds, and returns once the port is bound.
    ///
    /// - Throws: `.invalidConfiguration` naming `port` when the address cannot be bound.
    public static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        logger: Logger = EmulatorServer.quietLogger,
        install: (Router<BasicRequestContext>) -> Void
    ) async throws -> EmulatorServer {
        let router = Router()
        install(router)
        let (bound, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "waitingroom-emulator"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? port)
                continuation.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: logger)
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = bound.makeAsyncIterator()
        guard let actual = await iterator.next() else {
            let failure: String
            switch await task.result {
            case .failure(let error): failure = "\(error)"
            case .success: failure = "the server stopped before it started"
            }
            throw WaitingRoomError.invalidConfiguration(field: "port", "cannot serve on \(host):\(port): \(failure)")
        }
        return EmulatorServer(host: host, port: actual, task: task, group: group)
    }

    /// Stops the server gracefully (open requests finish) and waits until it has stopped.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }

    /// The default logger: warnings and errors only.
    public static var quietLogger: Logger {
        var logger = Logger(label: "waitingroom.emulator")
        logger.logLevel = .warning
        return logger
    }

    /// Waits until the server stops (for `waitingroom emulate`).
    public func wait() async {
        _ = await task.result
    }
}
