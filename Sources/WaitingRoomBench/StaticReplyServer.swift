import Hummingbird
import Logging
import NIOCore
import WaitingRoom
import WaitingRoomEmulators

/// Fixed replies on fixed paths, served by the same Hummingbird setup as the emulators
/// (``EmulatorServer``): the framework's own cost per request, the "hello world" baseline that
/// `waitingroom bench emulators` sets next to each emulator and to nginx.
package enum StaticReplyServer {
    /// One fixed reply.
    package struct Reply: Sendable {
        /// `Content-Type`.
        package var contentType: String
        /// The body, sent as is.
        package var body: [UInt8]

        package init(contentType: String, body: [UInt8]) {
            self.contentType = contentType
            self.body = body
        }
    }

    /// Serves `replies` (path ⇒ reply; any method) on `host:port` (port 0 picks a free one).
    package static func start(
        replies: [String: Reply], host: String = "127.0.0.1", port: Int = 0, logger: Logger = EmulatorServer.quietLogger
    ) async throws -> EmulatorServer {
        try await EmulatorServer.start(host: host, port: port, logger: logger) { router in
            install(replies, on: router)
        }
    }

    /// Adds `replies` (path ⇒ reply; GET and POST) to `router`, for a server set up elsewhere.
    package static func install(_ replies: [String: Reply], on router: Router<BasicRequestContext>) {
        for (path, reply) in replies {
            let buffer = ByteBuffer(bytes: reply.body)
            let headers: HTTPFields = [.contentType: reply.contentType]
            let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { _, _ in
                Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: buffer))
            }
            router.get(RouterPath(path), use: handler)
            router.post(RouterPath(path), use: handler)
        }
    }
}
