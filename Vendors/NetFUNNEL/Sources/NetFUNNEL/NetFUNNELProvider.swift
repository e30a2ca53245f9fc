import Foundation
import Logging
import WaitingRoom

/// The NetFUNNEL backend of ``WaitingRoomProvider``.
///
/// - ``tryPass(_:)``: one 5101; a queued key (201) is returned with 5004 before it answers `.queue`.
/// - ``enqueue(_:)``: a ``WaitingSession`` that runs the agent's flow (basic or section, per
///   `entry.control`); `complete()` returns the key (5004).
/// - ``release(_:)``: returns the key of a pass from ``tryPass(_:)``.
public struct NetFUNNELProvider: WaitingRoomProvider {
    public let vendorID = NetFUNNELConfiguration.vendorID
    /// The validated configuration.
    package let configuration: NetFUNNELConfiguration
    let environment: ProviderEnvironment
    let client: NetFUNNELClient?
    let sessions = SessionDeduplicator()

    /// - Throws: `.invalidConfiguration` naming the field.
    package init(configuration: NetFUNNELConfiguration, environment: ProviderEnvironment = ProviderEnvironment()) throws {
        try configuration.validate()
        self.configuration = configuration
        self.environment = environment
        if let url = try configuration.resolvedServerURL() {
            client = try NetFUNNELClient(configuration: configuration, serverURL: url, environment: environment)
        } else {
            client = nil
        }
        let logger = environment.logger(for: vendorID)
        if configuration.isBypassMode, let serverUrl = configuration.serverUrl, !serverUrl.isEmpty {
            logger.warning("no clientId: bypass mode, every entry passes and \(serverUrl) is never contacted")
        }
        // "Before waiting, configuration is initialized": the settings document is fetched now;
        // the first wait waits for it (bounded), a failure is logged and does not stop entries.
        client?.settings.start()
        // "Nothing lost": with a durable store, the keys a dead process left are returned now.
        if client != nil, environment.keyJournal.isActive, environment.recoversHeldKeysOnStart {
            let provider = self
            Task { _ = await provider.recoverHeldKeys(bound: .seconds(30)) }
        }
        if configuration.usesInsecureHTTP, client != nil {
            logger.warning(
                "allowInsecureHTTP: the traffic server is plain http; keys travel in clear text",
                metadata: ["serverUrl": "\(configuration.serverUrl ?? "")"])
        }
    }

    /// The settings document fetched at initialisation: what was applied, or why not
    /// (``NetFUNNELSettings``; nil in bypass mode). Waits for a fetch in flight.
    package func settings() async -> Result<NetFUNNELSettings, WaitingRoomError>? {
        guard let client else { return nil }
        await client.settings.ready()
        switch client.settings.status {
        case .applied(let settings): return .success(settings)
        case .failed(let error, _): return .failure(error)
        case .notFetched: return nil
        }
    }

    /// The error page reported with every error (`WaitingRoomError.details["errorUrl"]`): the
    /// configured `errorUrl`, else the settings document's (known once it was fetched).
    package var errorURL: String? { client?.errorURL ?? configuration.errorUrl }

    func withErrorURL(_ error: WaitingRoomError) -> WaitingRoomError {
        guard let client else {
            guard let url = configuration.errorUrl, error.details["errorUrl"] == nil else { return error }
            var e = error
            e.details["errorUrl"] = url
            return e
        }
        return client.withErrorURL(error)
    }

    func checkRoom(_ entry: Entry) throws {
        guard !entry.room.scope.isEmpty, !entry.room.room.isEmpty else {
            throw WaitingRoomError(
                .invalidUse, vendor: vendorID, vendorCode: NetFUNNELStatusCode.noService.rawValue,
                message: "NetFUNNEL needs a projectKey (room scope) and a segmentKey (room); got \"\(entry.room)\"")
        }
    }

