import NIOCore
import NIOEmbedded
import NIOHTTP1

// What each parser makes of answers where the proxy's needs and a client's decoder part ways:
// `GateResponseParserBench differences` prints one row per case.

struct EdgeCase {
    let name: String
    /// The request the answer is to.
    var method: HTTPMethod = .GET
    /// The request the decoder is told about (nil: the same); the framer is always told the truth.
    var decoderToldMethod: HTTPMethod?
    let reads: [[UInt8]]
    /// The upstream closes after the bytes.
    var closes = false
}

/// Bytes as text, CR LF shown, anything not printable ASCII as \xNN.
func escaped<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
    var text = ""
    for byte in bytes {
        switch byte {
        case UInt8(ascii: "\r"): text += "\\r"
        case UInt8(ascii: "\n"): text += "\\n"
        case UInt8(ascii: "|"): text += "\\|"
        case 0x20..<0x7F: text += String(UnicodeScalar(byte))
        default: text += "\\x" + String(byte, radix: 16, uppercase: true)
        }
    }
    return text
}

extension EdgeCase {
    static func one(_ text: String) -> [[UInt8]] { [Array(text.utf8)] }

    static let all: [EdgeCase] = [
        EdgeCase(name: "reason phrase of the upstream's own", reads: one("HTTP/1.1 200 Fine\r\nContent-Length: 0\r\n\r\n")),
        EdgeCase(name: "unregistered status", reads: one("HTTP/1.1 299 Custom\r\nContent-Length: 0\r\n\r\n")),
        EdgeCase(
            name: "field value with a Latin-1 byte (obs-text)",
            reads: [Array("HTTP/1.1 200 OK\r\nX-Name: caf".utf8) + [0xE9] + Array("\r\nContent-Length: 0\r\n\r\n".utf8)]),
        EdgeCase(
            name: "field names' case, order, repeats",
            reads: one("HTTP/1.1 200 OK\r\nx-CUSTOM: 1\r\nSet-Cookie: a=1\r\nSET-COOKIE: b=2\r\nContent-Length: 0\r\n\r\n")),
        EdgeCase(name: "blanks around a value", reads: one("HTTP/1.1 200 OK\r\nX-A:   padded  \r\nContent-Length: 0\r\n\r\n")),
        EdgeCase(name: "HEAD answer, decoder told", method: .HEAD, reads: one("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")),
        EdgeCase(
            name: "HEAD answer, decoder not told (proxy writes raw bytes)", method: .HEAD, decoderToldMethod: .GET,
            reads: one("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")),
        EdgeCase(name: "204 with a Content-Length", reads: one("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n")),
        EdgeCase(name: "304 with a Content-Length", reads: one("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n")),
        EdgeCase(
            name: "103 Early Hints, then 200",
            reads: one("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")),
        EdgeCase(
            name: "101 never asked for", reads: one("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        ),
        EdgeCase(
            name: "chunk extension and trailer",
            reads: one("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n5;ext=1\r\nhello\r\n0\r\nX-T: t\r\n\r\n")),
        EdgeCase(
            name: "Content-Length and chunked",
            reads: one("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")),
        EdgeCase(name: "HTTP/1.0 with chunked", reads: one("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")),
        EdgeCase(
            name: "gzip, not chunked (until close)", reads: one("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzzzz"), closes: true),
        EdgeCase(name: "two different Content-Lengths", reads: one("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nok")),
        EdgeCase(name: "Content-Length: 2, 2", reads: one("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok")),
        EdgeCase(name: "obsolete line folding", reads: one("HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 0\r\n\r\n")),
        EdgeCase(name: "space before the colon", reads: one("HTTP/1.1 200 OK\r\nX-A : a\r\nContent-Length: 0\r\n\r\n")),
        EdgeCase(name: "bare LF line ends", reads: one("HTTP/1.1 200 OK\nContent-Length: 2\n\nok")),
        EdgeCase(name: "body until close", reads: one("HTTP/1.1 200 OK\r\n\r\nabc"), closes: true),
        EdgeCase(name: "bytes after the answer", reads: one("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n")),
        EdgeCase(
            name: "head in one-byte reads",
            reads: Array("HTTP/1.1 200 OK\r\nX-A: b\r\nContent-Length: 2\r\n\r\nok".utf8).map { [$0] }),
        EdgeCase(name: "Connection: close", reads: one("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
    ]
}

/// The framer's events for `edge`, as one line.
func framerAccount(_ edge: EdgeCase) -> String {
    var framer = GateResponseFramer()
    framer.start(requestIsHead: edge.method == .HEAD, dechunk: false)
    var out: [String] = []
    func describe(_ event: GateResponseFramer.Event) {
        switch event {
        case .informational(let head), .head(let head):
            let relayed = GateProxyWire.forwardedHead(
                head, version: .http1_1, framing: .asReceived, extra: [], connection: nil,
                allocator: ByteBufferAllocator())
            let kind = head.status < 200 ? "interim" : "head"
            out.append(
                "\(kind) \(head.status) \(head.framing) keepAlive=\(head.keepAlive); relayed: `\(escaped(relayed.readableBytesView))`")
        case .body(let buffer):
            out.append("body `\(escaped(buffer.readableBytesView))`")
        case .end(let reusable):
            out.append("end(reusable: \(reusable))")
        }
    }
    do {
        for read in edge.reads {
            var input = ByteBuffer(bytes: read)
            while let event = try framer.next(&input) {
                describe(event)
                if case .end = event { break }
            }
            if input.readableBytes > 0 { out.append("\(input.readableBytes) bytes after the end: connection closed") }
        }
        if edge.closes, let event = framer.inputEnded() { describe(event) }
        if framer.isExpecting { out.append("(still waiting)") }
    } catch {
        out.append("Malformed: \(error.reason)")
    }
    return out.joined(separator: "; ")
}

/// Records the decoder's parts.
final class RecordingSink: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    var out: [String] = []
    var ended = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let chunked = head.headers[canonicalForm: "transfer-encoding"].last.map { $0.lowercased() == "chunked" } ?? false
            let relayed = DecoderSink.visitorHead(head, chunked: chunked, bodyRoom: 0, allocator: context.channel.allocator)
            out.append(
                "head \(head.status.code) \"\(head.status.reasonPhrase)\" keepAlive=\(head.isKeepAlive); relayed: `\(escaped(relayed.readableBytesView))`"
            )
        case .body(let buffer):
            out.append("body `\(escaped(buffer.readableBytesView))`")
        case .end(let trailers):
            ended = true
            out.append("end" + (trailers.map { " trailers \(Array($0))" } ?? ""))
        }
    }
}

/// The decoder's parts for `edge`, as one line.
func decoderAccount(_ edge: EdgeCase) -> String {
    let sink = RecordingSink()
    do {
        let channel = try decoderChannel(sink: sink)
        channel.write(
            HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: edge.decoderToldMethod ?? edge.method, uri: "/")),
            promise: nil)
        do {
            for read in edge.reads { try channel.writeInbound(ByteBuffer(bytes: read)) }
            if edge.closes {
                channel.pipeline.fireChannelInactive()
                try channel.throwIfErrorCaught()
            }
        } catch {
            sink.out.append("error: \(error)")
        }
        if !sink.ended, !sink.out.contains(where: { $0.hasPrefix("error") }) { sink.out.append("(still waiting)") }
        _ = try? channel.finish()
    } catch {
        sink.out.append("setup failed: \(error)")
    }
    return sink.out.joined(separator: "; ")
}

func differences() throws {
    print("| case | bytes | GateResponseFramer | HTTPResponseDecoder |")
    print("| --- | --- | --- | --- |")
    for edge in EdgeCase.all {
        let bytes = edge.reads.count > 1 ? "(\(edge.reads.count) reads) " + escaped(edge.reads.joined()) : escaped(edge.reads.joined())
        let request = edge.method == .HEAD ? "HEAD: " : ""
        print("| \(edge.name) | \(request)`\(bytes)`\(edge.closes ? " + close" : "") | \(framerAccount(edge)) | \(decoderAccount(edge)) |")
    }
}
