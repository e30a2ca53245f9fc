import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import ServiceLifecycle

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
    private let task: Task<Void, any Error>
    private let group: ServiceGroup
    /// `http://127.0.0.1:PORT`, or `unix:PATH` (what `--upstream` takes).
    let baseURL: String

    private init(task: Task<Void, any Error>, group: ServiceGroup, baseURL: String, log: UpstreamLog) {
        self.group = group
        self.task = task
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
        let ports = AsyncStream<Int>.makeStream()
        let address: BindAddress = unixSocket.map { .unixDomainSocket(path: $0) } ?? .hostname("127.0.0.1", port: 0)
        let app = Application(
            router: router, configuration: .init(address: address),
            onServerRunning: { channel in
                ports.continuation.yield(channel.localAddress?.port ?? 0)
                ports.continuation.finish()
            })
        // Stopped gracefully, never by cancelling its task: a cancelled server can drop a
        // connection it has accepted but not yet served, and NIO traps on that (swift-nio #3481,
        // "Deinited NIOAsyncWriter without calling finish()"; it crashed one full test run).
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: app.logger))
        let task = Task { try await group.run() }
        var port = 0
        for await p in ports.stream { port = p }
        return GateProxyUpstream(task: task, group: group, baseURL: unixSocket.map { "unix:" + $0 } ?? "http://127.0.0.1:\(port)", log: log)
    }

    /// Stops the server.
    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}

/// The requests the upstream's router saw (behind NIO's lock, which ThreadSanitizer sees).
private final class UpstreamLog: Sendable {
    let seen = NIOLockedValueBox<[GateProxyUpstream.Seen]>([])
}
