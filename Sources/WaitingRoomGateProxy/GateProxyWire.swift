import NIOCore
import NIOHTTP1
import WaitingRoomGate

/// The bytes `waitingroom gate` writes itself (RFC 9112): the heads of its own answers and of
/// forwarded ones, and chunk framing. Writing them directly, rather than through NIO's encoders,
/// lets a forwarded answer's fields be copied as the bytes that came.
enum GateProxyWire {
    /// `HTTP/1.x CODE REASON` CR LF for a visitor on `version`.
    static func writeStatusLine(_ buffer: inout ByteBuffer, version: HTTPVersion, status: Int) {
        buffer.writeStaticString(version.minor == 0 ? "HTTP/1.0 " : "HTTP/1.1 ")
        buffer.writeString(String(status))
        buffer.writeStaticString(" ")
        buffer.writeString(HTTPResponseStatus(statusCode: status).reasonPhrase)
        buffer.writeStaticString("\r\n")
    }

    /// `name: value` CR LF.
    static func writeField(_ buffer: inout ByteBuffer, _ name: String, _ value: String) {
        buffer.writeString(name)
        buffer.writeStaticString(": ")
        buffer.writeString(value)
        buffer.writeStaticString("\r\n")
    }

    /// The head of a forwarded answer for the visitor: the upstream's status and fields, minus
    /// the hop-by-hop ones, the framing fields the gate writes for `framing` (and any on a 1xx or
    /// 204, which must not carry them), plus `extra`
    /// (the engine's pass headers, already checked) and `connection` (`close`, `keep-alive` or nil);
    /// `bodyRoom` more bytes of capacity for a body that will be written after it.
    static func forwardedHead(
        _ head: GateUpstreamHead, version: HTTPVersion, framing: GateVisitorFraming,
        extra: [GateHeader], connection: String?, bodyRoom: Int = 0, allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        var buffer = allocator.buffer(
            capacity: head.bytes.readableBytes + 64 + bodyRoom
                + extra.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 })
        buffer.writeStaticString(version.minor == 0 ? "HTTP/1.0 " : "HTTP/1.1 ")
        buffer.writeString(String(head.status))
        buffer.writeStaticString(" ")
        // a 1xx or 204 has no body and carries no framing fields (RFC 9110 §8.6, RFC 9112 §6.1)
        let mayFrame = head.status != 204 && !(100..<200).contains(head.status)
        let keepsLength: Bool
        switch framing {
        case .asReceived: keepsLength = mayFrame && head.framing != .chunked
        case .chunked, .dechunked, .untilClose: keepsLength = false
        }
        let keepsCodings = mayFrame && framing == .asReceived
        head.bytes.withUnsafeReadableBytes { raw in
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: raw[head.reason]))
            buffer.writeStaticString("\r\n")
            for field in head.fields {
                switch field.kind {
                case .plain: break
                case .hopByHop: continue
                case .contentLength: if !keepsLength { continue }
                case .transferEncoding: if !keepsCodings { continue }
                }
                buffer.writeBytes(UnsafeRawBufferPointer(rebasing: raw[field.name]))
                buffer.writeStaticString(": ")
                buffer.writeBytes(UnsafeRawBufferPointer(rebasing: raw[field.value]))
                buffer.writeStaticString("\r\n")
            }
        }
        if case .chunked(let codings) = framing {
            buffer.writeStaticString("Transfer-Encoding: ")
            if let codings { buffer.writeString(codings + ", ") }
            buffer.writeStaticString("chunked\r\n")
        }
        for field in extra { writeField(&buffer, field.name, field.value) }
        if let connection { writeField(&buffer, "Connection", connection) }
        buffer.writeStaticString("\r\n")
        return buffer
    }

    /// One chunk of data (RFC 9112 §7.1): size, CR LF, the data, CR LF. An empty `data` writes
    /// nothing (a zero size would end the body).
    static func writeChunk(_ data: ByteBuffer, into buffer: inout ByteBuffer) {
        guard data.readableBytes > 0 else { return }
        buffer.writeString(String(data.readableBytes, radix: 16))
        buffer.writeStaticString("\r\n")
        buffer.writeImmutableBuffer(data)
        buffer.writeStaticString("\r\n")
    }

    /// The last chunk and the trailer section.
    static func writeLastChunk(trailers: HTTPHeaders?, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("0\r\n")
        for (name, value) in trailers ?? [:] { writeField(&buffer, name, value) }
        buffer.writeStaticString("\r\n")
    }
}

/// How the gate frames a forwarded answer's body for the visitor.
enum GateVisitorFraming: Equatable {
    /// As the upstream framed it (a length, chunks, or no body): the bytes pass unchanged.
    case asReceived
    /// In chunks the gate makes: a body delimited by the upstream's close, to an HTTP/1.1 visitor
    /// whose connection is kept; `codings` are the upstream's other transfer codings, if any.
    case chunked(codings: String?)
    /// The chunks' data only, ended by closing: an HTTP/1.0 visitor and a chunked answer.
    case dechunked
    /// Ended by closing the visitor's connection (HTTP/1.0 and an answer delimited by its close).
    case untilClose
}
