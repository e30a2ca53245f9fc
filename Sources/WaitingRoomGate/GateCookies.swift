#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading a `Cookie` header (RFC 6265 §4.2: `name=value` pairs separated by `;` and optional
/// spaces), the same way for every engine: the first pair whose name is exactly `name` wins, its
/// value is kept as sent (no unquoting, no percent-decoding) without trailing spaces or tabs.
package enum GateCookies {
    /// The value of cookie `name` in one `Cookie` header value, or nil. Read on the UTF-8 bytes
    /// (`;`, `=`, space and tab are ASCII, so every piece is whole characters).
    package static func value(named name: String, inHeaderValue headerValue: String) -> String? {
        guard !name.utf8.contains(UInt8(ascii: "=")) else { return nil }
        var header = headerValue
        var wanted = name
        return header.withUTF8 { h in
            wanted.withUTF8 { n -> String? in
                var i = 0
                while i < h.count {
                    while i < h.count, h[i] == UInt8(ascii: " ") || h[i] == UInt8(ascii: "\t") { i += 1 }
                    let start = i
                    while i < h.count, h[i] != UInt8(ascii: ";") { i += 1 }
                    let end = i
                    i += 1
                    // `name=` opens the pair (a name has no `=`, so this is the pair's first one)
                    guard end - start > n.count, h[start + n.count] == UInt8(ascii: "=") else { continue }
                    if let base = h.baseAddress, let wantedBase = n.baseAddress, memcmp(base + start, wantedBase, n.count) != 0 { continue }
                    let valueStart = start + n.count + 1
                    var valueEnd = end
                    while valueEnd > valueStart, h[valueEnd - 1] == UInt8(ascii: " ") || h[valueEnd - 1] == UInt8(ascii: "\t") {
                        valueEnd -= 1
                    }
                    return String(decoding: UnsafeBufferPointer(rebasing: h[valueStart..<valueEnd]), as: UTF8.self)
                }
                return nil
            }
        }
    }
}
