import Foundation
import Logging
import Synchronization
import WaitingRoom

/// Queue-it specific happenings a facade or app can observe (beyond the core events).
package struct QueueItSessionObserver: Sendable {
    /// The queue page is about to be shown (before the view delay): `notifyQueueViewWillOpen`.
    package var viewWillOpen: @Sendable (QueueItQueuePage) -> Void
    /// The view delay is over and the page driver starts: `notifyQueueViewDidAppear`.
    package var viewDidAppear: @Sendable (QueueItQueuePage) -> Void
    /// A page event (queue URL changed, progress, user exited, external link).
    package var pageEvent: @Sendable (QueuePageEvent) -> Void

    package init(
        viewWillOpen: @escaping @Sendable (QueueItQueuePage) -> Void = { _ in },
        viewDidAppear: @escaping @Sendable (QueueItQueuePage) -> Void = { _ in },
        pageEvent: @escaping @Sendable (QueuePageEvent) -> Void = { _ in }
    ) {
        self.viewWillOpen = viewWillOpen
        self.viewDidAppear = viewDidAppear
        self.pageEvent = pageEvent
    }
}

/// The Queue-it backend: enqueue (docs/queueit-protocol.md §1–3), classification by redirect type (§2.2),
/// waiting through the queue page with a ``QueuePageDriver`` (§4), passes kept in the
/// `PassStore` until the token's `ts_` expiry.
public final class QueueItProvider: WaitingRoomProvider {
    public let vendorID = QueueItConfiguration.vendorID
    package let configuration: QueueItConfiguration
    package let environment: ProviderEnvironment
    package let driver: any QueuePageDriver
    package let connectivity: any QueueItConnectivity
    package let observer: QueueItSessionObserver
    let logger: Logger
    /// The stored passes (kept until the token's `ts_` expiry).
    let passes: PassKeeper
    let dedup = SessionDeduplicator()
    let inFlight = Atomic<Int>(0)

    /// - Parameters:
    ///   - driver: how queue pages are waited through; default from `configuration.queuePage`
    ///     (`auto` (the default) ⇒ the host's when one is attached, else HTTP-follow;
    ///     `host` ⇒ a new ``QueueItHostDrivenPageDriver``, see ``hostDriver``;
    ///     `follow` ⇒ ``QueueItHTTPFollowDriver`` bounded by `followMaxWait`; `browser` ⇒
    ///     `QueueItBrowserDriver` (module `QueueItBrowser`); see ``QueueItConfiguration/makePageDriver()``).
    ///   - connectivity: offline check before each attempt (default: assume online).
    package init(
        configuration: QueueItConfiguration, environment: ProviderEnvironment = ProviderEnvironment(),
        driver: (any QueuePageDriver)? = nil, connectivity: any QueueItConnectivity = QueueItAssumeOnline(),
        observer: QueueItSessionObserver = QueueItSessionObserver()
    ) {
        self.configuration = configuration
        self.environment = environment
        self.driver = driver ?? configuration.makePageDriver()
        self.connectivity = connectivity
        self.observer = observer
        self.logger = environment.logger(for: QueueItConfiguration.vendorID)
        self.passes = PassKeeper(
            vendorID: QueueItConfiguration.vendorID, environment: environment,
            reusesStoredPasses: configuration.reuseStoredPass, keepsOnlyExpiring: true)
    }

    /// The host-driven driver, when this provider can hand queue pages to the host (`queuePage`
    /// `host`, or `auto`, the default, once a host calls ``QueueItHostDrivenPageDriver/attach(onShow:)``):
    /// show each page (``QueueItHostDrivenPageDriver/pages``) and report its navigations with
    /// ``QueueItHostDrivenPageDriver/navigate(to:kind:on:)``.
    public var hostDriver: QueueItHostDrivenPageDriver? {
        driver as? QueueItHostDrivenPageDriver ?? (driver as? QueueItAutoPageDriver)?.host
    }

    /// Whether an enqueue call of this provider is running (a real flag, unlike iOS ≥3.1.14).
    package var isRequestInProgress: Bool { inFlight.load(ordering: .acquiring) > 0 }

    var client: QueueItEnqueueClient {
        QueueItEnqueueClient(
            transport: environment.transport, clock: environment.clock, connectivity: connectivity,
            policy: .queueIt(attemptTimeout: configuration.requestTimeout), logger: logger,
            monitor: environment.connectivity)
    }

