import Foundation
import WaitingRoom

/// How a ``CrowdHandlerProvider`` talks to CrowdHandler. JSON keys are the property names.
///
/// Defaults follow the public SDKs (see `Vendors/CrowdHandler/README.md`): API
/// `https://api.crowdhandler.com`, waiting rooms on `https://wait.crowdhandler.com`, a 5 s API
/// timeout and `trustOnFail` true (JavaScript SDK).
public struct CrowdHandlerConfiguration: ProviderConfiguration, Hashable {
    /// `"crowdhandler"`.
    public static let vendorID = "crowdhandler"

    /// The public key, sent as `x-api-key`.
    package var publicKey: String
    /// The private key: only for local (hybrid) signature validation; never sent.
    package var privateKey: String?
    /// The API base URL (without `/v1`).
    package var apiURL: String
    /// The waiting-room base URL; the user's page is `{waitURL}/{slug}?url=…&ch-id=…&ch-public-key=…`.
    package var waitURL: String
    /// The site whose URLs an entry's room stands for when the room is a path, not a URL (proposal).
    package var siteURL: String
    /// The deadline of one API call (JavaScript SDK default 5 s).
    package var timeout: Duration
    /// The deadline of `PUT /v1/responses` (JavaScript SDK: 1.5 s).
    package var responseTimeout: Duration
    /// Let the user in when the API fails or times out (default true). 4xx always blocks.
    package var trustOnFail: Bool
    /// The room users are sent to when a check fails and `trustOnFail` is false.
    package var safetyNetSlug: String?
    /// How often a waiting session checks again (proposal: 5 s).
    package var pollInterval: Duration
    /// How long a pass stays valid when the room's timeout is not known (proposal: 20 min).
    package var passLifetime: Duration
    /// Reuse a pass from the `PassStore` instead of checking again (proposal: true).
    package var reuseStoredPass: Bool
    /// Sent as `agent`, `lang` and `ip` (an entry's attributes `agent`, `lang`, `ip` win).
    package var agent: String
    package var lang: String
    package var ip: String?

    public init(
        publicKey: String, privateKey: String? = nil,
        apiURL: String = "https://api.crowdhandler.com", waitURL: String = "https://wait.crowdhandler.com",
        siteURL: String = "https://example.com", timeout: Duration = .seconds(5), responseTimeout: Duration = .milliseconds(1500),
        trustOnFail: Bool = true, safetyNetSlug: String? = nil, pollInterval: Duration = .seconds(5),
        passLifetime: Duration = .seconds(20 * 60), reuseStoredPass: Bool = true,
        agent: String = "waitingroom-swift", lang: String = "en", ip: String? = nil
    ) throws(WaitingRoomError) {
        self.publicKey = publicKey
        self.privateKey = privateKey
        self.apiURL = VendorURL.base(apiURL)
        self.waitURL = VendorURL.base(waitURL)
        self.siteURL = VendorURL.base(siteURL)
        self.timeout = timeout
        self.responseTimeout = responseTimeout
        self.trustOnFail = trustOnFail
        self.safetyNetSlug = safetyNetSlug
        self.pollInterval = pollInterval
        self.passLifetime = passLifetime
        self.reuseStoredPass = reuseStoredPass
        self.agent = agent
        self.lang = lang
        self.ip = ip
        try validate()
    }

    func validate() throws(WaitingRoomError) {
        let v = Self.vendorID
        if publicKey.isEmpty { throw .invalidConfiguration(field: "publicKey", "the public key is required", vendor: v) }
        for (field, url) in [("apiURL", apiURL), ("waitURL", waitURL), ("siteURL", siteURL)] {
            _ = try VendorURL.require(url, field: field, vendor: v)
        }
        if timeout <= .zero { throw .invalidConfiguration(field: "timeout", "must be positive", vendor: v) }
        if responseTimeout <= .zero { throw .invalidConfiguration(field: "responseTimeout", "must be positive", vendor: v) }
        if pollInterval <= .zero { throw .invalidConfiguration(field: "pollInterval", "must be positive", vendor: v) }
        if let s = safetyNetSlug, s.isEmpty || s.contains("/") {
            throw .invalidConfiguration(field: "safetyNetSlug", "expected a room slug", vendor: v)
        }
    }

