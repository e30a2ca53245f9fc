import Foundation
import WaitingRoom

/// How a ``CloudflareProvider`` waits in a Cloudflare Waiting Room in JSON mode. JSON keys are
/// the property names; durations are milliseconds.
///
/// Cloudflare publishes no client SDK: the client is the documented JSON mode (see
/// `Vendors/Cloudflare/README.md`). Defaults are Cloudflare's where it documents one (20 s
/// refresh, 5 min session) and proposals elsewhere.
public struct CloudflareConfiguration: ProviderConfiguration, Hashable {
    /// `"cloudflare"`.
    public static let vendorID = "cloudflare"

    /// The protected site: an entry's room is a path under it (or an absolute URL, or a path under
    /// the entry's scope when the scope is a URL).
    package var siteURL: String
    /// The HTTP method of the protected request (default `GET`).
    package var method: String
    /// The deadline of one request (proposal: 10 s).
    package var timeout: Duration
    /// Retries after a failed request (timeout, dropped connection, 5xx, 429 without a reply, a
    /// broken reply) before the session fails (proposal: 3, waiting 1, 2, 4 s).
    package var retries: Int
    /// The first wait before a retry; it doubles for each next one.
    package var retryDelay: Duration
    /// The wait when a reply names no `refreshIntervalSeconds` (Cloudflare's fixed 20 s).
    package var defaultRefreshInterval: Duration
    /// The shortest wait between requests whatever the reply says (proposal: 1 s).
    package var minRefreshInterval: Duration
    /// The longest wait between requests whatever the reply says (proposal: 120 s; Cloudflare
    /// holds a place 5 min after the last refresh).
    package var maxRefreshInterval: Duration
    /// A fixed wait between requests instead of the reply's (still within the limits); nil: the reply's.
    package var pollInterval: Duration?
    /// How long a pass stays valid: the room's `session_duration` (Cloudflare's default 5 min).
    package var sessionDuration: Duration
    /// Reuse a pass from the `PassStore` instead of asking again (proposal: true).
    package var reuseStoredPass: Bool
    /// Whether `queueIsFull` blocks a visitor the queue has not taken in yet (true, proposal) or the session keeps
    /// refreshing until the queue takes users again (false).
    package var blockWhenQueueIsFull: Bool
    /// Sent as `User-Agent`.
    package var userAgent: String
    /// Whether a room that gives no usable answer after every attempt lets the user through
    /// (proposal, default false): the outcome is `passed` with code ``CloudflareCode/failedOpen``,
    /// the error kept in the pass's `bypassedError`, no credential, nothing stored.
    package var failOpen: Bool

    public init(
        siteURL: String, method: String = "GET", timeout: Duration = .seconds(10), retries: Int = 3,
        retryDelay: Duration = .seconds(1), defaultRefreshInterval: Duration = .seconds(20),
        minRefreshInterval: Duration = .seconds(1), maxRefreshInterval: Duration = .seconds(120), pollInterval: Duration? = nil,
        sessionDuration: Duration = .seconds(300), reuseStoredPass: Bool = true, blockWhenQueueIsFull: Bool = true,
        userAgent: String = "waitingroom-swift", failOpen: Bool = false
    ) throws(WaitingRoomError) {
        self.siteURL = VendorURL.base(siteURL)
        self.method = method.uppercased()
        self.timeout = timeout
        self.retries = retries
        self.retryDelay = retryDelay
        self.defaultRefreshInterval = defaultRefreshInterval
        self.minRefreshInterval = minRefreshInterval
        self.maxRefreshInterval = maxRefreshInterval
        self.pollInterval = pollInterval
        self.sessionDuration = sessionDuration
        self.reuseStoredPass = reuseStoredPass
        self.blockWhenQueueIsFull = blockWhenQueueIsFull
        self.userAgent = userAgent
        self.failOpen = failOpen
        try validate()
    }

