import Foundation
import WaitingRoom

/// NetFUNNEL agent options, with the agent's own names, defaults and ranges (iOS/Android
/// agent 4.6.1 option reference). JSON keys are the option names.
///
/// | option | default | range |
/// |---|---|---|
/// | `clientId` | none ⇒ bypass mode (passes without any request, even with a `serverUrl`) | letters, digits, `-` |
/// | `serverUrl` | `https://{clientId}.netfunnel.stclab.com` | not empty; https, or http on loopback (any host with `allowInsecureHTTP`) |
/// | `errorUrl` | none (the settings document's) | not empty; https, or http on loopback |
/// | `settingUrl` | `{serverUrl}/{clientId}.netfunnel/nf-setting.json` | not empty; https, or http on loopback |
/// | `networkTimeout` | 3000 ms | 100–10000 |
/// | `retryCount` | 0 | 0–10 |
/// | `printLog` | false | |
/// | `useNetfunnelTemplate` | true | |
/// | `errorBypass` | false | |
/// | `userId` | none (sent as `user_data`) | |
/// | `useNetworkRecoveryMode` | false | |
/// | `backgroundReturnSeconds` (proposal) | 60 s | 0–600; 0 = off |
/// | `allowInsecureHTTP` (proposal) | false | plain `http://` to a non-loopback traffic server |
public struct NetFUNNELConfiguration: ProviderConfiguration, Hashable {
    public static let vendorID = "netfunnel"

    /// Tenant id (`<name>-<4 digits>`); nil or empty ⇒ bypass mode.
    package var clientId: String?
    /// Traffic server base URL; derived from `clientId` when nil.
    package var serverUrl: String?
    /// Error page URL, reported with every error (`WaitingRoomError.details["errorUrl"]`); the
    /// settings document's when nil. Never fetched.
    package var errorUrl: String?
    /// The settings document fetched at initialisation (the web agent's `data-nf-setting-url`);
    /// `{serverUrl}/{clientId}.netfunnel/nf-setting.json` when nil, or
    /// `https://nf-setting-bucket.stclab.com/{clientId}.netfunnel/nf-setting.json` for the SaaS
    /// server (docs/netfunnel-protocol.md §7.1).
    package var settingUrl: String?
    /// Per-attempt timeout in milliseconds (100–10000).
    package var networkTimeout: Int
    /// Retries after the first attempt (0–10).
    package var retryCount: Int
    /// Log requests and decisions at debug level.
    package var printLog: Bool
    /// true: a `queueOpened` event with the template page (`vwr_html`); false: `nfContinue`-style progress.
    package var useNetfunnelTemplate: Bool
    /// Report errors as passes (status 300) with the original error attached.
    package var errorBypass: Bool
    /// Sent as `user_data` (white/black list matching).
    package var userId: String?
    /// Keep waiting through network failures during 5002; re-issue 5101 once if the key is gone.
    package var useNetworkRecoveryMode: Bool
    /// (proposal, not an agent option) After a key return failed its documented attempts
    /// (`nfComplete` 500), keep returning the key in the background for this many seconds, on
    /// ``backgroundReturnSchedule(keyTimeout:)`` (before the server's key timeout); a success is
    /// reported as `keyReturnedLate`.
    /// 0 turns it off (the agent's behaviour: the server keeps the key until it times out).
    package var backgroundReturnSeconds: Int
    /// (proposal, not an agent option) Allow a plain `http://` `serverUrl`/`errorUrl` on a
    /// non-loopback host, as some deployments still serve the traffic server (keys travel in
    /// clear text; a warning is logged when a provider is made with it). Off by default.
    package var allowInsecureHTTP: Bool

    /// Valid ranges.
    package static let networkTimeoutRange = 100...10_000
    package static let retryCountRange = 0...10
    package static let backgroundReturnSecondsRange = 0...600

    /// Creates a configuration; ``validate()`` checks it (``makeProvider(environment:)`` does).
    public init(
        clientId: String? = nil, serverUrl: String? = nil, errorUrl: String? = nil, networkTimeout: Int = 3000,
        retryCount: Int = 0, printLog: Bool = false, useNetfunnelTemplate: Bool = true, errorBypass: Bool = false,
        userId: String? = nil, useNetworkRecoveryMode: Bool = false, backgroundReturnSeconds: Int = 60,
        allowInsecureHTTP: Bool = false, settingUrl: String? = nil
    ) {
        self.settingUrl = settingUrl
        self.clientId = clientId
        self.serverUrl = serverUrl
        self.errorUrl = errorUrl
        self.networkTimeout = networkTimeout
        self.retryCount = retryCount
        self.printLog = printLog
        self.useNetfunnelTemplate = useNetfunnelTemplate
        self.errorBypass = errorBypass
        self.userId = userId
        self.useNetworkRecoveryMode = useNetworkRecoveryMode
        self.backgroundReturnSeconds = backgroundReturnSeconds
        self.allowInsecureHTTP = allowInsecureHTTP
    }

