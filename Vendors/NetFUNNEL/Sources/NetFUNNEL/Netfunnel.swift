import Foundation
import Logging
import WaitingRoom

/// The NetFUNNEL agent's API shape over ``NetFUNNELProvider``: `initialize`, `nfStart`/`nfStop`,
/// `nfStartSection`/`nfStopSection`, results through a ``NetfunnelDelegate``.
///
/// `initialize` does not throw (as in the agent); an option out of range is reported by the next
/// `nfStart` as `nfError` 500 naming the field, and kept in ``initializationError``.
@MainActor
public final class Netfunnel {
    /// The shared agent.
    public static let shared = Netfunnel()

    /// The services used by providers made by `initialize` (transport, clock, logger).
    package var environment: ProviderEnvironment
    /// Why the last `initialize` was refused, if it was.
    package private(set) var initializationError: WaitingRoomError?
    /// The provider made by the last successful `initialize`.
    package private(set) var provider: NetFUNNELProvider?
    /// The error page to show after `nfError` / `nfNetworkError` (the agent's callbacks carry
    /// none): the `errorUrl` given to `initialize`, else the settings document's.
    public var errorUrl: String? { provider?.errorURL }
    private weak var delegate: (any NetfunnelDelegate)?
    private var configuration: NetFUNNELConfiguration?
    /// `errorBypass` of the last `initialize`, kept even when it was refused: "errorBypass: true
    /// bypasses all error situations", a refused initialisation included.
    private var lastErrorBypass = false
    private var sessions: [RoomKey: Running] = [:]

    private struct Running {
        var session: WaitingSession
        var listener: Task<Void, Never>
    }

    /// Creates an agent with its own environment (tests use this to inject a transport or clock).
    package init(environment: ProviderEnvironment = ProviderEnvironment()) {
        self.environment = environment
    }

    /// Initialises the shared agent (static form of the agent's documentation).
    public static func initialize(
        clientId: String, serverUrl: String? = nil, errorUrl: String? = nil, delegate: any NetfunnelDelegate,
        networkTimeout: Int = 3000, retryCount: Int = 0, printLog: Bool = false, useNetfunnelTemplate: Bool = true,
        errorBypass: Bool = false, userId: String? = nil, useNetworkRecoveryMode: Bool = false
    ) {
        shared.initialize(
            clientId: clientId, serverUrl: serverUrl, errorUrl: errorUrl, delegate: delegate,
            networkTimeout: networkTimeout, retryCount: retryCount, printLog: printLog,
            useNetfunnelTemplate: useNetfunnelTemplate, errorBypass: errorBypass, userId: userId,
            useNetworkRecoveryMode: useNetworkRecoveryMode)
    }

    /// Initialises the agent. Parameters, defaults and ranges are the agent's: `networkTimeout`
    /// 100–10000 ms (3000), `retryCount` 0–10 (0), `useNetfunnelTemplate` true, the rest false/nil.
    /// An empty `clientId` selects bypass mode (a `serverUrl` is then never contacted).
    public func initialize(
        clientId: String, serverUrl: String? = nil, errorUrl: String? = nil, delegate: any NetfunnelDelegate,
        networkTimeout: Int = 3000, retryCount: Int = 0, printLog: Bool = false, useNetfunnelTemplate: Bool = true,
        errorBypass: Bool = false, userId: String? = nil, useNetworkRecoveryMode: Bool = false
    ) {
        self.delegate = delegate
        lastErrorBypass = errorBypass
        let configuration = NetFUNNELConfiguration(
            clientId: clientId, serverUrl: serverUrl, errorUrl: errorUrl, networkTimeout: networkTimeout,
            retryCount: retryCount, printLog: printLog, useNetfunnelTemplate: useNetfunnelTemplate,
            errorBypass: errorBypass, userId: userId, useNetworkRecoveryMode: useNetworkRecoveryMode)
        do {
            provider = try NetFUNNELProvider(configuration: configuration, environment: environment)
            self.configuration = configuration
            initializationError = nil
        } catch let error as WaitingRoomError {
            provider = nil
            self.configuration = nil
            initializationError = error
        } catch {
            provider = nil
            initializationError = WaitingRoomError(.invalidConfiguration, vendor: "netfunnel", message: "\(error)")
        }
    }

