import Foundation
import Synchronization
import WaitingRoom

/// A driver for apps that show the queue page themselves (a web view, a browser, a test):
/// the app shows each page it is handed and calls ``navigate(to:kind:on:)`` for every
/// navigation of that page, and obeys the returned decision (cancel unless `.allow` /
/// `.queueURLChanged`). Each session waits until a terminal navigation of its own page.
///
/// - **Many pages at once.** Every session of a provider waits on its own page (its queue URL
///   carries its queue id); ``pages`` lists them, and the `on:` argument of ``navigate(to:kind:on:)``,
///   ``userExited(on:)`` and ``fail(message:code:on:)`` says which page a report is about
///   (nil: the newest, ``currentPage``). The vendor SDKs show one queue view per engine run;
///   nothing in the public record limits a provider to one page, so none is imposed here.
/// - **Never silent.** A page that gets no report at all within ``reportTimeout`` (the host
///   does not show pages, e.g. a server or a script that left `queuePage` on `host`) ends its
///   wait with code -207 (``QueueItErrorCode/hostDidNotReport``), kind `.invalidUse`, and a
///   message that says what to do. The first navigation a host reports is normally the load of
///   the queue URL itself, at once; after any report the page may wait as long as the queue does.
/// - **Attached.** A host that will show pages says so with ``attach(onShow:)`` (or `onShow` at
///   init). In the default `auto` page mode (``QueueItQueuePageMode/auto``) the provider hands
///   pages to this driver only when a host is attached, and follows them headlessly otherwise.
public final class QueueItHostDrivenPageDriver: QueuePageDriver {
    /// One session's page and its wait.
    struct Waiting {
        var id: Int
        var page: QueueItQueuePage
        var context: QueuePageContext
        var waiter: CheckedContinuation<QueuePageResult, Never>?
        var pending: QueuePageResult?
        var passed = false
        var reported = false
    }

    struct State {
        /// Open waits, oldest first.
        var waits: [Waiting] = []
        var nextID = 0
        var onShow: (@Sendable (QueueItQueuePage) -> Void)?

        func index(of page: QueueItQueuePage?) -> Int? {
            guard let page else { return waits.indices.last }
            return waits.lastIndex { $0.page.queueURL == page.queueURL }
        }
    }

    private let state: Mutex<State>
    /// How long a page may wait for its first report from the host before the wait fails with
    /// -207 (nil: no bound). (proposal) 30 s by default (`hostReportTimeoutSeconds`).
    package let reportTimeout: Duration?
    /// The default ``reportTimeout``.
    public static let defaultReportTimeout: Duration = .seconds(30)

    /// - Parameters:
    ///   - reportTimeout: see ``reportTimeout``.
    ///   - onShow: called when a page should be shown (the session also emits `queueOpened`);
    ///     giving one attaches the host (``attach(onShow:)``).
    package init(
        reportTimeout: Duration? = QueueItHostDrivenPageDriver.defaultReportTimeout,
        onShow: (@Sendable (QueueItQueuePage) -> Void)? = nil
    ) {
        self.reportTimeout = reportTimeout
        self.state = Mutex(State(onShow: onShow))
    }

    /// Says that a host shows the pages this driver is handed: `onShow` is called for each.
    public func attach(onShow: @escaping @Sendable (QueueItQueuePage) -> Void = { _ in }) {
        state.withLock { $0.onShow = onShow }
    }

    /// Whether a host is attached (``attach(onShow:)`` or `onShow` at init).
    package var isAttached: Bool { state.withLock { $0.onShow != nil } }

    /// The newest page being waited on, if any.
    package var currentPage: QueueItQueuePage? { state.withLock { $0.waits.last?.page } }

    /// Every page being waited on, oldest first (one per waiting session).
    package var pages: [QueueItQueuePage] { state.withLock { $0.waits.map(\.page) } }

