import Foundation
import WaitingRoom

/// How the queue page is waited through.
public enum QueueItQueuePageMode: String, Sendable, Hashable, CaseIterable {
    /// Poll the queue URL with GET, follow redirects, classify every hop (headless). Understands
    /// pages that redirect or refresh (HTTP `Refresh`, `<meta http-equiv="refresh">`) to the
    /// target, such as this project's emulator; a real, script-driven Queue-it page is not one of
    /// them, so the wait is bounded (``QueueItConfiguration/followMaxWait``).
    case follow
    /// The host app shows the page (a web view, a browser) and feeds its navigations to
    /// ``QueueItHostDrivenPageDriver``, as the vendor's SDKs do with their web view. A page the
    /// host does not report on within ``QueueItConfiguration/hostReportTimeout`` fails with -207.
    case host
    /// The default (proposal): `host` when a host is attached to the provider's
    /// ``QueueItProvider/hostDriver`` (``QueueItHostDrivenPageDriver/attach(onShow:)``), else
    /// `follow`, decided for each page when it opens (``QueueItAutoPageDriver``). A library
    /// user, a server or a script that shows no pages waits headlessly out of the box; an app
    /// that shows pages attaches and gets them, as the vendor's SDKs show their web view.
    case auto
    /// Run the queue page in a real headless browser (Debian's `chromium` driven by
    /// `chromedriver`, `QueueItBrowserDriver` in the `QueueItBrowser` module): script-driven pages work, for servers and the
    /// CLI. Bounded by ``QueueItConfiguration/followMaxWait``; paths from
    /// ``QueueItConfiguration/browserPath`` and ``QueueItConfiguration/chromedriverPath``.
    case browser
}

/// Settings of the Queue-it provider (`vendor: "queueit"`).
///
/// JSON keys: `customerId` (required), `waitingRoomId`, `waitingRoomDomain`, `pathPrefix`,
/// `layoutName`, `language`, `userAgent`, `userId`, `sdkVersion`, `requestTimeoutSeconds`
/// (1…120, default 10), `pollIntervalSeconds` (1…300, default 5), `viewDelaySeconds` (0…60),
/// `queuePage` (`auto` (default) | `host` | `follow` | `browser`), `hostReportTimeoutSeconds`
/// (1…3,600, default 30: how long a page handed to the host waits for its first navigation
/// report), `followMaxWaitSeconds` (1…86,400,
/// default 1,800; bounds the `follow` and `browser` drivers), `browserPath` and
/// `chromedriverPath` (the `browser` driver's executables; default `/usr/bin/chromium` and
/// `chromedriver` on `PATH` or `/usr/bin/chromedriver`), `reuseStoredPass` (default true),
/// `autoRestartSession` (default true). Errors name the field.
public struct QueueItConfiguration: ProviderConfiguration, Sendable, Hashable {
    public static let vendorID = "queueit"

    package var customerId: String
    /// The default waiting room when an entry leaves `room.room` empty.
    package var waitingRoomId: String?
    package var waitingRoomDomain: String?
    package var pathPrefix: String?
    package var layoutName: String?
    package var language: String?
    package var userAgent: String
    /// The default user id when an entry has none (the SDK uses a per-device id).
    package var userId: String
    package var sdkVersion: String
    /// Deadline of one enqueue attempt.
    package var requestTimeout: Duration
    /// Poll interval of the HTTP-follow driver when the page gives none.
    package var pollInterval: Duration
    /// Wait between "queue opened" and starting the queue page driver (the SDK's view delay).
    package var viewDelay: Duration
    package var queuePage: QueueItQueuePageMode
    /// The longest the HTTP-follow driver waits on one queue page before it gives up with code
    /// -206 (`queuePageTimeout`); counted on the environment's clock. (proposal) 30 min by default.
    package var followMaxWait: Duration
    /// How long a page handed to the host (`host`, or `auto` with a host attached) waits for the
    /// host's first navigation report before it fails with -207. (proposal) 30 s.
    package var hostReportTimeout: Duration
    /// The browser the `browser` queue-page driver runs (nil: `QueueItBrowserDriver.defaultBrowserPath`).
    package var browserPath: String?
    /// The `chromedriver` the `browser` queue-page driver starts (nil: found on `PATH`, else
    /// `QueueItBrowserDriver.defaultChromedriverPath`).
    package var chromedriverPath: String?
    /// Take a valid pass from the pass store instead of calling the server.
    package var reuseStoredPass: Bool
    /// On `queueit://restartSession`, enqueue again inside the same session (true) or end the
    /// session as closed with code -204 (false; the facade's SDK-like behaviour).
    package var autoRestartSession: Bool