    /// The same, with `errorBypass` before `useNetfunnelTemplate` (the order of the agent's
    /// "complete example"); both must be given to select this form.
    public func initialize(
        clientId: String, serverUrl: String? = nil, errorUrl: String? = nil, delegate: any NetfunnelDelegate,
        networkTimeout: Int = 3000, retryCount: Int = 0, printLog: Bool = false, errorBypass: Bool,
        useNetfunnelTemplate: Bool, userId: String? = nil, useNetworkRecoveryMode: Bool = false
    ) {
        initialize(
            clientId: clientId, serverUrl: serverUrl, errorUrl: errorUrl, delegate: delegate,
            networkTimeout: networkTimeout, retryCount: retryCount, printLog: printLog,
            useNetfunnelTemplate: useNetfunnelTemplate, errorBypass: errorBypass, userId: userId,
            useNetworkRecoveryMode: useNetworkRecoveryMode)
    }

    /// Static form of the reordered initialiser.
    public static func initialize(
        clientId: String, serverUrl: String? = nil, errorUrl: String? = nil, delegate: any NetfunnelDelegate,
        networkTimeout: Int = 3000, retryCount: Int = 0, printLog: Bool = false, errorBypass: Bool,
        useNetfunnelTemplate: Bool, userId: String? = nil, useNetworkRecoveryMode: Bool = false
    ) {
        shared.initialize(
            clientId: clientId, serverUrl: serverUrl, errorUrl: errorUrl, delegate: delegate,
            networkTimeout: networkTimeout, retryCount: retryCount, printLog: printLog,
            useNetfunnelTemplate: useNetfunnelTemplate, errorBypass: errorBypass, userId: userId,
            useNetworkRecoveryMode: useNetworkRecoveryMode)
    }

    /// Basic control: wait for entry to the segment.
    public func nfStart(projectKey: String, segmentKey: String) {
        start(projectKey: projectKey, segmentKey: segmentKey, control: .basic)
    }

    /// Basic control: return the key (after the protected step); while waiting, leave the line (nfClose 499).
    public func nfStop(projectKey: String, segmentKey: String) {
        stop(projectKey: projectKey, segmentKey: segmentKey)
    }

    /// Section control: wait for entry, then keep the slot with alive notices.
    public func nfStartSection(projectKey: String, segmentKey: String) {
        start(projectKey: projectKey, segmentKey: segmentKey, control: .section)
    }

    /// Section control: leave the section and return the key.
    public func nfStopSection(projectKey: String, segmentKey: String) {
        stop(projectKey: projectKey, segmentKey: segmentKey)
    }

    /// The session for a room started with `nfStart`/`nfStartSection`, while it runs.
    package func session(projectKey: String, segmentKey: String) -> WaitingSession? {
        sessions[RoomKey(scope: projectKey, room: segmentKey)]?.session
    }

    private func start(projectKey: String, segmentKey: String, control: ControlMode) {
        let delegate = self.delegate
        guard let provider else {
            let message =
                initializationError.map { "NetFUNNEL is not initialised: \($0.message)" }
                ?? "NetFUNNEL is not initialised: call initialize(clientId:delegate:) first"
            if lastErrorBypass {
                delegate?.nfSuccess(
                    projectKey: projectKey, segmentKey: segmentKey, statusCode: 300, message: "Bypass (errorBypass): \(message)")
            } else {
                delegate?.nfError(projectKey: projectKey, segmentKey: segmentKey, statusCode: 500, message: message)
            }
            return
        }
        let room = RoomKey(scope: projectKey, room: segmentKey)
        if let running = sessions[room], !running.session.state.isFinal, running.session.entry.control == control {
            return  // already running for this room
        }
        let session: WaitingSession
        do {
            session = try provider.enqueue(Entry(room: room, control: control, userId: configuration?.userId))
        } catch let error as WaitingRoomError {
            // nfError knows one code, 500 (errorBypass already turned setup errors into a pass)
            delegate?.nfError(projectKey: projectKey, segmentKey: segmentKey, statusCode: 500, message: error.message)
            return
        } catch {
            delegate?.nfError(projectKey: projectKey, segmentKey: segmentKey, statusCode: 500, message: "\(error)")
            return
        }
        let template = configuration?.useNetfunnelTemplate ?? true
        let events = session.events
        let listener = Task { @MainActor [weak self] in
            for await event in events {
                self?.deliver(event, projectKey: projectKey, segmentKey: segmentKey, template: template)
            }
        }
        sessions[room] = Running(session: session, listener: listener)
    }