    public func wait(on page: QueueItQueuePage, context: QueuePageContext) async -> QueuePageResult {
        let (id, onShow): (Int, (@Sendable (QueueItQueuePage) -> Void)?) = state.withLock { s in
            s.nextID += 1
            s.waits.append(Waiting(id: s.nextID, page: page, context: context))
            return (s.nextID, s.onShow)
        }
        onShow?(page)
        let watchdog = reportTimeout.map { bound in
            Task { [weak self] in
                guard (try? await context.clock.sleep(for: bound)) != nil, let self else { return }
                let silent = self.state.withLock { s in s.waits.first { $0.id == id }.map { !$0.reported } ?? false }
                if silent { self.finish(id: id, Self.silence(page, bound: bound)) }
            }
        }
        defer { watchdog?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<QueuePageResult, Never>) in
                let ready: QueuePageResult? = state.withLock { s in
                    guard let i = s.waits.firstIndex(where: { $0.id == id }) else { return .closed }
                    if Task.isCancelled {
                        s.waits.remove(at: i)
                        return .closed
                    }
                    if let p = s.waits[i].pending {
                        s.waits.remove(at: i)
                        return p
                    }
                    s.waits[i].waiter = c
                    return nil
                }
                if let ready { c.resume(returning: ready) }
            }
        } onCancel: {
            finish(id: id, .closed)
        }
    }

    /// The end of a page the host never reported on.
    static func silence(_ page: QueueItQueuePage, bound: Duration) -> QueuePageResult {
        .failed(
            WaitingRoomError(
                .invalidUse, vendor: QueueItConfiguration.vendorID, vendorCode: QueueItErrorCode.hostDidNotReport.rawValue,
                message: "the queue page was handed to the host (queuePage \"host\") but no navigation was reported within "
                    + "\(Int(bound.seconds)) s: show the page and report its navigations with QueueItHostDrivenPageDriver.navigate(to:kind:on:), "
                    + "or choose queuePage \"follow\" (headless HTTP: redirect and refresh pages such as the emulator's) or "
                    + "\"browser\" (headless chromium: real, script-driven queue pages)",
                details: ["queueUrl": page.queueURL.absoluteString]))
    }

    /// Ends wait `id` with `result` (kept for it when it is not suspended yet).
    private func finish(id: Int, _ result: QueuePageResult) {
        let waiter: CheckedContinuation<QueuePageResult, Never>? = state.withLock { s in
            guard let i = s.waits.firstIndex(where: { $0.id == id }) else { return nil }
            guard let w = s.waits[i].waiter else {
                if s.waits[i].pending == nil { s.waits[i].pending = result }
                return nil
            }
            s.waits.remove(at: i)
            return w
        }
        waiter?.resume(returning: result)
    }

    /// Classifies a navigation of a shown page and acts on it; returns the decision for the host.
    /// - Parameter page: the page navigated (nil: the newest, ``currentPage``).
    @discardableResult
    public func navigate(to url: String, kind: QueueItNavigationKind = .other, on page: QueueItQueuePage? = nil) -> QueueItNavigation {
        let found: (id: Int, page: QueueItQueuePage, context: QueuePageContext, passed: Bool)? = state.withLock { s in
            guard let i = s.index(of: page) else { return nil }
            s.waits[i].reported = true
            return (s.waits[i].id, s.waits[i].page, s.waits[i].context, s.waits[i].passed)
        }
        guard let found else { return .allow }
        if found.passed { return .allow }  // iOS rule 0: after "passed" everything is allowed
        let decision = found.page.classifier.classify(url, kind: kind)
        switch decision {
        case .passed(let token):
            state.withLock { s in
                if let i = s.waits.firstIndex(where: { $0.id == found.id }) { s.waits[i].passed = true }
            }
            finish(id: found.id, .passed(token: token))
        case .close: finish(id: found.id, .closed)
        case .restartSession: finish(id: found.id, .restartSession)
        case .queueURLChanged(let u): found.context.emit(.queueURLChanged(u))
        case .external(let u): found.context.emit(.externalLink(u))
        case .allow, .blocked: break
        }
        return decision
    }

    /// The host saw `<body class="exit">` after a page load.
    /// - Parameter page: the page (nil: the newest).
    public func userExited(on page: QueueItQueuePage? = nil) {
        let context: QueuePageContext? = state.withLock { s in
            guard let i = s.index(of: page) else { return nil }
            s.waits[i].reported = true
            return s.waits[i].context
        }
        context?.emit(.userExited)
    }

    /// The host's view failed (the SDK's "WebView Error"); ends that page's wait with the error.
    /// - Parameter page: the page (nil: the newest).
    public func fail(message: String, code: Int = QueueItErrorCode.queuePageFailed.rawValue, on page: QueueItQueuePage? = nil) {
        let id: Int? = state.withLock { s in s.index(of: page).map { s.waits[$0].id } }
        guard let id else { return }
        finish(
            id: id,
            .failed(
                WaitingRoomError(
                    .invalidResponse, vendor: QueueItConfiguration.vendorID, vendorCode: code, message: "WebView Error: \(message)")))
    }
}
