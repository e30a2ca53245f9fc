import Foundation
import WaitingRoom

/// A headless chromium session behind its own `chromedriver` (``ChromedriverProcess``), for tests
/// that open pages in a real browser: each instance has its own chromedriver port and its own
/// profile directory, so sessions in parallel never share a browser, cookies or storage.
public final class HeadlessChromium: Sendable {
    let process: ChromedriverProcess
    /// The WebDriver client of this session's chromedriver.
    public let client: WebDriverClient
    /// The WebDriver session id.
    public let session: String
    /// The profile and log directory (removed by ``close()``).
    public let directory: String

    private init(process: ChromedriverProcess, client: WebDriverClient, session: String, directory: String) {
        self.process = process
        self.client = client
        self.session = session
        self.directory = directory
    }

    /// Starts `chromedriver` on a free loopback port (three tries) and a headless `browser`
    /// session in a new directory under the temporary directory, named `directoryPrefix` and a
    /// UUID (chromedriver's `--log-path` is in it, which marks the child as this session's).
    /// - Throws: ``WebDriverFailure`` saying what did not start (chromedriver, chromium) and why.
    public static func start(
        chromedriver: String, browser: String, transport: any HTTPTransport,
        directoryPrefix: String = "waitingroom-pages-"
    ) async throws(WebDriverFailure) -> HeadlessChromium {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent(directoryPrefix + UUID().uuidString.lowercased()).path
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw WebDriverFailure(error: "setup", message: "cannot create \(directory): \(error)")
        }
        var last = "no free loopback port"
        for attempt in 1...3 {
            guard let port = ChromedriverProcess.freeLoopbackPort() else { continue }
            let process: ChromedriverProcess
            do {
                process = try ChromedriverProcess(
                    executable: chromedriver, port: port, logPath: "\(directory)/chromedriver-\(attempt).out",
                    extraArguments: ["--log-path=\(directory)/chromedriver-\(attempt).log"])
            } catch {
                try? FileManager.default.removeItem(atPath: directory)
                throw WebDriverFailure(error: "setup", message: "cannot start \(chromedriver): \(error)")
            }
            let client = WebDriverClient(port: port, transport: transport, timeout: .seconds(60))
            let deadline = ContinuousClock.now + .seconds(60)
            var ready = false
            while ContinuousClock.now < deadline, !process.hasExited {
                if await client.ready() {
                    ready = true
                    break
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
            guard ready else {
                last = "chromedriver on port \(port) did not get ready: \(process.logTail())"
                await process.stop()
                continue
            }
            let args = [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(directory)/profile",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio", "--window-size=1280,900",
                "--hide-scrollbars", "--force-device-scale-factor=1"
            ]
            let capabilities: JSONValue = .object([
                "browserName": .string("chrome"),
                "pageLoadStrategy": .string("normal"),
                "timeouts": .object(["pageLoad": .number(60_000), "script": .number(20_000)]),
                "goog:loggingPrefs": .object(["browser": .string("ALL")]),
                "goog:chromeOptions": .object(["binary": .string(browser), "args": .array(args.map { .string($0) })])
            ])
            do {
                let session = try await client.newSession(capabilities: capabilities)
                return HeadlessChromium(process: process, client: client, session: session, directory: directory)
            } catch {
                last = "chromium did not start: \(error)"
                await process.stop()
                // a browser that started but did not answer in time would hold the profile the
                // next try uses, and outlive chromedriver
                BrowserReaper.killBrowsers(using: directory)
            }
        }
        BrowserReaper.endBrowsersAndRemove(directory)
        throw WebDriverFailure(error: "session not created", message: last)
    }

    /// Navigates to `url` and waits for the page to load.
    public func open(_ url: String) async throws(WebDriverFailure) { try await client.navigate(session: session, to: url) }

    /// The current top-level URL.
    public func currentURL() async throws(WebDriverFailure) -> String { try await client.currentURL(session: session) }

    /// Runs `script` (a function body; `return` its result) in the page.
    public func run(_ script: String) async throws(WebDriverFailure) -> JSONValue {
        try await client.execute(session: session, script: script)
    }

    /// The page's visible text (`document.body.innerText`; empty without a body).
    public func bodyText() async throws(WebDriverFailure) -> String {
        try await run("return document.body ? document.body.innerText : '';").stringValue ?? ""
    }

    /// Polls `condition` every `every` until it is true or `timeout` passed (real time); returns
    /// whether it became true.
    public func waitUntil(timeout: Duration, every: Duration = .milliseconds(200), _ condition: () async throws -> Bool) async rethrows
        -> Bool
    {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: every)
        }
        return try await condition()
    }

    /// Closes chromium, ends chromedriver, ends any browser of this session still running (a
    /// failed `DELETE /session`), removes the profile.
    public func close() async {
        try? await client.deleteSession(session)
        await process.stop()
        BrowserReaper.endBrowsersAndRemove(directory)
    }
}
