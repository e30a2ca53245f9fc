import Foundation
import Synchronization
import WaitingRoom

// The vendor SDK's shapes (docs/queueit-protocol.md §5–6), on top of `QueueItProvider`. Names follow the iOS
// SDK; delegates are separate protocols held weakly, as in `QueueITEngine.h`. Callbacks arrive on
// a background task (there is no main thread to hop to on Linux).

/// `notifyYourTurn` payload.
public struct QueuePassedInfo: Sendable, Hashable {
    /// The `queueittoken` (nil when the target URL carried none).
    public var queueitToken: String?
}

/// `notifyQueueDisabled` payload.
public struct QueueDisabledInfo: Sendable, Hashable {
    public var queueitToken: String?
}

/// Fires when the visitor is through (safetynet, or the target URL was reached).
public protocol QueuePassedDelegate: AnyObject, Sendable { func notifyYourTurn(_ info: QueuePassedInfo) }
/// Fires before the queue page is shown (before the view delay).
public protocol QueueViewWillOpenDelegate: AnyObject, Sendable { func notifyQueueViewWillOpen() }
/// Fires when the queue page driver starts (after the view delay).
public protocol QueueViewDidAppearDelegate: AnyObject, Sendable { func notifyQueueViewDidAppear() }
/// Fires for redirect types disabled, idle and afterevent.
public protocol QueueDisabledDelegate: AnyObject, Sendable { func notifyQueueDisabled(_ info: QueueDisabledInfo?) }
/// Fires when retries are exhausted (code 3); the error delegate fires right after it.
public protocol QueueITUnavailableDelegate: AnyObject, Sendable { func notifyQueueITUnavailable(_ errorMessage: String) }
/// Fires for every failure: 4xx (HTTP status), 3 (unavailable), -100 (offline), page errors.
public protocol QueueITErrorDelegate: AnyObject, Sendable { func notifyQueueError(_ errorMessage: String, errorCode: Int) }
/// Fires after `queueit://close`.
public protocol QueueViewClosedDelegate: AnyObject, Sendable { func notifyViewClosed() }
/// Fires when the page body has the class `exit`.
public protocol QueueUserExitedDelegate: AnyObject, Sendable { func notifyUserExited() }
/// Fires after `queueit://restartSession`; call `run` again to queue anew.
public protocol QueueSessionRestartDelegate: AnyObject, Sendable { func notifySessionRestart() }
/// Fires on a navigation to the queue host.
public protocol QueueUrlChangedDelegate: AnyObject, Sendable { func notifyQueueUrlChanged(_ url: String) }

/// Errors `run*` throws at once (iOS `QueueITRuntimeError`).
public enum QueueITRuntimeError: Int, Error, Sendable, Hashable {
    /// Offline (-100).
    case networkUnavailable = -100
    /// A run is already in progress (10). Unlike iOS ≥3.1.14 this is really checked.
    case requestAlreadyInProgress = 10
    /// The settings are invalid (ours).
    case invalidConfiguration = -200
}

/// The engine facade: `run`, `runWithEnqueueToken`, `runWithEnqueueKey`, view delay, delegates.
public final class QueueITEngine: Sendable {
    struct Delegates {
        weak var passed: (any QueuePassedDelegate)?
        weak var viewWillOpen: (any QueueViewWillOpenDelegate)?
        weak var viewDidAppear: (any QueueViewDidAppearDelegate)?
        weak var disabled: (any QueueDisabledDelegate)?
        weak var unavailable: (any QueueITUnavailableDelegate)?
        weak var error: (any QueueITErrorDelegate)?
        weak var viewClosed: (any QueueViewClosedDelegate)?
        weak var userExited: (any QueueUserExitedDelegate)?
        weak var sessionRestart: (any QueueSessionRestartDelegate)?
        weak var urlChanged: (any QueueUrlChangedDelegate)?
    }

    struct RunState {
        var session: WaitingSession?
        var task: Task<Void, Never>?
        var viewDelay: Duration = .zero
    }

    final class DelegateBox: Sendable {
        let state = Mutex(Delegates())
        func withLock<R>(_ body: (inout Delegates) -> R) -> R { state.withLock { body(&$0) } }
    }

    let delegates = DelegateBox()
    let runState = Mutex(RunState())
    let base: QueueItConfiguration
    let environment: ProviderEnvironment
    let driver: any QueuePageDriver
    let connectivity: any QueueItConnectivity

    /// The driver every run waits through: `driver:` when given, else an HTTP-follow driver when
    /// `template.queuePage` is `follow`, a browser driver when it is `browser`, else one
    /// ``QueueItHostDrivenPageDriver`` (the SDK's web view).
    package var pageDriver: any QueuePageDriver { driver }
    /// The host-driven driver the app feeds navigations to, when the engine uses one.
    public var hostDriver: QueueItHostDrivenPageDriver? {
        driver as? QueueItHostDrivenPageDriver ?? (driver as? QueueItAutoPageDriver)?.host
    }