    /// The default `userAgent`.
    public static let defaultUserAgent = "WaitingRoom-Swift/1.0 (Linux; QueueIt)"

    /// Creates and validates a configuration.
    public init(
        customerId: String, waitingRoomId: String? = nil, waitingRoomDomain: String? = nil, pathPrefix: String? = nil,
        layoutName: String? = nil, language: String? = nil, userAgent: String = QueueItConfiguration.defaultUserAgent,
        userId: String? = nil, sdkVersion: String = QueueItEnqueueBody.defaultSDKVersion,
        requestTimeout: Duration = .seconds(10), pollInterval: Duration = .seconds(5), viewDelay: Duration = .zero,
        queuePage: QueueItQueuePageMode = .auto, reuseStoredPass: Bool = true, autoRestartSession: Bool = true,
        followMaxWait: Duration = QueueItHTTPFollowDriver.defaultMaxWait,
        browserPath: String? = nil, chromedriverPath: String? = nil,
        hostReportTimeout: Duration = QueueItHostDrivenPageDriver.defaultReportTimeout
    ) throws(WaitingRoomError) {
        self.hostReportTimeout = hostReportTimeout
        self.customerId = customerId
        self.waitingRoomId = waitingRoomId.flatMap { $0.isEmpty ? nil : $0 }
        self.waitingRoomDomain = waitingRoomDomain.flatMap { $0.isEmpty ? nil : $0 }
        self.pathPrefix = pathPrefix
        self.layoutName = layoutName
        self.language = language
        self.userAgent = userAgent
        self.userId = userId ?? UUID().uuidString.lowercased()
        self.sdkVersion = sdkVersion
        self.requestTimeout = requestTimeout
        self.pollInterval = pollInterval
        self.viewDelay = viewDelay
        self.queuePage = queuePage
        self.followMaxWait = followMaxWait
        self.browserPath = browserPath.flatMap { $0.isEmpty ? nil : $0 }
        self.chromedriverPath = chromedriverPath.flatMap { $0.isEmpty ? nil : $0 }
        self.reuseStoredPass = reuseStoredPass
        self.autoRestartSession = autoRestartSession
        // Validate now so errors name the field before anything is sent.
        _ = try endpoint(waitingRoomId: self.waitingRoomId ?? "placeholder")
        guard requestTimeout > .zero, requestTimeout <= .seconds(120) else {
            throw .outOfRange(
                field: "requestTimeoutSeconds", value: requestTimeout.seconds, range: 0.001...120, unit: "s", vendor: Self.vendorID)
        }
        guard pollInterval >= .milliseconds(1), pollInterval <= .seconds(300) else {
            throw .outOfRange(
                field: "pollIntervalSeconds", value: pollInterval.seconds, range: 0.001...300, unit: "s", vendor: Self.vendorID)
        }
        guard viewDelay >= .zero, viewDelay <= .seconds(60) else {
            throw .outOfRange(field: "viewDelaySeconds", value: viewDelay.seconds, range: 0...60, unit: "s", vendor: Self.vendorID)
        }
        guard hostReportTimeout >= .seconds(1), hostReportTimeout <= .seconds(3600) else {
            throw .outOfRange(
                field: "hostReportTimeoutSeconds", value: hostReportTimeout.seconds, range: 1...3600, unit: "s", vendor: Self.vendorID)
        }
        guard followMaxWait >= .seconds(1), followMaxWait <= .seconds(86_400) else {
            throw .outOfRange(
                field: "followMaxWaitSeconds", value: followMaxWait.seconds, range: 1...86_400, unit: "s", vendor: Self.vendorID)
        }
    }

