import Logging
import NIOCore
import NIOHTTP1
import WaitingRoomGate

/// One connection from a proxy (or a browser on the start route) to the ``GateAuthServer``: each
/// request is answered by the ``GateAuthEndpoint``, in the order the requests came.
///
/// The pipeline is the reverse proxy's lean one: NIO's `HTTPRequestDecoder` parses (llhttp, with
/// its bounds), and this handler writes each answer as bytes (``GateProxyWire``) in one write. A
/// subrequest is answered on the event loop in one pass: no response encoder, header validator,
/// pipelining handler or idle handler runs per request (bench/README.md, "The auth mode": they
/// were half of the gate's time per subrequest).
///
/// Threading: every method runs on the channel's event loop. A decision that needs no wait (most:
/// ``GateEngine/immediateDecision(_:)``) is answered right there; one that waits (a shared
/// ledger, CrowdHandler's API) runs in a task, and its answer is written back on the loop; requests
/// that arrive meanwhile (pipelining) wait in ``queued`` and are answered after it, in order.
/// The idle timeout is one event-loop timer per connection that looks every eighth of it.
final class GateAuthConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    let endpoint: GateAuthEndpoint
    let logger: Logger
    let idleTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    private var head: HTTPRequestHead?
    private var bodyBytes = 0
    /// The body of a configuration push, collected (other requests' bodies are counted and dropped).
    private var pushBody: [UInt8]?
    /// A request whose answer is awaited off the loop: the next ones wait.
    private var awaiting = false
    /// Complete requests that came while an answer was awaited (pipelined), oldest first.
    private var queued: [(head: HTTPRequestHead, push: [UInt8]?)] = []
    /// No more requests are read: the connection closes after the answers in hand.
    private var closing = false
    private var lastActivity = NIODeadline.now()
    private var idleWatch: Scheduled<Void>?

    /// The most body bytes a request may carry (subrequests carry none; the start route is a GET).
    static let maxBodyBytes = 64 * 1024
    /// The most pipelined requests kept waiting behind one that is awaited; past it the
    /// connection is closed (the proxies send one request at a time on a connection).
    static let maxQueued = 64

    init(endpoint: GateAuthEndpoint, idleTimeout: TimeAmount, logger: Logger) {
        self.endpoint = endpoint
        self.idleTimeout = idleTimeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { scheduleIdleWatch() }
    }

    func channelActive(context: ChannelHandlerContext) {
        lastActivity = .now()
        if idleWatch == nil { scheduleIdleWatch() }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleWatch?.cancel()
        idleWatch = nil
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleWatch?.cancel()
        idleWatch = nil
        closing = true
        queued.removeAll()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        lastActivity = .now()
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            bodyBytes = 0
            pushBody = head.method == .PUT && endpoint.route(head.uri) == .configuration ? [] : nil
        case .body(let buffer):
            guard head != nil else { return }
            bodyBytes += buffer.readableBytes
            if bodyBytes > (pushBody == nil ? Self.maxBodyBytes : GateAuthEndpoint.maxPushBytes) {
                head = nil
                pushBody = nil
                refuseAndClose(.refusal(413, "too large a body for this route"), context: context)
            } else if pushBody != nil {
                pushBody?.append(contentsOf: buffer.readableBytesView)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let push = pushBody
            pushBody = nil
            if awaiting {
                guard queued.count < Self.maxQueued else {
                    logger.notice("too many pipelined requests", metadata: ["peer": "\(context.remoteAddress?.ipAddress ?? "")"])
                    closing = true
                    queued.removeAll()
                    return
                }
                queued.append((head, push))
            } else {
                handle(head, push: push, context: context)
            }
        }
    }

    /// Answers one complete request: on the loop when the endpoint needs no wait, else in a task.
    private func handle(_ head: HTTPRequestHead, push: [UInt8]?, context: ChannelHandlerContext) {
        if let push {
            let endpoint = self.endpoint
            awaitAnswer(head, context: context) { await endpoint.pushConfiguration(push) }
            return
        }
        var headers: [GateHeader] = []
        headers.reserveCapacity(head.headers.count)
        for (name, value) in head.headers { headers.append(GateHeader(name, value)) }
        // over a socket file the peer has no IP address: it is the proxy that may open the file
        let peer = context.remoteAddress.map { $0.ipAddress ?? GateListenAddress.unixSocketPeer }
        let method = head.method.rawValue
        if let response = endpoint.immediateAnswer(method: method, target: head.uri, headers: headers, peer: peer) {
            write(response, for: head, context: context)
            return
        }
        let endpoint = self.endpoint
        let target = head.uri
        let fields = headers
        awaitAnswer(head, context: context) { await endpoint.answer(method: method, target: target, headers: fields, peer: peer) }
    }

    /// Runs `answer` in a task and writes what it gives back on the loop; the requests queued
    /// meanwhile are answered after it.
    private func awaitAnswer(
        _ head: HTTPRequestHead, context: ChannelHandlerContext,
        _ answer: @escaping @Sendable () async -> GateResponse
    ) {
        awaiting = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        Task {
            let response = await answer()
            loop.execute {
                let connection = bound.value
                connection.awaiting = false
                guard let context = connection.context else { return }
                connection.write(response, for: head, context: context)
                connection.drainQueue(context: context)
            }
        }
    }

    /// Answers the queued requests in order, until one must be awaited.
    private func drainQueue(context: ChannelHandlerContext) {
        while !awaiting, !queued.isEmpty, self.context != nil {
            let (head, push) = queued.removeFirst()
            handle(head, push: push, context: context)
        }
        if closing, !awaiting, queued.isEmpty { context.close(promise: nil) }
    }

    /// Writes `response` to the request `head` as one buffer (status line, fields, framing, body;
    /// no body for HEAD), and closes after it when the request did not keep the connection alive.
    private func write(_ response: GateResponse, for head: HTTPRequestHead, context: ChannelHandlerContext) {
        lastActivity = .now()
        let keepAlive = head.isKeepAlive && !closing
        let sendsBody = head.method != .HEAD && response.status != 204 && response.status != 304
        write(response, version: head.version, keepAlive: keepAlive, sendsBody: sendsBody, context: context)
    }

    private func write(_ response: GateResponse, version: HTTPVersion, keepAlive: Bool, sendsBody: Bool, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let bodyCount = response.body.utf8.count
        var buffer = context.channel.allocator.buffer(capacity: 256 + bodyCount)
        GateProxyWire.writeStatusLine(&buffer, version: version, status: response.status)
        for header in response.headers where Self.isSafe(header.name) && Self.isSafe(header.value) {
            if header.name.equalsIgnoringASCIICase("content-length") || header.name.equalsIgnoringASCIICase("connection")
                || header.name.equalsIgnoringASCIICase("transfer-encoding")
            {
                continue
            }
            GateProxyWire.writeField(&buffer, header.name, header.value)
        }
        buffer.writeStaticString("Content-Length: ")
        buffer.writeString(String(bodyCount))
        buffer.writeStaticString("\r\n")
        if !keepAlive {
            buffer.writeStaticString("Connection: close\r\n")
        } else if version.minor == 0 {
            buffer.writeStaticString("Connection: keep-alive\r\n")
        }
        buffer.writeStaticString("\r\n")
        if sendsBody, bodyCount > 0 { buffer.writeString(response.body) }
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        } else {
            closing = true
            queued.removeAll()
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// Answers `response` now (the request in hand cannot be read further) and closes: after the
    /// answers awaited, if any, so they keep their order.
    private func refuseAndClose(_ response: GateResponse, context: ChannelHandlerContext) {
        closing = true
        queued.removeAll()
        if awaiting {
            // the awaited answer is written first; the connection closes after it
            return
        }
        write(response, version: .http1_1, keepAlive: false, sendsBody: true, context: context)
    }

    /// The idle timeout: a connection with nothing in hand and no request for `idleTimeout` is
    /// closed; looked at every eighth of it.
    private func scheduleIdleWatch() {
        guard let context else { return }
        let interval = TimeAmount.nanoseconds(max(idleTimeout.nanoseconds / 8, 1_000_000))
        idleWatch = context.eventLoop.assumeIsolated().scheduleTask(in: interval) { [self] in
            guard let context = self.context, context.channel.isActive else { return }
            if !awaiting, head == nil, queued.isEmpty, NIODeadline.now() - lastActivity >= idleTimeout {
                context.close(promise: nil)
            } else {
                scheduleIdleWatch()
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("gate auth connection failed", metadata: ["error": "\(error)"])
        if error is HTTPParserError, !closing {
            // what NIO's server error handler answers to a request it cannot parse: 400, then close
            head = nil
            pushBody = nil
            refuseAndClose(.refusal(400, "the request could not be parsed"), context: context)
            return
        }
        context.close(promise: nil)
    }

    /// Whether a field name or value can be written as it is (no CR, LF or NUL).
    static func isSafe(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }
}
