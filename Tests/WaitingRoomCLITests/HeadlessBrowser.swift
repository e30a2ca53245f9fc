import Foundation
import QueueIt
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WebDriver

/// Headless chromium for the page tests, driven through the package's own WebDriver client
/// (`WebDriver.WebDriverClient`, `ChromedriverProcess`). Each instance has its own chromedriver
/// port and its own profile directory, so tests in parallel never share a browser.
final class HeadlessBrowser: Sendable {
    let process: ChromedriverProcess
    let client: WebDriverClient
    let session: String
    let directory: String

    private init(process: ChromedriverProcess, client: WebDriverClient, session: String, directory: String) {
        self.process = process
        self.client = client
        self.session = session
        self.directory = directory
    }

    static let installHint = "these tests need Debian's chromium and chromium-driver: run Scripts/setup, "
        + "or `apt-get install chromium chromium-driver`"

    /// Starts chromedriver and a headless chromium session. Records a test failure (never a
    /// silent skip) saying how to install them when they are missing, and returns nil.
    static func start(sourceLocation: SourceLocation = #_sourceLocation) async -> HeadlessBrowser? {
        let tools: (chromedriver: String, browser: String)
        do { tools = try QueueItBrowserDriver().executables() } catch {
            Issue.record("\(installHint) (\(error.message))", sourceLocation: sourceLocation)
            return nil
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("waitingroom-pages-\(UUID().uuidString.lowercased())").path
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            Issue.record("cannot create \(directory): \(error)", sourceLocation: sourceLocation)
            return nil
        }
        var last = "no attempt"
        for attempt in 1...3 {
            guard let port = ChromedriverProcess.freeLoopbackPort() else { continue }
            let process: ChromedriverProcess
            do {
                // `--log-path` under a `waitingroom-pages-` directory marks these children, so that
                // QueueItTests' own count of chromedriver children (run in parallel in the same
                // process) can tell them apart.
                process = try ChromedriverProcess(executable: tools.chromedriver, port: port, logPath: "\(directory)/chromedriver-\(attempt).out",
                                                  extraArguments: ["--log-path=\(directory)/chromedriver-\(attempt).log"])
            } catch {
                Issue.record("cannot start \(tools.chromedriver): \(error); \(installHint)", sourceLocation: sourceLocation)
                return nil
            }
            let client = WebDriverClient(port: port, transport: AsyncHTTPTransport.shared, timeout: .seconds(60))
            let deadline = ContinuousClock.now + .seconds(60)
            var ready = false
            while ContinuousClock.now < deadline, !process.hasExited {
                if await client.ready() { ready = true; break }
                try? await Task.sleep(for: .milliseconds(100))
            }
            guard ready else {
                last = "chromedriver on port \(port) did not get ready: \(process.logTail())"
                await process.stop()
                continue
            }
            let args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(directory)/profile",
                        "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio", "--window-size=1280,900",
                        "--hide-scrollbars", "--force-device-scale-factor=1"]
            let capabilities: JSONValue = .object([
                "browserName": .string("chrome"),
                "pageLoadStrategy": .string("normal"),
                "timeouts": .object(["pageLoad": .number(60_000), "script": .number(20_000)]),
                "goog:loggingPrefs": .object(["browser": .string("ALL")]),
                "goog:chromeOptions": .object(["binary": .string(tools.browser), "args": .array(args.map { .string($0) })]),
            ])
            do {
                let session = try await client.newSession(capabilities: capabilities)
                return HeadlessBrowser(process: process, client: client, session: session, directory: directory)
            } catch {
                last = "chromium did not start: \(error)"
                await process.stop()
            }
        }
        Issue.record("no headless browser: \(last)", sourceLocation: sourceLocation)
        try? FileManager.default.removeItem(atPath: directory)
        return nil
    }

    func open(_ url: String) async throws { try await client.navigate(session: session, to: url) }

    func currentURL() async throws -> String { try await client.currentURL(session: session) }

    /// Runs `script` (a function body; `return` its result) in the page.
    func run(_ script: String) async throws -> JSONValue { try await client.execute(session: session, script: script) }

    /// The text of the element with `id`, or nil.
    func text(ofElement id: String) async throws -> String? {
        try await run("var e = document.getElementById('\(id)'); return e ? e.textContent : null;").stringValue
    }

    /// Polls `condition` every `every` until it is true or `timeout` passed; returns whether it became true.
    func waitUntil(timeout: Duration, every: Duration = .milliseconds(200), _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: every)
        }
        return try await condition()
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
    func close() async {
        try? await client.deleteSession(session)
        await process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
