import Foundation
import QueueIt
import Synchronization
import WaitingRoom
import WebDriver

/// Waits through a queue page in a real headless browser, for servers and the CLI: Debian's
/// `chromium` driven by `chromedriver` (`apt-get install chromium chromium-driver`, or
/// `Scripts/setup`). Unlike ``QueueItHTTPFollowDriver`` it runs the page's scripts, so a real,
/// script-driven Queue-it queue page works as it does in the vendor's web view.
///
/// For each wait the driver starts `chromedriver` as a child process on a free 127.0.0.1 port
/// (output to a log file in a temporary directory; no pipes), speaks the W3C WebDriver JSON
/// protocol to it over ``transport`` (loopback only): `POST /session` with `goog:chromeOptions`
/// (`--headless=new`, `--no-sandbox`, `--disable-gpu`, `--disable-dev-shm-usage`, a temporary
/// `--user-data-dir`), `POST /session/{id}/url` to open the queue URL, then polls
/// `GET /session/{id}/url` every ``pollInterval`` and feeds each new URL through the page's
/// classifier (docs/queueit-protocol.md §4), as the host-driven driver does with a web view's navigations:
///
/// - the target URL (with `queueittoken`) ⇒ `.passed(token:)`;
/// - a navigation on the queue host ⇒ `queueURLChanged` events;
/// - `queueit://close` / `queueit://restartSession` ⇒ `.closed` / `.restartSession`;
/// - a cancelled navigation (`/what-is-this.html`, other hosts per the classifier) ⇒ the
///   browser is sent back to the last queue page; a non-web link ⇒ an `externalLink` event.
///
/// A browser never shows a `queueit://` link as its URL (it is not a web scheme), so a small
/// script installed in each page records clicks on non-web links (and stops them) and reports
/// `<body class="exit">`; both are read at every poll.
///
/// Time is real time (the browser runs in real time whatever the context's clock says): polls
/// sleep on ``SystemClock`` and the whole wait is bounded by ``maxWait`` (code -206,
/// `queuePageTimeout`, like the HTTP-follow driver). Missing executables end the wait at once
/// with `.invalidConfiguration` saying how to install them; a browser that cannot be started or
/// stops answering ends it with code -202 (`queuePageFailed`). Whatever the end — a result,
/// an error, the task's cancellation (`.closed`) — the session is deleted (`DELETE
/// /session/{id}`, which closes chromium), `chromedriver` is terminated and waited for, and the
/// temporary directory is removed.
public struct QueueItBrowserDriver: QueuePageDriver {
    /// The browser binary; nil ⇒ ``defaultBrowserPath``.
    package var browserPath: String?
    /// The `chromedriver` executable; nil ⇒ `chromedriver` on `PATH`, else ``defaultChromedriverPath``.
    package var chromedriverPath: String?
    /// How often the browser's URL is read (250–500 ms is plenty for a page that refreshes every second or more).
    package var pollInterval: Duration
    /// The longest the whole wait may take (real time from the start of `chromedriver`).
    package var maxWait: Duration
    /// The longest `chromedriver` and chromium may take to start (within ``maxWait``).
    package var startupTimeout: Duration
    /// Deadline of one WebDriver command (opening a page waits for its DOM).
    package var commandTimeout: Duration
    /// Extra chromium command-line arguments (after the driver's own).
    package var extraBrowserArguments: [String]
    /// The transport for WebDriver commands to the local `chromedriver` (not the context's:
    /// that one carries vendor traffic and may be a test's faulty transport). nil: the process's
    /// default (``HTTPTransportSystem``), or the context's when none was bootstrapped.
    package var transport: (any HTTPTransport)?

    /// Debian's chromium.
    package static let defaultBrowserPath = "/usr/bin/chromium"
    /// Debian's `chromium-driver`.
    package static let defaultChromedriverPath = "/usr/bin/chromedriver"
    /// (proposal) 30 minutes, as the HTTP-follow driver.
    package static let defaultMaxWait: Duration = QueueItHTTPFollowDriver.defaultMaxWait
    /// What to do when an executable is missing.
    package static let installHint = "install them with `apt-get install chromium chromium-driver` (or run Scripts/setup)"

    package init(
        browserPath: String? = nil, chromedriverPath: String? = nil, pollInterval: Duration = .milliseconds(300),
        maxWait: Duration = QueueItBrowserDriver.defaultMaxWait, startupTimeout: Duration = .seconds(60),
        commandTimeout: Duration = .seconds(30), extraBrowserArguments: [String] = [],
        transport: (any HTTPTransport)? = nil
    ) {
        self.browserPath = browserPath
        self.chromedriverPath = chromedriverPath
        self.pollInterval = pollInterval
        self.maxWait = maxWait
        self.startupTimeout = startupTimeout
        self.commandTimeout = commandTimeout
        self.extraBrowserArguments = extraBrowserArguments
        self.transport = transport
    }

