import Foundation
import Logging
import WaitingRoom

/// The traffic-server node that owns a key (`ip`/`port` of a reply).
package struct NetFUNNELNode: Hashable, Sendable, CustomStringConvertible {
    package var host: String
    package var port: Int
    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
    package var description: String { "\(host):\(port)" }
}

extension RetryPolicy {
    /// NetFUNNEL agents: every attempt owns a slot of `networkTimeout`; `retryCount` retries
    /// (total attempts = retryCount + 1); the final error is reported at the end of the last slot.
    /// - Throws: `.invalidConfiguration` outside 100–10000 ms or 0–10 retries.
    package static func netFunnel(networkTimeout: Duration, retryCount: Int) throws -> RetryPolicy {
        let ms = Int(networkTimeout.milliseconds)
        guard NetFUNNELConfiguration.networkTimeoutRange.contains(ms) else {
            throw WaitingRoomError.outOfRange(
                field: "netfunnel.networkTimeout", value: ms, range: NetFUNNELConfiguration.networkTimeoutRange,
                unit: "ms", vendor: "netfunnel")
        }
        guard NetFUNNELConfiguration.retryCountRange.contains(retryCount) else {
            throw WaitingRoomError.outOfRange(
                field: "netfunnel.retryCount", value: retryCount, range: NetFUNNELConfiguration.retryCountRange,
                vendor: "netfunnel")
        }
        return .fixedSlots(attemptTimeout: networkTimeout, retries: retryCount)
    }
}

/// Sends `/ts.wseq` requests with the agent's retry rule and node affinity; maps failures to
/// the agent's codes (1001 offline, 1002 timeout / HTTP error / HTML page, 500 malformed reply).
final class NetFUNNELClient: Sendable {
    static let vendor = "netfunnel"

    let configuration: NetFUNNELConfiguration
    let serverURL: URL
    let environment: ProviderEnvironment
    let policy: RetryPolicy
    let logger: Logger
    /// The request dialect: JS (proposal 1) unless a caller asks for the native one.
    let dialect: NetFUNNELRequest.Dialect
    /// The settings document fetched at initialisation (``NetFUNNELSettings``).
    let settings: NetFUNNELSettingsLoader

    init(
        configuration: NetFUNNELConfiguration, serverURL: URL, environment: ProviderEnvironment,
        dialect: NetFUNNELRequest.Dialect = .javascript
    ) throws {
        self.dialect = dialect
        self.configuration = configuration
        self.serverURL = serverURL
        self.environment = environment
        self.policy = try RetryPolicy.netFunnel(
            networkTimeout: configuration.networkTimeoutDuration, retryCount: configuration.retryCount)
        var logger = environment.logger(for: Self.vendor)
        if configuration.printLog { logger.logLevel = .debug }
        self.logger = logger
        self.settings = NetFUNNELSettingsLoader(
            url: try configuration.resolvedSettingURL(), environment: environment, timeout: configuration.networkTimeoutDuration)
    }

    /// The error page reported with errors: the app's `errorUrl`, else the settings document's.
    var errorURL: String? { configuration.errorUrl ?? settings.current?.errorURL }

    /// `error` with the error page attached (`details["errorUrl"]`), when one is known.
    func withErrorURL(_ error: WaitingRoomError) -> WaitingRoomError {
        guard let url = errorURL, error.details["errorUrl"] == nil else { return error }
        var e = error
        e.details["errorUrl"] = url
        return e
    }

    /// How long the server keeps a key of `entry`'s segment before it returns it itself: the
    /// settings document's `timeoutSec` for the segment (nil: unknown).
    func keyTimeout(for entry: Entry) -> Duration? {
        settings.current?.keyTimeouts[entry.room].map { .milliseconds(Int64(($0 * 1000).rounded())) }
    }

    /// A reply's `ttl` as the seconds to wait: clamped 1…30 (0 ⇒ 1), then by the settings' `maxTtl`.
    func pollSeconds(_ reply: NetFUNNELReply) -> Int {
        settings.current?.pollSeconds(reply.ttl) ?? reply.clampedTTL
    }

    /// The template page for a 201: the reply's `vwr_html`, else the settings document's
    /// `vwrPageUrl`, else the SaaS page derived from `clientId`.
    func waitingRoomPage(_ reply: NetFUNNELReply) -> String {
        reply.vwrPageURL?.absoluteString ?? settings.current?.waitingRoomPageURL ?? configuration.derivedWaitingRoomPageURL ?? ""
    }

