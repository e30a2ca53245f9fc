import Foundation
import WaitingRoom

/// Waits through a queue page headlessly: GETs the queue URL, follows redirects one hop at a
/// time and classifies every hop (docs/queueit-protocol.md §4), reloads the page as its `Refresh` header or
/// `<meta http-equiv="refresh">` says (else every `pollInterval`), and reads progress from
/// `queueit-ahead` / `queueit-waiting` / `queueit-eta-seconds` meta tags when the page has them.
/// This is how the emulator's queue page is waited through; a real Queue-it page that relies on
/// JavaScript needs the host-driven driver instead (``QueueItQueuePageMode/host``, the default).
/// The `queueit-*` meta tags are this project's emulator convention, not Queue-it's.
///
/// The whole wait is bounded by ``maxWait`` (on the context's clock): a page that keeps
/// refreshing without ever leading to the target (a real queue page, whose progress is driven by
/// script) ends `.failed` with code -206 (`queuePageTimeout`) and a message saying so.
///
/// Transient failures of a page load — transport errors (refused, reset, dropped mid-answer),
/// no complete answer within `requestTimeout`, HTTP 5xx or 429, or a 200 answer that is not a
/// queue page the driver can follow (no refresh, no `queueit-*` position tags, no exit body:
/// garbage, a CDN error page) — neither end the wait nor lose the visitor's place: the same URL
/// (which carries the queue id) is loaded again after the next delay of `retryPolicy`
/// (default ``RetryPolicy/queueItPage``: 1, 2, 4, 8, 16, 30 s). A good page starts the schedule
/// over. When the retries are used up the wait ends `.failed` with `.unavailable`, vendor code 3
/// (`QueueItErrorCode.queueUnavailable`), exactly the vendor's message, the last failure in
/// `details["lastFailure"]`.
///
/// Navigations the vendor's web view only cancels (docs/queueit-protocol.md §4) do not end the wait: a redirect
/// or refresh to `/what-is-this.html` or to a non-web scheme (reported as `externalLink`), and a
/// 4xx error page, leave the visitor on the current page, which is reloaded after `pollInterval`.
/// Too many redirects in a row or a redirect without a usable `Location` end at once with code
/// -202 (`queuePageFailed`).
@usableFromInline package struct QueueItHTTPFollowDriver: QueuePageDriver {
    package var pollInterval: Duration
    /// Redirect hops allowed without a page in between.
    package var maxHops: Int
    /// Waits between reloads of a page that failed to load, and what is reported when they are
    /// used up (only ``RetryPolicy/delays``, ``RetryPolicy/retries`` and ``RetryPolicy/exhaustion``
    /// are used; the load deadline is ``requestTimeout``).
    package var retryPolicy: RetryPolicy
    /// The deadline of one page load (redirect hops are separate loads).
    package var requestTimeout: Duration
    /// The longest the whole wait may take (clock time from the first load).
    package var maxWait: Duration
    /// (proposal) 30 minutes: the reference names no bound; a visitor in a real queue may wait
    /// longer, but a real queue is not what this driver can follow.
    @usableFromInline package static let defaultMaxWait: Duration = .seconds(1800)
    /// Bodies larger than this are not read for hints.
    package static let maxPageBytes = 1 << 20

    /// Consecutive failed page loads tolerated before giving up (``retryPolicy``'s retries).
    package var maxConsecutiveFailures: Int { retryPolicy.retries }

    package init(
        pollInterval: Duration = .seconds(5), maxHops: Int = 10, retryPolicy: RetryPolicy = .queueItPage,
        requestTimeout: Duration = .seconds(30), maxWait: Duration = QueueItHTTPFollowDriver.defaultMaxWait
    ) {
        self.pollInterval = pollInterval
        self.maxHops = maxHops
        self.retryPolicy = retryPolicy
        self.requestTimeout = requestTimeout
        self.maxWait = maxWait
    }

    /// The end of a wait that took longer than ``maxWait``.
    func timedOut(_ url: URL) -> QueuePageResult {
        .failed(
            WaitingRoomError(
                .invalidResponse, vendor: QueueItConfiguration.vendorID, vendorCode: QueueItErrorCode.queuePageTimeout.rawValue,
                message: "the queue page \(url) did not lead to the target within \(Int(maxWait.seconds)) s; the HTTP-follow driver "
                    + "only follows redirects and refreshes (this project's emulator); wait through a real Queue-it queue page in "
                    + "headless chromium (queuePage \"browser\") or show it in a host (queuePage \"host\", or attach a host to "
                    + "QueueItProvider.hostDriver)",
                details: ["queueUrl": url.absoluteString]))
    }

    static func failure(_ message: String) -> QueuePageResult {
        .failed(
            WaitingRoomError(
                .invalidResponse, vendor: QueueItConfiguration.vendorID,
                vendorCode: QueueItErrorCode.queuePageFailed.rawValue, message: message))
    }

    /// The end of a wait whose page loads kept failing.
    func exhausted(_ url: URL, failures: Int, last: String) -> QueuePageResult {
        let vendor = QueueItConfiguration.vendorID
        let detail = "queue page \(url): \(failures) loads in a row failed; last failure: \(last)"
        switch retryPolicy.exhaustion {
        case .unavailable(let code, let message):
            // The vendor's text as is; what failed goes in the details.
            return .failed(
                WaitingRoomError(
                    .unavailable, vendor: vendor, vendorCode: code, message: message,
                    details: ["lastFailure": detail, "queueUrl": url.absoluteString]))
        case .lastError:
            return Self.failure(detail)
        }
    }

    @usableFromInline package func wait(on page: QueueItQueuePage, context: QueuePageContext) async -> QueuePageResult {
        var follow = QueuePageFollow(driver: self, page: page, context: context)
        return await follow.run()
    }
}

