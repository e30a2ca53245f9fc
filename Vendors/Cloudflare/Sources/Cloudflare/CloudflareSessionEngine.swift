import Foundation
import Synchronization
import WaitingRoom

/// The session engine: request the protected URL, and while the answer is a `cfWaitingRoom`
/// reply, request it again after the reply's `refreshIntervalSeconds` (within the configured
/// limits), always with the cookie the edge set last. A restart starts as a new visitor (an
/// empty cookie jar) (proposal).
struct CloudflareSessionEngine: WaitingSessionEngine {
    let provider: CloudflareProvider
    let runs = RunCounter()
    var vendorID: String { provider.vendorID }
    /// Code 9 (`sessionRestart`).
    var restartedStatus: VendorStatus { provider.status(.sessionRestart, "session restarted: the next request is a new visitor's") }
    var cancelledStatus: VendorStatus { provider.status(.cancelled) }

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
        var jar = run == 1 ? p.cookieJar(for: entry) : CloudflareCookieJar()
        var shownPage = false
        while true {
            if Task.isCancelled { return .closed(cancelledStatus) }
            let answer: Result<(CloudflareAnswer, CloudflareCookieJar), any Error>
            do {
                answer = .success(try await p.check(entry, jar: jar) { attempt, error in
                    let state: ConnectionState = .reconnecting(attempt: attempt, nextRetryIn: p.configuration.retryPolicy.delay(beforeRetry: attempt - 1))
                    context.emit(.connection(state, VendorStatus(vendor: p.vendorID, code: error.vendorCode ?? CloudflareCode.unreachable.rawValue,
                                                                 message: error.message)))
                })
            } catch { answer = .failure(error) }
            if Task.isCancelled { return .closed(cancelledStatus) }
            if case .success(let (_, updated)) = answer {
                jar = updated
                p.remember(jar, for: entry)
            }
            switch p.verdict(answer, entry: entry, inLine: shownPage) {
            case .passed(let pass, let s):
                if pass.credential.isEmpty { p.remember(CloudflareCookieJar(), for: entry) }
                await p.persist(pass)
                return .passed(pass, s)
            case .disabled(let pass, let s):
                return .disabled(pass, s)
            case .blocked(let s):
                return .blocked(s)
            case .failed(let e):
                return .failed(e)
            case .queue(_, let progress, let s, let next):
                if !shownPage {
                    shownPage = true
                    let url = p.target(for: entry)
                    context.emit(.queueOpened(QueuePage(queueURL: url, targetURL: url), s))
                }
                context.emit(.progress(progress, s))
                do { try await p.environment.clock.sleep(for: next) } catch { return .closed(cancelledStatus) }
            }
        }
    }

    func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus {
        VendorStatus(vendor: vendorID, code: 0, message: "nothing to return")
    }
}