    func validate() throws(WaitingRoomError) {
        let v = Self.vendorID
        let u = try VendorURL.require(siteURL, field: "siteURL", vendor: v)
        // rooms are paths appended to it: a query or fragment would end up in the middle
        guard u.query == nil, u.fragment == nil else {
            throw .invalidConfiguration(
                field: "siteURL", "expected scheme, host and at most a path (rooms are paths under it), got \"\(siteURL)\"", vendor: v)
        }
        guard ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].contains(method) else {
            throw .invalidConfiguration(field: "method", "expected GET, HEAD, POST, PUT, PATCH or DELETE, got \"\(method)\"", vendor: v)
        }
        if timeout <= .zero { throw .invalidConfiguration(field: "timeout", "must be positive", vendor: v) }
        if !(0...10).contains(retries) { throw .outOfRange(field: "retries", value: retries, range: 0...10, vendor: v) }
        if retryDelay < .zero { throw .invalidConfiguration(field: "retryDelay", "must not be negative", vendor: v) }
        if minRefreshInterval <= .zero { throw .invalidConfiguration(field: "minRefreshInterval", "must be positive", vendor: v) }
        if maxRefreshInterval < minRefreshInterval {
            throw .invalidConfiguration(field: "maxRefreshInterval", "must not be shorter than minRefreshInterval", vendor: v)
        }
        if defaultRefreshInterval <= .zero { throw .invalidConfiguration(field: "defaultRefreshInterval", "must be positive", vendor: v) }
        if let p = pollInterval, p <= .zero { throw .invalidConfiguration(field: "pollInterval", "must be positive", vendor: v) }
        if sessionDuration <= .zero { throw .invalidConfiguration(field: "sessionDuration", "must be positive", vendor: v) }
    }

    /// Reads the JSON form; durations are milliseconds.
    public init(json: JSONValue) throws {
        let r = try ConfigurationReader(json, vendor: Self.vendorID)
        try r.rejectUnknownKeys([
            "siteURL", "method", "timeout", "retries", "retryDelay", "defaultRefreshInterval", "minRefreshInterval",
            "maxRefreshInterval", "pollInterval", "sessionDuration", "reuseStoredPass", "blockWhenQueueIsFull", "userAgent",
            "failOpen"
        ])
        func ms(_ key: String) throws -> Duration? {
            try r.int(key, range: 0...86_400_000, unit: "ms").map { .milliseconds($0) }
        }
        try self.init(
            siteURL: try r.requiredString("siteURL"), method: try r.string("method") ?? "GET",
            timeout: try ms("timeout") ?? .seconds(10), retries: try r.int("retries", range: 0...10) ?? 3,
            retryDelay: try ms("retryDelay") ?? .seconds(1), defaultRefreshInterval: try ms("defaultRefreshInterval") ?? .seconds(20),
            minRefreshInterval: try ms("minRefreshInterval") ?? .seconds(1),
            maxRefreshInterval: try ms("maxRefreshInterval") ?? .seconds(120),
            pollInterval: try ms("pollInterval"), sessionDuration: try ms("sessionDuration") ?? .seconds(300),
            reuseStoredPass: try r.bool("reuseStoredPass") ?? true, blockWhenQueueIsFull: try r.bool("blockWhenQueueIsFull") ?? true,
            userAgent: try r.string("userAgent") ?? "waitingroom-swift", failOpen: try r.bool("failOpen") ?? false)
    }

    public func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider {
        CloudflareProvider(configuration: self, environment: environment)
    }

    /// The retry policy of one request: `retries` retries after waits of `retryDelay`, doubling,
    /// then `.unavailable` with code ``CloudflareCode/unreachable``.
    package var retryPolicy: RetryPolicy {
        var delays: [Duration] = []
        var d = retryDelay
        for _ in 0..<retries {
            delays.append(d)
            d = d * 2
        }
        return RetryPolicy(
            attemptTimeout: timeout, retries: retries, delays: delays, pacing: .afterFailure,
            exhaustion: .unavailable(code: CloudflareCode.unreachable.rawValue, message: CloudflareCode.unreachable.message))
    }

    /// The wait before the next request after `reply`: ``pollInterval`` when set, else the reply's
    /// `refreshIntervalSeconds` (``defaultRefreshInterval`` when it names none), kept within
    /// ``minRefreshInterval``…``maxRefreshInterval``.
    package func refreshInterval(after reply: CloudflareWaitingRoomReply) -> Duration {
        let asked = pollInterval ?? reply.refreshIntervalSeconds.map { .seconds(Int64($0)) } ?? defaultRefreshInterval
        return min(max(asked, minRefreshInterval), maxRefreshInterval)
    }

    /// The URL an entry's room stands for: the room itself when it is an absolute URL; else the
    /// room as a path under the scope when the scope is an http(s) URL, else under ``siteURL``.
    package func targetURL(for room: RoomKey) -> String {
        let r = room.room
        if r.hasPrefix("http://") || r.hasPrefix("https://") { return r }
        var base = siteURL
        if room.scope.hasPrefix("http://") || room.scope.hasPrefix("https://") {
            base = VendorURL.base(room.scope)
        }
        return base + "/" + (r.hasPrefix("/") ? String(r.dropFirst()) : r)
    }
}
