/// The common shape of the enqueue call's JSON, read and written on bytes: one flat object
/// whose values are strings (or `null`), printable ASCII only, no escapes, no repeated names.
///
/// Both directions are fast paths of the Foundation (`JSONSerialization`) code they stand in
/// for, and give the same result on that subset; anything outside it (escapes, non-ASCII,
/// numbers, nesting, a repeated name, malformed text) returns nil, and the caller takes the
/// Foundation path, so errors and edge cases read exactly as before.
enum QueueItFlatJSON {
    /// The members of a flat object of strings and `null`s (nil values), or nil when `bytes`
    /// is anything else.
    static func parseObject(_ bytes: [UInt8]) -> [String: String?]? {
        bytes.withUnsafeBufferPointer { b -> [String: String?]? in
            var i = 0
            let n = b.count
            @inline(__always) func skipSpace() {
                while i < n, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
            }
            /// A string without escapes at `i` (on its opening quote).
            func string() -> String? {
                guard i < n, b[i] == UInt8(ascii: "\"") else { return nil }
                let start = i + 1
                var j = start
                while j < n {
                    let c = b[j]
                    if c == UInt8(ascii: "\"") { break }
                    guard c >= 0x20, c < 0x7F, c != UInt8(ascii: "\\") else { return nil }
                    j += 1
                }
                guard j < n else { return nil }
                i = j + 1
                return String(decoding: UnsafeBufferPointer(rebasing: b[start..<j]), as: UTF8.self)
            }
            var members: [String: String?] = [:]
            members.reserveCapacity(8)
            skipSpace()
            guard i < n, b[i] == UInt8(ascii: "{") else { return nil }
            i += 1
            skipSpace()
            if i < n, b[i] == UInt8(ascii: "}") {
                i += 1
            } else {
                while true {
                    skipSpace()
                    guard let name = string() else { return nil }
                    skipSpace()
                    guard i < n, b[i] == UInt8(ascii: ":") else { return nil }
                    i += 1
                    skipSpace()
                    let value: String?
                    if i + 4 <= n, b[i] == UInt8(ascii: "n"), b[i + 1] == UInt8(ascii: "u"), b[i + 2] == UInt8(ascii: "l"),
                        b[i + 3] == UInt8(ascii: "l")
                    {
                        i += 4
                        value = nil
                    } else {
                        guard let text = string() else { return nil }
                        value = text
                    }
                    guard members.updateValue(value, forKey: name) == nil else { return nil }
                    skipSpace()
                    guard i < n else { return nil }
                    if b[i] == UInt8(ascii: ",") {
                        i += 1
                        continue
                    }
                    guard b[i] == UInt8(ascii: "}") else { return nil }
                    i += 1
                    break
                }
            }
            skipSpace()
            return i == n ? members : nil
        }
    }

    /// Whether `text` can be written between quotes as is (printable ASCII, no `"` or `\`).
    static func isPlain(_ text: String) -> Bool {
        for c in text.utf8 where c < 0x20 || c >= 0x7F || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { return false }
        return true
    }

    /// Appends `"name":` and the value (`null` when nil) to `out`.
    static func append(_ name: StaticString, _ value: String?, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(contentsOf: "\":".utf8)
        if let value {
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: value.utf8)
            out.append(UInt8(ascii: "\""))
        } else {
            out.append(contentsOf: "null".utf8)
        }
    }
}