    /// The executables this driver would run: `chromedriver` and the browser. Throws
    /// `.invalidConfiguration` (field `chromedriverPath` or `browserPath`) naming the missing
    /// file and how to install it.
    package func executables() throws(WaitingRoomError) -> (chromedriver: String, browser: String) {
        let fm = FileManager.default
        let driver: String
        if let p = chromedriverPath {
            driver = p
        } else {
            let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            driver = dirs.map { "\($0)/chromedriver" }.first { fm.isExecutableFile(atPath: $0) } ?? Self.defaultChromedriverPath
        }
        guard fm.isExecutableFile(atPath: driver) else {
            throw .invalidConfiguration(
                field: "chromedriverPath", "no executable chromedriver at \(driver); \(Self.installHint)",
                vendor: QueueItConfiguration.vendorID)
        }
        let browser = browserPath ?? Self.defaultBrowserPath
        guard fm.isExecutableFile(atPath: browser) else {
            throw .invalidConfiguration(
                field: "browserPath", "no executable browser at \(browser); \(Self.installHint)",
                vendor: QueueItConfiguration.vendorID)
        }
        return (driver, browser)
    }

    static func failure(_ message: String, code: QueueItErrorCode = .queuePageFailed, details: [String: String] = [:]) -> QueuePageResult {
        .failed(
            WaitingRoomError(
                .invalidResponse, vendor: QueueItConfiguration.vendorID, vendorCode: code.rawValue,
                message: message, details: details))
    }

    /// The end of a wait that took longer than ``maxWait``.
    func timedOut(_ url: String) -> QueuePageResult {
        Self.failure(
            "the queue page \(url) did not lead to the target within \(Int(maxWait.seconds)) s in the browser",
            code: .queuePageTimeout, details: ["queueUrl": url])
    }

    /// The W3C capabilities of the session: headless chromium with a private profile.
    func capabilities(browser: String, profile: String) -> JSONValue {
        let args =
            [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(profile)",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio"
            ] + extraBrowserArguments
        return .object([
            "browserName": .string("chrome"),
            "pageLoadStrategy": .string("eager"),
            "timeouts": .object(["pageLoad": .number(commandTimeout.seconds * 1000), "script": .number(10_000)]),
            "goog:chromeOptions": .object(["binary": .string(browser), "args": .array(args.map { .string($0) })])
        ])
    }

    /// Installed once per document, run at every poll: records clicks on non-web links
    /// (`queueit://…`, `mailto:`, …), which a browser never shows as its URL, and cancels them;
    /// returns and clears them, with whether the body has the class `exit`.
    static let pageProbe = """
        var w = window;
        if (!w.__waitingRoomLinks) {
          w.__waitingRoomLinks = [];
          document.addEventListener('click', function (e) {
            var a = e.target && e.target.closest ? e.target.closest('a[href]') : null;
            if (!a) return;
            var h = a.getAttribute('href') || '';
            if (/^[a-z][a-z0-9+.-]*:/i.test(h) && !/^(https?|javascript):/i.test(h)) {
              e.preventDefault();
              w.__waitingRoomLinks.push(h);
            }
          }, true);
        }
        return {links: w.__waitingRoomLinks.splice(0),
                exit: !!(document.body && document.body.classList.contains('exit'))};
        """

    public func wait(on page: QueueItQueuePage, context: QueuePageContext) async -> QueuePageResult {
        let tools: (chromedriver: String, browser: String)
        do { tools = try executables() } catch { return .failed(error) }
        let webDriverTransport = transport ?? (HTTPTransportSystem.isBootstrapped ? HTTPTransportSystem.transport : context.transport)
        let resources = BrowserResources(transport: webDriverTransport)
        let result = await run(page: page, context: context, tools: tools, resources: resources)
        // Cleanup runs in an unstructured task: it must finish even when this task was cancelled.
        await Task { await resources.release(context: context) }.value
        return result
    }

    private func run(
        page: QueueItQueuePage, context: QueuePageContext, tools: (chromedriver: String, browser: String),
        resources: BrowserResources
    ) async -> QueuePageResult {
        let clock = ContinuousClock()
        let begin = clock.now
        func elapsed() -> Duration { clock.now - begin }
        let queueURL = page.queueURL.absoluteString
        // The first load of the queue page is a navigation to the queue host (as in the other drivers).
        if case .queueURLChanged(let u) = page.classifier.classify(page.queueURL) { context.emit(.queueURLChanged(u)) }

        let client: WebDriverClient
        let session: String
        switch await openQueuePage(queueURL, context: context, tools: tools, resources: resources) {
        case .success(let running):
            (client, session) = running
        case .failure(let end):
            return end.result
        }
        return await poll(
            page: page, context: context, client: client, session: session, resources: resources, lastQueueURL: page.queueURL,
            elapsed: elapsed)
    }