    /// Reads the JSON form; times are milliseconds (`timeout`, `responseTimeout`, `pollInterval`,
    /// `passLifetime`).
    public init(json: JSONValue) throws {
        let r = try ConfigurationReader(json, vendor: Self.vendorID)
        try r.rejectUnknownKeys([
            "publicKey", "privateKey", "apiURL", "waitURL", "siteURL", "timeout", "responseTimeout", "trustOnFail",
            "safetyNetSlug", "fallbackSlug", "pollInterval", "passLifetime", "reuseStoredPass", "agent", "lang", "ip"
        ])
        func ms(_ key: String, _ fallback: Duration) throws -> Duration {
            try r.int(key, range: 1...86_400_000, unit: "ms").map { .milliseconds($0) } ?? fallback
        }
        try self.init(
            publicKey: try r.requiredString("publicKey"), privateKey: try r.string("privateKey"),
            apiURL: try r.string("apiURL") ?? "https://api.crowdhandler.com",
            waitURL: try r.string("waitURL") ?? "https://wait.crowdhandler.com",
            siteURL: try r.string("siteURL") ?? "https://example.com",
            timeout: try ms("timeout", .seconds(5)), responseTimeout: try ms("responseTimeout", .milliseconds(1500)),
            trustOnFail: try r.bool("trustOnFail") ?? true,
            safetyNetSlug: try r.string("safetyNetSlug") ?? r.string("fallbackSlug"),
            pollInterval: try ms("pollInterval", .seconds(5)), passLifetime: try ms("passLifetime", .seconds(1200)),
            reuseStoredPass: try r.bool("reuseStoredPass") ?? true,
            agent: try r.string("agent") ?? "waitingroom-swift", lang: try r.string("lang") ?? "en", ip: try r.string("ip"))
    }

    public func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider {
        CrowdHandlerProvider(configuration: self, environment: environment)
    }

    /// The URL an entry's room stands for (proposal): the room itself when it is an absolute
    /// URL; else the room as a path under the scope when the scope is an http(s) URL (a site),
    /// else under `siteURL` (a scope that is not a URL is only a label, e.g. `"site"`).
    package func targetURL(for room: RoomKey) -> String {
        let r = room.room
        if r.hasPrefix("http://") || r.hasPrefix("https://") { return r }
        var base = siteURL
        if room.scope.hasPrefix("http://") || room.scope.hasPrefix("https://") {
            base = VendorURL.base(room.scope)
        }
        return base + "/" + (r.hasPrefix("/") ? String(r.dropFirst()) : r)
    }

    /// The waiting-room page for `slug`: `{waitURL}/{slug}?url=…&ch-code=&ch-id=…&ch-public-key=…`
    /// (the JavaScript SDK's `getRedirectUrl`; `ch-id` left out when there is no token, as the PHP
    /// SDK does). Values are encoded as `encodeURIComponent` does (the JavaScript SDK; PHP's
    /// `urlencode` and .NET's `EscapeDataString` agree on `+` → `%2B`), so the visitor comes back
    /// to the very URL they asked for.
    package func waitingRoomURL(slug: String, targetURL: String, token: String?) -> String {
        var url = waitURL + "/" + Self.encodeComponent(slug) + "?url=" + Self.encodeComponent(targetURL) + "&ch-code="
        if let token, !token.isEmpty { url += "&ch-id=" + Self.encodeComponent(token) }
        return url + "&ch-public-key=" + Self.encodeComponent(publicKey)
    }

    /// `text` percent-encoded as JavaScript's `encodeURIComponent`: everything but letters, digits
    /// and `-_.!~*'()`.
    package static func encodeComponent(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "~"), UInt8(ascii: "*"),
                UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return out
    }
}