    /// Decodes the provider settings (see the type's documentation for the keys).
    public init(json: JSONValue) throws {
        let r = try ConfigurationReader(json, vendor: Self.vendorID)
        try r.rejectUnknownKeys([
            "customerId", "waitingRoomId", "waitingRoomDomain", "pathPrefix", "layoutName", "language",
            "userAgent", "userId", "sdkVersion", "requestTimeoutSeconds", "pollIntervalSeconds",
            "viewDelaySeconds", "queuePage", "followMaxWaitSeconds", "browserPath", "chromedriverPath",
            "reuseStoredPass", "autoRestartSession", "hostReportTimeoutSeconds"
        ])
        var mode = QueueItQueuePageMode.auto
        if let m = try r.string("queuePage") {
            guard let parsed = QueueItQueuePageMode(rawValue: m) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "queuePage", "'\(m)' is not one of auto, host, follow, browser", vendor: Self.vendorID)
            }
            mode = parsed
        }
        try self.init(
            customerId: try r.requiredString("customerId"),
            waitingRoomId: try r.string("waitingRoomId"),
            waitingRoomDomain: try r.string("waitingRoomDomain"),
            pathPrefix: try r.string("pathPrefix"),
            layoutName: try r.string("layoutName"),
            language: try r.string("language"),
            userAgent: try r.string("userAgent") ?? Self.defaultUserAgent,
            userId: try r.string("userId"),
            sdkVersion: try r.string("sdkVersion") ?? QueueItEnqueueBody.defaultSDKVersion,
            requestTimeout: .milliseconds(Int64((try r.double("requestTimeoutSeconds", range: 0.001...120) ?? 10) * 1000)),
            pollInterval: .milliseconds(Int64((try r.double("pollIntervalSeconds", range: 0.001...300) ?? 5) * 1000)),
            viewDelay: .milliseconds(Int64((try r.double("viewDelaySeconds", range: 0...60) ?? 0) * 1000)),
            queuePage: mode,
            reuseStoredPass: try r.bool("reuseStoredPass") ?? true,
            autoRestartSession: try r.bool("autoRestartSession") ?? true,
            followMaxWait: .milliseconds(
                Int64(
                    (try r.double("followMaxWaitSeconds", range: 1...86_400)
                        ?? QueueItHTTPFollowDriver.defaultMaxWait.seconds) * 1000)),
            browserPath: try r.string("browserPath"),
            chromedriverPath: try r.string("chromedriverPath"),
            hostReportTimeout: .milliseconds(
                Int64(
                    (try r.double("hostReportTimeoutSeconds", range: 1...3600)
                        ?? QueueItHostDrivenPageDriver.defaultReportTimeout.seconds) * 1000)))
    }

    /// The queue-page driver ``queuePage`` names: `auto` ⇒ ``QueueItAutoPageDriver`` (a new
    /// host-driven driver, else HTTP-follow); `host` ⇒ a new ``QueueItHostDrivenPageDriver``
    /// bounded by ``hostReportTimeout``; `follow` ⇒ ``QueueItHTTPFollowDriver`` bounded by
    /// ``followMaxWait``; `browser` ⇒ the `QueueItBrowser` module's `QueueItBrowserDriver` with
    /// ``browserPath`` / ``chromedriverPath``, bounded by ``followMaxWait``, once that module is
    /// installed (`QueueItBrowserDriver.install()`; else a driver that fails saying so).
    package func makePageDriver() -> any QueuePageDriver {
        let follow = QueueItHTTPFollowDriver(pollInterval: pollInterval, requestTimeout: requestTimeout, maxWait: followMaxWait)
        switch queuePage {
        case .auto: return QueueItAutoPageDriver(host: QueueItHostDrivenPageDriver(reportTimeout: hostReportTimeout), headless: follow)
        case .host: return QueueItHostDrivenPageDriver(reportTimeout: hostReportTimeout)
        case .follow: return follow
        case .browser: return QueueItBrowserDriverSlot.driver(for: self)
        }
    }

    public func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider {
        QueueItProvider(configuration: self, environment: environment)
    }

    /// The endpoint for a waiting room (the configured domain and prefix).
    package func endpoint(customerId: String? = nil, waitingRoomId: String) throws(WaitingRoomError) -> QueueItEndpoint {
        do {
            return try QueueItEndpoint(
                customerId: customerId ?? self.customerId, waitingRoomId: waitingRoomId,
                waitingRoomDomain: waitingRoomDomain, pathPrefix: pathPrefix)
        } catch {
            throw WaitingRoomError.invalidConfiguration(field: error.field, error.message, vendor: Self.vendorID)
        }
    }
}

