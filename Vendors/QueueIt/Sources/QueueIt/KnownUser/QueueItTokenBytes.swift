/// The `queueittoken` grammar on UTF-8 bytes (docs/queueit-protocol.md §7.3): pieces split on `~` (empty pieces
/// kept and skipped), each piece split on its `_`; a piece without `_`, or with a second `_`, is
/// skipped. Works on the token's bytes in place: no `String`, no array per field. This is the
/// validator's hot path; ``QueueItToken`` reads its fields through it as well.
enum QueueItTokenBytes {
    typealias Bytes = UnsafeBufferPointer<UInt8>

    /// Calls `body(key, value)` for every well-formed piece, in order (repeats included).
    static func forEachField(_ b: Bytes, _ body: (Range<Int>, Range<Int>) -> Void) {
        let n = b.count
        var start = 0
        while start <= n {
            var end = start
            while end < n, b[end] != UInt8(ascii: "~") { end += 1 }
            var underscore = start
            while underscore < end, b[underscore] != UInt8(ascii: "_") { underscore += 1 }
            if underscore < end {
                var second = underscore + 1
                while second < end, b[second] != UInt8(ascii: "_") { second += 1 }
                if second == end { body(start..<underscore, underscore + 1..<end) }
            }
            start = end + 1
        }
    }

    /// Whether the bytes in `range` are exactly `key`.
    @inline(__always)
    static func equals(_ b: Bytes, _ range: Range<Int>, _ key: StaticString) -> Bool {
        guard range.count == key.utf8CodeUnitCount else { return false }
        let k = key.utf8Start
        var i = 0
        for j in range {
            if b[j] != k[i] { return false }
            i += 1
        }
        return true
    }

    /// Whether the bytes in `range` are the same text as `other` under Swift's `String ==`
    /// (canonical equivalence): bytes first; `String`s only when a side has non-ASCII bytes.
    static func sameText(_ b: Bytes, _ range: Range<Int>, _ other: Bytes) -> Bool {
        var ascii = true
        if range.count == other.count {
            var equal = true
            var i = 0
            for j in range {
                if b[j] != other[i] { equal = false }
                if b[j] >= 0x80 { ascii = false }
                i += 1
            }
            if equal { return true }
        } else {
            for j in range where b[j] >= 0x80 {
                ascii = false
                break
            }
        }
        if ascii, !other.contains(where: { $0 >= 0x80 }) { return false }
        return String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self) == String(decoding: other, as: UTF8.self)
    }

    /// The range of the last value of `key`, or nil.
    static func lastValue(_ b: Bytes, _ key: StaticString) -> Range<Int>? {
        var found: Range<Int>?
        forEachField(b) { k, v in if equals(b, k, key) { found = v } }
        return found
    }

    /// The fields the validator reads, last occurrence of each, found in one pass.
    struct Checked {
        var event: Range<Int>?
        var expiry: Range<Int>?
        var hashedIP: Range<Int>?
        var hash: Range<Int>?

        init(_ b: Bytes) {
            var event: Range<Int>?
            var expiry: Range<Int>?
            var hashedIP: Range<Int>?
            var hash: Range<Int>?
            forEachField(b) { k, v in
                switch k.count {
                case 1:
                    if b[k.lowerBound] == UInt8(ascii: "e") { event = v } else if b[k.lowerBound] == UInt8(ascii: "h") { hash = v }
                case 2:
                    if equals(b, k, "ts") { expiry = v }
                case 3:
                    if equals(b, k, "hip") { hashedIP = v }
                default:
                    break
                }
            }
            self.event = event
            self.expiry = expiry
            self.hashedIP = hashedIP
            self.hash = hash
        }
    }

    /// Where the first literal `~h_{hash}` starts (`hash`: a range of `b`), or nil: the text the
    /// hash covers is the token without it (KU-JS `String.replace` semantics).
    static func hashMarker(_ b: Bytes, hash: Range<Int>) -> Int? {
        let length = 3 + hash.count
        guard b.count >= length else { return nil }
        var i = 0
        let last = b.count - length
        while i <= last {
            if b[i] == UInt8(ascii: "~"), b[i + 1] == UInt8(ascii: "h"), b[i + 2] == UInt8(ascii: "_") {
                var j = 0
                while j < hash.count, b[i + 3 + j] == b[hash.lowerBound + j] { j += 1 }
                if j == hash.count { return i }
            }
            i += 1
        }
        return nil
    }

    /// `ts` as `QueueItToken.parseEpoch` reads it: 1–18 ASCII digits, else nil.
    static func epoch(_ b: Bytes, _ range: Range<Int>) -> Int64? {
        guard !range.isEmpty, range.count <= 18 else { return nil }
        var value: Int64 = 0
        for i in range {
            let c = b[i]
            guard c >= 48, c <= 57 else { return nil }
            value = value * 10 + Int64(c - 48)
        }
        return value
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    /// Whether `digest`'s lower-case hex equals the bytes of `text` in `range`, in time that
    /// depends only on the lengths (as `QueueItHash.constantTimeEquals`).
    static func hexEquals<D: Sequence>(_ digest: D, _ b: Bytes, _ range: Range<Int>) -> Bool where D.Element == UInt8 {
        var diff: UInt8 = 0
        var i = range.lowerBound
        var length = 0
        let hex = hexDigits.utf8Start
        for byte in digest {
            length += 2
            guard length <= range.count else { continue }
            diff |= hex[Int(byte >> 4)] ^ b[i]
            diff |= hex[Int(byte & 0x0F)] ^ b[i + 1]
            i += 2
        }
        return length == range.count && diff == 0
    }
}
