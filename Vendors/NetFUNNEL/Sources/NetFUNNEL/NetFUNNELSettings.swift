import Foundation
import Synchronization
import WaitingRoom

/// The settings document the agent fetches from the server at initialisation (the operation
/// guide's "Before Waiting": "fetching configuration from the NetFUNNEL server and initializing
/// objects based on that information"; the web agent's `nf-setting.json`, docs/netfunnel-protocol.md §7.3).
///
/// The document's schema is not public; this reads the proposed one (docs/netfunnel-protocol.md §10.3) and
/// applies what a headless agent can use (proposal, vendor README):
///
/// | field | applied as |
/// |---|---|
/// | `vwrPageUrl` | the template page handed to hosts when a reply names none (before the derived SaaS page) |
/// | `errorUrl` | the error page reported with every error when the app configured none |
/// | `maxTtl` | the longest wait between polls and alive notices (1…30 s; the reference clamp is 30) |
/// | `projects[].segments[].timeoutSec` | how long the server keeps a key: background key returns are spaced to beat it |
///
/// The app's own options (`networkTimeout`, `retryCount`, `serverUrl`) win: they are the
/// agent's initialisation parameters. Unknown fields are ignored; a field of the wrong type or
/// out of range is ignored with a warning, never an error.
package struct NetFUNNELSettings: Sendable, Equatable {
    /// The template (waiting-room) page.
    package var waitingRoomPageURL: String?
    /// The error page.
    package var errorURL: String?
    /// The longest poll interval, seconds (1…30).
    package var maxTTL: Int?
    /// Seconds the server keeps a key before returning it itself, per segment
    /// (`RoomKey(scope: projectKey, room: segmentKey)`).
    package var keyTimeouts: [RoomKey: Double] = [:]
    /// What was ignored, for the log (field: reason).
    package var ignored: [String: String] = [:]

    package init(waitingRoomPageURL: String? = nil, errorURL: String? = nil, maxTTL: Int? = nil) {
        self.waitingRoomPageURL = waitingRoomPageURL
        self.errorURL = errorURL
        self.maxTTL = maxTTL
    }

    /// Reads a settings document. Throws only when it is not a JSON object.
    package init(json: JSONValue) throws(WaitingRoomError) {
        guard let object = json.objectValue else {
            throw WaitingRoomError(
                .invalidResponse, vendor: NetFUNNELConfiguration.vendorID,
                vendorCode: NetFUNNELStatusCode.noService.rawValue,
                message: "the settings document is not a JSON object")
        }
        for (field, keyPath) in [("vwrPageUrl", \NetFUNNELSettings.waitingRoomPageURL), ("errorUrl", \.errorURL)] {
            guard let value = object[field] else { continue }
            if let text = value.stringValue, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "https" || scheme == "http", url.host?.isEmpty == false
            {
                self[keyPath: keyPath] = text
            } else {
                ignored[field] = "not an http(s) URL"
            }
        }
        for project in object["projects"]?.arrayValue ?? [] {
            guard let projectKey = project["projectKey"]?.stringValue else { continue }
            for segment in project["segments"]?.arrayValue ?? [] {
                guard let segmentKey = segment["segmentKey"]?.stringValue, let seconds = segment["timeoutSec"]?.numberValue,
                    seconds.isFinite, seconds > 0, seconds <= 86_400
                else { continue }
                keyTimeouts[RoomKey(scope: projectKey, room: segmentKey)] = seconds
            }
        }
        if let value = object["maxTtl"] {
            if let n = value.numberValue, n == n.rounded(), (1...30).contains(n) {
                maxTTL = Int(n)
            } else {
                ignored["maxTtl"] = "not a whole number of seconds in 1…30"
            }
        }
    }

    /// A reply's `ttl` as the poll interval: the reference clamp (1…30, 0 ⇒ 1), then `maxTtl`.
    package func pollSeconds(_ ttl: Int?) -> Int {
        min(maxTTL ?? 30, NetFUNNELReply.clampTTL(ttl))
    }
}

/// Fetches the settings document once per provider and keeps it; every wait awaits the first
/// fetch (bounded by `networkTimeout`, one attempt) before its first request. A failed fetch is
/// logged and the agent goes on with the app's options (proposal: no entry is refused because a
/// settings file could not be read; the traffic server decides every entry); it is tried again
/// by the next wait that starts at least ``retryAfter`` later.
///
/// Thread safety: `state` is the only mutable state, behind a `Mutex`; the fetch runs in one
/// unstructured task that every waiter awaits, so thousands of waits starting at once send one
/// request.
final class NetFUNNELSettingsLoader: Sendable {
    /// Where the document is (nil: not fetched, bypass mode).
    let url: URL?
    let environment: ProviderEnvironment
    let timeout: Duration
    /// How long after a failed fetch the next wait tries again.
    static let retryAfter: TimeInterval = 60

