import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import WaitingRoomGateTestSupport

/// The app behind `waitingroom gate` in its tests: a Hummingbird server on 127.0.0.1 port 0 that
/// answers every GET with `upstream {path}` (after 5 s for a path with `/slow/`), every HEAD with that answer's head, and every POST with its body, and remembers each
/// request's path and headers (so a test can tell what reached it, and what did not).
final class GateProxyUpstream: Sendable {
    /// One request that reached the upstream.
    struct Seen: Sendable {
        var path: String
        var headers: [String: String]
    }

    private let log: UpstreamLog
    private let app: LoopbackApp
    /// `http://127.0.0.1:PORT`, or `unix:PATH` (what `--upstream` takes).
    let baseURL: String

    private init(app: LoopbackApp, baseURL: String, log: UpstreamLog) {
        self.app = app
        self.baseURL = baseURL
        self.log = log
    }

    /// The requests that reached it, in order.
    var requests: [Seen] { log.seen.withLockedValue { $0 } }
    /// The paths that reached it, in order.
    var paths: [String] { requests.map(\.path) }

    /// Starts it on loopback TCP, or on the Unix-domain socket `unixSocket`; stop it with ``stop()``.
    static func start(unixSocket: String? = nil) async throws -> GateProxyUpstream {
        let log = UpstreamLog()
        let router = Router()
        let record: @Sendable (Request) -> Void = { request in
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            // HTTP/1's `Host` is the request's authority in Hummingbird 2
            if let authority = request.head.authority { headers["host"] = authority }
            log.seen.withLockedValue { $0.append(Seen(path: request.uri.description, headers: headers)) }
        }
        router.on("**", method: .get) { request, _ -> String in
            record(request)
            if request.uri.path.contains("/slow/") { try await Task.sleep(for: .seconds(5)) }
            return "upstream \(request.uri.path)"
        }
        router.on("**", method: .head) { request, _ -> Response in
            record(request)
            var headers = HTTPFields()
            headers[.contentLength] = String("upstream \(request.uri.path)".utf8.count)
            return Response(status: .ok, headers: headers)
        }
        router.on("**", method: .post) { request, _ -> Response in
            record(request)
            let body = try await request.body.collect(upTo: 8 * 1024 * 1024)
            return Response(status: .ok, body: ResponseBody(byteBuffer: body))
        }
        let address: BindAddress = unixSocket.map { .unixDomainSocket(path: $0) } ?? .hostname("127.0.0.1", port: 0)
        let app = try await LoopbackApp.start(router, address: address)
        return GateProxyUpstream(app: app, baseURL: unixSocket.map { "unix:" + $0 } ?? "http://127.0.0.1:\(app.port)", log: log)
    }

    /// Stops the server.
    func stop() async { await app.stop() }
}

/// The requests the upstream's router saw (behind NIO's lock, which ThreadSanitizer sees).
private final class UpstreamLog: Sendable {
    let seen = NIOLockedValueBox<[GateProxyUpstream.Seen]>([])
}
