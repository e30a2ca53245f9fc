import Foundation
import Logging
import Synchronization
import WaitingRoom

/// The CrowdHandler backend: one check per call (`POST /v1/requests`, then
/// `GET /v1/requests/{token}` with the session's token), promoted → passed, not promoted → a
/// queue on the room's waiting page with the position, 4xx → blocked, and API failures by the
/// failure policy (`trustOnFail`, safety-net room). Passes are kept in the `PassStore` for the
/// pass lifetime. `complete()` has no key to give back (CrowdHandler has none); the page's
/// performance is recorded with ``recordResponse(for:code:time:)`` or ``release(_:)``.
public final class CrowdHandlerProvider: WaitingRoomProvider {
    public let vendorID = CrowdHandlerConfiguration.vendorID
    public let configuration: CrowdHandlerConfiguration
    public let environment: ProviderEnvironment
    public let client: CrowdHandlerClient
    let logger: Logger
    let dedup = SessionDeduplicator()
    /// Tokens kept between ``tryPass(_:)`` calls, per room and user (what the SDKs keep in a cookie).
    let tokens = Mutex<[String: String]>([:])

    public init(configuration: CrowdHandlerConfiguration, environment: ProviderEnvironment) {
        self.configuration = configuration
        self.environment = environment
        self.client = CrowdHandlerClient(configuration: configuration, transport: environment.transport)
        self.logger = environment.logger(for: CrowdHandlerConfiguration.vendorID)
    }

    func status(_ code: CrowdHandlerCode, _ message: String? = nil) -> VendorStatus {
        VendorStatus(vendor: vendorID, code: code.rawValue, message: message ?? code.message)
    }

    /// The room key of an entry (as given) and the URL checked for it.
    func target(for entry: Entry) -> String {
        entry.attributes["url"] ?? configuration.targetURL(for: entry.room)
    }

    func check(for entry: Entry) -> CrowdHandlerClient.Check {
        CrowdHandlerClient.Check(url: target(for: entry), ip: entry.attributes["ip"] ?? configuration.ip,
                                 agent: entry.attributes["agent"] ?? configuration.agent, lang: entry.attributes["lang"] ?? configuration.lang)
    }

    /// The token an entry carries: credential `.enqueueToken` (the `ch-id`) or attribute `token`.
    static func carriedToken(_ entry: Entry) -> String? {
        if case .enqueueToken(let t)? = entry.credential, !t.isEmpty { return t }
        return entry.attributes["token"]
    }

    func tokenKey(_ entry: Entry) -> String { "\(entry.room)|\(entry.userId ?? "")" }

    /// The token ``tryPass(_:)`` keeps for `entry` (nil before the first check).
    public func rememberedToken(for entry: Entry) -> String? { tokens.withLock { $0[tokenKey(entry)] } }

    /// One check of the API: the raw result (what the SDK's client hands out).
    public func checkOnce(_ entry: Entry, token: String?) async throws(WaitingRoomError) -> CrowdHandlerResult {
        try await client.check(check(for: entry), token: token)
    }

    // MARK: what an answer means

    /// What one check (or its failure) means for the user.
    enum Verdict {
        case passed(Pass, VendorStatus)
        case disabled(VendorStatus)
        case queue(slug: String, token: String?, progress: QueueProgress, VendorStatus)
        case blocked(VendorStatus)
        case safetyNet(slug: String, token: String?, WaitingRoomError)
        case failed(WaitingRoomError)
    }

    func verdict(_ answer: Result<CrowdHandlerResult, WaitingRoomError>, entry: Entry, token: String?) -> Verdict {
        switch answer {
        case .failure(let error):
            if error.kind == .rejected { return .blocked(VendorStatus(vendor: vendorID, code: error.vendorCode ?? 403, message: error.message)) }
            return onFailure(error, entry: entry, token: token)
        case .success(let r):
            if !r.promoted, r.status == CrowdHandlerCode.checkFailed.rawValue {
                // status 2 and not promoted: an abnormal answer (the Cloudflare integration's safety-net case)
                return onFailure(WaitingRoomError(.server, vendor: vendorID, vendorCode: CrowdHandlerCode.checkFailed.rawValue,
                                                  message: r.error ?? "abnormal API answer (status 2)"), entry: entry, token: r.token ?? token)
            }
            if r.status == CrowdHandlerCode.throttled.rawValue {
                return onFailure(WaitingRoomError(.server, vendor: vendorID, vendorCode: CrowdHandlerCode.throttled.rawValue,
                                                  message: CrowdHandlerCode.throttled.message), entry: entry, token: r.token ?? token)
            }
            if r.promoted {
                guard let slug = r.slug, !slug.isEmpty else {
                    return .disabled(status(.ok, "promoted: no waiting room guards \(target(for: entry))"))
                }
                return .passed(makePass(entry: entry, result: r, slug: slug), status(.ok, "promoted (room \(slug))"))
            }
            guard let slug = r.slug, !slug.isEmpty else {
                if let e = r.error {
                    return onFailure(WaitingRoomError(.server, vendor: vendorID, vendorCode: r.status ?? CrowdHandlerCode.checkFailed.rawValue,
                                                      message: e), entry: entry, token: r.token ?? token)
                }
                return onFailure(WaitingRoomError(.invalidResponse, vendor: vendorID, vendorCode: CrowdHandlerCode.checkFailed.rawValue,
                                                  message: "not promoted, and no waiting room slug"), entry: entry, token: r.token ?? token)
            }
            let position = r.position.map { max(0, $0) }
            let progress = QueueProgress(ahead: position.map { max(0, $0 - 1) }, eta: r.eta.map { .seconds(max(0, $0)) })
            return .queue(slug: slug, token: r.token ?? token, progress: progress,
                          status(.ok, "waiting in room \(slug)" + (position.map { ", position \($0)" } ?? "")))
        }
    }