    public func enqueue(_ entry: Entry) throws -> WaitingSession {
        // errorBypass "bypasses all error situations": a bad room becomes a session that passes (300).
        var setupError: WaitingRoomError?
        do { try checkRoom(entry) } catch let error as WaitingRoomError {
            guard configuration.errorBypass else { throw withErrorURL(error) }
            setupError = withErrorURL(error)
        }
        let bypassClient: NetFUNNELClient
        if let client {
            bypassClient = client
        } else {
            // bypass mode: the engine never sends; any URL will do
            bypassClient = try NetFUNNELClient(
                configuration: configuration, serverURL: URL(fileURLWithPath: "/"), environment: environment)
        }
        let environment = self.environment
        return try sessions.session(for: entry, policy: environment.duplicatePolicy) {
            WaitingSession(
                entry: entry, engine: NetFUNNELSessionEngine(client: bypassClient, setupError: setupError), environment: environment)
        }
    }

    public func tryPass(_ entry: Entry) async throws -> TryPassResult {
        do {
            return try await tryPassOnce(entry)
        } catch let error as WaitingRoomError {
            throw withErrorURL(error)
        }
    }

    private func tryPassOnce(_ entry: Entry) async throws -> TryPassResult {
        do { try checkRoom(entry) } catch let error as WaitingRoomError {
            guard configuration.errorBypass else { throw error }
            var pass = Self.keylessPass(entry, reason: "errorBypass", clock: environment.clock)
            pass.bypassedError = withErrorURL(error)
            return TryPassResult(
                disposition: .passed,
                status: VendorStatus(vendor: vendorID, code: 300, message: "Bypass (errorBypass): \(error.message)"), pass: pass)
        }
        guard let client else {
            return TryPassResult(
                disposition: .passed, status: VendorStatus(vendor: vendorID, code: 300, message: "Bypass (no clientId: bypass mode)"),
                pass: Self.keylessPass(entry, reason: "bypassMode", clock: environment.clock))
        }
        await client.settings.ready()
        let reply: NetFUNNELReply
        do {
            reply = try await client.send(.issueAndEnter, key: nil, entry: entry, node: nil)
        } catch let error as WaitingRoomError {
            guard configuration.errorBypass else { throw error }
            var pass = Self.keylessPass(entry, reason: "errorBypass", clock: environment.clock)
            pass.bypassedError = withErrorURL(error)
            return TryPassResult(
                disposition: .passed,
                status: VendorStatus(vendor: vendorID, code: 300, message: "Bypass (errorBypass): \(error.message)"), pass: pass)
        }
        let node = client.allowedNode(from: reply)
        let key = reply.key ?? ""
        if reply.code == NetFUNNELStatusCode.success.rawValue || NetFUNNELStatusCode.disposition(of: reply.code) == .wait {
            await client.journal(key, node: node, entry: entry)
        }
        let status = VendorStatus(
            vendor: vendorID, code: reply.code, message: reply.message ?? NetFUNNELStatusCode.message(for: reply.code))
        switch NetFUNNELStatusCode.disposition(of: reply.code) {
        case .pass:
            return TryPassResult(
                disposition: .passed, status: status,
                pass: Self.pass(for: entry, code: reply.code, key: key, node: node, clock: environment.clock))
        case .wait:
            // not handed out: give the key back before answering
            if !key.isEmpty { _ = await client.returnDetachedKey(key, node: node, entry: entry, retries: false) }
            return TryPassResult(
                disposition: .queue, status: status,
                queuePage: reply.vwrPageURL.map { QueuePage(queueURL: $0.absoluteString) },
                progress: QueueProgress(ahead: reply.nwait, behind: reply.nnext))
        case .block:
            return TryPassResult(disposition: .blocked, status: status)
        default:
            let error = NetFUNNELClient.serverError(code: reply.code, message: reply.message, opcode: 5101)
            guard configuration.errorBypass else { throw error }
            var pass = Self.keylessPass(entry, reason: "errorBypass", clock: environment.clock)
            pass.bypassedError = withErrorURL(error)
            return TryPassResult(
                disposition: .passed,
                status: VendorStatus(vendor: vendorID, code: 300, message: "Bypass (errorBypass): \(error.message)"), pass: pass)
        }
    }

