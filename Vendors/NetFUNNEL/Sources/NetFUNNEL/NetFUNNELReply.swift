import Foundation

/// Why bytes could not be read as a NetFUNNEL reply. Typed, never a crash.
package enum NetFUNNELReplyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The body was empty or only whitespace.
    case empty
    /// The body is larger than ``NetFUNNELReply/maximumBodySize``.
    case tooLarge(bytes: Int, limit: Int)
    /// The body is an HTML page (a proxy or server error page), not a reply.
    case htmlPage(excerpt: String)
    /// The body is neither `…result='…';…` nor `<code>:<params>`.
    case notAReply(excerpt: String)
    /// A JS reply whose `result='…` token has no closing quote.
    case unterminatedToken
    /// The result code is missing or not a three-digit number.
    case invalidCode(String)

    package var description: String {
        switch self {
        case .empty: "empty reply body (expected a NetFUNNEL result token)"
        case .tooLarge(let bytes, let limit): "reply body of \(bytes) bytes exceeds the \(limit)-byte limit"
        case .htmlPage(let excerpt): "got an HTML page instead of a NetFUNNEL reply: \(excerpt)"
        case .notAReply(let excerpt): "not a NetFUNNEL reply (expected `…result='RRRR:CCC:…'` or `CCC:…`): \(excerpt)"
        case .unterminatedToken: "NetFUNNEL reply token has no closing quote"
        case .invalidCode(let text): "NetFUNNEL result code \"\(text)\" is not a three-digit number"
        }
    }
}