    /// The failure policy: `trustOnFail` lets the user in (the error kept on the pass); else the
    /// safety-net room, or the error.
    func onFailure(_ error: WaitingRoomError, entry: Entry, token: String?) -> Verdict {
        var error = error
        error.vendor = vendorID
        if configuration.trustOnFail {
            let code: CrowdHandlerCode = error.vendorCode == CrowdHandlerCode.throttled.rawValue ? .throttled : .checkFailed
            let pass = Pass(vendor: vendorID, room: entry.room, credential: token ?? "", kind: .token, issuedAt: environment.clock.now(),
                            targetURL: target(for: entry), bypassedError: error, details: ["trustOnFail": "true"])
            return .passed(pass, status(code, "trusted on fail: \(error.message)"))
        }
        if let slug = configuration.safetyNetSlug { return .safetyNet(slug: slug, token: token, error) }
        return .failed(WaitingRoomError(.unavailable, vendor: vendorID, vendorCode: CrowdHandlerCode.checkFailed.rawValue,
                                        message: "the check failed and trustOnFail is false (no safety-net room): \(error.message)",
                                        details: ["cause": error.kind.rawValue, "causeCode": error.vendorCode.map(String.init) ?? ""]))
    }

    func makePass(entry: Entry, result r: CrowdHandlerResult, slug: String) -> Pass {
        let now = environment.clock.now()
        var details = ["slug": slug]
        if let id = r.responseID { details["responseID"] = id }
        if let h = r.hash { details["hash"] = h }
        if let q = r.requested { details["requested"] = q }
        return Pass(vendor: vendorID, room: entry.room, credential: r.token ?? "", kind: .token, issuedAt: now,
                    expiresAt: now.addingTimeInterval(configuration.passLifetime.seconds), targetURL: target(for: entry), details: details)
    }

    func persist(_ pass: Pass) async {
        guard pass.bypassedError == nil, !pass.credential.isEmpty else { return }
        do { try await environment.passStore.save(pass) } catch {
            logger.warning("could not save the pass", metadata: ["error": "\(error)"])
        }
    }

    func storedPass(_ room: RoomKey) async -> Pass? {
        guard configuration.reuseStoredPass else { return nil }
        return try? await environment.passStore.pass(vendor: vendorID, room: room)
    }

    // MARK: WaitingRoomProvider

    public func tryPass(_ entry: Entry) async throws -> TryPassResult {
        if let pass = await storedPass(entry.room) {
            return TryPassResult(disposition: .passed, status: status(.storedPass), pass: pass)
        }
        let key = tokenKey(entry)
        let token = Self.carriedToken(entry) ?? tokens.withLock { $0[key] }
        let answer: Result<CrowdHandlerResult, WaitingRoomError>
        do { answer = .success(try await checkOnce(entry, token: token)) } catch { answer = .failure(error) }
        if case .success(let r) = answer, let t = r.token { tokens.withLock { $0[key] = t } }
        switch verdict(answer, entry: entry, token: token) {
        case .passed(let pass, let s):
            await persist(pass)
            return TryPassResult(disposition: .passed, status: s, pass: pass)
        case .disabled(let s):
            return TryPassResult(disposition: .disabled, status: s)
        case .queue(let slug, let t, let progress, let s):
            return TryPassResult(disposition: .queue, status: s,
                                 queuePage: QueuePage(queueURL: configuration.waitingRoomURL(slug: slug, targetURL: target(for: entry), token: t),
                                                      targetURL: target(for: entry)), progress: progress)
        case .blocked(let s):
            return TryPassResult(disposition: .blocked, status: s)
        case .safetyNet(let slug, let t, let error):
            return TryPassResult(disposition: .queue, status: status(.safetyNet, "safety-net room \(slug): \(error.message)"),
                                 queuePage: QueuePage(queueURL: configuration.waitingRoomURL(slug: slug, targetURL: target(for: entry), token: t),
                                                      targetURL: target(for: entry)))
        case .failed(let error):
            throw error
        }
    }

