import Logging
import NIOCore
import NIOHTTP1
import WaitingRoomGate

/// One connection from a proxy (or a browser on the start route) to the ``GateAuthServer``: each
/// request is answered by the ``GateAuthEndpoint``; NIO's server pipeline parses, keeps requests
/// in order (pipelining) and frames the answers.
///
/// Threading: every method runs on the channel's event loop. A decision that needs no wait (most:
/// ``GateEngine/immediateDecision(_:)``) is answered right there; one that waits (a shared
/// ledger, CrowdHandler's API) runs in a task, and its answer is written back on the loop.
final class GateAuthConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let endpoint: GateAuthEndpoint
    let logger: Logger
    private var head: HTTPRequestHead?
    private var bodyBytes = 0
    /// The body of a configuration push, collected (other requests' bodies are counted and dropped).
    private var pushBody: [UInt8]?

    /// The most body bytes a request may carry (subrequests carry none; the start route is a GET).
    static let maxBodyBytes = 64 * 1024

    init(endpoint: GateAuthEndpoint, logger: Logger) {
        self.endpoint = endpoint
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            bodyBytes = 0
            pushBody = head.method == .PUT && endpoint.route(head.uri) == .configuration ? [] : nil
        case .body(let buffer):
            bodyBytes += buffer.readableBytes
            if bodyBytes > (pushBody == nil ? Self.maxBodyBytes : GateAuthEndpoint.maxPushBytes) {
                head = nil
                pushBody = nil
                write(.refusal(413, "too large a body for this route"), version: .http1_1, keepAlive: false, context: context)
            } else if pushBody != nil {
                pushBody?.append(contentsOf: buffer.readableBytesView)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            if let body = pushBody {
                pushBody = nil
                push(body, head: head, context: context)
            } else {
                answer(head, context: context)
            }
        }
    }

    /// A configuration push: answered by the endpoint off the loop (it parses and builds an engine).
    private func push(_ body: [UInt8], head: HTTPRequestHead, context: ChannelHandlerContext) {
        let endpoint = self.endpoint
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let version = head.version
        let keepAlive = head.isKeepAlive
        Task {
            let response = await endpoint.pushConfiguration(body)
            bound.eventLoop.execute {
                let (connection, context) = bound.value
                connection.write(response, version: version, keepAlive: keepAlive, context: context)
            }
        }
    }

    private func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers: [GateHeader] = []
        headers.reserveCapacity(head.headers.count)
        for (name, value) in head.headers { headers.append(GateHeader(name, value)) }
        let peer = context.remoteAddress?.ipAddress
        let method = head.method.rawValue
        if let response = endpoint.immediateAnswer(method: method, target: head.uri, headers: headers, peer: peer) {
            write(response, version: head.version, keepAlive: head.isKeepAlive, context: context)
            return
        }
        let endpoint = self.endpoint
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let target = head.uri
        let version = head.version
        let keepAlive = head.isKeepAlive
        Task {
            let response = await endpoint.answer(method: method, target: target, headers: headers, peer: peer)
            bound.eventLoop.execute {
                let (connection, context) = bound.value
                connection.write(response, version: version, keepAlive: keepAlive, context: context)
            }
        }
    }

    private func write(_ response: GateResponse, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var fields = HTTPHeaders()
        for header in response.headers where GateAuthConnection.isSafe(header.name) && GateAuthConnection.isSafe(header.value) {
            if header.name.equalsIgnoringASCIICase("content-length") || header.name.equalsIgnoringASCIICase("connection") { continue }
            fields.add(name: header.name, value: header.value)
        }
        let body = context.channel.allocator.buffer(string: response.body)
        fields.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        if !keepAlive { fields.replaceOrAdd(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: response.status),
                                                             headers: fields))), promise: nil)
        if body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        let done = context.writeAndFlushPromise(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("gate auth connection failed", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    /// Whether a field name or value can be written as it is (no CR, LF or NUL).
    static func isSafe(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }
}

extension ChannelHandlerContext {
    /// A write and flush whose completion can be waited on.
    fileprivate func writeAndFlushPromise(_ data: NIOAny) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        writeAndFlush(data, promise: promise)
        return promise.futureResult
    }
}