    /// Mirrors `initWithHost:customerId:eventOrAliasId:layoutName:language:waitingRoomDomain:queuePathPrefix:`.
    public init(
        customerId: String, eventOrAliasId: String, layoutName: String? = nil, language: String? = nil,
        waitingRoomDomain: String? = nil, queuePathPrefix: String? = nil,
        environment: ProviderEnvironment = ProviderEnvironment(), driver: (any QueuePageDriver)? = nil,
        connectivity: any QueueItConnectivity = QueueItAssumeOnline(), template: QueueItConfiguration? = nil
    ) throws {
        var c = try QueueItConfiguration(
            customerId: customerId, waitingRoomId: eventOrAliasId, waitingRoomDomain: waitingRoomDomain,
            pathPrefix: queuePathPrefix, layoutName: layoutName, language: language,
            userAgent: template?.userAgent ?? QueueItConfiguration.defaultUserAgent, userId: template?.userId,
            pollInterval: template?.pollInterval ?? .seconds(5),
            queuePage: template?.queuePage ?? .host,
            followMaxWait: template?.followMaxWait ?? QueueItHTTPFollowDriver.defaultMaxWait,
            browserPath: template?.browserPath, chromedriverPath: template?.chromedriverPath)
        c.reuseStoredPass = false
        c.autoRestartSession = false
        self.base = c
        self.environment = environment
        self.driver = driver ?? c.makePageDriver()
        self.connectivity = connectivity
    }

    // MARK: delegates (weak)
    public var queuePassedDelegate: (any QueuePassedDelegate)? {
        get { delegates.withLock { $0.passed } }
        set { delegates.withLock { $0.passed = newValue } }
    }
    public var queueViewWillOpenDelegate: (any QueueViewWillOpenDelegate)? {
        get { delegates.withLock { $0.viewWillOpen } }
        set { delegates.withLock { $0.viewWillOpen = newValue } }
    }
    public var queueViewDidAppearDelegate: (any QueueViewDidAppearDelegate)? {
        get { delegates.withLock { $0.viewDidAppear } }
        set { delegates.withLock { $0.viewDidAppear = newValue } }
    }
    public var queueDisabledDelegate: (any QueueDisabledDelegate)? {
        get { delegates.withLock { $0.disabled } }
        set { delegates.withLock { $0.disabled = newValue } }
    }
    public var queueITUnavailableDelegate: (any QueueITUnavailableDelegate)? {
        get { delegates.withLock { $0.unavailable } }
        set { delegates.withLock { $0.unavailable = newValue } }
    }
    public var queueErrorDelegate: (any QueueITErrorDelegate)? {
        get { delegates.withLock { $0.error } }
        set { delegates.withLock { $0.error = newValue } }
    }
    public var queueViewClosedDelegate: (any QueueViewClosedDelegate)? {
        get { delegates.withLock { $0.viewClosed } }
        set { delegates.withLock { $0.viewClosed = newValue } }
    }
    public var queueUserExitedDelegate: (any QueueUserExitedDelegate)? {
        get { delegates.withLock { $0.userExited } }
        set { delegates.withLock { $0.userExited = newValue } }
    }
    public var queueSessionRestartDelegate: (any QueueSessionRestartDelegate)? {
        get { delegates.withLock { $0.sessionRestart } }
        set { delegates.withLock { $0.sessionRestart = newValue } }
    }
    public var queueUrlChangedDelegate: (any QueueUrlChangedDelegate)? {
        get { delegates.withLock { $0.urlChanged } }
        set { delegates.withLock { $0.urlChanged = newValue } }
    }

    /// `setViewDelay:` — seconds (iOS units) between "will open" and the page driver starting.
    public func setViewDelay(_ seconds: Int) { runState.withLock { $0.viewDelay = .seconds(max(0, min(60, seconds))) } }
    /// The view delay.
    package var viewDelay: Duration { runState.withLock { $0.viewDelay } }

    /// True while a run is in progress (a real flag, unlike iOS ≥3.1.14 where it is always NO).
    public var isRequestInProgress: Bool { runState.withLock { $0.task != nil } }

    /// Enqueues and waits; outcomes arrive through the delegates.
    public func run() throws(QueueITRuntimeError) { try start(credential: nil) }
    /// `runWithEnqueueToken:`.
    public func runWithEnqueueToken(_ token: String) throws(QueueITRuntimeError) { try start(credential: .enqueueToken(token)) }
    /// `runWithEnqueueKey:`.
    public func runWithEnqueueKey(_ key: String) throws(QueueITRuntimeError) { try start(credential: .enqueueKey(key)) }

    /// Waits until the current run (if any) has delivered its callbacks (useful in tests and CLIs).
    package func waitUntilFinished() async {
        let task = runState.withLock { $0.task }
        await task?.value
    }

    /// Stops waiting (the session is cancelled; no callback fires).
    public func cancel() {
        let (s, t) = runState.withLock { ($0.session, $0.task) }
        s?.cancel()
        t?.cancel()
    }

