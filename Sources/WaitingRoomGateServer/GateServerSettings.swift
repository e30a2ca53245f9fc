import WaitingRoomGate

/// How `waitingroom gate` runs, one property per flag (the CLI parses and checks them; the
/// defaults here are the ones its help shows).
package struct GateServerSettings: Sendable {
    /// `queueit` or `crowdhandler`.
    package var vendor = ""
    /// The app behind the reverse proxy: `http://HOST:PORT` or `unix:PATH`; empty with ``authz``.
    package var upstream = ""
    /// Answer a proxy's auth subrequests instead of forwarding.
    package var authz = false
    /// Where single-use tokens are remembered (an SQLite file or a `postgres://` URL).
    package var state: String?
    /// `open` or `closed`: what a token check does when ``state`` cannot be reached.
    package var ledgerUnavailable = "open"
    /// `HOST:PORT` to serve on.
    package var listen = "127.0.0.1:8081"
    /// Queue-it's integration configuration, or CrowdHandler's settings (JSON).
    package var config: String?
    /// Start the embedded emulator and point the gate at it.
    package var emulator = false
    /// Queue-it's customer id.
    package var customer: String?
    /// CrowdHandler: `full` or `hybrid`.
    package var mode = "full"
    /// `scheme://host[:port]` visitors reach the gate at.
    package var publicURL: String?
    /// Proxies whose `X-Forwarded-*` headers are believed.
    package var trustedProxies: [String] = []
    /// Hosts the gate answers for without ``publicURL``.
    package var allowedHosts: [String] = []
    /// Requests in flight at once.
    package var maxConnections = 512
    /// Connections one client address may hold open (0: no bound).
    package var maxPerClient = 64
    /// Seconds a request body may take to arrive.
    package var bodyTimeout = 30
    /// Queue-it: gate OPTIONS requests too.
    package var checkOptions = false
    /// Queue-it: SameSite of the session cookie.
    package var cookieSameSite: String?
    /// Seconds one upstream exchange may take.
    package var timeout = 60
    /// Seconds to connect to the upstream.
    package var connectTimeout = 5
    /// Largest declared request body.
    package var maxBodyBytes = GateLimits.standard.maxBodyBytes
    /// Event-loop threads (nil: NIO's shared group, one per core).
    package var threads: Int?
    /// Queue-it: valid session cookies whose decision is reused for the rest of their second.
    package var sessionMemo = 10_000
    /// Queue-it: where the integration configuration is downloaded from.
    package var configURL: String?
    /// Seconds between ``configURL`` downloads.
    package var configInterval = 300.0

    /// Seconds a visitor's connection may sit idle between requests before the gate closes it.
    package static let idleSeconds = 75

    package init() {}

    /// `HOST:PORT` split (`[::1]:8081` too), or nil.
    package static func hostAndPort(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }
}