    /// The room key and enqueue call an entry stands for.
    package func call(for entry: Entry) throws(WaitingRoomError) -> (RoomKey, QueueItEnqueueCall) {
        let customer = entry.room.scope.isEmpty ? configuration.customerId : entry.room.scope
        guard let room = entry.room.room.isEmpty ? configuration.waitingRoomId : entry.room.room else {
            throw WaitingRoomError.invalidConfiguration(
                field: "waitingRoomId", "no waiting room: set it in the configuration or the entry's room", vendor: vendorID)
        }
        let endpoint = try configuration.endpoint(customerId: customer, waitingRoomId: room)
        var token: String?
        var key: String?
        switch entry.credential {
        case .enqueueToken(let t)?: token = t
        case .enqueueKey(let k)?: key = k
        case nil: break
        }
        let body = QueueItEnqueueBody(
            userId: entry.userId ?? configuration.userId,
            userAgent: entry.attributes["userAgent"] ?? configuration.userAgent,
            sdkVersion: configuration.sdkVersion,
            layoutName: entry.attributes["layoutName"] ?? configuration.layoutName,
            language: entry.attributes["language"] ?? configuration.language,
            enqueueToken: token, enqueueKey: key)
        return (RoomKey(scope: endpoint.customerId, room: endpoint.waitingRoomId), QueueItEnqueueCall(endpoint: endpoint, body: body))
    }

    /// One enqueue exchange with retries: the raw answer (what the SDK's provider hands out).
    package func enqueueOnce(_ entry: Entry) async throws -> (RoomKey, QueueItEnqueueCall, QueueItEnqueueResponse) {
        try await enqueueOnce(entry, onRetry: { _, _, _ in })
    }

    /// ``enqueueOnce(_:)`` that tells `onRetry` before each retry (number, wait, failure).
    func enqueueOnce(
        _ entry: Entry, onRetry: @escaping @Sendable (Int, Duration, WaitingRoomError) -> Void
    ) async throws -> (RoomKey, QueueItEnqueueCall, QueueItEnqueueResponse) {
        let (room, call) = try call(for: entry)
        inFlight.add(1, ordering: .acquiringAndReleasing)
        defer { inFlight.subtract(1, ordering: .acquiringAndReleasing) }
        let response = try await client.enqueue(call, onRetry: onRetry)
        return (room, call, response)
    }

    func status(_ code: QueueItErrorCode, _ message: String? = nil) -> VendorStatus {
        VendorStatus(vendor: vendorID, code: code.rawValue, message: message ?? code.message)
    }

    /// A pass for a received token (kind `.token`, expiry = `ts_`).
    func makePass(room: RoomKey, token: String?, response: QueueItEnqueueResponse?, targetURL: String?) -> Pass {
        let parsed = token.map(QueueItToken.init)
        var details: [String: String] = [:]
        if let q = parsed?.queueId ?? response?.queueId { details["queueId"] = q }
        if let u = response?.queueUrl { details["queueUrl"] = u }
        return Pass(
            vendor: vendorID, room: room, credential: token ?? "", kind: .token, issuedAt: environment.clock.now(),
            expiresAt: parsed?.expiresAt, targetURL: targetURL ?? response?.eventTargetUrl,
            redirectType: token == nil ? nil : QueueItRedirectType(token: token).rawValue, details: details)
    }

    public func tryPass(_ entry: Entry) async throws -> TryPassResult {
        let (room, _) = try call(for: entry)
        if let stored = await passes.storedResult(room, status: status(.storedPass)) { return stored }
        let (_, _, r) = try await enqueueOnce(entry)
        let rt = r.redirectType
        switch rt.action {
        case .passed:
            let pass = makePass(room: room, token: r.token, response: r, targetURL: nil)
            await passes.keep(pass)
            return TryPassResult(disposition: .passed, status: status(.ok, "passed (redirect type \(rt.rawValue))"), pass: pass)
        case .disabled:
            return TryPassResult(
                disposition: .disabled, status: status(.ok, "not queueing (redirect type \(rt.rawValue))"),
                pass: makePass(room: room, token: r.token, response: r, targetURL: nil))
        case .showQueue:
            return TryPassResult(
                disposition: .queue, status: status(.ok, "queue (redirect type \(rt.rawValue))"),
                queuePage: QueuePage(queueURL: r.queueUrl ?? "", targetURL: r.eventTargetUrl))
        }
    }

    public func enqueue(_ entry: Entry) throws -> WaitingSession {
        _ = try call(for: entry)
        return try dedup.session(for: entry, engine: PollingSessionEngine(QueueItWait(provider: self)), environment: environment)
    }

    /// Forgets the stored pass of `pass.room` (Queue-it has nothing to give back to the server).
    public func release(_ pass: Pass) async throws -> VendorStatus {
        try await passes.forget(pass.room)
        return VendorStatus(vendor: vendorID, code: 0, message: "nothing to return; the stored pass was removed")
    }
}
