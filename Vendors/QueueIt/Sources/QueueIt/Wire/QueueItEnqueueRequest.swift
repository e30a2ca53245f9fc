import Foundation

/// A configuration problem found before anything is sent; names the offending field.
package struct QueueItConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration field (JSON key) at fault.
    package let field: String
    /// What is wrong and what is expected.
    package let message: String

    package init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    package var description: String { "queueit configuration: '\(field)': \(message)" }
}

/// Where the enqueue call goes (docs/queueit-protocol.md §1.1).
///
/// - Without `waitingRoomDomain`: `https://{customerId}.queue-it.net/api/mobileapp/queue/{c}/{e}/enqueue`.
/// - With it: `{scheme}://{waitingRoomDomain}/{prefix}/api/mobileapp/queue/{c}/{e}/enqueue`; the
///   prefix is dropped without a domain. The prefix is sanitised the iOS way (leading and trailing
///   `/` and whitespace stripped; empty ⇒ none).
/// - `waitingRoomDomain` is `host`, `host:port` or `scheme://host[:port]` (a trailing `/` is
///   ignored; a path, query or user info is refused). The scheme defaults to `https`, except for a
///   loopback host (`127.0.0.0/8`, `::1`, `localhost`), where it defaults to `http`. Plain `http`
///   is refused for any other host.
package struct QueueItEndpoint: Sendable, Hashable {
    /// Customer id (DNS label: letters, digits, `-`).
    package let customerId: String
    /// Waiting room (event) id or alias.
    package let waitingRoomId: String
    /// `http` or `https`.
    package let scheme: String
    /// Host (and `:port`) the call goes to.
    package let authority: String
    /// Sanitised path prefix, or nil.
    package let pathPrefix: String?

    package init(customerId: String, waitingRoomId: String, waitingRoomDomain: String? = nil, pathPrefix: String? = nil)
        throws(QueueItConfigurationError)
    {
        let c = customerId.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !c.isEmpty else { throw QueueItConfigurationError(field: "customerId", message: "must not be empty") }
        guard c.utf8.count <= 63, c.utf8.allSatisfy({ Self.isLabelByte($0) }) else {
            throw QueueItConfigurationError(
                field: "customerId", message: "'\(c)' must be letters, digits and '-' (it is used as a host name label)")
        }
        let e = waitingRoomId.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !e.isEmpty else { throw QueueItConfigurationError(field: "waitingRoomId", message: "must not be empty") }
        guard e.utf8.count <= 256, !e.contains("/"), !e.contains("?"), !e.contains("#") else {
            throw QueueItConfigurationError(field: "waitingRoomId", message: "'\(e)' must not contain '/', '?' or '#'")
        }
        self.customerId = c
        self.waitingRoomId = e
        let domain = waitingRoomDomain?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if domain.isEmpty {
            scheme = "https"
            authority = "\(c.lowercased()).queue-it.net"
            self.pathPrefix = nil
        } else {
            let (s, a) = try Self.parseDomain(domain)
            scheme = s
            authority = a
            self.pathPrefix = Self.sanitizePathPrefix(pathPrefix)
        }
    }

    /// iOS `sanitizeQueuePathPrefix`: strips leading and trailing `/` and whitespace; empty ⇒ nil.
    package static func sanitizePathPrefix(_ prefix: String?) -> String? {
        guard let prefix else { return nil }
        let strip = CharacterSet(charactersIn: "/").union(.whitespacesAndNewlines)
        let s = prefix.trimmingCharacters(in: strip)
        return s.isEmpty ? nil : s
    }

    /// The base URL (`scheme://authority[/prefix]`), without a trailing slash.
    package var baseURLString: String {
        var s = "\(scheme)://\(authority)"
        if let p = pathPrefix {
            s += "/" + p.split(separator: "/").map { QueueItPercent.encodePathSegment(String($0)) }.joined(separator: "/")
        }
        return s
    }

    /// The enqueue URL.
    package var enqueueURL: URL {
        let s =
            baseURLString + "/api/mobileapp/queue/"
            + QueueItPercent.encodePathSegment(customerId) + "/"
            + QueueItPercent.encodePathSegment(waitingRoomId) + "/enqueue"
        // Every piece is validated or percent-encoded above, so this cannot fail; fall back to the
        // vendor host only to avoid a force unwrap.
        return URL(string: s) ?? URL(fileURLWithPath: "/")
    }

    static func isLabelByte(_ b: UInt8) -> Bool {
        (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 45
    }

    /// Whether `host` (without port or brackets) is a loopback name or address.
    package static func isLoopback(host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { p in !p.isEmpty && p.count <= 3 && p.allSatisfy(\.isNumber) && (Int(p) ?? 999) <= 255 }
    }

    static func parseDomain(_ domain: String) throws(QueueItConfigurationError) -> (String, String) {
        var rest = Substring(domain)
        var scheme: String?
        if let r = rest.range(of: "://") {
            scheme = rest[..<r.lowerBound].lowercased()
            rest = rest[r.upperBound...]
        }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        let authority = String(rest)
        guard !authority.isEmpty else {
            throw QueueItConfigurationError(field: "waitingRoomDomain", message: "'\(domain)' has no host")
        }
        if authority.contains("/") || authority.contains("?") || authority.contains("#") || authority.contains("@")
            || authority.contains(where: { $0.isWhitespace })
        {
            throw QueueItConfigurationError(
                field: "waitingRoomDomain",
                message: "'\(domain)' must be a host, host:port or scheme://host[:port] without a path (put the path in pathPrefix)")
        }
        guard let comps = URLComponents(string: "http://" + authority), let host = comps.host, !host.isEmpty else {
            throw QueueItConfigurationError(field: "waitingRoomDomain", message: "'\(domain)' is not a valid host[:port]")
        }
        let loopback = isLoopback(host: host)
        switch scheme {
        case nil: return (loopback ? "http" : "https", authority)
        case "https": return ("https", authority)
        case "http":
            guard loopback else {
                throw QueueItConfigurationError(
                    field: "waitingRoomDomain",
                    message: "plain http is only allowed for a loopback host (127.0.0.1, ::1, localhost); use https for '\(host)'")
            }
            return ("http", authority)
        default:
            throw QueueItConfigurationError(field: "waitingRoomDomain", message: "scheme '\(scheme ?? "")' is not supported; use https")
        }
    }
}

/// The JSON body of the enqueue call (docs/queueit-protocol.md §1.3). Keys: `userId`, `userAgent`, `sdkVersion`,
/// and, when given, `layoutName`, `language` (sent only when non-empty, the Android rule) and
/// exactly one of `enqueueToken` / `enqueueKey`.
@usableFromInline package struct QueueItEnqueueBody: Sendable, Hashable, Codable {
    package var userId: String
    package var userAgent: String
    package var sdkVersion: String
    package var layoutName: String?
    package var language: String?
    package var enqueueToken: String?
    package var enqueueKey: String?

    /// The SDK version we report (`sdkVersion`).
    @usableFromInline package static let defaultSDKVersion = "Swift-WaitingRoom-1.0.0"

    package init(
        userId: String, userAgent: String, sdkVersion: String = QueueItEnqueueBody.defaultSDKVersion,
        layoutName: String? = nil, language: String? = nil,
        enqueueToken: String? = nil, enqueueKey: String? = nil
    ) {
        self.userId = userId
        self.userAgent = userAgent
        self.sdkVersion = sdkVersion
        self.layoutName = layoutName.flatMap { $0.isEmpty ? nil : $0 }
        self.language = language.flatMap { $0.isEmpty ? nil : $0 }
        // Token and key are exclusive: the token wins if both are somehow given.
        self.enqueueToken = enqueueToken
        self.enqueueKey = enqueueToken == nil ? enqueueKey : nil
    }

    /// The JSON bytes (sorted keys, no escaped slashes; absent optionals are omitted).
    package func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { Array($0) } ?? Array("{}".utf8)
    }

    /// Decodes a body (used by the emulator); throws a message naming the problem.
    package static func decode(_ bytes: [UInt8]) throws(QueueItConfigurationError) -> QueueItEnqueueBody {
        guard bytes.count <= QueueItEnqueueResponse.maxBodyBytes else {
            throw QueueItConfigurationError(field: "body", message: "body of \(bytes.count) bytes is too large")
        }
        if let members = QueueItFlatJSON.parseObject(bytes) { return try decode(members: members) }
        let value: Any
        do { value = try JSONSerialization.jsonObject(with: Data(bytes), options: []) } catch {
            throw QueueItConfigurationError(field: "body", message: "body is not JSON")
        }
        guard let obj = value as? [String: Any] else {
            throw QueueItConfigurationError(field: "body", message: "body is not a JSON object")
        }
        func str(_ k: String, required: Bool) throws(QueueItConfigurationError) -> String? {
            guard let v = obj[k], !(v is NSNull) else {
                if required { throw QueueItConfigurationError(field: k, message: "is required") }
                return nil
            }
            guard let s = v as? String else { throw QueueItConfigurationError(field: k, message: "must be a string") }
            return s
        }
        let token = try str("enqueueToken", required: false)
        let key = try str("enqueueKey", required: false)
        if token != nil && key != nil {
            throw QueueItConfigurationError(field: "enqueueKey", message: "enqueueToken and enqueueKey are exclusive")
        }
        var body = QueueItEnqueueBody(
            userId: try str("userId", required: true) ?? "",
            userAgent: try str("userAgent", required: true) ?? "",
            sdkVersion: try str("sdkVersion", required: true) ?? "",
            layoutName: try str("layoutName", required: false),
            language: try str("language", required: false))
        body.enqueueToken = token
        body.enqueueKey = key
        return body
    }

    /// ``decode(_:)`` of a flat object of strings and `null`s (nil), read without Foundation:
    /// the same checks in the same order.
    static func decode(members: [String: String?]) throws(QueueItConfigurationError) -> QueueItEnqueueBody {
        func str(_ k: String, required: Bool) throws(QueueItConfigurationError) -> String? {
            guard let v = members[k], let s = v else {
                if required { throw QueueItConfigurationError(field: k, message: "is required") }
                return nil
            }
            return s
        }
        let token = try str("enqueueToken", required: false)
        let key = try str("enqueueKey", required: false)
        if token != nil && key != nil {
            throw QueueItConfigurationError(field: "enqueueKey", message: "enqueueToken and enqueueKey are exclusive")
        }
        var body = QueueItEnqueueBody(
            userId: try str("userId", required: true) ?? "",
            userAgent: try str("userAgent", required: true) ?? "",
            sdkVersion: try str("sdkVersion", required: true) ?? "",
            layoutName: try str("layoutName", required: false),
            language: try str("language", required: false))
        body.enqueueToken = token
        body.enqueueKey = key
        return body
    }
}

