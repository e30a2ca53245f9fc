import Foundation
import Logging
import Synchronization
import WaitingRoom

/// Queue-it specific happenings a facade or app can observe (beyond the core events).
public struct QueueItSessionObserver: Sendable {
    /// The queue page is about to be shown (before the view delay): `notifyQueueViewWillOpen`.
    public var viewWillOpen: @Sendable (QueueItQueuePage) -> Void
    /// The view delay is over and the page driver starts: `notifyQueueViewDidAppear`.
    public var viewDidAppear: @Sendable (QueueItQueuePage) -> Void
    /// A page event (queue URL changed, progress, user exited, external link).
    public var pageEvent: @Sendable (QueuePageEvent) -> Void

    public init(viewWillOpen: @escaping @Sendable (QueueItQueuePage) -> Void = { _ in },
                viewDidAppear: @escaping @Sendable (QueueItQueuePage) -> Void = { _ in },
                pageEvent: @escaping @Sendable (QueuePageEvent) -> Void = { _ in }) {
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
    public let configuration: QueueItConfiguration
    public let environment: ProviderEnvironment
    public let driver: any QueuePageDriver
    public let connectivity: any QueueItConnectivity
    public let observer: QueueItSessionObserver
    let logger: Logger
    let dedup = SessionDeduplicator()
    let inFlight = Atomic<Int>(0)

    /// - Parameters:
    ///   - driver: how queue pages are waited through; default from `configuration.queuePage`
    ///     (`auto` (the default) ⇒ the host's when one is attached, else HTTP-follow;
    ///     `host` ⇒ a new ``QueueItHostDrivenPageDriver``, see ``hostDriver``;
    ///     `follow` ⇒ ``QueueItHTTPFollowDriver`` bounded by `followMaxWait`; `browser` ⇒
    ///     ``QueueItBrowserDriver``; see ``QueueItConfiguration/makePageDriver()``).
    ///   - connectivity: offline check before each attempt (default: assume online).
    public init(configuration: QueueItConfiguration, environment: ProviderEnvironment = ProviderEnvironment(),
                driver: (any QueuePageDriver)? = nil, connectivity: any QueueItConnectivity = QueueItAssumeOnline(),
                observer: QueueItSessionObserver = QueueItSessionObserver()) {
        self.configuration = configuration
        self.environment = environment
        self.driver = driver ?? configuration.makePageDriver()
        self.connectivity = connectivity
        self.observer = observer
        self.logger = environment.logger(for: QueueItConfiguration.vendorID)
    }

    /// The host-driven driver, when this provider can hand queue pages to the host (`queuePage`
    /// `host`, or `auto`, the default, once a host calls ``QueueItHostDrivenPageDriver/attach(onShow:)``):
    /// show each page (``QueueItHostDrivenPageDriver/pages``) and report its navigations with
    /// ``QueueItHostDrivenPageDriver/navigate(to:kind:on:)``.
    public var hostDriver: QueueItHostDrivenPageDriver? {
        driver as? QueueItHostDrivenPageDriver ?? (driver as? QueueItAutoPageDriver)?.host
    }

    /// Whether an enqueue call of this provider is running (a real flag, unlike iOS ≥3.1.14).
    public var isRequestInProgress: Bool { inFlight.load(ordering: .acquiring) > 0 }

    var client: QueueItEnqueueClient {
        QueueItEnqueueClient(transport: environment.transport, clock: environment.clock, connectivity: connectivity,
                             policy: .queueIt(attemptTimeout: configuration.requestTimeout), logger: logger,
                             monitor: environment.connectivity)
    }

    /// The room key and enqueue call an entry stands for.
    public func call(for entry: Entry) throws(WaitingRoomError) -> (RoomKey, QueueItEnqueueCall) {
        let customer = entry.room.scope.isEmpty ? configuration.customerId : entry.room.scope
        guard let room = entry.room.room.isEmpty ? configuration.waitingRoomId : entry.room.room else {
            throw WaitingRoomError.invalidConfiguration(field: "waitingRoomId", "no waiting room: set it in the configuration or the entry's room", vendor: vendorID)
        }
        let endpoint = try configuration.endpoint(customerId: customer, waitingRoomId: room)
        var token: String?, key: String?
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
    public func enqueueOnce(_ entry: Entry) async throws -> (RoomKey, QueueItEnqueueCall, QueueItEnqueueResponse) {
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
        return Pass(vendor: vendorID, room: room, credential: token ?? "", kind: .token, issuedAt: environment.clock.now(),
                    expiresAt: parsed?.expiresAt, targetURL: targetURL ?? response?.eventTargetUrl,
                    redirectType: token == nil ? nil : QueueItRedirectType(token: token).rawValue, details: details)
    }

    /// Saves a pass that has a token with an expiry in the future.
    func persist(_ pass: Pass) async {
        guard !pass.credential.isEmpty, let exp = pass.expiresAt, exp > environment.clock.now() else { return }
        do { try await environment.passStore.save(pass) } catch {
            logger.warning("could not save the pass", metadata: ["error": "\(error)"])
        }
    }

    func storedPass(_ room: RoomKey) async -> Pass? {
        guard configuration.reuseStoredPass else { return nil }
        return try? await environment.passStore.pass(vendor: vendorID, room: room)
    }

    public func tryPass(_ entry: Entry) async throws -> TryPassResult {
        let (room, _) = try call(for: entry)
        if let pass = await storedPass(room) {
            return TryPassResult(disposition: .passed, status: status(.storedPass), pass: pass)
        }
        let (_, _, r) = try await enqueueOnce(entry)
        let rt = r.redirectType
        switch rt.action {
        case .passed:
            let pass = makePass(room: room, token: r.token, response: r, targetURL: nil)
            await persist(pass)
            return TryPassResult(disposition: .passed, status: status(.ok, "passed (redirect type \(rt.rawValue))"), pass: pass)
        case .disabled:
            return TryPassResult(disposition: .disabled, status: status(.ok, "not queueing (redirect type \(rt.rawValue))"),
                                 pass: makePass(room: room, token: r.token, response: r, targetURL: nil))
        case .showQueue:
            return TryPassResult(disposition: .queue, status: status(.ok, "queue (redirect type \(rt.rawValue))"),
                                 queuePage: QueuePage(queueURL: r.queueUrl ?? "", targetURL: r.eventTargetUrl))
        }
    }

    public func enqueue(_ entry: Entry) throws -> WaitingSession {
        _ = try call(for: entry)
        let engine = QueueItSessionEngine(provider: self)
        return try dedup.session(for: entry, policy: environment.duplicatePolicy) {
            WaitingSession(entry: entry, engine: engine, environment: environment)
        }
    }

    /// Forgets the stored pass of `pass.room` (Queue-it has nothing to give back to the server).
    public func release(_ pass: Pass) async throws -> VendorStatus {
        try await environment.passStore.remove(vendor: vendorID, room: pass.room)
        return VendorStatus(vendor: vendorID, code: 0, message: "nothing to return; the stored pass was removed")
    }
}

/// The session engine: enqueue, classify, wait through the queue page, restart on request.
struct QueueItSessionEngine: WaitingSessionEngine {
    let provider: QueueItProvider
    var vendorID: String { provider.vendorID }
    static let maxRestarts = 50

    func wait(for entry: Entry, context: SessionContext) async -> Outcome {
        let p = provider
        let room: RoomKey
        do { (room, _) = try p.call(for: entry) } catch { return .failed(error) }
        if let pass = await p.storedPass(room) {
            return .passed(pass, p.status(.storedPass))
        }
        var restarts = 0
        while true {
            if Task.isCancelled { return .closed(cancelledStatus) }
            let r: QueueItEnqueueResponse
            let vendor = vendorID
            do {
                (_, _, r) = try await p.enqueueOnce(entry, onRetry: { attempt, wait, error in
                    context.emit(.connection(.reconnecting(attempt: attempt, nextRetryIn: wait),
                                             VendorStatus(vendor: vendor, code: error.vendorCode ?? 0, message: error.message)))
                })
            } catch let e as WaitingRoomError {
                if e.vendorCode == QueueItErrorCode.networkUnavailable.rawValue {
                    context.emit(.connection(.offline, e.status))
                }
                return Task.isCancelled ? .closed(cancelledStatus) : .failed(e)
            } catch {
                return .closed(cancelledStatus)
            }
            let rt = r.redirectType
            switch rt.action {
            case .passed:
                let pass = p.makePass(room: room, token: r.token, response: r, targetURL: nil)
                await p.persist(pass)
                return .passed(pass, p.status(.ok, "passed without queue (redirect type \(rt.rawValue))"))
            case .disabled:
                return .disabled(p.makePass(room: room, token: r.token, response: r, targetURL: nil),
                                 p.status(.ok, "waiting room not queueing (redirect type \(rt.rawValue))"))
            case .showQueue:
                break
            }
            guard let qs = r.queueUrl, let queueURL = URL(string: qs), queueURL.host != nil,
                  let ts = r.eventTargetUrl, let targetURL = URL(string: ts), targetURL.host != nil else {
                return .failed(WaitingRoomError(.invalidResponse, vendor: vendorID, vendorCode: 200,
                                                message: "enqueue asked to queue (redirect type \(rt.rawValue)) without a usable QueueUrl and EventTargetUrl"))
            }
            let page = QueueItQueuePage(queueURL: queueURL, targetURL: targetURL, pathPrefix: p.configuration.waitingRoomDomain == nil ? nil : p.configuration.pathPrefix)
            p.observer.viewWillOpen(page)
            context.emit(.queueOpened(QueuePage(queueURL: qs, targetURL: ts), p.status(.ok, "queue (redirect type \(rt.rawValue))")))
            if p.configuration.viewDelay > .zero {
                do { try await p.environment.clock.sleep(for: p.configuration.viewDelay) } catch { return .closed(cancelledStatus) }
            }
            p.observer.viewDidAppear(page)
            let observer = p.observer
            let pageContext = QueuePageContext(
                transport: p.environment.transport, clock: p.environment.clock, logger: p.logger,
                userAgent: entry.attributes["userAgent"] ?? p.configuration.userAgent,
                emit: { event in
                    observer.pageEvent(event)
                    switch event {
                    case .progress(let prog): context.emit(.progress(prog, VendorStatus(vendor: vendor, code: 200, message: "in queue")))
                    case .queueURLChanged(let url):
                        context.emit(.queuePageChanged(QueuePage(queueURL: url.absoluteString, targetURL: ts),
                                                       VendorStatus(vendor: vendor, code: 200, message: "queue URL changed")))
                    case .userExited:
                        context.emit(.userExited(VendorStatus(vendor: vendor, code: 200, message: "user exited the queue page")))
                    case .reconnecting(let attempt, let wait, let failure):
                        context.emit(.connection(.reconnecting(attempt: attempt, nextRetryIn: wait),
                                                 VendorStatus(vendor: vendor, code: 0, message: failure)))
                    case .externalLink: break
                    }
                })
            switch await p.driver.wait(on: page, context: pageContext) {
            case .passed(let token):
                // The pass is kept even if the caller cancelled meanwhile: a later tryPass/session
                // finds it in the store instead of queueing again (no pass is lost).
                let pass = p.makePass(room: room, token: token, response: r, targetURL: ts)
                await p.persist(pass)
                if Task.isCancelled { return .closed(cancelledStatus) }
                return .passed(pass, p.status(.ok, token == nil ? "passed the queue (no queueittoken on the target URL)" : "passed the queue"))
            case .closed:
                return Task.isCancelled ? .closed(cancelledStatus) : .closed(p.status(.viewClosed))
            case .restartSession:
                guard p.configuration.autoRestartSession else { return .closed(p.status(.sessionRestart)) }
                restarts += 1
                if restarts > Self.maxRestarts {
                    return .failed(WaitingRoomError(.invalidResponse, vendor: vendorID, vendorCode: QueueItErrorCode.sessionRestart.rawValue,
                                                    message: "the queue page asked to restart \(restarts) times"))
                }
                context.emit(.sessionRestarted(p.status(.sessionRestart)))
            case .failed(let e):
                return Task.isCancelled ? .closed(cancelledStatus) : .failed(e)
            }
        }
    }

    func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus {
        VendorStatus(vendor: vendorID, code: 0, message: "nothing to return")
    }
}
