import Logging
import NIOCore
import NIOHTTP1
import WaitingRoomGate

/// The visitor's side of ``GateProxyConnection``: the parts of its requests as NIO's server
/// decoder hands them on, in order (a pipelined request waits in ``GateProxyConnection/queued``
/// until the answer before it has ended), reading held back while what is read cannot go on,
/// a request NIO cannot parse (400), and the gate's own answers (the engine's answer, a
/// refusal, a 502 or 503) with how each answer ends: the connection kept for the next request,
/// shut after it, or lingering while a long body is dropped.
///
/// Threading: every method runs on the visitor channel's event loop, the only thread that
/// touches the connection's state (GateProxyConnection.swift holds it).
extension GateProxyConnection {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard phase != .closed, phase != .lingering else { return }
        // HTTP/1.1 pipelining: a request that arrives while an earlier one is still being answered
        // waits, in order, until that answer has ended (reading goes on, up to a bound).
        if queued.isEmpty, acceptsPart {
            handle(part, context: context)
        } else {
            queued.append(part)
        }
    }

    /// Whether a part read now belongs to the request in hand (or starts one); false: it belongs
    /// to a request after one whose answer is still being sent.
    private var acceptsPart: Bool {
        switch phase {
        case .idle: return true
        case .closed, .lingering: return false
        case .answered, .collecting, .deciding, .connecting, .forwarding: return !requestEnded
        }
    }

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            begin(head, context: context)
        case .body(let buffer):
            if phase == .collecting, collectedBody.count < collectBound {
                collectedBody.append(contentsOf: buffer.readableBytesView.prefix(collectBound - collectedBody.count))
            }
            if requestChunked {
                guard buffer.readableBytes > 0 else { return }
                var framed = context.channel.allocator.buffer(capacity: buffer.readableBytes + 12)
                GateProxyWire.writeChunk(buffer, into: &framed)
                requestPart(framed)
            } else {
                requestPart(buffer)
            }
        case .end(let trailers):
            requestEnded = true
            bodyDeadline = nil
            if requestChunked {
                var last = context.channel.allocator.buffer(capacity: 5)
                GateProxyWire.writeLastChunk(trailers: trailers, into: &last)
                requestPart(last)
            } else {
                requestPart(nil)
            }
        }
        if phase == .collecting, requestEnded || collectedBody.count >= collectBound, var request = collectingRequest {
            collectingRequest = nil
            request.body = collectedBody
            collectedBody = []
            decide(request, context: context)
        }
    }

    /// Handles the queued (pipelined) parts that can go on now; reading resumes once few are left.
    private func handleQueued() {
        guard !handlingQueued, let context else { return }
        handlingQueued = true
        defer { handlingQueued = false }
        while !queued.isEmpty, acceptsPart, let part = queued.popFirst() {
            handle(part, context: context)
        }
        if queued.count < Self.queuedPartsBound { resumeReading() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if phase == .forwarding { upstream?.flush() }
        context.fireChannelReadComplete()
    }

    /// A request NIO cannot parse gets 400 (when no other answer is due first) and the
    /// connection is closed; any other error closes it. (NIO's `HTTPServerProtocolErrorHandler`
    /// does the same, but watches every write to do it.)
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        settings.logger.debug("visitor connection failed", metadata: ["error": "\(error)"])
        // more bytes after the failure (the decoder reports each read): still dropped
        if inputFailed, error is ByteToMessageDecoderError { return }
        let inHand = phase == .collecting || phase == .deciding || phase == .connecting || phase == .forwarding
        if error is HTTPParserError, (inHand && requestEnded) || !queued.isEmpty {
            // The bytes after whole requests: those requests are answered first, in order. A
            // queued request whose end never came is dropped (it cannot be answered).
            inputFailed = true
            while let last = queued.last {
                if case .end = last { break }
                queued.removeLast()
            }
            if !inHand { handleQueued() }
            return
        }
        if error is HTTPParserError, !requestEnded, inHand, !responseStarted, heldHead == nil {
            // A request whose body turned out malformed (a bad chunk size) before any answer to
            // it began: 400, and the connection ends; so does the upstream's, which got part of it.
            if let upstream {
                self.upstream = nil
                upstream.exchange = nil
                upstream.close()
            }
            cancelTimer()
            pendingParts.removeAll()
            releaseSlot()
            writeBadRequest(context: context)
        } else if error is HTTPParserError, phase == .idle || phase == .answered {
            writeBadRequest(context: context)
        }
        phase = .closed
        context.close(promise: nil)
    }

    /// The 400 for a request that cannot be parsed; the connection ends after it.
    private func writeBadRequest(context: ChannelHandlerContext) {
        var bytes = context.channel.allocator.buffer(capacity: 80)
        bytes.writeStaticString("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    /// Reads only while what is read can go on: not while the engine decides or a connection is
    /// being opened, and not while the upstream connection's buffer is full.
    func read(context: ChannelHandlerContext) {
        if queued.count >= Self.queuedPartsBound {
            readWithheld = true
            return
        }
        switch phase {
        case .deciding, .connecting:
            readWithheld = true
        case .forwarding:
            if let upstream, !upstream.isWritable { readWithheld = true } else { context.read() }
        case .idle, .answered, .lingering, .closed, .collecting:
            context.read()
        }
    }

    /// Reads again after ``read(context:)`` withheld one.
    func resumeReading() {
        guard readWithheld, let context else { return }
        readWithheld = false
        context.read()
    }

    /// Bytes of the request after its head (nil: its end, nothing to send): kept until the
    /// upstream connection is ready, sent on it, or dropped when the gate has answered already.
    private func requestPart(_ bytes: ByteBuffer?) {
        switch phase {
        case .collecting, .deciding, .connecting:
            if let bytes { pendingParts.append(bytes) }
        case .forwarding:
            if let bytes { upstream?.write(bytes) }
        case .answered:
            if requestEnded {
                phase = .idle
                handleQueued()
            }
        case .idle, .lingering, .closed:
            break
        }
    }

    // MARK: the gate's own answers

    /// Sends `response` (the engine's answer, a refusal, 502 or 503) as this request's answer.
    func answer(_ response: GateResponse) {
        guard let context, let head else { return }
        pendingParts.removeAll()
        // A body the gate will not forward is read and dropped to keep the connection, unless it
        // is long (or of unknown length): then the connection ends with this answer.
        if !requestEnded, requestChunked || declaredLength > Self.drainedBodyBound { keepAlive = false }
        let body = response.body.utf8
        var bytes = context.channel.allocator.buffer(capacity: 256 + body.count)
        GateProxyWire.writeStatusLine(&bytes, version: head.version, status: response.status)
        for field in response.headers where GateProxyHeaders.isSafeFieldText(field.name) && GateProxyHeaders.isSafeFieldText(field.value) {
            if field.name.equalsIgnoringASCIICase("content-length") || field.name.equalsIgnoringASCIICase("connection") { continue }
            GateProxyWire.writeField(&bytes, field.name, field.value)
        }
        GateProxyWire.writeField(&bytes, "Content-Length", String(body.count))
        if let connection = connectionField(version: head.version) { GateProxyWire.writeField(&bytes, "Connection", connection) }
        bytes.writeStaticString("\r\n")
        // an answer to HEAD has no body (RFC 9110 §9.3.2); its Content-Length is the GET's
        if head.method != .HEAD { bytes.writeString(response.body) }
        context.write(wrapOutboundOut(bytes), promise: nil)
        endResponse()
    }

    /// The `Connection` value of the answer: `close` when the connection ends after it;
    /// `keep-alive` for an HTTP/1.0 visitor that keeps it; nil otherwise.
    func connectionField(version: HTTPVersion) -> String? {
        if !keepAlive { return "close" }
        if version.major == 1, version.minor == 0 { return "keep-alive" }
        return nil
    }

    /// Ends the answer (its bytes are written); closes the connection after it when it is not kept alive.
    func endResponse() {
        guard let context else { return }
        phase = requestEnded ? .idle : .answered
        lastActivity = .now()
        if keepAlive {
            context.flush()
            resumeReading()
            handleQueued()
            if inputFailed, phase == .idle, queued.isEmpty {
                // the bytes after the last whole request were not HTTP
                phase = .closed
                var bytes = context.channel.allocator.buffer(capacity: 80)
                bytes.writeStaticString("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { _ in channel.close(promise: nil) }
            }
        } else if phase == .answered {
            // The rest of a long body is not read: the answer goes out, this side of the
            // connection is shut, and the visitor's bytes are dropped until it closes, at most
            // `lingeringTimeout`. Closing at once could reset the connection before the visitor
            // has read the answer.
            queued.removeAll()
            phase = .lingering
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer())).whenComplete { _ in channel.close(mode: .output, promise: nil) }
            context.eventLoop.scheduleTask(in: Self.lingeringTimeout) { channel.close(promise: nil) }
        } else {
            // the connection ends with this answer: nothing read after it is handled
            queued.removeAll()
            phase = .closed
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer())).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