    public func release(_ pass: Pass) async throws -> VendorStatus {
        guard pass.requiresCompletion, !pass.credential.isEmpty, let client else {
            return VendorStatus(vendor: vendorID, code: 200, message: "Success (no key to return)")
        }
        let entry = Entry(room: pass.room, control: ControlMode(rawValue: pass.details["control"] ?? "") ?? .basic)
        let node = Self.node(of: pass).flatMap { client.isAllowedHost($0.host) ? $0 : nil }
        return await client.returnDetachedKey(pass.credential, node: node, entry: entry, retries: true)
    }

    /// Finishes the key returns a dead process left in the journal (a durable store only):
    /// keys whose owner's lease lapsed are claimed and returned with 5004 until `bound`
    /// passes. A provider with a durable store starts this once when it is created.
    public func recoverHeldKeys(bound: Duration) async -> KeyRecoveryReport {
        guard let client, environment.keyJournal.isActive else { return KeyRecoveryReport() }
        return await environment.keyJournal.recover(vendor: vendorID, bound: bound) { held in
            let entry = Entry(room: held.room, control: ControlMode(rawValue: held.details["control"] ?? "") ?? .basic)
            let node = held.details["ip"].flatMap { host in
                held.details["port"].flatMap(Int.init).map { NetFUNNELNode(host: host, port: $0) }
            }.flatMap { client.isAllowedHost($0.host) ? $0 : nil }
            // A 502 (already returned) is reported as gone: this recovery did not return it.
            switch await client.returnAttempt(held.key, node: node, entry: entry, retries: false) {
            case .returned(let status): return .returned(status)
            case .alreadyReturned(let status), .refused(let status): return .gone(status)
            case .failed(let status), .cancelled(let status): return .failed(status.message)
            }
        }
    }

    /// Waits up to `timeout` for key returns that failed their documented attempts and go on in
    /// the background (`backgroundReturnSeconds`); returns how many were left when it passed.
    public func drainPendingReturns(timeout: Duration) async -> Int {
        await environment.pendingReturns.drain(timeout: timeout)
    }

    // MARK: passes

    /// A pass for a 200/300/303 reply; it requires completion when it holds a key from a 200.
    static func pass(for entry: Entry, code: Int, key: String, node: NetFUNNELNode?, clock: any WaitingRoomClock) -> Pass {
        var details = ["control": entry.control.rawValue, "projectKey": entry.room.scope, "segmentKey": entry.room.room]
        if let node {
            details["ip"] = node.host
            details["port"] = String(node.port)
        }
        let reason: String
        switch NetFUNNELStatusCode(rawValue: code) {
        case .bypass?: reason = "bypass"
        case .express?: reason = "express"
        default: reason = "success"
        }
        return Pass(
            vendor: NetFUNNELConfiguration.vendorID, room: entry.room, credential: key, kind: .key, issuedAt: clock.now(),
            requiresCompletion: code == NetFUNNELStatusCode.success.rawValue && !key.isEmpty, redirectType: reason,
            details: details)
    }

    /// A pass without a key (bypass mode, errorBypass).
    static func keylessPass(_ entry: Entry, reason: String, clock: any WaitingRoomClock) -> Pass {
        Pass(
            vendor: NetFUNNELConfiguration.vendorID, room: entry.room, credential: "", kind: .key, issuedAt: clock.now(),
            requiresCompletion: false, redirectType: reason,
            details: ["control": entry.control.rawValue, "projectKey": entry.room.scope, "segmentKey": entry.room.room])
    }

    static func node(of pass: Pass) -> NetFUNNELNode? {
        guard let host = pass.details["ip"], let port = pass.details["port"].flatMap(Int.init) else { return nil }
        return NetFUNNELNode(host: host, port: port)
    }
}