/// Percent-encoding helpers (RFC 3986 unreserved set kept as is).
package enum QueueItPercent {
    static let unreserved: Set<UInt8> = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))
    /// `encodeURIComponent` plus `!'()*` (KU-JS connector encoding of the redirect header).
    static let componentSafe: Set<UInt8> = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~".utf8))

    /// Percent-encodes everything but RFC 3986 unreserved characters.
    package static func encodePathSegment(_ s: String) -> String { encode(s, keep: unreserved) }

    /// Encodes like JavaScript's `encodeURIComponent`, with `!'()*` encoded too (KU-JS).
    package static func encodeComponent(_ s: String) -> String { encode(s, keep: componentSafe) }

    static func encode(_ s: String, keep: Set<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for b in s.utf8 {
            if keep.contains(b) {
                out.append(b)
            } else {
                out.append(37)
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 15)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `%XX` escapes (and `+` as space when `plusAsSpace`); invalid escapes are kept as is.
    package static func decode(_ s: String, plusAsSpace: Bool = false) -> String {
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        func hv(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 65...70: return c - 55
            case 97...102: return c - 87
            default: return nil
            }
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == 37, i + 2 < bytes.count, let h = hv(bytes[i + 1]), let l = hv(bytes[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else if b == 43 && plusAsSpace {
                out.append(32)
                i += 1
            } else {
                out.append(b)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses a query string into ordered (name, value) pairs, decoding both (`+` = space).
    package static func queryItems(_ query: Substring) -> [(name: String, value: String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let eq = pair.firstIndex(of: "=") {
                return (decode(String(pair[..<eq]), plusAsSpace: true), decode(String(pair[pair.index(after: eq)...]), plusAsSpace: true))
            }
            return (decode(String(pair), plusAsSpace: true), "")
        }
    }
}