    private func stop(projectKey: String, segmentKey: String) {
        let room = RoomKey(scope: projectKey, room: segmentKey)
        guard let running = sessions[room] else {
            delegate?.nfComplete(projectKey: projectKey, segmentKey: segmentKey, statusCode: 200, message: "Success (nothing to return)")
            return
        }
        let session = running.session
        switch session.state {
        case .passed, .disabled:
            // A keyless pass (bypass, white list) has nothing to return and its event stream has
            // already ended, so the completion is reported here; a key's completion arrives as
            // the session's `completed` event.
            let holdsKey = session.currentOutcome?.pass?.requiresCompletion == true
            Task { @MainActor [weak self] in
                let status = try? await session.complete()
                guard !holdsKey, let self else { return }
                self.sessions[room] = nil
                self.delegate?.nfComplete(
                    projectKey: projectKey, segmentKey: segmentKey, statusCode: 200,
                    message: status?.message ?? "Success (nothing to return)")
            }
        case .idle, .connecting, .waiting:
            session.cancel()
        default:
            sessions[room] = nil
            delegate?.nfComplete(projectKey: projectKey, segmentKey: segmentKey, statusCode: 200, message: "Success (nothing to return)")
        }
    }

    private func deliver(_ event: WaitingRoomEvent, projectKey: String, segmentKey: String, template: Bool) {
        guard let delegate else { return }
        let p = projectKey
        let s = segmentKey
        switch event {
        case .progress(let progress, let status):
            guard !template else { return }
            delegate.nfContinue(
                projectKey: p, segmentKey: s, statusCode: status.code, message: NetFUNNELStatusCode.continue.message,
                aheadWait: progress.ahead ?? 0, behindWait: progress.behind ?? 0,
                waitTime: progress.etaText ?? "00:00:00", progressRate: Int(progress.percent ?? 0))
        case .passed(_, let status), .disabled(_, let status):
            delegate.nfSuccess(projectKey: p, segmentKey: s, statusCode: status.code, message: status.message)
        case .blocked(let status):
            delegate.nfBlock(projectKey: p, segmentKey: s, statusCode: status.code, message: status.message)
        case .closed(let status):
            delegate.nfClose(projectKey: p, segmentKey: s, statusCode: status.code, message: status.message)
            sessions[RoomKey(scope: p, room: s)] = nil
        case .failed(let error):
            let code = error.vendorCode ?? 500
            if NetFUNNELStatusCode.disposition(of: code) == .networkError {
                delegate.nfNetworkError(projectKey: p, segmentKey: s, statusCode: code, message: error.message)
            } else {
                // nfError is documented with one code: 500 (the server's own is in error.details)
                delegate.nfError(projectKey: p, segmentKey: s, statusCode: 500, message: error.message)
            }
            sessions[RoomKey(scope: p, room: s)] = nil
        case .completed(let status):
            // nfComplete knows 200 (returned or nothing to return) and 500 (return failed)
            let code = status.code == 500 ? 500 : 200
            delegate.nfComplete(projectKey: p, segmentKey: s, statusCode: code, message: status.message)
            sessions[RoomKey(scope: p, room: s)] = nil
        case .stateChanged, .queueOpened, .sessionRestarted, .keyReturnedLate, .connection, .queuePageChanged, .userExited:
            // The agent has no callback for a late return (nfComplete 500 already fired).
            break
        }
    }
}