    func start(credential: Credential?) throws(QueueITRuntimeError) {
        if connectivity.isOffline { throw .networkUnavailable }
        var config = base
        config.viewDelay = viewDelay
        let d = delegates
        let observer = QueueItSessionObserver(
            viewWillOpen: { _ in d.withLock { $0.viewWillOpen }?.notifyQueueViewWillOpen() },
            viewDidAppear: { _ in d.withLock { $0.viewDidAppear }?.notifyQueueViewDidAppear() },
            pageEvent: { event in
                switch event {
                case .queueURLChanged(let u): d.withLock { $0.urlChanged }?.notifyQueueUrlChanged(u.absoluteString)
                case .userExited: d.withLock { $0.userExited }?.notifyUserExited()
                case .progress, .externalLink, .reconnecting: break
                }
            })
        let provider = QueueItProvider(
            configuration: config, environment: environment, driver: driver,
            connectivity: connectivity, observer: observer)
        let entry = Entry(room: RoomKey(scope: config.customerId, room: config.waitingRoomId ?? ""), credential: credential)
        try runState.withLock { (s: inout RunState) throws(QueueITRuntimeError) in
            guard s.task == nil else { throw .requestAlreadyInProgress }
            let session: WaitingSession
            do { session = try provider.enqueue(entry) } catch { throw .invalidConfiguration }
            s.session = session
            s.task = Task { [weak self] in
                let outcome = await session.outcome()
                self?.runState.withLock {
                    $0.task = nil
                    $0.session = nil
                }
                Self.deliver(outcome, delegates: d)
            }
        }
    }

    static func deliver(_ outcome: Outcome, delegates d: DelegateBox) {
        switch outcome {
        case .passed(let pass, _):
            d.withLock { $0.passed }?.notifyYourTurn(QueuePassedInfo(queueitToken: pass.credential.isEmpty ? nil : pass.credential))
        case .disabled(let pass, _):
            d.withLock { $0.disabled }?.notifyQueueDisabled(
                QueueDisabledInfo(queueitToken: pass.flatMap { $0.credential.isEmpty ? nil : $0.credential }))
        case .closed(let s):
            if s.code == QueueItErrorCode.viewClosed.rawValue {
                d.withLock { $0.viewClosed }?.notifyViewClosed()
            } else if s.code == QueueItErrorCode.sessionRestart.rawValue {
                d.withLock { $0.sessionRestart }?.notifySessionRestart()
            }
        case .blocked(let s):
            d.withLock { $0.error }?.notifyQueueError(s.message, errorCode: s.code)
        case .failed(let e):
            let code = e.vendorCode ?? 0
            if e.kind == .unavailable && code == QueueItErrorCode.queueUnavailable.rawValue {
                d.withLock { $0.unavailable }?.notifyQueueITUnavailable(e.message)
            }
            d.withLock { $0.error }?.notifyQueueError(e.message, errorCode: code)
        }
    }
}

/// `QueueTryPassResult`.
public struct QueueTryPassResult: Sendable, Hashable {
    public var queueUrl: String?
    public var targetUrl: String?
    /// The redirect type text (`queue` when there is no token).
    public var redirectType: String
    /// A non-empty token came back.
    public var isPassedThrough: Bool
    public var queueitToken: String?
    /// `QueueUrlTTLInMinutes` (Android still exposes it).
    public var urlTTLInMinutes: Int?
}

/// The provider facade: `tryPass`, `tryPassWithEnqueueToken`, `tryPassWithEnqueueKey`.
/// Always asks the server (like the SDK); errors are `WaitingRoomError`s with the SDK's codes.
public final class QueueITWaitingRoomProvider: Sendable {
    let provider: QueueItProvider

    public init(
        customerId: String, eventOrAliasId: String, layoutName: String? = nil, language: String? = nil,
        waitingRoomDomain: String? = nil, queuePathPrefix: String? = nil,
        environment: ProviderEnvironment = ProviderEnvironment(),
        connectivity: any QueueItConnectivity = QueueItAssumeOnline()
    ) throws {
        var c = try QueueItConfiguration(
            customerId: customerId, waitingRoomId: eventOrAliasId, waitingRoomDomain: waitingRoomDomain,
            pathPrefix: queuePathPrefix, layoutName: layoutName, language: language)
        c.reuseStoredPass = false
        provider = QueueItProvider(configuration: c, environment: environment, connectivity: connectivity)
    }

    public var isRequestInProgress: Bool { provider.isRequestInProgress }

    public func tryPass() async throws -> QueueTryPassResult { try await run(nil) }
    public func tryPassWithEnqueueToken(_ token: String) async throws -> QueueTryPassResult { try await run(.enqueueToken(token)) }
    public func tryPassWithEnqueueKey(_ key: String) async throws -> QueueTryPassResult { try await run(.enqueueKey(key)) }

    func run(_ credential: Credential?) async throws -> QueueTryPassResult {
        let c = provider.configuration
        let entry = Entry(room: RoomKey(scope: c.customerId, room: c.waitingRoomId ?? ""), credential: credential)
        let (_, _, r) = try await provider.enqueueOnce(entry)
        return QueueTryPassResult(
            queueUrl: r.queueUrl, targetUrl: r.eventTargetUrl, redirectType: r.redirectType.rawValue,
            isPassedThrough: r.isPassedThrough, queueitToken: r.token, urlTTLInMinutes: r.queueUrlTTLInMinutes)
    }
}
