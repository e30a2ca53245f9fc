import Foundation
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
    package let configuration: CrowdHandlerConfiguration
    package let environment: ProviderEnvironment
    package let client: CrowdHandlerClient
    /// The stored passes (kept for the pass lifetime).
    let passes: PassKeeper
    let dedup = SessionDeduplicator()
    /// Tokens kept between ``tryPass(_:)`` calls, per room and user (what the SDKs keep in a cookie).
    let tokens = Mutex<[String: String]>([:])

    package init(configuration: CrowdHandlerConfiguration, environment: ProviderEnvironment) {
        self.configuration = configuration
        self.environment = environment
        self.client = CrowdHandlerClient(configuration: configuration, transport: environment.transport)
        self.passes = PassKeeper(
            vendorID: CrowdHandlerConfiguration.vendorID, environment: environment,
            reusesStoredPasses: configuration.reuseStoredPass)
    }

    /// The room key of an entry (as given) and the URL checked for it.
    func target(for entry: Entry) -> String {
        entry.attributes["url"] ?? configuration.targetURL(for: entry.room)
    }

    func check(for entry: Entry) -> CrowdHandlerClient.Check {
        CrowdHandlerClient.Check(
            url: target(for: entry), ip: entry.attributes["ip"] ?? configuration.ip,
            agent: entry.attributes["agent"] ?? configuration.agent, lang: entry.attributes["lang"] ?? configuration.lang)
    }

    /// The token an entry carries: credential `.enqueueToken` (the `ch-id`) or attribute `token`.
    static func carriedToken(_ entry: Entry) -> String? {
        if case .enqueueToken(let t)? = entry.credential, !t.isEmpty { return t }
        return entry.attributes["token"]
    }

    func tokenKey(_ entry: Entry) -> String { "\(entry.room)|\(entry.userId ?? "")" }

    /// The token ``tryPass(_:)`` keeps for `entry` (nil before the first check).
    package func rememberedToken(for entry: Entry) -> String? { tokens.withLock { $0[tokenKey(entry)] } }

    /// One check of the API: the raw result (what the SDK's client hands out).
    package func checkOnce(_ entry: Entry, token: String?) async throws(WaitingRoomError) -> CrowdHandlerResult {
        try await client.check(check(for: entry), token: token)
    }

    /// ``checkOnce(_:token:)`` with its failure as a value.
    func answer(for entry: Entry, token: String?) async -> Result<CrowdHandlerResult, WaitingRoomError> {
        do { return .success(try await checkOnce(entry, token: token)) } catch { return .failure(error) }
    }

    /// The room's waiting page for `entry` (the session token appended when there is one).
    func queuePage(slug: String, token: String?, entry: Entry) -> QueuePage {
        let target = target(for: entry)
        return QueuePage(queueURL: configuration.waitingRoomURL(slug: slug, targetURL: target, token: token), targetURL: target)
    }

    // MARK: WaitingRoomProvider

    public func tryPass(_ entry: Entry) async throws -> TryPassResult {
        if let stored = await passes.storedResult(entry.room, status: CrowdHandlerCode.storedPass.status()) { return stored }
        let key = tokenKey(entry)
        let token = Self.carriedToken(entry) ?? tokens.withLock { $0[key] }
        let answer = await answer(for: entry, token: token)
        if case .success(let r) = answer, let t = r.token { tokens.withLock { $0[key] = t } }
        switch verdict(answer, entry: entry, token: token) {
        case .passed(let pass, let s):
            await passes.keep(pass)
            return TryPassResult(disposition: .passed, status: s, pass: pass)
        case .disabled(let s):
            return TryPassResult(disposition: .disabled, status: s)
        case .queue(let slug, let t, let progress, let s):
            return TryPassResult(
                disposition: .queue, status: s, queuePage: queuePage(slug: slug, token: t, entry: entry), progress: progress)
        case .blocked(let s):
            return TryPassResult(disposition: .blocked, status: s)
        case .safetyNet(let slug, let t, let error):
            return TryPassResult(
                disposition: .queue, status: CrowdHandlerCode.safetyNet.status("safety-net room \(slug): \(error.message)"),
                queuePage: queuePage(slug: slug, token: t, entry: entry))
        case .failed(let error):
            throw error
        }
    }

    public func enqueue(_ entry: Entry) throws -> WaitingSession {
        try dedup.session(for: entry, engine: PollingSessionEngine(CrowdHandlerWait(provider: self)), environment: environment)
    }

    /// Records the page's performance for a pass (`PUT /v1/responses/{responseID}`, code 200,
    /// time since the pass was issued) and forgets the stored pass.
    public func release(_ pass: Pass) async throws -> VendorStatus {
        try await passes.forget(pass.room)
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