    /// Starts chromedriver and a browser session and opens the queue page in it: the client and
    /// the session, or how the wait ends (`.closed` once the task is cancelled).
    private func openQueuePage(
        _ queueURL: String, context: QueuePageContext, tools: (chromedriver: String, browser: String), resources: BrowserResources
    ) async -> Result<(WebDriverClient, String), StartFailure> {
        let directory: String
        do { directory = try resources.makeDirectory() } catch {
            return .failure(StartFailure(result: Self.failure("cannot create a temporary directory for the browser: \(error)")))
        }
        let client: WebDriverClient
        let session: String
        switch await start(tools: tools, directory: directory, resources: resources, deadline: min(startupTimeout, maxWait)) {
        case .success(let running):
            (client, session) = running
        case .failure(let end):
            return .failure(Task.isCancelled ? StartFailure(result: .closed) : end)
        }
        context.logger.debug("browser session started", metadata: ["session": "\(session)", "queueUrl": "\(queueURL)"])
        if Task.isCancelled { return .failure(StartFailure(result: .closed)) }
        do { try await client.navigate(session: session, to: queueURL) } catch {
            if Task.isCancelled { return .failure(StartFailure(result: .closed)) }
            // A slow first load is not fatal: the page may still arrive; polling decides.
            context.logger.debug("browser: opening the queue page failed", metadata: ["error": "\(error)"])
        }
        return .success((client, session))
    }

    /// Polls the browser's URL and the page's probe until the wait ends: a navigation that ends
    /// it, the time limit, chromedriver's exit, too many failed reads, or cancellation.
    private func poll(
        page: QueueItQueuePage, context: QueuePageContext, client: WebDriverClient, session: String, resources: BrowserResources,
        lastQueueURL: URL, elapsed: () -> Duration
    ) async -> QueuePageResult {
        var lastQueueURL = lastQueueURL
        var lastURL = ""
        var lastExit = false
        var failures = 0
        let maxFailures = 20
        while true {
            if Task.isCancelled { return .closed }
            if elapsed() > maxWait { return timedOut(lastQueueURL.absoluteString) }
            if resources.chromedriverExited {
                return Self.failure("chromedriver exited during the wait: \(resources.logTail())")
            }
            let url: String
            do {
                url = try await client.currentURL(session: session)
                failures = 0
            } catch {
                if Task.isCancelled { return .closed }
                failures += 1
                if failures >= maxFailures {
                    return Self.failure(
                        "the browser stopped answering (\(failures) failed reads): \(error)",
                        details: ["queueUrl": lastQueueURL.absoluteString])
                }
                if (try? await SystemClock().sleep(for: pollInterval)) == nil { return .closed }
                continue
            }
            if url != lastURL {
                lastURL = url
                lastExit = false
                if let end = await navigated(
                    to: url, page: page, context: context, client: client, session: session,
                    lastQueueURL: &lastQueueURL)
                {
                    return end
                }
            }
            // Non-web links the page's visitor clicked, and the exit marker.
            if let probe = try? await client.execute(session: session, script: Self.pageProbe).objectValue {
                for link in probe["links"]?.arrayValue ?? [] {
                    guard let s = link.stringValue else { continue }
                    if let end = await navigated(
                        to: s, page: page, context: context, client: client, session: session,
                        lastQueueURL: &lastQueueURL)
                    {
                        return end
                    }
                }
                let exit = probe["exit"]?.boolValue ?? false
                if exit, !lastExit { context.emit(.userExited) }
                lastExit = exit
            }
            if (try? await SystemClock().sleep(for: pollInterval)) == nil { return .closed }
        }
    }

    /// Acts on a URL the browser shows (or a link it was stopped from following): the wait's
    /// end, or nil to go on.
    private func navigated(
        to url: String, page: QueueItQueuePage, context: QueuePageContext, client: WebDriverClient,
        session: String, lastQueueURL: inout URL
    ) async -> QueuePageResult? {
        let lower = url.lowercased()
        // The browser's own pages (the blank start page, a load error) are not navigations of the queue page.
        if lower.hasPrefix("about:") || lower.hasPrefix("data:") || lower.hasPrefix("chrome-error:") || lower.hasPrefix("chrome:") {
            return nil
        }
        switch page.classifier.classify(url, kind: .other) {
        case .passed(let token): return .passed(token: token)
        case .close: return .closed
        case .restartSession: return .restartSession
        case .queueURLChanged(let u):
            if u != lastQueueURL { context.emit(.queueURLChanged(u)) }
            lastQueueURL = u
        case .external(let u):
            context.emit(.externalLink(u))
            if u.scheme == "http" || u.scheme == "https" { try? await client.navigate(session: session, to: lastQueueURL.absoluteString) }
        case .blocked:
            // The vendor's web view cancels this navigation: back to the queue page.
            context.logger.debug("browser: cancelled navigation", metadata: ["url": "\(url)"])
            try? await client.navigate(session: session, to: lastQueueURL.absoluteString)
        case .allow: break
        }
        return nil
    }

