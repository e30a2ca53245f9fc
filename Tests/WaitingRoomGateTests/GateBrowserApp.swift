import Foundation
import Hummingbird
import QueueIt
import QueueItBrowser
import ServiceLifecycle
import Testing
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateHummingbird
import WaitingRoomGateTestSupport
import WaitingRoomHTTP
import WebDriver

/// The protected app of the browser tests: a Hummingbird server on 127.0.0.1, port 0, with
/// ``GateMiddleware`` in front of every path (each answers `upstream {path}`). No public base URL:
/// the gate builds URLs from the `Host` the browser sends, so the queue sends the browser back
/// here. ``UpstreamCounter`` records what reached the handlers.
final class GateBrowserApp: Sendable {
    /// `http://127.0.0.1:PORT`.
    let baseURL: String
    /// The paths that reached the handlers.
    let upstream: UpstreamCounter
    private let task: Task<Void, any Error>
    private let group: ServiceGroup

    private init(baseURL: String, upstream: UpstreamCounter, task: Task<Void, any Error>, group: ServiceGroup) {
        self.group = group
        self.baseURL = baseURL
        self.upstream = upstream
        self.task = task
    }

    /// Starts the app with `engine` in front of it.
    static func start(engine: any GateEngine) async throws -> GateBrowserApp {
        let upstream = UpstreamCounter()
        let router = Router(context: GateRequestContext.self)
        router.add(middleware: GateMiddleware(engine: engine))
        router.get("**") { request, _ -> String in
            upstream.hit(request.uri.path)
            return "upstream \(request.uri.path)"
        }
        let ports = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                ports.continuation.yield(channel.localAddress?.port ?? 0)
                ports.continuation.finish()
            }, logger: EmulatorServer.quietLogger)
        // Stopped gracefully, never by cancelling its task: a cancelled server can drop a
        // connection it has accepted but not yet served, and NIO traps on that (swift-nio #3481,
        // "Deinited NIOAsyncWriter without calling finish()"; it crashed one full test run).
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: app.logger))
        let task = Task { try await group.run() }
        var port = 0
        for await p in ports.stream { port = p }
        guard port > 0 else {
            await group.triggerGracefulShutdown()
            _ = await task.result
            throw GateTestError("the protected app did not bind 127.0.0.1")
        }
        return GateBrowserApp(baseURL: "http://127.0.0.1:\(port)", upstream: upstream, task: task, group: group)
    }

    /// How many requests for paths starting with `prefix` reached the handlers.
    func hits(_ prefix: String) -> Int { upstream.paths.filter { $0.hasPrefix(prefix) }.count }

    /// Stops the server.
    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}

/// Headless chromium for the gate's browser tests (the `WebDriver` module's ``HeadlessChromium``).
enum GateTestBrowser {
    /// Starts one, or records a test failure (never a silent skip) saying how to install
    /// chromium and chromedriver, and returns nil.
    static func start(sourceLocation: SourceLocation = #_sourceLocation) async -> HeadlessChromium? {
        let hint =
            "these tests need Debian's chromium and chromium-driver: run Scripts/setup, or `apt-get install chromium chromium-driver`"
        let tools: (chromedriver: String, browser: String)
        do { tools = try QueueItBrowserDriver().executables() } catch {
            Issue.record("\(hint) (\(error.message))", sourceLocation: sourceLocation)
            return nil
        }
        do {
            // `waitingroom-pages-` marks the chromedriver child as a page test's (QueueItTests counts its own).
            return try await HeadlessChromium.start(
                chromedriver: tools.chromedriver, browser: tools.browser,
                transport: AsyncHTTPTransport.shared, directoryPrefix: "waitingroom-pages-")
        } catch {
            Issue.record("no headless browser: \(error); \(hint)", sourceLocation: sourceLocation)
            return nil
        }
    }
}
