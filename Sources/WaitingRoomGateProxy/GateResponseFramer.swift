import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Reads an upstream's HTTP/1.x answers from the raw bytes of its connection, for
/// `waitingroom gate`: it parses each head (``GateUpstreamHead``) and finds where the body ends
/// (RFC 9112 §6.3), but hands the body on as the bytes that came, chunk framing included, so the
/// gate forwards it without decoding and encoding it again. For an HTTP/1.0 visitor, which cannot
/// read chunks, it hands on the chunks' data only (``start(requestIsHead:dechunk:)``).
///
/// Pull-based: the connection calls ``next(_:)`` until it returns nil (more bytes needed) or an
/// ``Event/end(reusable:)``, and acts on each event between calls, so an event's handler may start
/// the connection's next exchange without reentering the framer.
///
/// Threading: a value owned by one ``GateUpstreamConnection``, on its event loop.
///
/// Why not NIO's `HTTPResponseDecoder` (llhttp), measured in bench/gate-response-parser (the same
/// byte streams through both, in an `EmbeddedChannel`, two runs of 15 rounds): it took 1.7–2.2×
/// this framer's time per answer to parse (2 KB by length, 64 KB chunked, small keep-alive answers
/// one per read and back to back; 1.5–2.0× without the writes that tell it each request), and
/// 1.6–3.4× with what the gate would do after it (the visitor's head written again from
/// `HTTPResponseHead`, a chunked body framed again: 53 more allocations per 64 KB answer). And it
/// would lose what the relay keeps: the upstream's reason phrase (NIO's own, or none for a code it
/// does not know), field values byte for byte (non-UTF-8 bytes become U+FFFD), chunk extensions
/// and boundaries. It must be told each request's method by an outbound `HTTPClientRequestPart`
/// (else a HEAD answer's `Content-Length` waits for a body), and it reads some answers otherwise:
/// bare LF, `Content-Length: 2, 2` and a length with chunked are errors there, while an HTTP/1.0
/// answer with `Transfer-Encoding` and an unasked-for 101 go through.
struct GateResponseFramer {
    /// What the bytes read so far hold.
    enum Event {
        /// An interim (1xx other than 101) answer's head: the final answer follows.
        case informational(GateUpstreamHead)
        /// The final answer's head.
        case head(GateUpstreamHead)
        /// Body bytes to send on: as received, or the chunks' data when dechunking.
        case body(ByteBuffer)
        /// The answer ended; `reusable` when the connection can carry another exchange (the
        /// upstream keeps it open and sent nothing after the answer).
        case end(reusable: Bool)
    }

    /// An answer that is not valid HTTP/1.x, or over a bound.
    struct Malformed: Error, CustomStringConvertible, Equatable {
        let reason: String
        var description: String { "the upstream's answer is not valid HTTP/1.1: \(reason)" }
    }

    /// The most bytes of one head (NIO's own default bound).
    static let headBound = 80 * 1024
    /// The most bytes of a chunk-size line's extensions, and of the trailer section.
    static let chunkLineBound = 4 * 1024

    private enum ChunkState {
        case size(value: Int, digits: Int)
        case sizeExtension(length: Int)
        case sizeLF
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailer(line: Int, total: Int)
    }

    private enum State {
        /// No answer is due: bytes now are an error.
        case idle
        case head
        case length(remaining: Int)
        case chunked(ChunkState)
        case untilClose
        /// The body is complete; ``Event/end(reusable:)`` is next.
        case ending
    }

    private var state = State.idle
    private var requestIsHead = false
    private var dechunk = false
    private var keepAlive = false
    /// The part of a head read so far (a head split across reads), and the length of its current line.
    private var partialHead: ByteBuffer?
    private var headLine = 0
    private var headSize = 0

    init() {}

    /// Expects the answer to a new request: `requestIsHead` for a HEAD request (an answer without
    /// a body whatever its fields say), `dechunk` to hand on a chunked body's data only.
    mutating func start(requestIsHead: Bool, dechunk: Bool) {
        self.requestIsHead = requestIsHead
        self.dechunk = dechunk
        state = .head
        partialHead = nil
        headLine = 0
        headSize = 0
    }