    /// Starts `chromedriver` (a new free port on each of up to 3 attempts, in case another
    /// process took the port) and a session in it.
    private func start(
        tools: (chromedriver: String, browser: String), directory: String, resources: BrowserResources,
        deadline: Duration
    ) async -> Result<(WebDriverClient, String), StartFailure> {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: deadline)
        var last = "no attempt"
        for attempt in 1...3 {
            if Task.isCancelled { return .failure(StartFailure(result: .closed)) }
            guard let port = ChromedriverProcess.freeLoopbackPort() else {
                return .failure(StartFailure(result: Self.failure("no free loopback port for chromedriver")))
            }
            let process: ChromedriverProcess
            do {
                process = try ChromedriverProcess(
                    executable: tools.chromedriver, port: port,
                    logPath: "\(directory)/chromedriver-\(attempt).log")
            } catch {
                return .failure(
                    StartFailure(
                        result: .failed(
                            .invalidConfiguration(
                                field: "chromedriverPath", "cannot start \(tools.chromedriver): \(error); \(Self.installHint)",
                                vendor: QueueItConfiguration.vendorID))))
            }
            resources.adopt(process)
            let client = WebDriverClient(port: port, transport: resources.transport, timeout: commandTimeout)
            var ready = false
            while clock.now < end, !process.hasExited, !Task.isCancelled {
                if await client.ready() {
                    ready = true
                    break
                }
                if (try? await SystemClock().sleep(for: .milliseconds(100))) == nil { break }
            }
            if Task.isCancelled { return .failure(StartFailure(result: .closed)) }
            guard ready else {
                last = "chromedriver on port \(port) \(process.hasExited ? "exited" : "did not get ready in time"): \(process.logTail())"
                await resources.stopProcess()
                if clock.now >= end { break }
                continue
            }
            do {
                let session = try await client.newSession(
                    capabilities: capabilities(
                        browser: tools.browser,
                        profile: "\(directory)/profile"))
                resources.adopt(session: session, client: client)
                return .success((client, session))
            } catch {
                return .failure(StartFailure(result: Self.failure("chromium did not start (\(tools.browser)): \(error)")))
            }
        }
        return .failure(StartFailure(result: Self.failure("chromedriver did not start: \(last)")))
    }
}

/// A start that failed, and how the wait ends.
struct StartFailure: Error, Sendable {
    var result: QueuePageResult
}

/// What one wait of ``QueueItBrowserDriver`` holds and must give back: the `chromedriver`
/// child, the WebDriver session, the temporary directory.
final class BrowserResources: Sendable {
    private struct State {
        var process: ChromedriverProcess?
        var session: (id: String, client: WebDriverClient)?
        var directory: String?
    }

    private let state = Mutex(State())
    let transport: any HTTPTransport

    init(transport: any HTTPTransport) { self.transport = transport }

    /// Creates the temporary directory (profile and logs).
    func makeDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("waitingroom-browser-\(UUID().uuidString.lowercased())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        state.withLock { $0.directory = dir }
        return dir
    }

    func adopt(_ process: ChromedriverProcess) { state.withLock { $0.process = process } }

    func adopt(session: String, client: WebDriverClient) { state.withLock { $0.session = (session, client) } }

    var chromedriverExited: Bool { state.withLock { $0.process?.hasExited ?? false } }

    func logTail() -> String { state.withLock { $0.process }?.logTail() ?? "" }

    /// Terminates the current `chromedriver` and waits for it.
    func stopProcess() async {
        let process: ChromedriverProcess? = state.withLock { s in
            defer { s.process = nil }
            return s.process
        }
        await process?.stop()
    }

    /// Deletes the session (closing chromium), ends `chromedriver` and any browser of the
    /// directory still running, removes the directory.
    func release(context: QueuePageContext) async {
        let (session, directory): ((id: String, client: WebDriverClient)?, String?) = state.withLock { s in
            defer {
                s.session = nil
                s.directory = nil
            }
            return (s.session, s.directory)
        }
        if let session {
            do { try await session.client.deleteSession(session.id) } catch {
                context.logger.debug("browser: deleting the session failed", metadata: ["error": "\(error)"])
            }
        }
        await stopProcess()
        if let directory {
            // a browser whose session never started (cancelled, timed out) or was not deleted
            // outlives chromedriver: ended by its profile directory
            BrowserReaper.endBrowsersAndRemove(directory)
        }
    }
}
