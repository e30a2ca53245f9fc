import Foundation
import Logging
import Synchronization
import WaitingRoom

/// The hybrid (KnownUser) client (docs/queueit-protocol.md §7.1): wraps calls to an API protected by a Queue-it
/// server-side connector.
///
/// Every call carries `x-queueit-ajaxpageurl` (the request URL, percent-encoded) and the stored
/// Queue-it cookies. When the answer carries `x-queueit-redirect`, the client reads `c`, `e`,
/// `l`, `cid`, `enqueuetoken` and the behind-proxy host/prefix from it, forgets its token and
/// cookies, waits in that room, and repeats the call with `queueittoken={token}`; it starts over
/// if it is redirected again, at most `maxQueueRounds` times.
public final class QueueItHybridClient: Sendable {
    /// Waits in the room a redirect names and returns the `queueittoken` (nil if none came).
    package typealias Waiter = @Sendable (QueueItRedirectInfo) async throws -> String?

    struct StoredCookie: Sendable {
        var value: String
        var expires: Date?
    }

    package let transport: any HTTPTransport
    package let clock: any WaitingRoomClock
    package let maxQueueRounds: Int
    let waiter: Waiter
    let cookies = Mutex<[String: StoredCookie]>([:])
    let lastToken = Mutex<String?>(nil)
    let logger: Logger

    /// - Parameters:
    ///   - environment: transport, clock, pass store and logger for the calls and the waiting.
    ///   - template: settings used for waiting (user agent, user id, poll interval, queue page
    ///     mode…); the customer, room, layout and language come from the redirect, and so do the
    ///     domain and prefix unless the template configures a `waitingRoomDomain` (see
    ///     ``configuration(for:template:)``).
    ///   - driver: the queue page driver (default: from `template.queuePage`: one shared
    ///     ``QueueItHostDrivenPageDriver`` (``hostDriver``) for `host`, the default, or HTTP-follow).
    public convenience init(
        environment: ProviderEnvironment = ProviderEnvironment(), template: QueueItConfiguration? = nil,
        driver: (any QueuePageDriver)? = nil, connectivity: any QueueItConnectivity = QueueItAssumeOnline(),
        maxQueueRounds: Int = 3
    ) {
        let host: QueueItHostDrivenPageDriver? =
            driver == nil && (template?.queuePage ?? .host) == .host
            ? QueueItHostDrivenPageDriver(reportTimeout: template?.hostReportTimeout ?? QueueItHostDrivenPageDriver.defaultReportTimeout)
            : nil
        let chosen: (any QueuePageDriver)? = driver ?? host
        let waiter: Waiter = { info in
            try await QueueItHybridClient.wait(
                info: info, environment: environment, template: template, driver: chosen, connectivity: connectivity)
        }
        self.init(
            transport: environment.transport, clock: environment.clock, maxQueueRounds: maxQueueRounds,
            logger: environment.logger(for: QueueItConfiguration.vendorID), hostDriver: host, waiter: waiter)
    }

    /// The host-driven driver the app feeds the queue page's navigations to, when the client
    /// made one (no `driver` given and the template's `queuePage` is `host`).
    public let hostDriver: QueueItHostDrivenPageDriver?

    /// Creates a client with a custom way of waiting.
    package init(
        transport: any HTTPTransport, clock: any WaitingRoomClock, maxQueueRounds: Int = 3,
        logger: Logger = Logger(label: "waitingroom.queueit"), hostDriver: QueueItHostDrivenPageDriver? = nil,
        waiter: @escaping Waiter
    ) {
        self.transport = transport
        self.clock = clock
        self.maxQueueRounds = max(1, maxQueueRounds)
        self.logger = logger
        self.hostDriver = hostDriver
        self.waiter = waiter
    }

    /// The settings used to wait in the room a redirect names. Customer, room, `enqueuetoken`,
    /// layout (`l`) and language (`cid`) come from the redirect. The waiting-room domain and
    /// prefix come from the template when it configures a `waitingRoomDomain` (an app behind its
    /// own reverse proxy knows its domain; the connector's redirect may name another host), else
    /// from the redirect URL's host and path (the Android demo's behind-proxy rule, docs/queueit-protocol.md §7.1).
    package static func configuration(for info: QueueItRedirectInfo, template: QueueItConfiguration?) throws -> QueueItConfiguration {
        let t = template
        let configured = t?.waitingRoomDomain != nil
        return try QueueItConfiguration(
            customerId: info.customerId, waitingRoomId: info.waitingRoomId,
            waitingRoomDomain: configured ? t?.waitingRoomDomain : info.waitingRoomDomain,
            pathPrefix: configured ? t?.pathPrefix : info.pathPrefix,
            layoutName: info.layoutName ?? t?.layoutName, language: info.language ?? t?.language,
            userAgent: t?.userAgent ?? QueueItConfiguration.defaultUserAgent, userId: t?.userId,
            sdkVersion: t?.sdkVersion ?? QueueItEnqueueBody.defaultSDKVersion, requestTimeout: t?.requestTimeout ?? .seconds(10),
            pollInterval: t?.pollInterval ?? .seconds(5), viewDelay: .zero, queuePage: t?.queuePage ?? .host,
            reuseStoredPass: false, autoRestartSession: true,
            followMaxWait: t?.followMaxWait ?? QueueItHTTPFollowDriver.defaultMaxWait,
            browserPath: t?.browserPath, chromedriverPath: t?.chromedriverPath)
    }