    /// The configured host, lowercased, IPv6 brackets removed.
    var configuredHost: String {
        let host = serverURL.host?.lowercased() ?? ""
        if host.hasPrefix("["), host.hasSuffix("]"), host.count > 2 { return String(host.dropFirst().dropLast()) }
        return host
    }

    /// Node affinity: follow `ip`/`port` only to the configured host or to hosts under the
    /// configured domain (the configured host without its first label, when it has 3+ labels).
    /// An IPv6 `ip` may come bracketed (`[::1]`).
    @inline(never)
    func allowedNode(from reply: NetFUNNELReply) -> NetFUNNELNode? {
        guard let ip = reply.ipHost?.lowercased(), let port = reply.port else { return nil }
        guard isAllowedHost(ip) else {
            logger.debug("ignoring node outside the configured domain", metadata: ["ip": "\(ip)"])
            return nil
        }
        return NetFUNNELNode(host: ip, port: port)
    }

    func isAllowedHost(_ host: String) -> Bool {
        let configured = configuredHost
        if host == configured { return true }
        let labels = configured.split(separator: ".")
        let isIPv4 = labels.count == 4 && labels.allSatisfy { UInt8($0) != nil }
        guard labels.count >= 3, !isIPv4, !configured.contains(":") else { return false }
        let domain = labels.dropFirst().joined(separator: ".")
        let allowedCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789-.")
        guard host.unicodeScalars.allSatisfy(allowedCharacters.contains) else { return false }
        return host.hasSuffix("." + domain)
    }

    /// The base URL for `node` (same scheme as configured).
    func baseURL(for node: NetFUNNELNode?) -> URL {
        guard let node, var components = URLComponents(url: serverURL, resolvingAgainstBaseURL: false) else {
            return serverURL
        }
        components.host = node.host.contains(":") ? "[" + node.host + "]" : node.host
        let defaultPort = components.scheme?.lowercased() == "https" ? 443 : 80
        components.port = node.port == defaultPort ? nil : node.port
        return components.url ?? serverURL
    }

    /// Sends one request; retries per ``policy`` (the last attempt goes to the configured host).
    /// - Throws: `CancellationError`, or a `WaitingRoomError` carrying the agent's code.
    func send(
        _ opcode: NetFUNNELOpcode, key: String?, ttl: Int = 0, entry: Entry, node: NetFUNNELNode?, retries: Bool = true
    ) async throws -> NetFUNNELReply {
        try await send(exchange(opcode, key: key, ttl: ttl, entry: entry, node: node, retries: retries))
    }

    /// One request with everything its attempts need, built before anything is awaited.
    struct Exchange: Sendable {
        let policy: RetryPolicy
        let onRetry: @Sendable (Int, WaitingRoomError) -> Void
        let attempt: @Sendable (_ attempt: Int, _ timeout: Duration?) async throws -> NetFUNNELReply

        /// The same exchange; each retry is also a `reconnecting` connection event of the
        /// session (a retry follows at once: its slot's wait is already over).
        func reporting(to context: SessionContext) -> Exchange {
            let log = onRetry
            return Exchange(
                policy: policy,
                onRetry: { attempt, error in
                    log(attempt, error)
                    context.emit(
                        .connection(
                            .reconnecting(attempt: attempt, nextRetryIn: .zero),
                            VendorStatus(vendor: NetFUNNELClient.vendor, code: error.vendorCode ?? 0, message: error.message)))
                }, attempt: attempt)
        }
    }

    /// Sends `exchange` under its policy.
    ///
    /// Memory: this frame, the policy's and one attempt's live while the request is in flight
    /// (thousands at once under `load`), so everything that can be is built before (``exchange(_:key:ttl:entry:node:retries:)``)
    /// or after (``agentFailure(_:)``) in synchronous functions, and failures stay boxed.
    func send(_ exchange: Exchange) async throws -> NetFUNNELReply {
        do {
            return try await exchange.policy.run(
                clock: environment.clock, vendor: Self.vendor, onRetry: exchange.onRetry, operation: exchange.attempt)
        } catch {
            throw offlineAware(Self.agentFailure(error))
        }
    }

