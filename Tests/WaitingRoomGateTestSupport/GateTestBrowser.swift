import QueueItBrowser
import Testing
import WaitingRoomHTTP
import WebDriver

/// Headless chromium for the gate's browser tests (the `WebDriver` module's ``HeadlessChromium``).
package enum GateTestBrowser {
    /// Starts one, or records a test failure (never a silent skip) saying how to install
    /// chromium and chromedriver, and returns nil.
    package static func start(sourceLocation: SourceLocation = #_sourceLocation) async -> HeadlessChromium? {
        let hint =
            "these tests need Debian's chromium and chromium-driver: run Scripts/setup, or `apt-get install chromium chromium-driver`"
        let tools: (chromedriver: String, browser: String)
        do { tools = try QueueItBrowserDriver().executables() } catch {
            Issue.record("\(hint) (\(error.message))", sourceLocation: sourceLocation)
            return nil
        }
        do {
            // `waitingroom-pages-` marks the chromedriver child as a page test's (QueueItTests counts its own).
            return try await HeadlessChromium.start(
                chromedriver: tools.chromedriver, browser: tools.browser,
                transport: AsyncHTTPTransport.shared, directoryPrefix: "waitingroom-pages-")
        } catch {
            Issue.record("no headless browser: \(error); \(hint)", sourceLocation: sourceLocation)
            return nil
        }
    }
}
