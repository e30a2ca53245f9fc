import WaitingRoom

/// What Cloudflare gives the core's polling engine: request the protected URL, and while the
/// answer is a `cfWaitingRoom` reply, request it again after the reply's
/// `refreshIntervalSeconds` (within the configured limits), always with the cookie the edge set
/// last. A restart starts as a new visitor (an empty cookie jar) (proposal).
struct CloudflareWait: PollingVendor {
    /// The visitor between requests: the cookies the edge set, and whether it took them in line.
    struct Visit: Sendable {
        var jar: CloudflareCookieJar
        /// Answered as waiting in this wait (a full queue blocks only a visitor not yet in line).
        var inLine = false
    }

    let provider: CloudflareProvider
    var vendorID: String { provider.vendorID }
    var passes: PassKeeper { provider.passes }
    var storedPassStatus: VendorStatus { CloudflareCode.storedPass.status() }
    var cancelledStatus: VendorStatus { CloudflareCode.cancelled.status() }
    /// Code 9 (`sessionRestart`).
    var restartedStatus: VendorStatus { CloudflareCode.sessionRestart.status("session restarted: the next request is a new visitor's") }

    /// The first run uses a stored pass and the kept (or carried) cookies; a restart is a new visitor.
    func begin(_ entry: Entry, run: Int) -> (storedPassRoom: RoomKey?, visit: Visit) {
        run == 1 ? (entry.room, Visit(jar: provider.cookieJar(for: entry))) : (nil, Visit(jar: CloudflareCookieJar()))
    }

    /// One request with the retry policy; each retry is announced as reconnecting.
    func check(_ entry: Entry, visit: Visit, context: SessionContext) async -> Result<(CloudflareAnswer, CloudflareCookieJar), any Error> {
        let vendor = vendorID
        let policy = provider.configuration.retryPolicy
        return await provider.answer(for: entry, jar: visit.jar) { attempt, error in
            let state: ConnectionState = .reconnecting(attempt: attempt, nextRetryIn: policy.delay(beforeRetry: attempt - 1))
            context.emit(
                .connection(
                    state,
                    VendorStatus(
                        vendor: vendor, code: error.vendorCode ?? CloudflareCode.unreachable.rawValue,
                        message: error.message)))
        }
    }

    func decide(
        _ answer: Result<(CloudflareAnswer, CloudflareCookieJar), any Error>, entry: Entry, visit: inout Visit,
        context: SessionContext
    ) async -> PollStep {
        if case .success(let (_, updated)) = answer {
            visit.jar = updated
            provider.remember(updated, for: entry)
        }
        switch provider.verdict(answer, entry: entry, inLine: visit.inLine) {
        case .passed(let pass, let s):
            // a revoked session (or one let through on failure) holds no cookie worth keeping
            if pass.credential.isEmpty { provider.remember(CloudflareCookieJar(), for: entry) }
            return .finish(.passed(pass, s))
        case .disabled(let pass, let s): return .finish(.disabled(pass, s))
        case .blocked(let s): return .finish(.blocked(s))
        case .failed(let e): return .finish(.failed(e))
        case .queue(_, let progress, let s, let next):
            if !visit.inLine {
                visit.inLine = true
                let url = provider.target(for: entry)
                context.emit(.queueOpened(QueuePage(queueURL: url, targetURL: url), s))
            }
            context.emit(.progress(progress, s))
            return .checkAgain(after: next)
        }
    }
}
