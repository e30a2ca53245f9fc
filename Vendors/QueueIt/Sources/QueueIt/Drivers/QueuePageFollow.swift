import Foundation
import WaitingRoom

/// One wait of ``QueueItHTTPFollowDriver`` through a queue page: loads the page, follows its
/// redirects and refreshes as a browser would, until the page lets the visitor through, closes,
/// asks to restart, fails or takes longer than the driver's `maxWait`. Every step returns the
/// wait's end, or nil to go on.
struct QueuePageFollow {
    let driver: QueueItHTTPFollowDriver
    let page: QueueItQueuePage
    let context: QueuePageContext
    let started: Date
    /// What is loaded next.
    var url: URL
    /// The last page that was shown (where a cancelled navigation leaves the visitor).
    var current: URL
    var hops = 0
    var failures = 0
    var lastProgress: QueueProgress?

    init(driver: QueueItHTTPFollowDriver, page: QueueItQueuePage, context: QueuePageContext) {
        self.driver = driver
        self.page = page
        self.context = context
        self.started = context.clock.now()
        self.url = page.queueURL
        self.current = page.queueURL
    }

    mutating func run() async -> QueuePageResult {
        // The first load of the queue page is a navigation to the queue host (iOS fires queue-URL-changed for it).
        if case .queueURLChanged(let u) = page.classifier.classify(url) { context.emit(.queueURLChanged(u)) }
        while true {
            if Task.isCancelled { return .closed }
            if let end = await step() { return end }
        }
    }

    /// One load of `url` and what its answer means.
    mutating func step() async -> QueuePageResult? {
        let response: HTTPResponse
        do {
            response = try await context.transport.send(
                HTTPRequest(
                    method: "GET", url: url.absoluteString,
                    headers: [("Accept", "text/html,application/xhtml+xml"), ("User-Agent", context.userAgent)],
                    timeout: driver.requestTimeout, followRedirects: false,
                    label: VendorRequestLabel(vendor: QueueItConfiguration.vendorID, kind: "queue_page")))
        } catch {
            if Task.isCancelled || error is CancellationError { return .closed }
            return await transient("\(error)")
        }
        if (300...399).contains(response.status) { return await redirected(response) }
        hops = 0
        if response.status >= 500 || response.status == 429 { return await transient("HTTP \(response.status)") }
        let hints = QueuePageHints(
            html: response.body.count <= QueueItHTTPFollowDriver.maxPageBytes ? response.text : "",
            refreshHeader: response.headers.value(for: "Refresh"))
        if response.status >= 400 { return await errorPage(response.status, hints: hints) }
        guard hints.isFollowable else {
            // (proposal) A 200 answer with nothing to follow is a failed load, not a page.
            return await transient("HTTP \(response.status) without a refresh, position or exit (not a queue page)")
        }
        return await shown(hints)
    }

    /// Whether waiting `delay` more would pass the driver's `maxWait`.
    func overdue(after delay: Duration) -> Bool {
        context.clock.now().timeIntervalSince(started) + delay.seconds > driver.maxWait.seconds
    }

    /// Counts a failed load of `url`; the wait's end when the retries are used up, else nil
    /// after the schedule's delay (the same URL is loaded again: the visitor keeps its place).
    mutating func transient(_ what: String) async -> QueuePageResult? {
        failures += 1
        context.logger.debug("queue page load failed", metadata: ["url": "\(url)", "failure": "\(failures)", "error": "\(what)"])
        if failures > driver.retryPolicy.retries { return driver.exhausted(url, failures: failures, last: what) }
        let delay = driver.retryPolicy.delay(beforeRetry: failures - 1)
        if overdue(after: delay) { return driver.timedOut(url) }
        context.emit(.reconnecting(attempt: failures, wait: delay, failure: what))
        if (try? await context.clock.sleep(for: delay)) == nil { return .closed }
        return nil
    }

    /// A navigation the vendor cancels (docs/queueit-protocol.md §4: `/what-is-this.html`, a
    /// non-web scheme, an error page): the visitor stays on the current page, which is reloaded
    /// after `pollInterval`.
    mutating func stay(_ why: String) async -> QueuePageResult? {
        context.logger.debug("queue page navigation cancelled", metadata: ["url": "\(url)", "why": "\(why)"])
        hops = 0
        url = current
        if overdue(after: driver.pollInterval) { return driver.timedOut(current) }
        if (try? await context.clock.sleep(for: driver.pollInterval)) == nil { return .closed }
        return nil
    }

    /// Acts on a navigation to `next`: the wait's end, or nil with `url` set to what to load.
    mutating func navigate(to next: URL) async -> QueuePageResult? {
        switch page.classifier.classify(next) {
        case .passed(let token): return .passed(token: token)
        case .close: return .closed
        case .restartSession: return .restartSession
        case .blocked: return await stay("blocked page \(next)")
        case .external(let u):
            context.emit(.externalLink(u))
            return await stay("external link \(u)")
        case .queueURLChanged(let u):
            context.emit(.queueURLChanged(u))
            url = u
        case .allow: url = next
        }
        return nil
    }

    /// A 3xx answer: follow its `Location` (at most `maxHops` in a row).
    mutating func redirected(_ response: HTTPResponse) async -> QueuePageResult? {
        guard let loc = response.headers.value(for: "Location"), let next = URL(string: loc, relativeTo: url)?.absoluteURL else {
            return QueueItHTTPFollowDriver.failure("redirect \(response.status) from \(url) without a usable Location")
        }
        hops += 1
        if hops > driver.maxHops { return QueueItHTTPFollowDriver.failure("more than \(driver.maxHops) redirects from \(page.queueURL)") }
        return await navigate(to: next)
    }

    /// A 4xx page: a web view shows an error page and the wait goes on (docs/queueit-protocol.md
    /// §4: only the navigation is lost). The page may still say exit or refresh elsewhere.
    mutating func errorPage(_ status: Int, hints: QueuePageHints) async -> QueuePageResult? {
        if hints.exit { context.emit(.userExited) }
        if let r = hints.refresh, let target = r.url, let next = URL(string: target, relativeTo: url)?.absoluteURL, next != url {
            if overdue(after: .seconds(r.seconds)) { return driver.timedOut(url) }
            if r.seconds > 0, (try? await context.clock.sleep(for: .milliseconds(Int64(min(r.seconds, 300) * 1000)))) == nil {
                return .closed
            }
            return await navigate(to: next)
        }
        return await stay("HTTP \(status) from \(url)")
    }

    /// A queue page that loaded: report exit and progress, then wait for its refresh and follow it.
    mutating func shown(_ hints: QueuePageHints) async -> QueuePageResult? {
        failures = 0
        current = url
        if hints.exit { context.emit(.userExited) }
        if let p = hints.progress, p != lastProgress {
            lastProgress = p
            context.emit(.progress(p))
        }
        var delay = driver.pollInterval
        var next = url
        if let r = hints.refresh {
            delay = .milliseconds(Int64(min(max(r.seconds, 0), 300) * 1000))
            if let target = r.url, let u = URL(string: target, relativeTo: url)?.absoluteURL { next = u }
        }
        if next != url, delay == .zero {
            switch page.classifier.classify(next) {
            case .passed(let token): return .passed(token: token)
            case .close: return .closed
            case .restartSession: return .restartSession
            default: break
            }
        }
        if overdue(after: delay) { return driver.timedOut(url) }
        if delay > .zero, (try? await context.clock.sleep(for: delay)) == nil { return .closed }
        if next != url { return await navigate(to: next) }
        return nil
    }
}
