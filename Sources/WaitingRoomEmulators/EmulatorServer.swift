import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
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
    private let inlineCount: InlineAnswerCount

    /// `http://host:port`.
    public var baseURL: String { "http://\(host):\(port)" }

    /// How many requests were answered on the event loop (``InlineAnswerer``) rather than by a route.
    package var inlineAnswers: Int { inlineCount.value }

    private init(host: String, port: Int, task: Task<Void, any Error>, group: ServiceGroup, inlineCount: InlineAnswerCount) {
        self.host = host
        self.port = port
        self.task = task
        self.group = group
        self.inlineCount = inlineCount
    }

    /// Starts serving the routes `install` adds, and returns once the port is bound. With `inline`,
    /// requests it answers are sent from the connection's event loop and never reach a route
    /// (``InlineAnswerHandler``); every other request goes to the routes.
    ///
    /// - Throws: `.invalidConfiguration` naming `port` when the address cannot be bound.
    package static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        logger: Logger = EmulatorServer.quietLogger,
        inline: InlineAnswerer? = nil,
        install: (Router<BasicRequestContext>) -> Void
    ) async throws -> EmulatorServer {
        let router = Router()
        install(router)
        let (bound, continuation) = AsyncStream<Int>.makeStream()
        let serverName = "waitingroom-emulator"
        let inlineCount = InlineAnswerCount()
        let http1: HTTP1Channel.Configuration =
            if let inline {
                .init(additionalChannelHandlers: [InlineAnswerHandler(serverName: serverName, answer: inline, count: inlineCount)])
            } else {
                .init()
            }
        let app = Application(
            router: router,
            server: .http1(configuration: http1),
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
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
        return EmulatorServer(host: host, port: actual, task: task, group: group, inlineCount: inlineCount)
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
    package func wait() async {
        _ = await task.result
    }
}