    public func enqueue(_ entry: Entry) throws -> WaitingSession {
        let engine = CrowdHandlerSessionEngine(provider: self)
        return try dedup.session(for: entry, policy: environment.duplicatePolicy) {
            WaitingSession(entry: entry, engine: engine, environment: environment)
        }
    }

    /// Records the page's performance for a pass (`PUT /v1/responses/{responseID}`, code 200,
    /// time since the pass was issued) and forgets the stored pass.
    public func release(_ pass: Pass) async throws -> VendorStatus {
        try await environment.passStore.remove(vendor: vendorID, room: pass.room)
        let elapsed = max(0, environment.clock.now().timeIntervalSince(pass.issuedAt))
        return try await recordResponse(for: pass, code: 200, time: .milliseconds(Int64(elapsed * 1000)))
    }

    /// `PUT /v1/responses/{responseID}` for a pass with a `responseID` (code 0 "nothing to record"
    /// when it has none, e.g. a pass trusted on fail).
    public func recordResponse(for pass: Pass, code: Int, time: Duration) async throws(WaitingRoomError) -> VendorStatus {
        guard let id = pass.details["responseID"], !id.isEmpty else {
            return VendorStatus(vendor: vendorID, code: 0, message: "nothing to record: the pass has no responseID")
        }
        return try await client.recordResponse(responseID: id, code: code, time: time)
    }
}

/// The session engine: check, then check again every `pollInterval` while not promoted.
/// A restart starts a new CrowdHandler session (a new `POST /v1/requests`) (proposal).
struct CrowdHandlerSessionEngine: WaitingSessionEngine {
    let provider: CrowdHandlerProvider
    let runs = RunCounter()
    var vendorID: String { provider.vendorID }
    /// Code 9 (`sessionRestart`): the next wait starts a new CrowdHandler session (proposal).
    var restartedStatus: VendorStatus { provider.status(.sessionRestart, "session restarted: the next check starts a new session") }

    final class RunCounter: Sendable {
        let value = Mutex(0)
        func next() -> Int { value.withLock { v in v += 1; return v } }
    }

    func wait(for entry: Entry, context: SessionContext) async -> Outcome {
        let p = provider
        let run = runs.next()
        if run == 1, let pass = await p.storedPass(entry.room) {
            return .passed(pass, p.status(.storedPass))
        }
        var token = run == 1 ? CrowdHandlerProvider.carriedToken(entry) : nil
        var shownPage: String?
        var outages = 0
        while true {
            if Task.isCancelled { return .closed(cancelledStatus) }
            let answer: Result<CrowdHandlerResult, WaitingRoomError>
            do { answer = .success(try await p.checkOnce(entry, token: token)) } catch { answer = .failure(error) }
            if Task.isCancelled { return .closed(cancelledStatus) }
            if case .success(let r) = answer, let t = r.token { token = t }
            if case .success = answer { outages = 0 }
            switch p.verdict(answer, entry: entry, token: token) {
            case .passed(let pass, let s):
                await p.persist(pass)
                return .passed(pass, s)
            case .disabled(let s):
                return .disabled(nil, s)
            case .blocked(let s):
                return .blocked(s)
            case .failed(let e):
                return .failed(e)
            case .queue(let slug, let t, let progress, let s):
                let url = p.configuration.waitingRoomURL(slug: slug, targetURL: p.target(for: entry), token: t)
                if shownPage != slug {
                    shownPage = slug
                    context.emit(.queueOpened(QueuePage(queueURL: url, targetURL: p.target(for: entry)), s))
                }
                context.emit(.progress(progress, s))
            case .safetyNet(let slug, let t, let error):
                if shownPage != slug {
                    shownPage = slug
                    let url = p.configuration.waitingRoomURL(slug: slug, targetURL: p.target(for: entry), token: t)
                    context.emit(.queueOpened(QueuePage(queueURL: url, targetURL: p.target(for: entry)),
                                              p.status(.safetyNet, "safety-net room \(slug): \(error.message)")))
                }
                // The API did not answer: the session keeps checking (the safety-net room shows meanwhile).
                outages += 1
                let host = URL(string: p.configuration.apiURL)?.host
                let state: ConnectionState = p.environment.connectivity.isOffline(host: host)
                    ? .offline : .reconnecting(attempt: outages, nextRetryIn: p.configuration.pollInterval)
                context.emit(.connection(state, VendorStatus(vendor: vendorID, code: error.vendorCode ?? 0, message: error.message)))
            }
            do { try await p.environment.clock.sleep(for: p.configuration.pollInterval) } catch { return .closed(cancelledStatus) }
        }
    }

    func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus {
        VendorStatus(vendor: vendorID, code: 0, message: "nothing to return")
    }
}
