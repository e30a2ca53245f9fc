import NIOCore
import NIOEmbedded
import NIOHTTP1

/// What the consumer saw; `checksum` and the counts keep the optimiser from dropping the work.
final class Tally {
    var answers = 0
    var heads = 0
    var informational = 0
    var bodyBytes = 0
    /// Bytes that would go to the visitor (relay mode).
    var relayedBytes = 0
    var checksum = 0
}

/// The body part the gate joins to its held head (GateProxyConnection.coalescedBodyBound).
let coalescedBodyBound = 16 * 1024

// MARK: (a) GateResponseFramer

/// Feeds reads to a ``GateResponseFramer`` the way GateUpstreamConnection does, and handles each
/// event the way GateProxyConnection.upstreamEvent does for an HTTP/1.1 visitor (relay mode: the
/// visitor's head from the upstream's bytes, a small body joined to it, the rest passed on as it came).
struct FramerDriver {
    var framer = GateResponseFramer()
    let requestIsHead: Bool
    let relay: Bool
    let tally: Tally
    let allocator = ByteBufferAllocator()
    var heldHead: ByteBuffer?

    init(requestIsHead: Bool, relay: Bool, tally: Tally) {
        self.requestIsHead = requestIsHead
        self.relay = relay
        self.tally = tally
        framer.start(requestIsHead: requestIsHead, dechunk: false)
    }

    mutating func feed(_ input: inout ByteBuffer) throws {
        while let event = try framer.next(&input) {
            switch event {
            case .informational(let head):
                tally.informational += 1
                if relay {
                    tally.relayedBytes +=
                        GateProxyWire.forwardedHead(
                            head, version: .http1_1, framing: .asReceived, extra: [], connection: nil,
                            allocator: allocator
                        ).readableBytes
                }
            case .head(let head):
                tally.heads += 1
                tally.checksum &+= head.status &+ head.fields.count
                if relay {
                    var bodyRoom = 0
                    if case .length(let length) = head.framing { bodyRoom = min(length, coalescedBodyBound) }
                    heldHead = GateProxyWire.forwardedHead(
                        head, version: .http1_1, framing: .asReceived, extra: [], connection: nil,
                        bodyRoom: bodyRoom, allocator: allocator)
                }
            case .body(var buffer):
                tally.bodyBytes += buffer.readableBytes
                if relay {
                    if var held = heldHead, buffer.readableBytes <= coalescedBodyBound {
                        heldHead = nil
                        held.writeBuffer(&buffer)
                        tally.relayedBytes += held.readableBytes
                    } else {
                        emitHeld()
                        tally.relayedBytes += buffer.readableBytes
                    }
                }
            case .end:
                emitHeld()
                tally.answers += 1
                framer.start(requestIsHead: requestIsHead, dechunk: false)
            }
        }
    }

    mutating func emitHeld() {
        guard let held = heldHead else { return }
        heldHead = nil
        tally.relayedBytes += held.readableBytes
    }
}

/// (a) in a channel: the framer as the inbound handler of raw bytes.
final class FramerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    var driver: FramerDriver

    init(driver: FramerDriver) { self.driver = driver }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        do {
            try driver.feed(&buffer)
        } catch {
            context.fireErrorCaught(error)
        }
    }
}

// MARK: (b) NIO's HTTPResponseDecoder

/// Swallows the request heads written to tell the decoder what was asked (the bench sends nothing).
final class DropWrites: ChannelOutboundHandler {
    typealias OutboundIn = HTTPClientRequestPart

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        promise?.succeed(())
    }
}

