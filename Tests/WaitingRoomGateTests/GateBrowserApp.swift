import Foundation
import Hummingbird
import QueueIt
import QueueItBrowser
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
    private let app: LoopbackApp

    private init(baseURL: String, upstream: UpstreamCounter, app: LoopbackApp) {
        self.baseURL = baseURL
        self.upstream = upstream
        self.app = app
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
        let app = try await LoopbackApp.start(router, logger: EmulatorServer.quietLogger)
        guard app.port > 0 else {
            await app.stop()
            throw GateTestError("the protected app did not bind 127.0.0.1")
        }
        return GateBrowserApp(baseURL: "http://127.0.0.1:\(app.port)", upstream: upstream, app: app)
    }

    /// How many requests for paths starting with `prefix` reached the handlers.
    func hits(_ prefix: String) -> Int { upstream.paths.filter { $0.hasPrefix(prefix) }.count }

    /// Stops the server.
    func stop() async { await app.stop() }
}