    /// Whether an answer is being read (false between exchanges).
    var isExpecting: Bool {
        if case .idle = state { return false }
        return true
    }

    /// The next event from `input` (consuming what it covers), or nil when `input` is used up
    /// first. Bytes after an answer's end are left in `input` (the connection is then not reusable).
    mutating func next(_ input: inout ByteBuffer) throws(Malformed) -> Event? {
        while true {
            switch state {
            case .idle:
                if input.readableBytes > 0 { throw Malformed(reason: "bytes came when no answer was due") }
                return nil
            case .ending:
                state = .idle
                return .end(reusable: keepAlive && input.readableBytes == 0)
            case .head:
                guard input.readableBytes > 0, let bytes = try takeHead(&input) else { return nil }
                let head = try Self.parseHead(bytes, requestIsHead: requestIsHead)
                if head.status < 200 {
                    headLine = 0
                    headSize = 0
                    return .informational(head)
                }
                keepAlive = head.keepAlive
                switch head.framing {
                case .none, .length(0): state = .ending
                case .length(let length): state = .length(remaining: length)
                case .chunked: state = .chunked(.size(value: 0, digits: 0))
                case .untilClose: state = .untilClose
                }
                return .head(head)
            case .length(let remaining):
                guard input.readableBytes > 0 else { return nil }
                let count = min(remaining, input.readableBytes)
                // swiftlint:disable:next force_unwrapping
                let slice = input.readSlice(length: count)!
                state = count == remaining ? .ending : .length(remaining: remaining - count)
                return .body(slice)
            case .untilClose:
                guard input.readableBytes > 0 else { return nil }
                let slice = input
                input.moveReaderIndex(to: input.writerIndex)
                return .body(slice)
            case .chunked(let chunkState):
                guard input.readableBytes > 0 else { return nil }
                if let event = try chunked(chunkState, &input) { return event }
            }
        }
    }

    /// The upstream closed its side: the end of a body delimited by it, else an answer cut short.
    mutating func inputEnded() -> Event? {
        guard case .untilClose = state else { return nil }
        state = .idle
        return .end(reusable: false)
    }

    // MARK: the head

    /// The whole head once its empty line has come (a slice of `input` when it came in one read),
    /// or nil after keeping what came so far.
    private mutating func takeHead(_ input: inout ByteBuffer) throws(Malformed) -> ByteBuffer? {
        var line = headLine
        var size = headSize
        let scanned: Int? = input.withUnsafeReadableBytes { bytes in
            // from line feed to line feed; a line holding nothing but a CR is the empty line
            var offset = 0
            while offset < bytes.count {
                guard let lf = bytes[offset...].firstIndex(of: UInt8(ascii: "\n")) else {
                    let rest = bytes.count - offset
                    size += rest
                    line += rest == 1 && bytes[offset] == UInt8(ascii: "\r") ? 0 : rest
                    return nil
                }
                let segment = lf - offset
                size += segment + 1
                if size > Self.headBound { return nil }
                let content = segment == 1 && bytes[offset] == UInt8(ascii: "\r") ? 0 : segment
                if line + content == 0 { return lf + 1 }
                line = 0
                offset = lf + 1
            }
            return nil
        }
        headLine = line
        headSize = size
        if size > Self.headBound { throw Malformed(reason: "a head over \(Self.headBound) bytes") }
        guard let length = scanned else {
            if partialHead == nil { partialHead = ByteBuffer() }
            partialHead?.writeImmutableBuffer(input)
            input.moveReaderIndex(to: input.writerIndex)
            return nil
        }
        // swiftlint:disable:next force_unwrapping
        let tail = input.readSlice(length: length)!
        guard var head = partialHead else { return tail }
        partialHead = nil
        head.writeImmutableBuffer(tail)
        return head
    }