    /// A network failure while the device has no route to the server
    /// (``ProviderEnvironment/connectivity``) is the agent's 1001 "Network Not Connected"
    /// (seed: "Network connection blocked (Wi-Fi, cellular data blocked)"), whatever the
    /// transport saw (a timeout, a refused connection).
    @inline(never)
    func offlineAware(_ error: any Error) -> any Error {
        guard var e = error as? WaitingRoomError, Self.isNetworkFailure(e),
            e.vendorCode != NetFUNNELStatusCode.networkNotConnected.rawValue,
            environment.connectivity.isOffline(host: serverURL.host)
        else { return error }
        e.kind = .networkOffline
        e.vendorCode = NetFUNNELStatusCode.networkNotConnected.rawValue
        e.message = "Network Not Connected: the device has no route to \(serverURL.host ?? "the server") (\(e.message))"
        return e
    }

    /// Builds one request: its policy, its retry log line and its attempt.
    @inline(never)
    func exchange(
        _ opcode: NetFUNNELOpcode, key: String?, ttl: Int, entry: Entry, node: NetFUNNELNode?, retries: Bool
    ) -> Exchange {
        let policy = retries ? self.policy : RetryPolicy.fixedSlots(attemptTimeout: configuration.networkTimeoutDuration, retries: 0)
        let last = policy.maxAttempts - 1
        let userData = entry.userId ?? configuration.userId
        let transport = environment.transport
        let logger = self.logger
        let client = self
        return Exchange(
            policy: policy,
            onRetry: { attempt, error in
                logger.debug("retrying", metadata: ["opcode": "\(opcode.rawValue)", "attempt": "\(attempt)", "error": "\(error.message)"])
            },
            attempt: { attempt, timeout in
                let target = attempt == last && last > 0 ? nil : node
                var request = try client.httpRequest(
                    opcode, key: key, ttl: ttl, entry: entry, userData: userData, target: target, timeout: timeout)
                request.label = VendorRequestLabel(vendor: Self.vendor, kind: String(opcode.rawValue), attempt: attempt)
                let response = try await transport.send(request)
                return try client.reply(to: opcode, from: response)
            })
    }

    /// The HTTP request of one attempt (to `target`, or the configured host when nil).
    @inline(never)
    func httpRequest(
        _ opcode: NetFUNNELOpcode, key: String?, ttl: Int, entry: Entry, userData: String?, target: NetFUNNELNode?, timeout: Duration?
    ) throws -> WaitingRoom.HTTPRequest {
        let url = try requestURL(opcode, key: key, ttl: ttl, entry: entry, userData: userData, target: target)
        return WaitingRoom.HTTPRequest(method: "GET", url: url, timeout: timeout)
    }

    /// What ``send(_:)`` throws: a `WaitingRoomError` with the agent's code, any other error
    /// (`CancellationError`) as it is.
    @inline(never)
    static func agentFailure(_ error: any Error) -> any Error {
        guard let error = error as? WaitingRoomError else { return error }
        return agentError(error)
    }

    /// The URL of one attempt (to `target`, or the configured host when nil).
    @inline(never)
    func requestURL(
        _ opcode: NetFUNNELOpcode, key: String?, ttl: Int, entry: Entry, userData: String?, target: NetFUNNELNode?
    ) throws -> String {
        let request = NetFUNNELRequest(
            opcode: opcode, key: key, ttl: ttl, projectKey: entry.room.scope, segmentKey: entry.room.room,
            userData: userData, timestampMillis: Int64((environment.clock.now().timeIntervalSince1970 * 1000).rounded()),
            dialect: dialect)
        guard let url = request.url(base: baseURL(for: target)) else {
            throw WaitingRoomError(
                .invalidConfiguration, vendor: Self.vendor, vendorCode: 500,
                message: "cannot build a request URL from \(serverURL)", field: "netfunnel.serverUrl")
        }
        logger.debug(
            "request",
            metadata: [
                "opcode": "\(opcode.rawValue)", "node": "\(target?.description ?? "configured")",
                "key": "\(key.map { environment.redact($0) } ?? "-")"
            ])
        return url.absoluteString
    }

    /// The reply an HTTP answer carries, or the agent's error for it.
    @inline(never)
    func reply(to opcode: NetFUNNELOpcode, from response: WaitingRoom.HTTPResponse) throws -> NetFUNNELReply {
        guard response.status == 200 else {
            throw WaitingRoomError(
                .unavailable, vendor: Self.vendor, vendorCode: NetFUNNELStatusCode.networkTimeout.rawValue,
                message: "HTTP \(response.status) from the NetFUNNEL server (expected 200 with a result token)")
        }
        do throws(NetFUNNELReplyError) {
            let reply = try NetFUNNELReply.parse(response.body)
            logger.debug("reply", metadata: ["opcode": "\(opcode.rawValue)", "code": "\(reply.code)"])
            return reply
        } catch {
            if case .htmlPage = error {
                throw WaitingRoomError(
                    .unavailable, vendor: Self.vendor, vendorCode: NetFUNNELStatusCode.networkTimeout.rawValue,
                    message: error.description)
            }
            throw WaitingRoomError(
                .invalidResponse, vendor: Self.vendor, vendorCode: NetFUNNELStatusCode.noService.rawValue,
                message: error.description)
        }
    }

