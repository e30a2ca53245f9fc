import Foundation
import Synchronization
import WaitingRoom

/// A driver for apps that show the queue page themselves (a web view, a browser, a test):
/// the app calls ``navigate(to:kind:)`` for every navigation and obeys the returned decision
/// (cancel unless `.allow` / `.queueURLChanged`). The session waits until a terminal navigation.
///
/// One page at a time: a new `wait` replaces (closes) an earlier one.
public final class QueueItHostDrivenPageDriver: QueuePageDriver {
    struct State {
        var page: QueueItQueuePage?
        var waiter: CheckedContinuation<QueuePageResult, Never>?
        var context: QueuePageContext?
        var pending: QueuePageResult?
        var passed = false
        var generation = 0
    }

    private let state = Mutex(State())
    private let onShow: @Sendable (QueueItQueuePage) -> Void

    /// - Parameter onShow: called when a page should be shown (the session also emits `queueOpened`).
    public init(onShow: @escaping @Sendable (QueueItQueuePage) -> Void = { _ in }) {
        self.onShow = onShow
    }

    /// The page being waited on, if any.
    public var currentPage: QueueItQueuePage? { state.withLock { $0.page } }

    public func wait(on page: QueueItQueuePage, context: QueuePageContext) async -> QueuePageResult {
        let generation: Int = state.withLock { s in
            s.waiter?.resume(returning: .closed)
            s.waiter = nil
            s.generation += 1
            s.page = page
            s.context = context
            s.pending = nil
            s.passed = false
            return s.generation
        }
        onShow(page)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<QueuePageResult, Never>) in
                let ready: QueuePageResult? = state.withLock { s in
                    guard s.generation == generation else { return .closed }
                    if Task.isCancelled { return .closed }
                    if let p = s.pending { s.pending = nil; return p }
                    s.waiter = c
                    return nil
                }
                if let ready { c.resume(returning: ready) }
            }
        } onCancel: {
            finish(.closed, generation: generation)
        }
    }

    private func finish(_ result: QueuePageResult, generation: Int? = nil) {
        let waiter: CheckedContinuation<QueuePageResult, Never>? = state.withLock { s in
            if let g = generation, g != s.generation { return nil }
            guard let w = s.waiter else {
                if s.page != nil { s.pending = result }
                return nil
            }
            s.waiter = nil
            s.page = nil
            return w
        }
        waiter?.resume(returning: result)
    }

    /// Classifies a navigation of the shown page and acts on it. Returns the decision for the host.
    @discardableResult
    public func navigate(to url: String, kind: QueueItNavigationKind = .other) -> QueueItNavigation {
        let (page, context, alreadyPassed): (QueueItQueuePage?, QueuePageContext?, Bool) = state.withLock { ($0.page, $0.context, $0.passed) }
        guard let page else { return .allow }
        if alreadyPassed { return .allow } // iOS rule 0: after "passed" everything is allowed
        let decision = page.classifier.classify(url, kind: kind)
        switch decision {
        case .passed(let token):
            state.withLock { $0.passed = true }
            finish(.passed(token: token))
        case .close: finish(.closed)
        case .restartSession: finish(.restartSession)
        case .queueURLChanged(let u): context?.emit(.queueURLChanged(u))
        case .external(let u): context?.emit(.externalLink(u))
        case .allow, .blocked: break
        }
        return decision
    }

    /// The host saw `<body class="exit">` after a page load.
    public func userExited() {
        state.withLock { $0.context }?.emit(.userExited)
    }

    /// The host's view failed (the SDK's "WebView Error"); ends the wait with that error.
    public func fail(message: String, code: Int = QueueItErrorCode.queuePageFailed.rawValue) {
        finish(.failed(WaitingRoomError(.invalidResponse, vendor: QueueItConfiguration.vendorID, vendorCode: code, message: "WebView Error: \(message)")))
    }
}