    /// Every JSON key.
    package static let optionNames: Set<String> = [
        "clientId", "serverUrl", "errorUrl", "networkTimeout", "retryCount", "printLog", "useNetfunnelTemplate",
        "errorBypass", "userId", "useNetworkRecoveryMode", "backgroundReturnSeconds", "allowInsecureHTTP", "settingUrl"
    ]

    public init(json: JSONValue) throws {
        let reader = try ConfigurationReader(json, path: "netfunnel", vendor: Self.vendorID)
        try reader.rejectUnknownKeys(Self.optionNames)
        self.init(
            clientId: try reader.string("clientId"),
            serverUrl: try reader.string("serverUrl"),
            errorUrl: try reader.string("errorUrl"),
            networkTimeout: try reader.int("networkTimeout", range: Self.networkTimeoutRange, unit: "ms") ?? 3000,
            retryCount: try reader.int("retryCount", range: Self.retryCountRange) ?? 0,
            printLog: try reader.bool("printLog") ?? false,
            useNetfunnelTemplate: try reader.bool("useNetfunnelTemplate") ?? true,
            errorBypass: try reader.bool("errorBypass") ?? false,
            userId: try reader.string("userId"),
            useNetworkRecoveryMode: try reader.bool("useNetworkRecoveryMode") ?? false,
            backgroundReturnSeconds: try reader.int(
                "backgroundReturnSeconds", range: Self.backgroundReturnSecondsRange, unit: "s") ?? 60,
            allowInsecureHTTP: try reader.bool("allowInsecureHTTP") ?? false,
            settingUrl: try reader.string("settingUrl"))
        try validate()
    }

    /// True when `clientId` is missing or empty: "the agent runs in bypass mode, allowing direct
    /// access without a waiting room". A `serverUrl` does not change that (it is validated, never
    /// contacted, and a warning is logged).
    package var isBypassMode: Bool { (clientId ?? "").isEmpty }

    /// True when a plain-http traffic server on a non-loopback host is in use.
    package var usesInsecureHTTP: Bool {
        guard let serverUrl, let url = URL(string: serverUrl), url.scheme?.lowercased() == "http", let host = url.host else { return false }
        return !Self.isLoopback(host)
    }

    /// The traffic server: `serverUrl`, or `https://{clientId}.netfunnel.stclab.com`; nil in bypass mode.
    package func resolvedServerURL() throws -> URL? {
        let configured = try serverUrl.map { try checkedURL($0, field: "serverUrl") }
        guard let clientId, !clientId.isEmpty else { return nil }
        return configured ?? URL(string: "https://\(clientId).netfunnel.stclab.com")
    }

    /// The settings document: `settingUrl`, or `{serverUrl}/{clientId}.netfunnel/nf-setting.json`
    /// (the SaaS bucket when no `serverUrl` is set); nil in bypass mode.
    package func resolvedSettingURL() throws -> URL? {
        let configured = try settingUrl.map { try checkedURL($0, field: "settingUrl") }
        guard let clientId, !clientId.isEmpty else { return nil }
        if let configured { return configured }
        let path = "\(clientId).netfunnel/nf-setting.json"
        if let serverUrl {
            let base = serverUrl.hasSuffix("/") ? serverUrl : serverUrl + "/"
            return URL(string: base + path)
        }
        return URL(string: "https://nf-setting-bucket.stclab.com/" + path)
    }

    /// The waiting-room page derived from `clientId` (used when a reply names none).
    package var derivedWaitingRoomPageURL: String? {
        guard let clientId, !clientId.isEmpty else { return nil }
        return "https://agent-lib.stclab.com/vwr-page/\(clientId).netfunnel/index.html"
    }

    /// The per-request deadline.
    package var networkTimeoutDuration: Duration { .milliseconds(networkTimeout) }

    /// When background key returns are tried (``backgroundReturnSeconds``) while the key
    /// timeout is unknown: waits doubling from 250 ms, never above 2.5 s, ±20 % jitter.
    package var backgroundReturnSchedule: PendingReturns.Schedule { backgroundReturnSchedule(keyTimeout: nil) }

