import NIOCore
import WaitingRoomGate

/// How an upstream answer's body is delimited (RFC 9112 §6.3).
enum GateBodyFraming: Equatable {
    /// No body: a HEAD request's answer, 1xx, 204 and 304.
    case none
    /// `Content-Length` bytes.
    case length(Int)
    /// The chunked transfer coding.
    case chunked
    /// Everything until the upstream closes the connection.
    case untilClose
}

/// The head of an upstream's answer as `waitingroom gate` read it: the bytes as received and where
/// the status and each field are in them, so that the visitor's head is written by copying byte
/// ranges (no `String` per field), minus the fields that stop at the proxy.
struct GateUpstreamHead {
    /// One field line: byte offsets into ``GateUpstreamHead/bytes``.
    struct Field {
        /// What the gate does with it.
        enum Kind: Equatable {
            /// Sent on as it is.
            case plain
            /// Dropped: RFC 9110 §7.6.1's hop-by-hop fields, and those a `Connection` field names.
            case hopByHop
            /// Sent on for an answer framed by it (or without a body); dropped otherwise.
            case contentLength
            /// Written by the gate for the framing it sends.
            case transferEncoding
        }

        var name: Range<Int>
        var value: Range<Int>
        var kind: Kind
    }

    /// The head as received, its status line first, up to and including the empty line.
    var bytes: ByteBuffer
    /// The status code.
    var status: Int
    /// The reason phrase (may be empty).
    var reason: Range<Int>
    /// Whether the answer is HTTP/1.1 (else 1.0).
    var isHTTP11: Bool
    var fields: [Field]
    /// How the body that follows is delimited.
    var framing: GateBodyFraming
    /// Whether the upstream keeps the connection open after this answer (RFC 9112 §9.3).
    var keepAlive: Bool
    /// The transfer codings of an answer delimited by the connection's end whose last coding is
    /// not chunked (e.g. `gzip`); nil otherwise.
    var otherCodings: String?

    /// The bytes of `range`, as text (for tests and log lines).
    func text(_ range: Range<Int>) -> String {
        bytes.getString(at: bytes.readerIndex + range.lowerBound, length: range.count) ?? ""
    }

    /// The value of the first field named `name` (any case), as text; nil when there is none.
    func value(of name: String) -> String? {
        fields.first { text($0.name).equalsIgnoringASCIICase(name) }.map { text($0.value) }
    }
}