    /// The head in `bytes` (status line to empty line). Throws for anything that is not
    /// HTTP/1.0 or 1.1: a bad status line, a field line without a name or with a CR or NUL in it,
    /// obsolete line folding, a `Content-Length` that is not one number, a 101 (the gate never
    /// asks for an upgrade).
    static func parseHead(_ bytes: ByteBuffer, requestIsHead: Bool) throws(Malformed) -> GateUpstreamHead {
        var head = GateUpstreamHead(
            bytes: bytes, status: 0, reason: 0..<0, isHTTP11: true, fields: [], framing: .untilClose,
            keepAlive: true, otherCodings: nil)
        var notes = FieldNotes()
        let failure: Malformed? = bytes.withUnsafeReadableBytes { raw -> Malformed? in
            // The next line from `cursor`, without its CR LF (takeHead ended the bytes with an empty line).
            var cursor = 0
            func nextLine() -> Range<Int>? {
                guard cursor < raw.count, let base = raw.baseAddress,
                    let found = memchr(base + cursor, Int32(UInt8(ascii: "\n")), raw.count - cursor)
                else { return nil }
                let lf = cursor + (UnsafeRawPointer(found) - (base + cursor))
                var end = lf
                if end > cursor, raw[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                defer { cursor = lf + 1 }
                return cursor..<end
            }
            guard let statusLine = nextLine() else { return Malformed(reason: "the head does not end with an empty line") }
            if let failure = parseStatusLine(raw, statusLine, into: &head) { return failure }
            head.fields.reserveCapacity(16)
            while let line = nextLine() {
                // the empty line ends the head
                if line.isEmpty { return nil }
                if let failure = parseFieldLine(raw, line, into: &head, notes: &notes) { return failure }
            }
            return Malformed(reason: "the head does not end with an empty line")
        }
        if let failure { throw failure }
        if head.status == 101 { throw Malformed(reason: "101 Switching Protocols, but the gate asked for no upgrade") }
        // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding is treated as if its framing
        // were faulty, even with a Content-Length (a proxy closes and answers 502, §6.3)
        if !head.isHTTP11, !notes.codings.isEmpty { throw Malformed(reason: "an HTTP/1.0 answer with Transfer-Encoding") }
        // fields a `Connection` field names stop here too
        if !notes.listed.isEmpty {
            for index in head.fields.indices
            where head.fields[index].kind == .plain && notes.listed.contains(head.text(head.fields[index].name).lowercased()) {
                head.fields[index].kind = .hopByHop
            }
        }
        head.keepAlive = head.isHTTP11 ? !notes.closeToken : notes.keepAliveToken && !notes.closeToken
        try applyFraming(to: &head, notes: notes, requestIsHead: requestIsHead)
        if head.framing == .untilClose { head.keepAlive = false }
        return head
    }

    /// What reading the field lines gathered besides the fields themselves: the `Connection`
    /// tokens, and where the values of the framing fields stand.
    private struct FieldNotes {
        /// `Connection: close` was seen.
        var closeToken = false
        /// `Connection: keep-alive` was seen.
        var keepAliveToken = false
        /// The other field names `Connection` listed (lowercased).
        var listed: [String] = []
        /// The values of the `Content-Length` fields.
        var lengths: [Range<Int>] = []
        /// The values of the `Transfer-Encoding` fields.
        var codings: [Range<Int>] = []
    }

    /// Reads the status line (`HTTP/1.x SP 3DIGIT [SP reason]`) into `head`; a failure when it is not one.
    private static func parseStatusLine(
        _ raw: UnsafeRawBufferPointer, _ statusLine: Range<Int>, into head: inout GateUpstreamHead
    ) -> Malformed? {
        let s = statusLine.lowerBound
        guard statusLine.count >= 12, raw[s] == UInt8(ascii: "H"), raw[s + 1] == UInt8(ascii: "T"), raw[s + 2] == UInt8(ascii: "T"),
            raw[s + 3] == UInt8(ascii: "P"), raw[s + 4] == UInt8(ascii: "/"), raw[s + 5] == UInt8(ascii: "1"),
            raw[s + 6] == UInt8(ascii: "."),
            raw[s + 7] == UInt8(ascii: "0") || raw[s + 7] == UInt8(ascii: "1"), raw[s + 8] == UInt8(ascii: " ")
        else {
            return Malformed(reason: "the status line is not 'HTTP/1.x CODE REASON'")
        }
        head.isHTTP11 = raw[statusLine.lowerBound + 7] == UInt8(ascii: "1")
        var status = 0
        for index in statusLine.lowerBound + 9..<statusLine.lowerBound + 12 {
            let digit = raw[index]
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else {
                return Malformed(reason: "the status code is not three digits")
            }
            status = status * 10 + Int(digit - UInt8(ascii: "0"))
        }
        guard status >= 100 else { return Malformed(reason: "the status code is not three digits") }
        head.status = status
        if statusLine.count > 12 {
            guard raw[statusLine.lowerBound + 12] == UInt8(ascii: " ") else {
                return Malformed(reason: "the status code is not three digits")
            }
            head.reason = statusLine.lowerBound + 13..<statusLine.upperBound
            if raw[head.reason].contains(where: { $0 == 0 || $0 == UInt8(ascii: "\r") }) {
                return Malformed(reason: "the reason phrase holds a CR or NUL")
            }
        } else {
            head.reason = statusLine.upperBound..<statusLine.upperBound
        }
        return nil
    }

    /// Reads one (non-empty) field line into `head`, noting framing and `Connection` fields in
    /// `notes`; a failure for folding, a bad name, or a CR or NUL in the value.
    private static func parseFieldLine(
        _ raw: UnsafeRawBufferPointer, _ line: Range<Int>, into head: inout GateUpstreamHead, notes: inout FieldNotes
    ) -> Malformed? {
        let first = line.lowerBound
        guard raw[first] != UInt8(ascii: " "), raw[first] != UInt8(ascii: "\t") else {
            return Malformed(reason: "obsolete line folding")
        }
        guard let colon = raw[line].firstIndex(of: UInt8(ascii: ":")), colon > line.lowerBound,
            raw[line.lowerBound..<colon].allSatisfy(isTokenByte)
        else {
            return Malformed(reason: "a field line without a valid name")
        }
        var valueStart = colon + 1
        var valueEnd = line.upperBound
        while valueStart < valueEnd, raw[valueStart] == UInt8(ascii: " ") || raw[valueStart] == UInt8(ascii: "\t") {
            valueStart += 1
        }
        while valueEnd > valueStart, raw[valueEnd - 1] == UInt8(ascii: " ") || raw[valueEnd - 1] == UInt8(ascii: "\t") {
            valueEnd -= 1
        }
        if raw[valueStart..<valueEnd].contains(where: { $0 == 0 || $0 == UInt8(ascii: "\r") }) {
            return Malformed(reason: "a field value holds a CR or NUL")
        }
        let name = line.lowerBound..<colon
        let kind = Self.kind(of: UnsafeRawBufferPointer(rebasing: raw[name]))
        let value = valueStart..<valueEnd
        switch kind {
        case .contentLength: notes.lengths.append(value)
        case .transferEncoding: notes.codings.append(value)
        case .hopByHop:
            if Self.equalsLowercase(UnsafeRawBufferPointer(rebasing: raw[name]), "connection") {
                noteConnectionTokens(raw[value], in: &notes)
            }
        case .plain: break
        }
        head.fields.append(.init(name: name, value: value, kind: kind))
        return nil
    }

    /// Notes the tokens of a `Connection` field's value: `close`, `keep-alive`, and the names of
    /// further fields that stop here.
    private static func noteConnectionTokens(_ value: Slice<UnsafeRawBufferPointer>, in notes: inout FieldNotes) {
        for token in value.split(separator: UInt8(ascii: ",")) {
            let text = String(decoding: token, as: UTF8.self).trimmingBlanks().lowercased()
            if text == "close" {
                notes.closeToken = true
            } else if text == "keep-alive" {
                notes.keepAliveToken = true
            } else if !text.isEmpty {
                notes.listed.append(text)
            }
        }
    }

    /// Sets how the body of the answer in `head` is framed (RFC 9112 §6.3), from its status, the
    /// request's method and its `Transfer-Encoding` and `Content-Length` fields.
    private static func applyFraming(
        to head: inout GateUpstreamHead, notes: FieldNotes, requestIsHead: Bool
    ) throws(Malformed) {
        if head.status < 200 || head.status == 204 || head.status == 304 || requestIsHead {
            head.framing = .none
        } else if !notes.codings.isEmpty {
            let all = notes.codings.map { head.text($0) }.joined(separator: ",")
            let list = all.split(separator: ",").map { String($0).trimmingBlanks().lowercased() }.filter { !$0.isEmpty }
            if list.last == "chunked" {
                head.framing = .chunked
            } else if list.contains("chunked") {
                // RFC 9112 §6.3 reads it to the close, but it cannot go on to an HTTP/1.1 visitor
                // whose connection is kept (chunked would be applied twice, §7)
                throw Malformed(reason: "chunked is not the last transfer coding")
            } else {
                head.framing = .untilClose
                head.otherCodings = list.joined(separator: ", ")
            }
            // RFC 9112 §6.3: with a Content-Length too, the coding wins, and the connection is not kept
            if !notes.lengths.isEmpty { head.keepAlive = false }
        } else if !notes.lengths.isEmpty {
            head.framing = .length(try contentLength(of: head, notes.lengths))
        }
    }

    /// The one length the `Content-Length` values at `lengths` give (repeats of one number, in
    /// one field or several, are one); throws when they are not one number.
    private static func contentLength(of head: GateUpstreamHead, _ lengths: [Range<Int>]) throws(Malformed) -> Int {
        var length: Int?
        for range in lengths {
            for item in head.text(range).split(separator: ",", omittingEmptySubsequences: false) {
                let digits = String(item).trimmingBlanks()
                guard !digits.isEmpty, digits.count <= 18,
                    digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                    let value = Int(digits), length == nil || length == value
                else {
                    throw Malformed(reason: "Content-Length is not one number")
                }
                length = value
            }
        }
        return length ?? 0
    }

    /// The kind of field `name` is (any case), without allocating.
    static func kind(of name: UnsafeRawBufferPointer) -> GateUpstreamHead.Field.Kind {
        switch name.count {
        case 2: return equalsLowercase(name, "te") ? .hopByHop : .plain
        case 7: return equalsLowercase(name, "trailer") || equalsLowercase(name, "upgrade") ? .hopByHop : .plain
        case 10: return equalsLowercase(name, "connection") || equalsLowercase(name, "keep-alive") ? .hopByHop : .plain
        case 14: return equalsLowercase(name, "content-length") ? .contentLength : .plain
        case 16: return equalsLowercase(name, "proxy-connection") ? .hopByHop : .plain
        case 17: return equalsLowercase(name, "transfer-encoding") ? .transferEncoding : .plain
        case 18: return equalsLowercase(name, "proxy-authenticate") ? .hopByHop : .plain
        case 19: return equalsLowercase(name, "proxy-authorization") ? .hopByHop : .plain
        default: return .plain
        }
    }

    /// Whether `bytes` spell `lowercase` in any case (ASCII).
    static func equalsLowercase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        for index in 0..<bytes.count {
            var byte = bytes[index]
            if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            if byte != expected[index] { return false }
        }
        return true
    }

