import Foundation
import WaitingRoom

/// What CrowdHandler gives the core's polling engine: check, then check again every
/// `pollInterval` while not promoted, with the session's token. A restart starts a new
/// CrowdHandler session (a new `POST /v1/requests`) (proposal).
struct CrowdHandlerWait: PollingVendor {
    /// What one wait carries between checks.
    struct Visit: Sendable {
        /// The session token sent with the next check.
        var token: String?
        /// The room whose waiting page was last announced.
        var shownSlug: String?
        /// Checks in a row the API did not answer.
        var outages = 0
    }

    let provider: CrowdHandlerProvider
    var vendorID: String { provider.vendorID }
    var passes: PassKeeper { provider.passes }
    var storedPassStatus: VendorStatus { CrowdHandlerCode.storedPass.status() }
    /// Code 9 (`sessionRestart`): the next wait starts a new CrowdHandler session (proposal).
    var restartedStatus: VendorStatus { CrowdHandlerCode.sessionRestart.status("session restarted: the next check starts a new session") }

    /// The first run uses a stored pass and the token the entry carries; a restart starts afresh.
    func begin(_ entry: Entry, run: Int) -> (storedPassRoom: RoomKey?, visit: Visit) {
        (run == 1 ? entry.room : nil, Visit(token: run == 1 ? CrowdHandlerProvider.carriedToken(entry) : nil))
    }

    func check(_ entry: Entry, visit: Visit, context: SessionContext) async -> Result<CrowdHandlerResult, WaitingRoomError> {
        await provider.answer(for: entry, token: visit.token)
    }

    func decide(
        _ answer: Result<CrowdHandlerResult, WaitingRoomError>, entry: Entry, visit: inout Visit,
        context: SessionContext
    ) async -> PollStep {
        if case .success(let r) = answer {
            if let t = r.token { visit.token = t }
            visit.outages = 0
        }
        switch provider.verdict(answer, entry: entry, token: visit.token) {
        case .passed(let pass, let s): return .finish(.passed(pass, s))
        case .disabled(let s): return .finish(.disabled(nil, s))
        case .blocked(let s): return .finish(.blocked(s))
        case .failed(let e): return .finish(.failed(e))
        case .queue(let slug, let t, let progress, let s):
            open(slug, token: t, entry: entry, status: s, visit: &visit, context: context)
            context.emit(.progress(progress, s))
        case .safetyNet(let slug, let t, let error):
            open(
                slug, token: t, entry: entry, status: CrowdHandlerCode.safetyNet.status("safety-net room \(slug): \(error.message)"),
                visit: &visit, context: context)
            // The API did not answer: the session keeps checking (the safety-net room shows meanwhile).
            visit.outages += 1
            let configuration = provider.configuration
            let state: ConnectionState =
                provider.environment.connectivity.isOffline(host: URL(string: configuration.apiURL)?.host)
                ? .offline : .reconnecting(attempt: visit.outages, nextRetryIn: configuration.pollInterval)
            context.emit(.connection(state, VendorStatus(vendor: vendorID, code: error.vendorCode ?? 0, message: error.message)))
        }
        return .checkAgain(after: provider.configuration.pollInterval)
    }

    /// Announces the room's waiting page once per room.
    func open(_ slug: String, token: String?, entry: Entry, status: VendorStatus, visit: inout Visit, context: SessionContext) {
        guard visit.shownSlug != slug else { return }
        visit.shownSlug = slug
        context.emit(.queueOpened(provider.queuePage(slug: slug, token: token, entry: entry), status))
    }
}
