import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A parsed expression of a Waiting Room bypass rule: the subset of Cloudflare's Rules language
/// the emulator understands (see `Vendors/Cloudflare/README.md`, "Bypass rules"), evaluated
/// against one request. Built by ``CloudflareRuleExpressionParser``; never from unchecked text.
indirect enum CloudflareRuleExpression: Sendable, Hashable {
    /// A string field of the request.
    enum StringField: String, Sendable, Hashable, CaseIterable {
        case path = "http.request.uri.path"
        case query = "http.request.uri.query"
        case uri = "http.request.uri"
        case host = "http.host"
        case method = "http.request.method"
        case cookie = "http.cookie"
        case userAgent = "http.user_agent"
        case referer = "http.referer"
    }

    /// A map field whose values are arrays of strings, read with `["key"][*]` inside `any(…)`.
    enum MapField: String, Sendable, Hashable, CaseIterable {
        case headers = "http.request.headers"
        case cookies = "http.request.cookies"
    }

    /// A comparison of strings.
    enum StringOperator: String, Sendable, Hashable {
        case eq, ne, contains
    }

    /// One member of an `ip.src in {…}` set: an address or a CIDR range.
    struct IPRange: Sendable, Hashable {
        /// 4 bytes (IPv4) or 16 (IPv6), network order.
        var bytes: [UInt8]
        var prefix: Int

        /// Reads `"192.0.2.1"`, `"10.0.0.0/8"`, `"2001:db8::/32"`; nil when it is neither.
        init?(_ text: String) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = Self.address(String(parts[0])) else { return nil }
            bytes = address
            if parts.count == 2 {
                guard let p = Int(parts[1]), (0...(address.count * 8)).contains(p) else { return nil }
                prefix = p
            } else {
                prefix = address.count * 8
            }
        }

        /// Whether `address` (its bytes) is in the range.
        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var left = prefix
            for i in 0..<bytes.count where left > 0 {
                let bits = min(8, left)
                let mask: UInt8 = bits == 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                if address[i] & mask != bytes[i] & mask { return false }
                left -= bits
            }
            return true
        }

        /// The bytes of an IPv4 or IPv6 address; nil when `text` is neither.
        static func address(_ text: String) -> [UInt8]? {
            var v4 = in_addr()
            if inet_pton(AF_INET, text, &v4) == 1 {
                return withUnsafeBytes(of: &v4) { Array($0) }
            }
            var v6 = in6_addr()
            if inet_pton(AF_INET6, text, &v6) == 1 {
                return withUnsafeBytes(of: &v6) { Array($0) }
            }
            return nil
        }
    }

    case and(CloudflareRuleExpression, CloudflareRuleExpression)
    case or(CloudflareRuleExpression, CloudflareRuleExpression)
    case not(CloudflareRuleExpression)
    /// `field eq|ne|contains "value"`.
    case compare(StringField, StringOperator, String)
    /// `field in {"a" "b"}`.
    case stringIn(StringField, Set<String>)
    /// `starts_with(field, "x")` (`ends_with` when `suffix`).
    case affix(StringField, String, suffix: Bool)
    /// `any(map["key"][*] eq|ne|contains "value")`.
    case any(MapField, key: String, StringOperator, String)
    /// `ip.src eq|ne "addr"` (as a one-address range; `ne` is `not`).
    case ipIn([IPRange])

    /// Whether `request` matches.
    func matches(_ request: CloudflareEmulatorRequest) -> Bool {
        switch self {
        case .and(let a, let b): return a.matches(request) && b.matches(request)
        case .or(let a, let b): return a.matches(request) || b.matches(request)
        case .not(let a): return !a.matches(request)
        case .compare(let field, let op, let value): return Self.apply(op, Self.value(field, request), value)
        case .stringIn(let field, let values): return values.contains(Self.value(field, request))
        case .affix(let field, let affix, let suffix):
            let v = Self.value(field, request)
            return suffix ? v.hasSuffix(affix) : v.hasPrefix(affix)
        case .any(let map, let key, let op, let value):
            return Self.values(map, key: key, request).contains { Self.apply(op, $0, value) }
        case .ipIn(let ranges):
            guard let ip = request.clientIP, let address = IPRange.address(ip) else { return false }
            return ranges.contains { $0.contains(address) }
        }
    }

    static func apply(_ op: StringOperator, _ left: String, _ right: String) -> Bool {
        switch op {
        case .eq: return left == right
        case .ne: return left != right
        case .contains: return left.contains(right)
        }
    }

    /// A string field's value ("" when the request has none).
    static func value(_ field: StringField, _ r: CloudflareEmulatorRequest) -> String {
        switch field {
        case .path: return r.path
        case .query: return r.rawQuery
        case .uri: return r.rawQuery.isEmpty ? r.path : r.path + "?" + r.rawQuery
        case .host: return r.host ?? ""
        case .method: return r.method
        case .cookie: return r.cookieHeader ?? ""
        case .userAgent: return r.header("user-agent") ?? ""
        case .referer: return r.header("referer") ?? ""
        }
    }

    /// A map field's values under `key`: header values (names are lowercase, as Cloudflare
    /// documents for `http.request.headers`), or the values of the cookies named `key`.
    static func values(_ map: MapField, key: String, _ r: CloudflareEmulatorRequest) -> [String] {
        switch map {
        case .headers:
            return r.headerValues(key)
        case .cookies:
            var out: [String] = []
            for part in (r.cookieHeader ?? "").split(separator: ";") {
                let kv = part.split(separator: "=", maxSplits: 1)
                guard kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces) == key else { continue }
                out.append(kv[1].trimmingCharacters(in: .whitespaces))
            }
            return out
        }
    }
}