    /// A `tchar` of RFC 9110 §5.6.2.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"),
            UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "^"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    // MARK: chunks

    /// Reads chunk framing from `input`. In pass-through mode it covers as much as it can and
    /// returns it as one body event; dechunking, it returns each piece of chunk data alone.
    /// Nil: `input` was used up on framing alone.
    private mutating func chunked(_ initial: ChunkState, _ input: inout ByteBuffer) throws(Malformed) -> Event? {
        var chunk = initial
        let start = input.readerIndex
        var index = start
        let end = input.writerIndex
        var done = false
        scan: while index < end {
            switch chunk {
            case .data(let remaining):
                let count = min(remaining, end - index)
                if dechunk {
                    // swiftlint:disable:next force_unwrapping
                    let data = input.getSlice(at: index, length: count)!
                    input.moveReaderIndex(to: index + count)
                    state = .chunked(count == remaining ? .dataCR : .data(remaining: remaining - count))
                    return .body(data)
                }
                index += count
                chunk = count == remaining ? .dataCR : .data(remaining: remaining - count)
                continue scan
            default:
                break
            }
            // swiftlint:disable:next force_unwrapping
            let byte = input.getInteger(at: index, as: UInt8.self)!
            index += 1
            guard let next = try chunkState(after: chunk, byte) else {
                done = true
                break scan
            }
            chunk = next
        }
        state = done ? .ending : .chunked(chunk)
        if dechunk {
            input.moveReaderIndex(to: index)
            return nil
        }
        // swiftlint:disable:next force_unwrapping
        let covered = input.readSlice(length: index - start)!
        return covered.readableBytes > 0 ? .body(covered) : nil
    }

