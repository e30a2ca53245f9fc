import Foundation
import WaitingRoom

/// What Queue-it gives the core's polling engine: enqueue, classify by redirect type, wait
/// through the queue page with the provider's ``QueuePageDriver``, and enqueue again when the
/// page asks to restart the session (up to ``maxRestarts`` times per wait).
struct QueueItWait: PollingVendor {
    /// One wait: the room its passes are filed under, and the restarts the page asked for.
    struct Visit: Sendable {
        var room: RoomKey
        var restarts = 0
    }

    static let maxRestarts = 50
    let provider: QueueItProvider
    var vendorID: String { provider.vendorID }
    var passes: PassKeeper { provider.passes }
    var storedPassStatus: VendorStatus { provider.status(.storedPass) }

    /// Every run uses a stored pass of the entry's room.
    func begin(_ entry: Entry, run: Int) throws(WaitingRoomError) -> (storedPassRoom: RoomKey?, visit: Visit) {
        let (room, _) = try provider.call(for: entry)
        return (room, Visit(room: room))
    }

    /// One enqueue exchange with its retries, each announced as reconnecting; an offline device
    /// is announced as offline.
    func check(_ entry: Entry, visit: Visit, context: SessionContext) async -> Result<QueueItEnqueueResponse, any Error> {
        let vendor = vendorID
        do {
            let (_, _, response) = try await provider.enqueueOnce(
                entry,
                onRetry: { attempt, wait, error in
                    context.emit(
                        .connection(
                            .reconnecting(attempt: attempt, nextRetryIn: wait),
                            VendorStatus(vendor: vendor, code: error.vendorCode ?? 0, message: error.message)))
                })
            return .success(response)
        } catch let e as WaitingRoomError {
            if e.vendorCode == QueueItErrorCode.networkUnavailable.rawValue { context.emit(.connection(.offline, e.status)) }
            return .failure(e)
        } catch {
            return .failure(error)
        }
    }

    func decide(
        _ answer: Result<QueueItEnqueueResponse, any Error>, entry: Entry, visit: inout Visit,
        context: SessionContext
    ) async -> PollStep {
        let r: QueueItEnqueueResponse
        switch answer {
        case .success(let response): r = response
        case .failure(let e as WaitingRoomError): return .finish(.failed(e))
        case .failure: return .finish(.closed(cancelledStatus))
        }
        let rt = r.redirectType
        switch rt.action {
        case .passed:
            return .finish(
                .passed(
                    provider.makePass(room: visit.room, token: r.token, response: r, targetURL: nil),
                    provider.status(.ok, "passed without queue (redirect type \(rt.rawValue))")))
        case .disabled:
            return .finish(
                .disabled(
                    provider.makePass(room: visit.room, token: r.token, response: r, targetURL: nil),
                    provider.status(.ok, "waiting room not queueing (redirect type \(rt.rawValue))")))
        case .showQueue:
            return await queue(r, entry: entry, visit: &visit, context: context)
        }
    }

    /// Waits through the queue page `r` names: announce it, the view delay, then the page driver.
    func queue(_ r: QueueItEnqueueResponse, entry: Entry, visit: inout Visit, context: SessionContext) async -> PollStep {
        let p = provider
        let rt = r.redirectType
        guard let qs = r.queueUrl, let queueURL = URL(string: qs), queueURL.host != nil,
            let ts = r.eventTargetUrl, let targetURL = URL(string: ts), targetURL.host != nil
        else {
            return .finish(
                .failed(
                    WaitingRoomError(
                        .invalidResponse, vendor: vendorID, vendorCode: 200,
                        message: "enqueue asked to queue (redirect type \(rt.rawValue)) without a usable QueueUrl and EventTargetUrl")))
        }
        let page = QueueItQueuePage(
            queueURL: queueURL, targetURL: targetURL,
            pathPrefix: p.configuration.waitingRoomDomain == nil ? nil : p.configuration.pathPrefix)
        p.observer.viewWillOpen(page)
        context.emit(.queueOpened(QueuePage(queueURL: qs, targetURL: ts), p.status(.ok, "queue (redirect type \(rt.rawValue))")))
        if p.configuration.viewDelay > .zero {
            do { try await p.environment.clock.sleep(for: p.configuration.viewDelay) } catch { return .finish(.closed(cancelledStatus)) }
        }
        p.observer.viewDidAppear(page)
        switch await p.driver.wait(on: page, context: pageContext(entry: entry, targetURL: ts, context: context)) {
        case .passed(let token):
            // Kept by the engine even if the caller cancelled meanwhile: a later tryPass/session
            // finds it in the store instead of queueing again (no pass is lost).
            return .finish(
                .passed(
                    p.makePass(room: visit.room, token: token, response: r, targetURL: ts),
                    p.status(.ok, token == nil ? "passed the queue (no queueittoken on the target URL)" : "passed the queue")))
        case .closed:
            return .finish(.closed(p.status(.viewClosed)))
        case .restartSession:
            guard p.configuration.autoRestartSession else { return .finish(.closed(p.status(.sessionRestart))) }
            visit.restarts += 1
            if visit.restarts > Self.maxRestarts {
                return .finish(
                    .failed(
                        WaitingRoomError(
                            .invalidResponse, vendor: vendorID, vendorCode: QueueItErrorCode.sessionRestart.rawValue,
                            message: "the queue page asked to restart \(visit.restarts) times")))
            }
            context.emit(.sessionRestarted(p.status(.sessionRestart)))
            return .checkAgain(after: .zero)
        case .failed(let e):
            return .finish(.failed(e))
        }
    }

    /// What the page driver sees: the page's events become the session's (and the observer's).
    func pageContext(entry: Entry, targetURL ts: String, context: SessionContext) -> QueuePageContext {
        let p = provider
        let vendor = vendorID
        let observer = provider.observer
        return QueuePageContext(
            transport: p.environment.transport, clock: p.environment.clock, logger: p.logger,
            userAgent: entry.attributes["userAgent"] ?? p.configuration.userAgent,
            emit: { event in
                observer.pageEvent(event)
                switch event {
                case .progress(let prog): context.emit(.progress(prog, VendorStatus(vendor: vendor, code: 200, message: "in queue")))
                case .queueURLChanged(let url):
                    context.emit(
                        .queuePageChanged(
                            QueuePage(queueURL: url.absoluteString, targetURL: ts),
                            VendorStatus(vendor: vendor, code: 200, message: "queue URL changed")))
                case .userExited:
                    context.emit(.userExited(VendorStatus(vendor: vendor, code: 200, message: "user exited the queue page")))
                case .reconnecting(let attempt, let wait, let failure):
                    context.emit(
                        .connection(
                            .reconnecting(attempt: attempt, nextRetryIn: wait), VendorStatus(vendor: vendor, code: 0, message: failure)))
                case .externalLink: break
                }
            })
    }
}