    /// What is known of the document.
    enum Status: Sendable, Equatable {
        /// Not fetched yet (or no fetch is configured).
        case notFetched
        /// Fetched and applied.
        case applied(NetFUNNELSettings)
        /// The last fetch failed (the agent goes on with the app's options).
        case failed(WaitingRoomError, at: Date)
    }

    private struct State {
        var status: Status = .notFetched
        var fetch: Task<Void, Never>?
    }

    private let state = Mutex(State())

    init(url: URL?, environment: ProviderEnvironment, timeout: Duration) {
        self.url = url
        self.environment = environment
        self.timeout = timeout
    }

    /// The current status.
    var status: Status { state.withLock { $0.status } }

    /// The applied settings, if any (read without waiting).
    var current: NetFUNNELSettings? {
        state.withLock { if case .applied(let s) = $0.status { return s } else { return nil } }
    }

    /// Starts the fetch unless one ran (or is running), or failed less than ``retryAfter`` ago.
    @discardableResult
    func start() -> Task<Void, Never>? {
        guard let url else { return nil }
        let now = environment.clock.now()
        return state.withLock { state -> Task<Void, Never>? in
            if let running = state.fetch { return running }
            switch state.status {
            case .applied: return nil
            case .failed(_, let at) where now.timeIntervalSince(at) < Self.retryAfter: return nil
            default: break
            }
            let task = Task { [self] in
                let result = await self.fetch(url)
                let at = self.environment.clock.now()
                self.state.withLock { s in
                    switch result {
                    case .success(let settings): s.status = .applied(settings)
                    case .failure(let error): s.status = .failed(error, at: at)
                    }
                    s.fetch = nil
                }
                self.log(result)
            }
            state.fetch = task
            return task
        }
    }

    /// Waits for the fetch in flight (starting one when due); returns at once when none is.
    func ready() async {
        await start()?.value
    }

    private func fetch(_ url: URL) async -> Result<NetFUNNELSettings, WaitingRoomError> {
        let vendor = NetFUNNELConfiguration.vendorID
        do {
            let response = try await environment.transport.send(
                WaitingRoom.HTTPRequest(
                    method: "GET", url: url.absoluteString, timeout: timeout,
                    label: VendorRequestLabel(vendor: vendor, kind: "settings")))
            guard response.status == 200 else {
                return .failure(
                    WaitingRoomError(
                        .server, vendor: vendor, vendorCode: response.status,
                        message: "the settings document \(url.absoluteString) answered HTTP \(response.status)"))
            }
            let json: JSONValue
            do { json = try JSONValue.parse(Data(response.body)) } catch {
                return .failure(
                    WaitingRoomError(
                        .invalidResponse, vendor: vendor, vendorCode: NetFUNNELStatusCode.noService.rawValue,
                        message: "the settings document \(url.absoluteString) is not JSON"))
            }
            return .success(try NetFUNNELSettings(json: json))
        } catch let error as WaitingRoomError {
            var e = error
            e.message = "the settings document \(url.absoluteString) could not be fetched: \(error.message)"
            return .failure(e)
        } catch {
            return .failure(
                WaitingRoomError(
                    .networkOffline, vendor: vendor, vendorCode: NetFUNNELStatusCode.networkNotConnected.rawValue,
                    message: "the settings document \(url.absoluteString) could not be fetched: \(error)"))
        }
    }

    private func log(_ result: Result<NetFUNNELSettings, WaitingRoomError>) {
        let logger = environment.logger(for: NetFUNNELConfiguration.vendorID)
        switch result {
        case .success(let settings):
            logger.debug(
                "settings applied",
                metadata: [
                    "vwrPageUrl": "\(settings.waitingRoomPageURL ?? "-")", "errorUrl": "\(settings.errorURL ?? "-")",
                    "maxTtl": "\(settings.maxTTL.map(String.init) ?? "-")"
                ])
            for (field, reason) in settings.ignored.sorted(by: { $0.key < $1.key }) {
                logger.warning("settings field ignored", metadata: ["field": "\(field)", "reason": "\(reason)"])
            }
        case .failure(let error):
            logger.warning("settings not fetched; going on with the app's options", metadata: ["error": "\(error.message)"])
        }
    }
}