/// After `ByteToMessageHandler(HTTPResponseDecoder())`: counts the parts, and in relay mode makes
/// what the gate would have to send an HTTP/1.1 visitor from them: the head written again from
/// `HTTPResponseHead` (status, fields minus hop-by-hop and framing ones, the framing), a small
/// body joined to it, and a chunked body framed again, chunk by chunk (the decoder hands on data only).
final class DecoderSink: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    let relay: Bool
    let tally: Tally
    var chunked = false
    var heldHead: ByteBuffer?

    init(relay: Bool, tally: Tally) {
        self.relay = relay
        self.tally = tally
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if head.status.code < 200 {
                tally.informational += 1
                if relay {
                    tally.relayedBytes +=
                        Self.visitorHead(head, chunked: false, bodyRoom: 0, allocator: context.channel.allocator).readableBytes
                }
                return
            }
            tally.heads += 1
            tally.checksum &+= Int(head.status.code) &+ head.headers.count
            if relay {
                chunked = head.headers[canonicalForm: "transfer-encoding"].last.map { $0.lowercased() == "chunked" } ?? false
                var bodyRoom = 0
                if !chunked, let length = head.headers.first(name: "content-length").flatMap({ Int($0) }) {
                    bodyRoom = min(length, coalescedBodyBound)
                }
                heldHead = Self.visitorHead(head, chunked: chunked, bodyRoom: bodyRoom, allocator: context.channel.allocator)
            }
        case .body(var buffer):
            tally.bodyBytes += buffer.readableBytes
            guard relay else { return }
            if chunked {
                emitHeld()
                var framed = context.channel.allocator.buffer(capacity: buffer.readableBytes + 12)
                GateProxyWire.writeChunk(buffer, into: &framed)
                tally.relayedBytes += framed.readableBytes
            } else if var held = heldHead, buffer.readableBytes <= coalescedBodyBound {
                heldHead = nil
                held.writeBuffer(&buffer)
                tally.relayedBytes += held.readableBytes
            } else {
                emitHeld()
                tally.relayedBytes += buffer.readableBytes
            }
        case .end(let trailers):
            tally.answers += 1
            guard relay else { return }
            emitHeld()
            if chunked {
                var last = context.channel.allocator.buffer(capacity: 5)
                GateProxyWire.writeLastChunk(trailers: trailers, into: &last)
                tally.relayedBytes += last.readableBytes
            }
        }
    }

    func emitHeld() {
        guard let held = heldHead else { return }
        heldHead = nil
        tally.relayedBytes += held.readableBytes
    }

    /// The visitor's head from a decoded head, the way GateProxyWire.forwardedHead does from the
    /// bytes for an answer framed as received: the status line (NIO's reason phrase for the code:
    /// the upstream's is not in HTTPResponseHead), the fields minus hop-by-hop ones, and minus the
    /// framing fields on a 1xx or 204 and `Content-Length` on a chunked answer. A chunked body is
    /// framed again (the decoder hands on data only), so `Transfer-Encoding` stays as received.
    static func visitorHead(_ head: HTTPResponseHead, chunked: Bool, bodyRoom: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 256 + bodyRoom)
        GateProxyWire.writeStatusLine(&buffer, version: .http1_1, status: Int(head.status.code))
        let mayFrame = head.status.code != 204 && !(100..<200).contains(head.status.code)
        for (name, value) in head.headers {
            switch kind(of: name) {
            case .plain: break
            case .hopByHop: continue
            case .transferEncoding: if !mayFrame { continue }
            case .contentLength: if chunked || !mayFrame { continue }
            }
            GateProxyWire.writeField(&buffer, name, value)
        }
        buffer.writeStaticString("\r\n")
        return buffer
    }

    static func kind(of name: String) -> GateUpstreamHead.Field.Kind {
        var name = name
        return name.withUTF8 { GateResponseFramer.kind(of: UnsafeRawBufferPointer($0)) }
    }
}

/// A channel with the decoder: [DropWrites, ByteToMessageHandler(HTTPResponseDecoder), sink].
func decoderChannel(sink: ChannelHandler) throws -> EmbeddedChannel {
    let channel = EmbeddedChannel()
    let pipeline = channel.pipeline.syncOperations
    try pipeline.addHandler(DropWrites())
    try pipeline.addHandler(
        ByteToMessageHandler(
            HTTPResponseDecoder(
                leftOverBytesStrategy: .dropBytes,
                informationalResponseStrategy: .forward)))
    try pipeline.addHandler(sink)
    return channel
}