    /// When background key returns are tried for a key the server times out after `keyTimeout`
    /// (the settings document's `timeoutSec` of its segment; nil: unknown). The return must beat
    /// the timeout, or the server keeps the slot for everyone behind until it auto-returns the
    /// key: waits double from 250 ms up to an eighth of the timeout, at most 2.5 s (at least
    /// 250 ms), so a key the server holds for 20 s gets 5 tries in its first 6 s and one every
    /// 2.5 s after; ±20 % jitter so users whose returns failed together spread out; all within
    /// `backgroundReturnSeconds` (proposal; the agent documents only `nfComplete` 500).
    package func backgroundReturnSchedule(keyTimeout: Duration?) -> PendingReturns.Schedule {
        let longest: Duration = .milliseconds(2500)
        let cap = keyTimeout.map { min(longest, max(.milliseconds(250), $0 / 8)) } ?? longest
        return PendingReturns.Schedule(
            budget: .seconds(backgroundReturnSeconds), initialDelay: .milliseconds(250), maximumDelay: cap, jitter: 0.2)
    }

    /// Checks every option; errors name the field and the allowed range.
    package func validate() throws {
        if !Self.networkTimeoutRange.contains(networkTimeout) {
            throw WaitingRoomError.outOfRange(
                field: "netfunnel.networkTimeout", value: networkTimeout, range: Self.networkTimeoutRange, unit: "ms",
                vendor: Self.vendorID)
        }
        if !Self.retryCountRange.contains(retryCount) {
            throw WaitingRoomError.outOfRange(
                field: "netfunnel.retryCount", value: retryCount, range: Self.retryCountRange, vendor: Self.vendorID)
        }
        if !Self.backgroundReturnSecondsRange.contains(backgroundReturnSeconds) {
            throw WaitingRoomError.outOfRange(
                field: "netfunnel.backgroundReturnSeconds", value: backgroundReturnSeconds,
                range: Self.backgroundReturnSecondsRange, unit: "s", vendor: Self.vendorID)
        }
        if let clientId, !clientId.isEmpty {
            let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
            guard clientId.unicodeScalars.allSatisfy(allowed.contains), clientId.count <= 63 else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "netfunnel.clientId",
                    "\"\(clientId)\" is not a client id (letters, digits and '-', like \"stclab-0000\", at most 63 characters)",
                    vendor: Self.vendorID)
            }
        }
        // "Cannot be empty string" (iOS agent guide, parameter table): refused, the field named.
        for (field, value) in [("serverUrl", serverUrl), ("errorUrl", errorUrl), ("settingUrl", settingUrl)] where value?.isEmpty == true {
            throw WaitingRoomError.invalidConfiguration(
                field: "netfunnel.\(field)", "cannot be an empty string (leave it out for the default)", vendor: Self.vendorID)
        }
        _ = try resolvedServerURL()
        _ = try resolvedSettingURL()
        if let errorUrl { _ = try checkedURL(errorUrl, field: "errorUrl") }
    }

    /// How many times recovery mode re-issues 5101 in one wait when the server has dropped the
    /// key (505/507) after an outage (proposal): `retryCount`, at least 1 and at most 10.
    package var recoveryReissueLimit: Int { min(10, max(1, retryCount)) }

    /// An absolute https URL, or http on a loopback host (any host with ``allowInsecureHTTP``).
    func checkedURL(_ text: String, field: String) throws -> URL {
        if allowInsecureHTTP, let url = URL(string: text), url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty {
            return url
        }
        return try Self.checkedURL(text, field: field)
    }

    /// An absolute https URL, or http on a loopback host.
    static func checkedURL(_ text: String, field: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw WaitingRoomError.invalidConfiguration(
                field: "netfunnel.\(field)", "\"\(text)\" is not an absolute URL (expected https://host[:port])",
                vendor: vendorID)
        }
        switch scheme {
        case "https":
            return url
        case "http" where isLoopback(host):
            return url
        case "http":
            throw WaitingRoomError.invalidConfiguration(
                field: "netfunnel.\(field)",
                "plain http is refused for \(host); use https (http is allowed for loopback hosts such as 127.0.0.1, or for any host with allowInsecureHTTP: true)",
                vendor: vendorID)
        default:
            throw WaitingRoomError.invalidConfiguration(
                field: "netfunnel.\(field)", "scheme \"\(scheme)\" is not supported; use https", vendor: vendorID)
        }
    }

    /// 127.0.0.0/8, ::1 and localhost.
    static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h == "::1" || h.hasSuffix(".localhost") { return true }
        let parts = h.split(separator: ".")
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    public func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider {
        try NetFUNNELProvider(configuration: self, environment: environment)
    }
}
