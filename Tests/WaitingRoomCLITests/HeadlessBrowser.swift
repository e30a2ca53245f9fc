import Foundation
import QueueIt
import QueueItBrowser
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WebDriver

/// Headless chromium for the page tests: the `WebDriver` module's ``HeadlessChromium`` (its own
/// chromedriver port and profile directory, so tests in parallel never share a browser), with a
/// test failure (never a silent skip) when chromium or chromedriver is missing.
final class HeadlessBrowser: Sendable {
    let chromium: HeadlessChromium
    var client: WebDriverClient { chromium.client }
    var session: String { chromium.session }
    var directory: String { chromium.directory }

    private init(chromium: HeadlessChromium) { self.chromium = chromium }

    static let installHint =
        "these tests need Debian's chromium and chromium-driver: run Scripts/setup, "
        + "or `apt-get install chromium chromium-driver`"

    /// Starts chromedriver and a headless chromium session. Records a test failure (never a
    /// silent skip) saying how to install them when they are missing, and returns nil.
    static func start(sourceLocation: SourceLocation = #_sourceLocation) async -> HeadlessBrowser? {
        let tools: (chromedriver: String, browser: String)
        do { tools = try QueueItBrowserDriver().executables() } catch {
            Issue.record("\(installHint) (\(error.message))", sourceLocation: sourceLocation)
            return nil
        }
        do {
            // The profile directory's `waitingroom-pages-` prefix marks these chromedriver children
            // (their `--log-path` is in it), so that QueueItTests' own count of chromedriver
            // children (run in parallel in the same process) can tell them apart.
            let chromium = try await HeadlessChromium.start(
                chromedriver: tools.chromedriver, browser: tools.browser,
                transport: AsyncHTTPTransport.shared, directoryPrefix: "waitingroom-pages-")
            return HeadlessBrowser(chromium: chromium)
        } catch {
            Issue.record("no headless browser: \(error); \(installHint)", sourceLocation: sourceLocation)
            return nil
        }
    }

    func open(_ url: String) async throws { try await chromium.open(url) }

    func currentURL() async throws -> String { try await chromium.currentURL() }

    /// Runs `script` (a function body; `return` its result) in the page.
    func run(_ script: String) async throws -> JSONValue { try await chromium.run(script) }

    /// The text of the element with `id`, or nil.
    func text(ofElement id: String) async throws -> String? {
        try await run("var e = document.getElementById('\(id)'); return e ? e.textContent : null;").stringValue
    }

    /// The text of the element with `id`, or nil; a value unlike the last one in `seen` is
    /// appended to it (the values the element went through, in order).
    func text(ofElement id: String, keepingChangesIn seen: inout [String]) async throws -> String? {
        let value = try await text(ofElement: id)
        if let value, seen.last != value { seen.append(value) }
        return value
    }

    /// Polls `condition` every `every` until it is true or `timeout` passed; returns whether it became true.
    func waitUntil(timeout: Duration, every: Duration = .milliseconds(200), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await chromium.waitUntil(timeout: timeout, every: every, condition)
    }

    /// Console entries at level SEVERE since the last call (JavaScript errors, failed loads).
    func consoleErrors() async throws -> [String] {
        try await client.browserLog(session: session).filter { $0.level == "SEVERE" }.map(\.message)
    }

    /// Saves a PNG of the viewport to `path` (used to refresh `docs/` by hand, see README).
    func screenshot(to path: String) async throws {
        try await client.screenshot(session: session).write(to: URL(fileURLWithPath: path))
    }

    /// Closes chromium, ends chromedriver, removes the profile.
    func close() async { await chromium.close() }

    /// Expects no console errors since the last look (``consoleErrors()``).
    func expectNoConsoleErrors(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let errors = try await consoleErrors()
        #expect(errors.isEmpty, "console: \(errors)", sourceLocation: sourceLocation)
    }

    /// Starts a browser (see ``start(sourceLocation:)``), runs `body` with it, records what
    /// `body` throws as an issue and closes the browser. Returns false when no browser started
    /// (`body` did not run).
    @discardableResult
    static func run(sourceLocation: SourceLocation = #_sourceLocation, _ body: (HeadlessBrowser) async throws -> Void) async -> Bool {
        guard let browser = await start(sourceLocation: sourceLocation) else { return false }
        do {
            try await body(browser)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
        await browser.close()
        return true
    }
}