    /// Puts the agent's code on a transport or parse failure.
    static func agentError(_ error: WaitingRoomError) -> WaitingRoomError {
        var mapped = error
        mapped.vendor = vendor
        switch error.kind {
        case .networkOffline:
            mapped.vendorCode = NetFUNNELStatusCode.networkNotConnected.rawValue
            mapped.message = "Network Not Connected: \(error.message)"
        case .networkTimeout:
            mapped.vendorCode = NetFUNNELStatusCode.networkTimeout.rawValue
            mapped.message = "Network Timeout: \(error.message)"
        case .unavailable:
            mapped.vendorCode = error.vendorCode ?? NetFUNNELStatusCode.networkTimeout.rawValue
            if !error.message.hasPrefix("Network Timeout") { mapped.message = "Network Timeout: \(error.message)" }
        case .invalidResponse where error.vendorCode == nil:
            // the transport could not read an HTTP answer: the connection broke mid-response
            mapped.vendorCode = NetFUNNELStatusCode.networkNotConnected.rawValue
            mapped.kind = .networkOffline
            mapped.message = "Network Not Connected: connection closed before a complete answer (\(error.message))"
        case .invalidResponse:
            mapped.vendorCode = NetFUNNELStatusCode.noService.rawValue
        default:
            mapped.vendorCode = error.vendorCode ?? NetFUNNELStatusCode.noService.rawValue
        }
        return mapped
    }

    /// A server error as the agent reports it: `nfError` knows one status code, 500, so every
    /// server result code outside the flow codes becomes 500; the server's own code is kept in
    /// ``WaitingRoomError/details`` (`serverCode`) and in the message, for diagnosis.
    static func serverError(code: Int, message: String?, opcode: Int) -> WaitingRoomError {
        let text = message ?? NetFUNNELStatusCode.message(for: code)
        return WaitingRoomError(
            .server, vendor: vendor, vendorCode: NetFUNNELStatusCode.noService.rawValue,
            message: "NetFUNNEL server answered \(code) (\(text)) to \(opcode)",
            details: ["serverCode": String(code), "opcode": String(opcode)])
    }

    /// True for failures reported through `nfNetworkError` (1001/1002).
    static func isNetworkFailure(_ error: WaitingRoomError) -> Bool {
        guard let code = error.vendorCode else { return false }
        return NetFUNNELStatusCode.disposition(of: code) == .networkError
    }

    /// Returns `key` with one 5004 attempt (502 = already returned counts as success).
    func returnKey(_ key: String, node: NetFUNNELNode?, entry: Entry, retries: Bool) async -> VendorStatus {
        await returnAttempt(key, node: node, entry: entry, retries: retries).status
    }

    /// What one key return (with or without the agent's retries) came to.
    enum KeyReturn: Sendable {
        /// 200.
        case returned(VendorStatus)
        /// 502: the key was already returned (a success for the agent).
        case alreadyReturned(VendorStatus)
        /// The server answered, but refused it (the key is not its to return any more).
        case refused(VendorStatus)
        /// No usable answer: worth trying again later.
        case failed(VendorStatus)
        /// The calling task was cancelled.
        case cancelled(VendorStatus)

        var status: VendorStatus {
            switch self {
            case .returned(let s), .alreadyReturned(let s), .refused(let s), .failed(let s), .cancelled(let s): return s
            }
        }
    }

    /// One background attempt to return `key` (see ``PendingReturns``): one 5004 without retries.
    func backgroundReturn(_ key: String, node: NetFUNNELNode?, entry: Entry) -> @Sendable () async -> PendingReturns.Attempt {
        { [self] in
            switch await returnAttempt(key, node: node, entry: entry, retries: false) {
            case .returned(let returned), .alreadyReturned(let returned):
                return .returned(
                    VendorStatus(vendor: returned.vendor, code: returned.code, message: "key returned late: \(returned.message)"))
            case .refused(let refused):
                return .gone(refused)
            case .failed(let failed), .cancelled(let failed):
                return .failed(failed.message)
            }
        }
    }

