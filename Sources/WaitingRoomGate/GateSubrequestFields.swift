/// The fields of an auth subrequest that ``GateAuthEndpoint`` reads, found in one pass over its
/// header fields: the proxies' descriptions of the original request, the visitor's address, and
/// every other field as the visitor's own. The first occurrence of each proxy field counts;
/// `X-Forwarded-For` keeps every occurrence in order.
///
/// A field name is matched by its length first, then compared ignoring ASCII case with the names
/// of that length: a subrequest's dozen fields cost a dozen switches, not a dozen scans of a list.
struct GateSubrequestFields {
    var originalMethod: String?
    var forwardedMethod: String?
    var forwardedProto: String?
    var forwardedHost: String?
    var host: String?
    var originalURL: String?
    var originalURI: String?
    var forwardedURI: String?
    var forwardedFor: [String] = []
    var realIP: String?
    /// The visitor's fields: all but the proxies' own, `Host`, `X-Forwarded-For`, `X-Real-IP`
    /// and the body's framing (`Content-Length`, `Transfer-Encoding`).
    var visitor: [GateHeader] = []

    /// The proxies' own fields (any case), besides the ones read above.
    static let proxyFields = [
        "x-original-method", "x-original-uri", "x-original-url", "x-forwarded-method", "x-forwarded-uri",
        "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port", "x-forwarded-server", "forwarded",
        "x-auth-request-redirect", "x-sent-from"
    ]

    enum Kind {
        case originalMethod, forwardedMethod, forwardedProto, forwardedHost, host, originalURL, originalURI, forwardedURI
        case forwardedFor, realIP
        /// Another proxy field, or framing: dropped.
        case dropped
        case visitor
    }

    init(_ headers: [GateHeader]) {
        visitor.reserveCapacity(headers.count)
        for header in headers {
            switch Self.kind(of: header.name) {
            case .originalMethod: if originalMethod == nil { originalMethod = header.value }
            case .forwardedMethod: if forwardedMethod == nil { forwardedMethod = header.value }
            case .forwardedProto: if forwardedProto == nil { forwardedProto = header.value }
            case .forwardedHost: if forwardedHost == nil { forwardedHost = header.value }
            case .host: if host == nil { host = header.value }
            case .originalURL: if originalURL == nil { originalURL = header.value }
            case .originalURI: if originalURI == nil { originalURI = header.value }
            case .forwardedURI: if forwardedURI == nil { forwardedURI = header.value }
            case .forwardedFor: forwardedFor.append(header.value)
            case .realIP: if realIP == nil { realIP = header.value }
            case .dropped: break
            case .visitor: visitor.append(header)
            }
        }
    }

    /// What a field named `name` (any case) is.
    static func kind(of name: String) -> Kind {
        func named(_ other: String) -> Bool { name.equalsIgnoringASCIICase(other) }
        switch name.utf8.count {
        case 4:
            return named("host") ? .host : .visitor
        case 9:
            if named("x-real-ip") { return .realIP }
            return named("forwarded") ? .dropped : .visitor
        case 11:
            return named("x-sent-from") ? .dropped : .visitor
        case 14:
            if named("x-original-uri") { return .originalURI }
            if named("x-original-url") { return .originalURL }
            return named("content-length") ? .dropped : .visitor
        case 15:
            if named("x-forwarded-uri") { return .forwardedURI }
            return named("x-forwarded-for") ? .forwardedFor : .visitor
        case 16:
            if named("x-forwarded-host") { return .forwardedHost }
            return named("x-forwarded-port") ? .dropped : .visitor
        case 17:
            if named("x-original-method") { return .originalMethod }
            if named("x-forwarded-proto") { return .forwardedProto }
            return named("transfer-encoding") ? .dropped : .visitor
        case 18:
            if named("x-forwarded-method") { return .forwardedMethod }
            return named("x-forwarded-server") ? .dropped : .visitor
        case 23:
            return named("x-auth-request-redirect") ? .dropped : .visitor
        default:
            return .visitor
        }
    }
}