extension RetryPolicy {
    /// Queue-it's enqueue retries (docs/queueit-protocol.md §3.2): after a failure wait 1, 2, 4, 8 s and try
    /// again; then report `.unavailable` with code 3 "Error! Queue is unavailable.". 4xx answers
    /// are rejections and are not retried. A fresh policy run starts for every enqueue (the SDK's
    /// leftover backoff is not kept). Attempt deadline 10 s.
    ///
    /// Source: `queueit/ios-webui-sdk`
    /// `QueueITLib/QueueITWaitingRoomProvider.m` @ 3.5.2 (`90fcd35`) and `queueit/android-webui-sdk`
    /// `QueueITWaitingRoomProvider.java` @ 3.0.0 (`9b497c7`): `INITIAL_WAIT_RETRY_SEC = 1`,
    /// `MAX_RETRY_SEC = 10`, `delta *= 2` while `delta < 10` ⇒ 4 retries, 5 attempts; iOS 3.5.2
    /// waits first, then retries (`dispatch_after`); the failure after that reports unavailable
    /// (iOS code 3). The 10 s attempt deadline is ours (the sources name none).
    package static let queueIt = RetryPolicy.doublingBackoff(
        initial: .seconds(1), limit: .seconds(10), attemptTimeout: .seconds(10),
        unavailableCode: QueueItErrorCode.queueUnavailable.rawValue, message: QueueItErrorCode.queueUnavailable.message)

    /// Reloads of a queue page that failed to load (``QueueItHTTPFollowDriver``): wait 1, 2, 4,
    /// 8, 16, 30 s before reloads 1…6, then report `.unavailable` with code 3 "Error! Queue is
    /// unavailable.". No attempt deadline of its own (the driver's `requestTimeout` is used).
    ///
    /// Source: `queueit/android-webui-sdk`
    /// `QueueActivityBase.java` / `CHANGELOG.md` @ 3.0.0 (`9b497c7`): on a main-frame load error
    /// the web view reloads after 1, 2, 4, 8, 16 and 30 s, at most 6 attempts. The sources do
    /// not say what Android reports after the last one; reporting it like an exhausted enqueue
    /// (unavailable, code 3) is our proposal (`Vendors/QueueIt/README.md`).
    package static let queueItPage = RetryPolicy(
        attemptTimeout: nil, retries: 6,
        delays: [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30)],
        pacing: .afterFailure,
        exhaustion: .unavailable(code: QueueItErrorCode.queueUnavailable.rawValue, message: QueueItErrorCode.queueUnavailable.message))

    /// ``queueIt`` with another attempt deadline.
    package static func queueIt(attemptTimeout: Duration) -> RetryPolicy {
        var p = RetryPolicy.queueIt
        p.attemptTimeout = attemptTimeout
        return p
    }
}