    /// The default waiting: a provider for the redirect's room, one session, its outcome.
    package static func wait(
        info: QueueItRedirectInfo, environment: ProviderEnvironment, template: QueueItConfiguration?,
        driver: (any QueuePageDriver)?, connectivity: any QueueItConnectivity
    ) async throws -> String? {
        let config = try configuration(for: info, template: template)
        let provider = QueueItProvider(configuration: config, environment: environment, driver: driver, connectivity: connectivity)
        let room = RoomKey(scope: info.customerId, room: info.waitingRoomId)
        // The connector asked us to queue: a stored token for this room is no longer good.
        try? await environment.passStore.remove(vendor: QueueItConfiguration.vendorID, room: room)
        let entry = Entry(room: room, credential: info.enqueueToken.map { .enqueueToken($0) })
        let session = try provider.enqueue(entry)
        switch await session.outcome() {
        case .passed(let pass, _): return pass.credential.isEmpty ? nil : pass.credential
        case .disabled(let pass, _): return pass.flatMap { $0.credential.isEmpty ? nil : $0.credential }
        case .failed(let e): throw e
        case .blocked(let s), .closed(let s):
            throw WaitingRoomError(
                .invalidUse, vendor: QueueItConfiguration.vendorID, vendorCode: s.code,
                message: "the queue ended without a pass: \(s.message)")
        }
    }

    /// The last `queueittoken` obtained.
    package var queueItToken: String? { lastToken.withLock { $0 } }

    /// Queue-it cookies currently kept (`name=value`).
    package var cookieHeader: String? {
        let now = clock.now()
        let pairs: [String] = cookies.withLock { jar in
            jar = jar.filter { $0.value.expires.map { $0 > now } ?? true }
            return jar.keys.sorted().compactMap { k in jar[k].map { "\(k)=\($0.value)" } }
        }
        return pairs.isEmpty ? nil : pairs.joined(separator: "; ")
    }

    /// Forgets cookies and token.
    package func reset() {
        cookies.withLock { $0.removeAll() }
        lastToken.withLock { $0 = nil }
    }

    /// Sends `request` to the protected API, queueing when the connector says so.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var token: String?
        var rounds = 0
        while true {
            try Task.checkCancellation()
            var req = request
            if let token {
                req.url = Self.appendingToken(token, to: request.url)
            }
            req.headers.set("x-queueit-ajaxpageurl", QueueItPercent.encodeComponent(request.url))
            if let jar = cookieHeader {
                let existing = request.headers.value(for: "Cookie")
                req.headers.set("Cookie", existing.map { "\($0); \(jar)" } ?? jar)
            }
            let response = try await transport.send(req)
            store(setCookies: response.headers.values(for: "Set-Cookie"))
            guard let redirect = response.headers.value(for: "x-queueit-redirect") else {
                if let token { lastToken.withLock { $0 = token } }
                return response
            }
            rounds += 1
            guard rounds <= maxQueueRounds else {
                throw WaitingRoomError(
                    .invalidResponse, vendor: QueueItConfiguration.vendorID, vendorCode: QueueItErrorCode.invalidRedirect.rawValue,
                    message: "the protected API kept redirecting to the queue (\(maxQueueRounds) rounds) for \(request.url)")
            }
            guard let info = QueueItRedirectInfo.parse(headerValue: redirect) else {
                throw WaitingRoomError(
                    .invalidResponse, vendor: QueueItConfiguration.vendorID, vendorCode: QueueItErrorCode.invalidRedirect.rawValue,
                    message: "x-queueit-redirect is not a queue URL with c and e: \(redirect.prefix(200))")
            }
            logger.info("protected API asked to queue", metadata: ["customer": "\(info.customerId)", "room": "\(info.waitingRoomId)"])
            // Step 5: clear token and cookies, queue again.
            reset()
            token = try await waiter(info)
        }
    }

    static func appendingToken(_ token: String, to url: String) -> String {
        let (base, _) = QueueItRequestValidator.splitToken(url)
        var head = base
        var fragment = ""
        if let h = base.firstIndex(of: "#") {
            head = String(base[..<h])
            fragment = String(base[h...])
        }
        return head + (head.contains("?") ? "&" : "?") + "queueittoken=" + QueueItPercent.encodeComponent(token) + fragment
    }

    /// Keeps cookies whose name starts with `QueueIT` (an empty value or a past expiry removes one).
    func store(setCookies: [String]) {
        let now = clock.now()
        for header in setCookies {
            let parts = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = parts.first, let eq = first.firstIndex(of: "=") else { continue }
            let name = String(first[..<eq])
            let value = String(first[first.index(after: eq)...])
            guard name.hasPrefix("QueueIT") else { continue }
            var expires: Date?
            for attr in parts.dropFirst() {
                let lower = attr.lowercased()
                if lower.hasPrefix("max-age="), let s = Int(attr.dropFirst(8)) {
                    expires = now.addingTimeInterval(TimeInterval(s))
                } else if lower.hasPrefix("expires="), expires == nil {
                    expires = Self.parseHTTPDate(String(attr.dropFirst(8)))
                }
            }
            cookies.withLock { jar in
                if value.isEmpty || (expires.map { $0 <= now } ?? false) {
                    jar.removeValue(forKey: name)
                } else {
                    jar[name] = StoredCookie(value: value, expires: expires)
                }
            }
        }
    }

    static func parseHTTPDate(_ s: String) -> Date? {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return f.date(from: s)
    }
}
