/// A request target (`/path?query`) in the one form the gate decides on and the app is handed,
/// so that a trigger cannot be passed by spelling the same path another way (`/static/../sale`,
/// `/%73ale`, `/sale/./x`, `//sale`).
///
/// The rules, applied once, in this order:
/// 1. a fragment (`#…`) is dropped: a browser never sends one, and a token after it is not the
///    request's (RFC 9112 §3.2 has no fragment in a request target);
/// 2. in the path, a percent escape of an unreserved character (letters, digits, `-._~`) is
///    decoded and every other escape is written with upper-case hex (RFC 3986 §2.3, §6.2.2.1,
///    §6.2.2.2); an escape that is not two hex digits, and an encoded `/` (`%2F`), `\` (`%5C`)
///    or NUL (`%00`), is refused: apps disagree on what they mean, so no one form can be checked;
///    a raw `\` is refused for the same reason (some servers read it as `/`), and so is an
///    escape encoded twice (`%25` and two hex digits: `%252e` is `.` to an app that decodes twice);
/// 3. dot segments are removed (RFC 3986 §5.2.4), and runs of `/` become one (nginx's
///    `merge_slashes`, on by default, and most routers serve `//sale` as `/sale`);
/// 4. the query is kept as sent: apps and tokens read it decoded anyway, and re-spelling it would
///    send visitors whose encoder escapes `~` (Java's `URLEncoder`, old PHP) through a redirect on
///    every request. (A `PageUrl` trigger on query text therefore sees the query as sent.)
///
/// An app behind the reverse proxy receives the canonical target; the middlewares, which cannot
/// change what the framework already routed, send a visitor whose target is not canonical to the
/// canonical one first (308).
package enum GateTarget {
    /// Why a target was refused.
    package enum Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// `%` not followed by two hex digits.
        case malformedEscape
        /// `%2F`, `%5C` or `%00` in the path.
        case encodedSeparator(String)
        /// A raw `\` in the path.
        case backslash
        /// `%25` followed by two hex digits in the path: an escape encoded twice.
        case doubleEncoded
        /// The target does not start with `/`.
        case notAPath

        package var description: String {
            switch self {
            case .malformedEscape: "the request target has a % that is not followed by two hex digits"
            case .encodedSeparator(let escape): "the request path holds \(escape), which servers read in different ways"
            case .backslash: "the request path holds a backslash, which some servers read as /"
            case .doubleEncoded: "the request path holds an escape encoded twice (%25 and two hex digits), which some servers decode twice"
            case .notAPath: "the request target is not a path"
            }
        }
    }

    /// The canonical form of `target` (origin form, `/path[?query]`), or why it cannot have one.
    /// Returns `target` itself (no copy) when it is canonical already, the usual case.
    package static func canonical(_ target: String) -> Result<String, Refusal> {
        var bytes = target
        let rewritten = bytes.withUTF8 { bytes -> Result<String, Refusal>? in
            guard bytes.first == UInt8(ascii: "/") else { return .failure(.notAPath) }
            return needsWork(bytes) ? rewrite(bytes) : nil
        }
        return rewritten ?? .success(target)
    }

    /// Whether anything in `bytes` can change: an escape, a `\`, a `#`, a dot segment or `//`.
    private static func needsWork(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var inPath = true
        var previous: UInt8 = 0
        for i in 0..<bytes.count {
            let byte = bytes[i]
            switch byte {
            case UInt8(ascii: "#"): return true
            case UInt8(ascii: "%"): if inPath { return true }
            case UInt8(ascii: "?"): inPath = false
            case UInt8(ascii: "\\"): if inPath { return true }
            case UInt8(ascii: "/"): if inPath, previous == UInt8(ascii: "/") { return true }
            case UInt8(ascii: "."):
                // a segment that starts with `.` right after a `/` may be `.` or `..`
                if inPath, previous == UInt8(ascii: "/") { return true }
            default: break
            }
            previous = byte
        }
        return false
    }

    private static func rewrite(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<String, Refusal> {
        var end = bytes.count
        if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) { end = hash }
        let queryStart = bytes[..<end].firstIndex(of: UInt8(ascii: "?")) ?? end
        var path: [UInt8] = []
        path.reserveCapacity(queryStart)
        var i = 0
        while i < queryStart {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\\") { return .failure(.backslash) }
            guard byte == UInt8(ascii: "%") else {
                path.append(byte)
                i += 1
                continue
            }
            guard i + 2 < queryStart, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) else {
                return .failure(.malformedEscape)
            }
            let decoded = high << 4 | low
            // `%25` then two hex digits: an escape encoded twice, which an app that decodes twice
            // reads as another character (`%252e%252e` as `..`)
            if decoded == UInt8(ascii: "%"), i + 4 < queryStart, hexValue(bytes[i + 3]) != nil, hexValue(bytes[i + 4]) != nil {
                return .failure(.doubleEncoded)
            }
            if decoded == UInt8(ascii: "/") || decoded == UInt8(ascii: "\\") || decoded == 0 {
                return .failure(.encodedSeparator("%" + String(decoded, radix: 16, uppercase: true).leftPadded()))
            }
            if isUnreserved(decoded) {
                path.append(decoded)
            } else {
                path.append(UInt8(ascii: "%"))
                path.append(upperHex(high))
                path.append(upperHex(low))
            }
            i += 3
        }
        var result = removingDotSegments(path)
        // the query as sent (its `?` included)
        if queryStart < end { result.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[queryStart..<end])) }
        return .success(String(decoding: result, as: UTF8.self))
    }

    /// RFC 3986 §5.2.4 on an absolute path, with runs of `/` merged first.
    static func removingDotSegments(_ path: [UInt8]) -> [UInt8] {
        // the segments between slashes; empty ones (from `//`) are dropped
        var segments: [ArraySlice<UInt8>] = []
        let parts = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        var trailingSlash = path.last == UInt8(ascii: "/")
        for (index, part) in parts.enumerated() {
            let isLast = index == parts.count - 1
            if part.isEmpty { continue }
            if part.elementsEqual([UInt8(ascii: ".")]) {
                if isLast { trailingSlash = true }
                continue
            }
            if part.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                if !segments.isEmpty { segments.removeLast() }
                if isLast { trailingSlash = true }
                continue
            }
            segments.append(part)
        }
        var out: [UInt8] = [UInt8(ascii: "/")]
        for (index, segment) in segments.enumerated() {
            if index > 0 { out.append(UInt8(ascii: "/")) }
            out.append(contentsOf: segment)
        }
        if trailingSlash, !segments.isEmpty { out.append(UInt8(ascii: "/")) }
        return out
    }

    /// ALPHA, DIGIT, `-`, `.`, `_`, `~` (RFC 3986 §2.3).
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func upperHex(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }
}

extension String {
    /// Two characters, a `0` before a single one.
    fileprivate func leftPadded() -> String { count < 2 ? "0" + self : self }
}