    /// Returns a key that belongs to no session (``NetFUNNELProvider/tryPass(_:)``,
    /// ``NetFUNNELProvider/release(_:)``); a return that gets no answer goes on in the background
    /// (`backgroundReturnSeconds`, a proposal) and the documented failure (500) is reported.
    func returnDetachedKey(_ key: String, node: NetFUNNELNode?, entry: Entry, retries: Bool) async -> VendorStatus {
        let result = await returnAttempt(key, node: node, entry: entry, retries: retries)
        switch result {
        case .returned(let status), .alreadyReturned(let status), .refused(let status):
            return status
        case .failed(let status), .cancelled(let status):
            let schedule = configuration.backgroundReturnSchedule(keyTimeout: keyTimeout(for: entry))
            guard !schedule.delays.isEmpty else { return status }
            let logger = self.logger
            let redacted = environment.redact(key)
            logger.info(
                "key return failed; returning it in the background", metadata: ["key": "\(redacted)", "reason": "\(status.message)"])
            let pending = environment.pendingReturns
            let metrics = environment.metrics
            metrics?.keyReturn(vendor: Self.vendor, result: "started", pending: pending.pendingCount + 1)
            pending.start(
                schedule: schedule, clock: environment.clock, attempt: backgroundReturn(key, node: node, entry: entry)
            ) { returned in
                metrics?.keyReturn(
                    vendor: Self.vendor, result: returned != nil ? "late" : "gave_up", pending: max(0, pending.pendingCount - 1))
                if returned != nil {
                    logger.info("key returned late", metadata: ["key": "\(redacted)"])
                } else {
                    logger.warning(
                        "key not returned within backgroundReturnSeconds; the server keeps it until it times out",
                        metadata: ["key": "\(redacted)"])
                }
            }
            return status
        }
    }

    /// One key return: 5004 with the agent's retries when `retries`. A key that went back (or
    /// that the server refused as unknown) leaves the journal.
    func returnAttempt(_ key: String, node: NetFUNNELNode?, entry: Entry, retries: Bool) async -> KeyReturn {
        let result = await sendReturn(key, node: node, entry: entry, retries: retries)
        switch result {
        case .returned, .alreadyReturned, .refused: await environment.keyJournal.released(vendor: Self.vendor, key: key)
        case .failed, .cancelled: break
        }
        return result
    }

    /// Records a key the server handed out in the journal (``KeyJournal``; only with a durable
    /// store), with its node and control mode so another process can return it, and the
    /// segment's key timeout (when the settings document named it) as its expiry.
    func journal(_ key: String, node: NetFUNNELNode?, entry: Entry) async {
        guard environment.keyJournal.isActive, !key.isEmpty else { return }
        var details = ["control": entry.control.rawValue]
        if let node {
            details["ip"] = node.host
            details["port"] = String(node.port)
        }
        let expiresAt = keyTimeout(for: entry).map {
            environment.clock.now().addingTimeInterval(Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18)
        }
        await environment.keyJournal.hold(vendor: Self.vendor, room: entry.room, key: key, details: details, expiresAt: expiresAt)
    }

    /// 5004 itself.
    private func sendReturn(_ key: String, node: NetFUNNELNode?, entry: Entry, retries: Bool) async -> KeyReturn {
        do {
            let reply = try await send(.complete, key: key, entry: entry, node: node, retries: retries)
            switch reply.code {
            case 200:
                return .returned(VendorStatus(vendor: Self.vendor, code: 200, message: "Success"))
            case 502:
                return .alreadyReturned(VendorStatus(vendor: Self.vendor, code: 200, message: "Success (key was already returned: 502)"))
            default:
                let text = reply.message ?? NetFUNNELStatusCode.message(for: reply.code)
                let status = VendorStatus(
                    vendor: Self.vendor, code: 500, message: "key return failed: server answered \(reply.code) \(text)")
                // A server error other than a refusal of this key is worth another try later.
                let keyRefused = reply.code == NetFUNNELStatusCode.noKey.rawValue || reply.code == NetFUNNELStatusCode.invalidKey.rawValue
                return keyRefused ? .refused(status) : .failed(status)
            }
        } catch let error as WaitingRoomError {
            return .failed(VendorStatus(vendor: Self.vendor, code: 500, message: "key return failed: \(error.message)"))
        } catch {
            return .cancelled(VendorStatus(vendor: Self.vendor, code: 500, message: "key return failed: cancelled"))
        }
    }
}
