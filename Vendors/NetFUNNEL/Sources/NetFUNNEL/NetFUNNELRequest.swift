import Foundation

/// One `GET /ts.wseq` request in the JavaScript dialect of `netfunnel.js`, as a value.
///
/// Parameters and their order follow the docs/netfunnel-protocol.md (§2.2): 5101 `opcode, nfid, prefix, [ttl], sid,
/// aid, js, [user_data], ts`; 5002 `opcode, key, nfid, prefix, [ttl], sid, aid, [user_data], js, ts`;
/// 5003 `opcode, key, nfid, prefix, sid, aid, [user_data], js, ts`; 5004 `opcode, key, nfid,
/// prefix, [user_data], js, ts` (no `sid`/`aid`). The cache-buster is a bare query item whose
/// name is the epoch in milliseconds. Values are percent-encoded (the server accepts both forms).
///
/// The native-SDK dialect (``Dialect/native``, docs/netfunnel-protocol.md §2.3) sends no `js`, `nfid`, `prefix`,
/// `ttl` or cache-buster: 5101 `opcode, sid, aid, [user_data]`; 5002/5003/5004 `opcode, key`.
/// The server answers it with the bare `<code>:<params>` envelope.
package struct NetFUNNELRequest: Sendable, Equatable {
    /// The two request dialects.
    package enum Dialect: Sendable, Equatable {
        /// `netfunnel.js`: `js=yes`, `nfid`, `prefix`, cache-buster; JS-wrapped replies.
        case javascript
        /// Native agents: `sid`/`aid` only on 5101, no `js`/`nfid`/`prefix`; bare replies.
        case native
    }

    /// The dialect (``Dialect/javascript`` unless set).
    package var dialect: Dialect = .javascript
    /// The request type.
    package var opcode: NetFUNNELOpcode
    /// The key from the latest reply (5002/5003/5004); ignored for 5101/5001.
    package var key: String?
    /// The (clamped) seconds the client slept before this request; sent when > 0 (5101/5002 only).
    package var ttl: Int
    /// NF4 projectKey, sent as `sid`.
    package var projectKey: String
    /// NF4 segmentKey, sent as `aid`.
    package var segmentKey: String
    /// Sent as `user_data` when non-empty (NF4 `userId`).
    package var userData: String?
    /// The cache-buster, epoch milliseconds.
    package var timestampMillis: Int64

    package init(
        opcode: NetFUNNELOpcode, key: String? = nil, ttl: Int = 0, projectKey: String, segmentKey: String,
        userData: String? = nil, timestampMillis: Int64, dialect: Dialect = .javascript
    ) {
        self.dialect = dialect
        self.opcode = opcode
        self.key = key
        self.ttl = ttl
        self.projectKey = projectKey
        self.segmentKey = segmentKey
        self.userData = userData
        self.timestampMillis = timestampMillis
    }

    /// The `prefix` the JS library sends: `NetFunnel.gRtype=<opcode>;`.
    package var prefix: String { "NetFunnel.gRtype=\(opcode.rawValue);" }

    /// The query items in wire order; a `nil` value is a bare name (the cache-buster).
    package var queryItems: [(name: String, value: String?)] {
        if dialect == .native { return nativeQueryItems }
        var items: [(String, String?)] = [("opcode", String(opcode.rawValue))]
        let sendsKey = opcode != .issueAndEnter && opcode != .getTicketID
        if sendsKey { items.append(("key", key ?? "")) }
        items.append(("nfid", "0"))
        items.append(("prefix", prefix))
        let sendsTTL = opcode == .issueAndEnter || opcode == .checkEnter
        if sendsTTL && ttl > 0 { items.append(("ttl", String(ttl))) }
        let user = userData.flatMap { $0.isEmpty ? nil : $0 }
        switch opcode {
        case .issueAndEnter, .getTicketID:
            items.append(("sid", projectKey))
            items.append(("aid", segmentKey))
            items.append(("js", "yes"))
            if let user { items.append(("user_data", user)) }
        case .checkEnter, .aliveNotice:
            items.append(("sid", projectKey))
            items.append(("aid", segmentKey))
            if let user { items.append(("user_data", user)) }
            items.append(("js", "yes"))
        case .complete, .initialize, .stop:
            if let user { items.append(("user_data", user)) }
            items.append(("js", "yes"))
        }
        items.append((String(timestampMillis), nil))
        return items.map { (name: $0.0, value: $0.1) }
    }

    /// The native dialect's items (§2.3).
    private var nativeQueryItems: [(name: String, value: String?)] {
        var items: [(name: String, value: String?)] = [(name: "opcode", value: String(opcode.rawValue))]
        switch opcode {
        case .issueAndEnter, .getTicketID:
            items.append((name: "sid", value: projectKey))
            items.append((name: "aid", value: segmentKey))
            if let user = userData, !user.isEmpty { items.append((name: "user_data", value: user)) }
        case .checkEnter, .aliveNotice, .complete, .initialize, .stop:
            items.append((name: "key", value: key ?? ""))
        }
        return items
    }

    /// The percent-encoded query string (without `?`).
    package var query: String {
        queryItems.map { item in
            let name = Self.encode(item.name)
            guard let value = item.value else { return name }
            return name + "=" + Self.encode(value)
        }.joined(separator: "&")
    }

    /// The full URL: `base` with its path replaced by `/ts.wseq` unless it already ends in `ts.wseq`.
    package func url(base: URL) -> URL? {
        guard var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else { return nil }
        var path = components.path
        if !path.hasSuffix("ts.wseq") {
            if !path.hasSuffix("/") { path += "/" }
            path += "ts.wseq"
        }
        components.path = path
        components.percentEncodedQuery = query
        components.fragment = nil
        return components.url
    }

    private static let unreserved: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))

    /// RFC 3986 percent-encoding of everything outside the unreserved set.
    static func encode(_ string: String) -> String {
        var out = ""
        out.reserveCapacity(string.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count * 3)
        for byte in string.utf8 {
            if unreserved.contains(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            }
        }
        out = String(decoding: bytes, as: UTF8.self)
        return out
    }
}