    /// The framing state after `byte` of chunk framing (not of chunk data) in state `chunk`; nil:
    /// `byte` ended the empty line after the trailers, and so the body.
    private mutating func chunkState(after chunk: ChunkState, _ byte: UInt8) throws(Malformed) -> ChunkState? {
        switch chunk {
        case .size(let value, let digits):
            return try chunkSizeState(value: value, digits: digits, byte)
        case .sizeExtension(let length):
            if byte == UInt8(ascii: "\n") {
                return pendingSize == 0 ? .trailer(line: 0, total: 0) : .data(remaining: pendingSize)
            }
            guard length < Self.chunkLineBound else {
                throw Malformed(reason: "chunk extensions over \(Self.chunkLineBound) bytes")
            }
            return .sizeExtension(length: length + 1)
        case .sizeLF:
            guard byte == UInt8(ascii: "\n") else { throw Malformed(reason: "a chunk-size line without its LF") }
            return pendingSize == 0 ? .trailer(line: 0, total: 0) : .data(remaining: pendingSize)
        case .dataCR:
            if byte == UInt8(ascii: "\r") { return .dataLF }
            if byte == UInt8(ascii: "\n") { return .size(value: 0, digits: 0) }
            throw Malformed(reason: "chunk data longer than its size")
        case .dataLF:
            guard byte == UInt8(ascii: "\n") else { throw Malformed(reason: "chunk data longer than its size") }
            return .size(value: 0, digits: 0)
        case .trailer(let line, let total):
            if byte == UInt8(ascii: "\n") {
                return line == 0 ? nil : .trailer(line: 0, total: total)
            }
            if byte != UInt8(ascii: "\r") {
                guard total < Self.chunkLineBound else { throw Malformed(reason: "trailers over \(Self.chunkLineBound) bytes") }
                return .trailer(line: line + 1, total: total + 1)
            }
            return chunk
        case .data:
            return chunk
        }
    }

    /// The framing state after `byte` of a chunk-size line whose hex digits so far give `value`.
    private mutating func chunkSizeState(value: Int, digits: Int, _ byte: UInt8) throws(Malformed) -> ChunkState {
        if let digit = Self.hexValue(byte) {
            guard digits < 15 else { throw Malformed(reason: "a chunk size over 15 hex digits") }
            return .size(value: value * 16 + digit, digits: digits + 1)
        }
        guard digits > 0 else { throw Malformed(reason: "a chunk without a size") }
        switch byte {
        case UInt8(ascii: ";"), UInt8(ascii: " "), UInt8(ascii: "\t"):
            pendingSize = value
            return .sizeExtension(length: 0)
        case UInt8(ascii: "\r"):
            pendingSize = value
            return .sizeLF
        case UInt8(ascii: "\n"):
            return value == 0 ? .trailer(line: 0, total: 0) : .data(remaining: value)
        default:
            throw Malformed(reason: "a chunk size that is not hexadecimal")
        }
    }

    /// The size of the chunk whose size line is being finished (its extensions or CR LF).
    private var pendingSize = 0

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }
}

extension String {
    /// The text without spaces and tabs at either end.
    fileprivate func trimmingBlanks() -> String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
