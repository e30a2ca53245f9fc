/// Bounds a gate puts on a request before any vendor logic runs, so an oversize or malformed
/// request is refused with a 4xx and never reaches the protected handler (nor costs an API call).
/// Defaults (proposal): 64 header fields, 16 KiB of headers in all, 8 KiB for the URL and for
/// any one value, 1 MiB of declared body.
public struct GateLimits: Sendable, Hashable {
    /// The most header fields (431 beyond).
    package var maxHeaderCount: Int
    /// The most bytes of all header names and values together (431 beyond).
    package var maxHeaderBytes: Int
    /// The most bytes of one header value (431 beyond).
    package var maxHeaderValueBytes: Int
    /// The most bytes of the absolute URL (414 beyond).
    package var maxURLBytes: Int
    /// The largest `Content-Length` let through; a request without one is not limited here (the
    /// server framework bounds what it reads).
    package var maxBodyBytes: Int

    public init(
        maxHeaderCount: Int = 64, maxHeaderBytes: Int = 16 * 1024, maxHeaderValueBytes: Int = 8 * 1024,
        maxURLBytes: Int = 8 * 1024, maxBodyBytes: Int = 1024 * 1024
    ) {
        self.maxHeaderCount = maxHeaderCount
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderValueBytes = maxHeaderValueBytes
        self.maxURLBytes = maxURLBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// The defaults.
    public static let standard = GateLimits()

    /// A refusal when `request` breaks a bound: 431 (headers), 414 (URL), 413 (body), 400 (a
    /// control character in a header value or the URL); nil when it is within bounds.
    package func refusal(for request: GateRequest) -> GateDecision? {
        if request.url.utf8.count > maxURLBytes {
            return .refuse(414, "the URL is \(request.url.utf8.count) bytes; at most \(maxURLBytes) are accepted")
        }
        if Self.hasControlCharacter(request.url, allowingTab: false) {
            return .refuse(400, "the URL contains a control character")
        }
        if request.headers.count > maxHeaderCount {
            return .refuse(431, "\(request.headers.count) header fields; at most \(maxHeaderCount) are accepted")
        }
        var total = 0
        for h in request.headers {
            let size = h.name.utf8.count + h.value.utf8.count + 4
            total += size
            if h.value.utf8.count > maxHeaderValueBytes {
                return .refuse(431, "header \(h.name) is \(h.value.utf8.count) bytes; at most \(maxHeaderValueBytes) are accepted")
            }
            if Self.hasControlCharacter(h.value, allowingTab: true) {
                return .refuse(400, "header \(h.name) contains a control character")
            }
        }
        if total > maxHeaderBytes {
            return .refuse(431, "the headers are \(total) bytes in all; at most \(maxHeaderBytes) are accepted")
        }
        if let length = request.bodyLength, length > maxBodyBytes {
            return .refuse(413, "the body is \(length) bytes; at most \(maxBodyBytes) are accepted")
        }
        var lengths = 0
        for h in request.headers where h.name.utf8.count == 14 && h.name.equalsIgnoringASCIICase("Content-Length") {
            lengths += 1
            if lengths > 1 { return .refuse(400, "more than one Content-Length header") }
        }
        return nil
    }

    /// Whether `text` holds a control character (DEL included; a tab only when not `allowingTab`),
    /// read on its UTF-8 in place.
    static func hasControlCharacter(_ text: String, allowingTab: Bool) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            bytes.contains { ($0 < 0x20 && !(allowingTab && $0 == 0x09)) || $0 == 0x7f }
        }
    }
}
