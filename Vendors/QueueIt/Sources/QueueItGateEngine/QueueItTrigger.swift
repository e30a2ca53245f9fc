import Foundation
import WaitingRoomGate

/// A trigger: its parts joined by `And` (every part) or `Or` (any part) (KU-JS `TriggerModel`,
/// `IntegrationEvaluator.evaluateTrigger`; anything but `Or` is `And`).
package struct QueueItTrigger: Sendable, Hashable, Decodable {
    /// `LogicalOperator`.
    package var logicalOperator: String
    /// `TriggerParts`.
    package var parts: [QueueItTriggerPart]

    package init(logicalOperator: String = "And", parts: [QueueItTriggerPart]) {
        self.logicalOperator = logicalOperator
        self.parts = parts
    }

    enum CodingKeys: String, CodingKey {
        case logicalOperator = "LogicalOperator"
        case parts = "TriggerParts"
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        logicalOperator = try c.decodeIfPresent(String.self, forKey: .logicalOperator) ?? "And"
        parts = try c.decodeIfPresent([QueueItTriggerPart].self, forKey: .parts) ?? []
    }

    /// Whether the trigger fires for `request` whose URL without `queueittoken` is `url`.
    package func matches(_ request: GateRequest, url: String) -> Bool {
        if logicalOperator == "Or" { return parts.contains { $0.matches(request, url: url) } }
        return parts.allSatisfy { $0.matches(request, url: url) }
    }
}