/// What a queue page's HTML says about refresh, progress and exit (tolerant, regex-free scan).
struct QueuePageHints: Sendable, Hashable {
    struct Refresh: Sendable, Hashable {
        var seconds: Double
        var url: String?
    }
    var refresh: Refresh?
    var progress: QueueProgress?
    var exit = false

    /// Whether the page gives the driver anything to go on: a refresh (header or meta), a
    /// position (`queueit-*` meta tags) or an exit body. Anything else is garbage to the driver.
    var isFollowable: Bool { refresh != nil || progress != nil || exit }

    init(html: String, refreshHeader: String?) {
        if let h = refreshHeader { refresh = Self.parseRefresh(h) }
        var metas: [String: String] = [:]
        var httpEquivRefresh: String?
        var rest = Substring(html)
        var guardCount = 0
        while let open = rest.range(of: "<meta", options: [.caseInsensitive]), guardCount < 200 {
            guardCount += 1
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ">") else { break }
            let tag = after[..<close]
            let attrs = Self.attributes(tag)
            if let name = attrs["name"], let content = attrs["content"] { metas[name.lowercased()] = content }
            if attrs["http-equiv"]?.lowercased() == "refresh", let content = attrs["content"] { httpEquivRefresh = content }
            rest = after[close...]
        }
        if refresh == nil, let r = httpEquivRefresh { refresh = Self.parseRefresh(r) }
        let ahead = metas["queueit-ahead"].flatMap { Int($0) }
        let waiting = metas["queueit-waiting"].flatMap { Int($0) }
        let eta = metas["queueit-eta-seconds"].flatMap { Int($0) }
        if ahead != nil || waiting != nil || eta != nil {
            var behind: Int?
            if let w = waiting, let a = ahead { behind = max(0, w - a - 1) }
            progress = QueueProgress(ahead: ahead, behind: behind, eta: eta.map { .seconds($0) }, etaText: eta.map { "\($0) s" })
        }
        if let b = html.range(of: "<body", options: .caseInsensitive) {
            let tagEnd = html[b.upperBound...].firstIndex(of: ">") ?? html.endIndex
            let attrs = Self.attributes(html[b.upperBound..<tagEnd])
            exit = (attrs["class"] ?? "").split(separator: " ").contains("exit")
        }
    }

    static func parseRefresh(_ s: String) -> Refresh? {
        let parts = s.split(separator: ";", maxSplits: 1)
        guard let first = parts.first, let secs = Double(first.trimmingCharacters(in: .whitespaces)), secs.isFinite, secs >= 0 else {
            return nil
        }
        var url: String?
        if parts.count == 2 {
            var u = parts[1].trimmingCharacters(in: .whitespaces)
            if u.lowercased().hasPrefix("url=") { u = String(u.dropFirst(4)) }
            u = u.trimmingCharacters(in: CharacterSet(charactersIn: "'\" "))
            url = u.isEmpty ? nil : decodeEntities(u)
        }
        return Refresh(seconds: secs, url: url)
    }

    static func decodeEntities(_ s: String) -> String {
        s.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// Attributes of a tag body: name="value" | name='value' | name=value.
    static func attributes(_ tag: Substring) -> [String: String] {
        var out: [String: String] = [:]
        let chars = Array(tag.unicodeScalars)
        var i = 0
        func skipSpace() { while i < chars.count, CharacterSet.whitespacesAndNewlines.contains(chars[i]) || chars[i] == "/" { i += 1 } }
        while i < chars.count {
            skipSpace()
            var name = ""
            while i < chars.count, chars[i] != "=", !CharacterSet.whitespacesAndNewlines.contains(chars[i]), chars[i] != "/" {
                name.unicodeScalars.append(chars[i])
                i += 1
            }
            skipSpace()
            guard i < chars.count, chars[i] == "=" else {
                if name.isEmpty { i += 1 }
                continue
            }
            i += 1
            skipSpace()
            var value = ""
            if i < chars.count, chars[i] == "\"" || chars[i] == "'" {
                let q = chars[i]
                i += 1
                while i < chars.count, chars[i] != q {
                    value.unicodeScalars.append(chars[i])
                    i += 1
                }
                i += 1
            } else {
                while i < chars.count, !CharacterSet.whitespacesAndNewlines.contains(chars[i]) {
                    value.unicodeScalars.append(chars[i])
                    i += 1
                }
            }
            if !name.isEmpty { out[name.lowercased()] = decodeEntities(value) }
        }
        return out
    }
}