/// A parsed `/ts.wseq` reply, in either envelope, with every parameter kept in order.
///
/// JS dialect: `<prefix>NetFunnel.gControl.result='RRRR:CCC:k=v&…';NetFunnel.gControl._showResult();`
/// Native dialect: `CCC:k=v&…`. The token is split on its first two colons (not at fixed
/// offsets), parameters on `&` and each on its *first* `=`, so values may contain `=`; names and
/// values are trimmed, never URL-decoded. Unknown parameters are kept. When a name repeats, the
/// last occurrence wins for the typed accessors (the newest `key`).
package struct NetFUNNELReply: Sendable, Equatable {
    /// The two reply envelopes.
    package enum Envelope: Sendable, Equatable {
        /// JavaScript-wrapped, with the prefix the server echoed (not relied upon).
        case javascript(prefix: String)
        /// Bare `<code>:<params>` (native SDK dialect).
        case native
    }

    /// One `name=value` pair, raw.
    package struct Parameter: Sendable, Equatable {
        package var name: String
        package var value: String
        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Largest body accepted by the parser (256 KiB).
    package static let maximumBodySize = 256 * 1024
    /// Numbers above this are clamped to it (absurd `nwait`, `ttl`, `tps`).
    package static let numberCeiling = 1_000_000_000

    package var envelope: Envelope
    /// The request type in the token (`5002` for a 5101), nil in the native dialect.
    package var requestType: Int?
    /// The result code as sent.
    package var code: Int
    /// Every parameter, in order, unknown ones included.
    package var parameters: [Parameter]

    package init(envelope: Envelope = .native, requestType: Int? = nil, code: Int, parameters: [Parameter] = []) {
        self.envelope = envelope
        self.requestType = requestType
        self.code = code
        self.parameters = parameters
    }

    /// The code as a table entry, nil for codes not in the table.
    package var status: NetFUNNELStatusCode? { NetFUNNELStatusCode(rawValue: code) }

    /// The last value of `name`, raw.
    package subscript(name: String) -> String? {
        for parameter in parameters.reversed() where parameter.name == name { return parameter.value }
        return nil
    }

    /// The key in this reply (may be empty after a 5004); nil when the reply carries none.
    package var key: String? { self["key"] }
    /// People ahead.
    package var nwait: Int? { Self.count(self["nwait"]) }
    /// People behind.
    package var nnext: Int? { Self.count(self["nnext"]) }
    /// Admissions per second.
    package var tps: Double? {
        guard let text = self["tps"], let value = Double(text), value.isFinite, value >= 0 else { return nil }
        return min(value, Double(Self.numberCeiling))
    }
    /// Seconds to wait before the next poll, as sent (clamp with ``clampedTTL``).
    package var ttl: Int? { Self.count(self["ttl"]) }
    /// The node that owns the key.
    package var ip: String? { self["ip"].flatMap { $0.isEmpty ? nil : $0 } }
    /// `ip` without IPv6 brackets (`[::1]` ⇒ `::1`), for comparing and building URLs.
    package var ipHost: String? {
        guard let ip else { return nil }
        if ip.hasPrefix("["), ip.hasSuffix("]"), ip.count > 2 { return String(ip.dropFirst().dropLast()) }
        return ip
    }
    /// The node's port (1–65535).
    package var port: Int? {
        guard let value = Self.count(self["port"]), (1...65535).contains(value) else { return nil }
        return value
    }
    /// `msg`, with surrounding quotes removed and percent-escapes decoded (text that is not
    /// valid percent-encoding is kept as sent).
    package var message: String? {
        guard var text = self["msg"] else { return nil }
        if text.count >= 2, let first = text.first, let last = text.last, first == last, first == "\"" || first == "'" {
            text = String(text.dropFirst().dropLast())
        }
        return Self.decodeValue(text)
    }
    /// `vwr_html`, raw (URL-encoded).
    package var vwrHTML: String? { self["vwr_html"] }
    /// `vwr_html` decoded as a URL (http/https only).
    package var vwrPageURL: URL? {
        guard let raw = vwrHTML, !raw.isEmpty else { return nil }
        let decoded = raw.removingPercentEncoding ?? raw
        guard let url = URL(string: decoded), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        return url
    }
    /// `vwr_type`.
    package var vwrType: String? { self["vwr_type"] }
    /// `live_message`, percent-escapes decoded (text that is not valid percent-encoding is kept).
    package var liveMessage: String? { self["live_message"].map(Self.decodeValue) }
    /// `chk_enter_cnt`.
    package var checkEnterCount: Int? { Self.count(self["chk_enter_cnt"]) }
    /// `sticky`.
    package var sticky: String? { self["sticky"] }

    /// The poll interval the client uses: `ttl` clamped to 1…30 seconds, 0 or missing ⇒ 1.
    package var clampedTTL: Int { Self.clampTTL(ttl) }

    /// Clamp a `ttl` to 1…30 (0 or nil ⇒ 1).
    package static func clampTTL(_ ttl: Int?) -> Int { min(30, max(1, ttl ?? 1)) }

    /// A non-negative count, clamped to ``numberCeiling``; decimals are truncated.
    static func count(_ text: String?) -> Int? {
        guard let text, !text.isEmpty else { return nil }
        if let value = Int(text) { return value < 0 ? nil : min(value, numberCeiling) }
        guard let value = Double(text), value.isFinite, value >= 0 else { return nil }
        return value >= Double(numberCeiling) ? numberCeiling : Int(value)
    }

    // MARK: parsing

    /// Parse a reply body.
    package static func parse(_ text: String) throws(NetFUNNELReplyError) -> NetFUNNELReply {
        var text = text
        let result: Result<NetFUNNELReply, NetFUNNELReplyError> = text.withUTF8 { buffer in
            do throws(NetFUNNELReplyError) {
                guard buffer.count <= maximumBodySize else { throw .tooLarge(bytes: buffer.count, limit: maximumBodySize) }
                return .success(try parse(buffer: buffer))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parse a reply body.
    package static func parse(_ bytes: [UInt8]) throws(NetFUNNELReplyError) -> NetFUNNELReply {
        guard bytes.count <= maximumBodySize else {
            throw .tooLarge(bytes: bytes.count, limit: maximumBodySize)
        }
        let result: Result<NetFUNNELReply, NetFUNNELReplyError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(NetFUNNELReplyError) {
                return .success(try parse(buffer: buffer))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func parse(buffer bytes: Bytes) throws(NetFUNNELReplyError) -> NetFUNNELReply {
        var start = 0
        var end = bytes.count
        // UTF-8 byte order mark
        if end >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        guard start < end else { throw .empty }
        if bytes[start] == UInt8(ascii: "<") { throw .htmlPage(excerpt: excerpt(bytes, start, end)) }

        // A body that starts with a digit is the native dialect `<code>:<params>`.
        if isDigit(bytes[start]) { return try parseToken(bytes, start, end, envelope: .native) }
        if let (tokenStart, tokenEnd, statementStart) = try findJSToken(bytes, start, end) {
            var prefixEnd = statementStart
            while prefixEnd > start, isSpace(bytes[prefixEnd - 1]) { prefixEnd -= 1 }
            let prefix = String(decoding: bytes[start..<prefixEnd], as: UTF8.self)
            return try parseToken(bytes, tokenStart, tokenEnd, envelope: .javascript(prefix: prefix))
        }
        throw .notAReply(excerpt: excerpt(bytes, start, end))
    }

    typealias Bytes = UnsafeBufferPointer<UInt8>

    private static let resultWord = Array("result".utf8)
    private static let controlWord = Array("NetFunnel.gControl.".utf8)

    /// Finds `result <ws>=<ws> '…'` and returns the token bounds and where the statement starts.
    private static func findJSToken(_ b: Bytes, _ start: Int, _ end: Int) throws(NetFUNNELReplyError)
        -> (Int, Int, Int)?
    {
        let word = resultWord
        var next: Int? = firstIndex(of: word[0], in: b, start, end)
        while let i = next, i + word.count <= end {
            next = firstIndex(of: word[0], in: b, i + 1, end)
            if matches(b, i, word) {
                var j = i + word.count
                while j < end, isSpace(b[j]) { j += 1 }
                if j < end, b[j] == UInt8(ascii: "=") {
                    j += 1
                    while j < end, isSpace(b[j]) { j += 1 }
                    if j < end, b[j] == UInt8(ascii: "'") || b[j] == UInt8(ascii: "\"") {
                        let quote = b[j]
                        let tokenStart = j + 1
                        guard let k = firstIndex(of: quote, in: b, tokenStart, end) else { throw .unterminatedToken }
                        var statementStart = i
                        if i - start >= controlWord.count, matches(b, i - controlWord.count, controlWord) {
                            statementStart = i - controlWord.count
                        }
                        return (tokenStart, k, statementStart)
                    }
                }
            }
        }
        return nil
    }

    private static func parseToken(_ b: Bytes, _ start: Int, _ end: Int, envelope: Envelope)
        throws(NetFUNNELReplyError) -> NetFUNNELReply
    {
        // first field
        let firstColon = firstIndex(of: UInt8(ascii: ":"), in: b, start, end)
        let (aStart, aEnd) = trimmed(b, start, firstColon ?? end)
        guard aStart < aEnd, allDigits(b, aStart, aEnd) else {
            throw .invalidCode(String(decoding: b[aStart..<min(aEnd, aStart + 16)], as: UTF8.self))
        }
        var requestType: Int?
        var codeRange = (aStart, aEnd)
        var paramsStart = firstColon.map { $0 + 1 } ?? end
        if let firstColon, aEnd - aStart == 4 {
            // typed token: RRRR:CCC[:params]
            let secondColon = firstIndex(of: UInt8(ascii: ":"), in: b, firstColon + 1, end)
            let (cStart, cEnd) = trimmed(b, firstColon + 1, secondColon ?? end)
            if cStart < cEnd, allDigits(b, cStart, cEnd) {
                requestType = number(b, aStart, aEnd)
                codeRange = (cStart, cEnd)
                paramsStart = secondColon.map { $0 + 1 } ?? end
            }
        }
        let codeLength = codeRange.1 - codeRange.0
        guard codeLength == 3 else {
            throw .invalidCode(String(decoding: b[codeRange.0..<min(codeRange.1, codeRange.0 + 16)], as: UTF8.self))
        }
        let code = number(b, codeRange.0, codeRange.1)
        guard code >= 100 else {
            throw .invalidCode(String(decoding: b[codeRange.0..<codeRange.1], as: UTF8.self))
        }
        var pieces = 1
        var scan = paramsStart
        while let ampersand = firstIndex(of: UInt8(ascii: "&"), in: b, scan, end) {
            pieces += 1
            scan = ampersand + 1
        }
        var parameters: [Parameter] = []
        parameters.reserveCapacity(pieces)
        var pieceStart = paramsStart
        while pieceStart <= end {
            let pieceEnd = firstIndex(of: UInt8(ascii: "&"), in: b, pieceStart, end) ?? end
            let (pStart, pEnd) = trimmed(b, pieceStart, pieceEnd)
            if pStart < pEnd {
                let eq = firstIndex(of: UInt8(ascii: "="), in: b, pStart, pEnd)
                let (nStart, nEnd) = trimmed(b, pStart, eq ?? pEnd)
                if nStart < nEnd {
                    let (vStart, vEnd) = eq.map { trimmed(b, $0 + 1, pEnd) } ?? (pEnd, pEnd)
                    parameters.append(
                        Parameter(
                            String(decoding: Bytes(rebasing: b[nStart..<nEnd]), as: UTF8.self),
                            String(decoding: Bytes(rebasing: b[vStart..<vEnd]), as: UTF8.self)))
                }
            }
            pieceStart = pieceEnd + 1
        }
        return NetFUNNELReply(envelope: envelope, requestType: requestType, code: code, parameters: parameters)
    }

    @inline(__always) private static func isSpace(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0x0B || c == 0x0C
    }
    @inline(__always) private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    private static func matches(_ b: Bytes, _ at: Int, _ word: [UInt8]) -> Bool {
        guard at >= 0, at + word.count <= b.count, let base = b.baseAddress else { return false }
        return word.withUnsafeBufferPointer { w in
            guard let wordBase = w.baseAddress else { return true }
            return memcmp(base + at, wordBase, w.count) == 0
        }
    }

    /// `memchr`: fast even in debug builds.
    private static func firstIndex(of c: UInt8, in b: Bytes, _ start: Int, _ end: Int) -> Int? {
        guard start < end, let base = b.baseAddress else { return nil }
        guard let found = memchr(base + start, Int32(c), end - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    private static func trimmed(_ b: Bytes, _ start: Int, _ end: Int) -> (Int, Int) {
        var s = start
        var e = end
        while s < e, isSpace(b[s]) { s += 1 }
        while e > s, isSpace(b[e - 1]) { e -= 1 }
        return (s, e)
    }

    private static func allDigits(_ b: Bytes, _ start: Int, _ end: Int) -> Bool {
        guard end - start <= 9 else { return false }
        for i in start..<end where !isDigit(b[i]) { return false }
        return true
    }

    private static func number(_ b: Bytes, _ start: Int, _ end: Int) -> Int {
        var value = 0
        for i in start..<end { value = value * 10 + Int(b[i] - 0x30) }
        return value
    }

    private static func excerpt(_ b: Bytes, _ start: Int, _ end: Int) -> String {
        String(decoding: b[start..<min(end, start + 80)], as: UTF8.self)
    }

    // MARK: value encoding

    /// Bytes a free-text value (`msg`, `live_message`) may carry unescaped: printable ASCII
    /// except the reply grammar's own characters (`&`, `=`, `:`, `;`), the quotes and backslash
    /// of the JS envelope, `<`/`>` and `%` itself.
    @inline(__always) private static func isPlainValueByte(_ byte: UInt8) -> Bool {
        guard byte >= 0x20, byte <= 0x7E else { return false }
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "'"), UInt8(ascii: "\""),
            UInt8(ascii: "\\"), UInt8(ascii: "%"), UInt8(ascii: "<"), UInt8(ascii: ">"):
            return false
        default:
            return true
        }
    }

    /// Percent-encodes free text for a reply value, as the live service encodes `vwr_html`:
    /// UTF-8, `%XX` for every byte that is not plain (above) and for a space at either end
    /// (parsers trim). Inner spaces stay (the live service sends `msg="Wrong Server ID"`).
    package static func encodeValue(_ text: String) -> String {
        // most values need no escape: keep the text
        let count = text.utf8.count
        var plain = true
        for (index, byte) in text.utf8.enumerated() where !isPlainValueByte(byte) || (byte == 0x20 && (index == 0 || index == count - 1)) {
            plain = false
            break
        }
        if plain { return text }
        let hex = Array("0123456789ABCDEF".utf8)
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for (index, byte) in bytes.enumerated() {
            let edgeSpace = byte == 0x20 && (index == 0 || index == bytes.count - 1)
            if isPlainValueByte(byte) && !edgeSpace {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `msg` as the live service writes it: double-quoted, the text encoded with ``encodeValue(_:)``.
    package static func quotedMessage(_ text: String) -> String { "\"" + encodeValue(text) + "\"" }

    /// Decodes ``encodeValue(_:)``; text that is not valid percent-encoding is returned as is.
    package static func decodeValue(_ text: String) -> String {
        guard text.contains("%") else { return text }
        return text.removingPercentEncoding ?? text
    }

    /// A host for `ip`: IPv6 literals bracketed (`[::1]`) so the value has no bare colons.
    package static func nodeHost(_ host: String) -> String {
        // an ASCII host (the usual one) is checked on bytes
        if !host.utf8.contains(where: { $0 >= 0x80 }), !host.utf8.contains(UInt8(ascii: ":")) { return host }
        guard host.contains(":"), !host.hasPrefix("[") else { return host }
        return "[" + host + "]"
    }

    // MARK: rendering

    /// The parameter string `k=v&k=v`.
    package var parameterString: String {
        var text = ""
        text.reserveCapacity(parametersLength)
        appendParameters(to: &text)
        return text
    }

    /// The result token: `RRRR:CCC:params` when `requestType` is set, else `CCC:params`.
    package var token: String {
        var text = ""
        text.reserveCapacity(16 + parametersLength)
        appendToken(to: &text)
        return text
    }

    /// The body as the server sends it in this reply's envelope.
    package func rendered() -> String {
        var text = ""
        switch envelope {
        case .native:
            text.reserveCapacity(8 + parametersLength)
            text += String(code)
            text += ":"
            appendParameters(to: &text)
        case .javascript(let prefix):
            text.reserveCapacity(prefix.utf8.count + 96 + parametersLength)
            text += prefix
            text += "NetFunnel.gControl.result='"
            appendToken(to: &text)
            text += "';NetFunnel.gControl._showResult();"
        }
        return text
    }

    /// Bytes of ``parameterString``.
    private var parametersLength: Int {
        parameters.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 }
    }

    private func appendParameters(to text: inout String) {
        for (index, parameter) in parameters.enumerated() {
            if index > 0 { text += "&" }
            text += parameter.name
            text += "="
            text += parameter.value
        }
    }

    private func appendToken(to text: inout String) {
        if let requestType {
            text += String(requestType)
            text += ":"
        }
        text += String(code)
        text += ":"
        appendParameters(to: &text)
    }
}