/// One condition of a trigger (KU-JS `TriggerPart` and the validator helpers): a value taken from
/// the request (`UrlValidator` with `UrlPart` `PageUrl`/`PagePath`/`HostName`, `CookieValidator`,
/// `UserAgentValidator`, `HttpHeaderValidator`, `RequestBodyValidator`) compared with `Operator`
/// `Equals`, `Contains`, `EqualsAny` or `ContainsAny`, optionally negated and case-insensitive.
/// An unknown validator or operator never matches (KU-JS). `RequestBodyValidator` compares the
/// first bytes of the body the adapter read (``GateRequest/body``, at most
/// ``QueueItGate/Options/maxBodyBytesRead``, read as UTF-8), or "" when there is none.
package struct QueueItTriggerPart: Sendable, Hashable, Decodable {
    /// `ValidatorType`: `UrlValidator`, `CookieValidator`, `UserAgentValidator`, `HttpHeaderValidator`, `RequestBodyValidator`.
    package var validatorType: String
    /// `Operator`: `Equals`, `Contains`, `EqualsAny`, `ContainsAny`.
    package var comparison: String
    /// `ValueToCompare` (`Equals`, `Contains`; `*` matches any non-empty value with `Contains`).
    package var valueToCompare: String
    /// `ValuesToCompare` (`EqualsAny`, `ContainsAny`).
    package var valuesToCompare: [String]
    /// `IsNegative`: the result is inverted.
    package var isNegative: Bool
    /// `IsIgnoreCase`: compared case-insensitively.
    package var isIgnoreCase: Bool
    /// `UrlPart` of a `UrlValidator`: `PageUrl`, `PagePath` or `HostName`.
    package var urlPart: String?
    /// `CookieName` of a `CookieValidator`.
    package var cookieName: String?
    /// `HttpHeaderName` of an `HttpHeaderValidator`.
    package var httpHeaderName: String?

    package init(
        validatorType: String = "UrlValidator", comparison: String, valueToCompare: String = "", valuesToCompare: [String] = [],
        isNegative: Bool = false, isIgnoreCase: Bool = false, urlPart: String? = nil, cookieName: String? = nil,
        httpHeaderName: String? = nil
    ) {
        self.validatorType = validatorType
        self.comparison = comparison
        self.valueToCompare = valueToCompare
        self.valuesToCompare = valuesToCompare
        self.isNegative = isNegative
        self.isIgnoreCase = isIgnoreCase
        self.urlPart = urlPart
        self.cookieName = cookieName
        self.httpHeaderName = httpHeaderName
    }

    enum CodingKeys: String, CodingKey {
        case validatorType = "ValidatorType"
        case comparison = "Operator"
        case valueToCompare = "ValueToCompare"
        case valuesToCompare = "ValuesToCompare"
        case isNegative = "IsNegative"
        case isIgnoreCase = "IsIgnoreCase"
        case urlPart = "UrlPart"
        case cookieName = "CookieName"
        case httpHeaderName = "HttpHeaderName"
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        validatorType = try c.decodeIfPresent(String.self, forKey: .validatorType) ?? ""
        comparison = try c.decodeIfPresent(String.self, forKey: .comparison) ?? ""
        valueToCompare = try c.decodeIfPresent(String.self, forKey: .valueToCompare) ?? ""
        valuesToCompare = (try c.decodeIfPresent([String?].self, forKey: .valuesToCompare) ?? []).compactMap { $0 }
        isNegative = try c.decodeIfPresent(Bool.self, forKey: .isNegative) ?? false
        isIgnoreCase = try c.decodeIfPresent(Bool.self, forKey: .isIgnoreCase) ?? false
        urlPart = try c.decodeIfPresent(String.self, forKey: .urlPart)
        cookieName = try c.decodeIfPresent(String.self, forKey: .cookieName)
        httpHeaderName = try c.decodeIfPresent(String.self, forKey: .httpHeaderName)
    }

    /// Whether this part holds for `request` (URL `url`, without `queueittoken`). A part of the
    /// URL is compared as a slice of it, not a copy.
    package func matches(_ request: GateRequest, url: String) -> Bool {
        let value: Substring
        switch validatorType {
        case "UrlValidator":
            switch urlPart {
            case "PageUrl": value = Substring(url)
            case "PagePath": value = Self.path(of: url)
            case "HostName": value = Self.host(of: url)
            default: value = ""
            }
        case "CookieValidator": value = Substring(cookieName.flatMap { request.cookie($0) } ?? "")
        case "UserAgentValidator": value = Substring(request.header("User-Agent") ?? "")
        case "HttpHeaderValidator": value = Substring(httpHeaderName.flatMap { request.header($0) } ?? "")
        case "RequestBodyValidator": value = Substring(request.body.map { String(decoding: $0, as: UTF8.self) } ?? "")
        default: return false
        }
        return compare(value)
    }

    func compare(_ value: Substring) -> Bool {
        switch comparison {
        case "Equals": return Self.equals(value, Substring(valueToCompare), ignoreCase: isIgnoreCase) != isNegative
        case "Contains":
            // `*` holds for any non-empty value before `IsNegative` is looked at (every connector's
            // `ComparisonOperatorHelper.contains` returns early): "does not contain *" matches too
            if valueToCompare == "*", !value.isEmpty { return true }
            return Self.contains(value, Substring(valueToCompare), ignoreCase: isIgnoreCase) != isNegative
        case "EqualsAny": return valuesToCompare.contains { Self.equals(value, Substring($0), ignoreCase: isIgnoreCase) } != isNegative
        case "ContainsAny": return valuesToCompare.contains { Self.contains(value, Substring($0), ignoreCase: isIgnoreCase) } != isNegative
        default: return false
        }
    }

    static func equals(_ a: Substring, _ b: Substring, ignoreCase: Bool) -> Bool {
        guard ignoreCase else { return a.utf8.elementsEqual(b.utf8) }
        // KU-JS upper-cases both; for ASCII that is an ASCII case-insensitive comparison
        guard isASCII(a), isASCII(b) else { return a.uppercased() == b.uppercased() }
        return a.utf8.count == b.utf8.count && find(b, in: a, ignoringASCIICase: true) == 0
    }

    /// `*` matches any non-empty value (KU-JS `contains`).
    static func contains(_ a: Substring, _ b: Substring, ignoreCase: Bool) -> Bool {
        if b == "*" && !a.isEmpty { return true }
        if b.isEmpty { return true }
        guard ignoreCase else { return find(b, in: a) != nil }
        return isASCII(a) && isASCII(b)
            ? find(b, in: a, ignoringASCIICase: true) != nil
            : find(Substring(b.uppercased()), in: Substring(a.uppercased())) != nil
    }

    static func isASCII(_ text: Substring) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.allSatisfy { $0 < 0x80 } }
    }

    /// Where `needle` first occurs in `haystack`, as a UTF-8 offset: a literal search of the code
    /// units, as KU-JS's `indexOf` (no Unicode normalization), or of ASCII letters in either case;
    /// nil when it does not.
    static func find(_ needle: Substring, in haystack: Substring, ignoringASCIICase: Bool = false) -> Int? {
        var needle = needle
        var haystack = haystack
        return needle.withUTF8 { n -> Int? in
            haystack.withUTF8 { h -> Int? in
                guard !n.isEmpty else { return 0 }
                guard h.count >= n.count else { return nil }
                @inline(__always) func fold(_ byte: UInt8) -> UInt8 {
                    ignoringASCIICase && byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 0x20 : byte
                }
                let first = fold(n[0])
                for i in 0...(h.count - n.count) where fold(h[i]) == first {
                    var j = 1
                    while j < n.count, fold(h[i + j]) == fold(n[j]) { j += 1 }
                    if j == n.count { return i }
                }
                return nil
            }
        }
    }

    /// The authority of an absolute URL (`host[:port]`), or "".
    static func host(of url: String) -> Substring {
        let (start, end) = authorityBounds(of: url)
        return slice(of: url, start, end)
    }

    /// The path of a URL (before `?` and `#`), or "".
    static func path(of url: String) -> Substring {
        var text = url
        // on the UTF-8 bytes in place: the delimiters are ASCII, so every piece is whole characters
        let (start, end) = text.withUTF8 { bytes -> (Int, Int) in
            // from the authority's end (0 without `://`)
            let start = authorityBounds(bytes).1
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
            return (start, end)
        }
        return slice(of: url, start, end)
    }

    /// Where the authority of `url` starts (after the first `://`) and ends (at `/`, `?`, `#` or
    /// the end); (0, 0) without `://`.
    static func authorityBounds(of url: String) -> (Int, Int) {
        var text = url
        return text.withUTF8(authorityBounds)
    }

    private static func authorityBounds(_ bytes: UnsafeBufferPointer<UInt8>) -> (Int, Int) {
        guard let start = schemeEnd(bytes) else { return (0, 0) }
        var end = start
        while end < bytes.count, !isAuthorityEnd(bytes[end]) { end += 1 }
        return (start, end)
    }

    /// The offset just after the first `://`, or nil.
    private static func schemeEnd(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.count >= 3 else { return nil }
        for i in 0...(bytes.count - 3)
        where bytes[i] == UInt8(ascii: ":") && bytes[i + 1] == UInt8(ascii: "/") && bytes[i + 2] == UInt8(ascii: "/") {
            return i + 3
        }
        return nil
    }

    private static func isAuthorityEnd(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    /// The UTF-8 offsets `start..<end` of `text` as a slice (they fall on ASCII delimiters).
    private static func slice(of text: String, _ start: Int, _ end: Int) -> Substring {
        let utf8 = text.utf8
        let from = utf8.index(utf8.startIndex, offsetBy: start)
        return text[from..<utf8.index(from, offsetBy: end - start)]
    }
}
