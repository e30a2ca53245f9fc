import Foundation
import QueueItBrowser
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import QueueIt
@testable import QueueItEmulator

/// Queue URLs a session reported.
final class URLLog: Sendable {
    let urls = Mutex<[URL]>([])
}

/// The headless-browser queue-page driver against the emulator's queue page, in real time
/// (real chromium, real chromedriver, the emulator on 127.0.0.1 port 0).
@Suite(.serialized) struct BrowserDriverTests {
    /// The `browser` configurations below get this module's driver (the moved type's set-up).
    init() { QueueItBrowserDriver.install() }

    /// This process's `chromedriver` children, zombies included (`/proc/*/stat`: ppid and comm),
    /// except those of the page tests (WaitingRoomCLITests' `HeadlessBrowser`, which run in
    /// parallel in the same process and mark theirs with a `waitingroom-pages-` log path).
    static func chromedriverChildren() -> [String] {
        let me = ProcessInfo.processInfo.processIdentifier
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid -> String? in
            guard Int(pid) != nil, let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
            let stat = String(decoding: data, as: UTF8.self)
            guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
            let comm = stat[stat.index(after: open)..<close]
            let rest = stat[stat.index(after: close)...].split(separator: " ")
            guard rest.count > 1, Int32(rest[1]) == me, comm.hasPrefix("chromedriver") else { return nil }
            let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline").map { String(decoding: $0, as: UTF8.self) } ?? ""
            if cmdline.contains("waitingroom-pages-") { return nil }
            return "\(pid) \(comm) \(rest[0])"
        }
    }

    /// The browsers of Queue-it's driver running now (their `--user-data-dir` is a
    /// `waitingroom-browser-` directory), by pid: they outlive chromedriver when it is stopped
    /// before the browser closed.
    static func driverBrowsers() -> Set<Int32> {
        let marker = "--user-data-dir=" + FileManager.default.temporaryDirectory.appendingPathComponent("waitingroom-browser-").path
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return Set(
            entries.compactMap { entry -> Int32? in
                guard let pid = Int32(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
                let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                return arguments.contains { $0.hasPrefix(marker) } ? pid : nil
            })
    }

    /// The chromedriver children still there after up to 5 s: one that has exited is reaped a
    /// moment after the driver returns (a full run once saw it as a zombie, `Z`, at once).
    static func chromedriverChildrenLeft() async -> [String] {
        for _ in 0..<50 {
            if chromedriverChildren().isEmpty { return [] }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return chromedriverChildren()
    }

    /// Fails (no silent skip) when chromium or chromedriver is missing, saying how to install them.
    static func requireBrowser() -> Bool {
        do {
            _ = try QueueItBrowserDriver().executables()
            return true
        } catch {
            let hint = "run `apt-get install chromium chromium-driver` or Scripts/setup"
            Issue.record("the browser driver test needs Debian's chromium and chromedriver: \(error.message) (\(hint))")
            return false
        }
    }

    @Test func passesThroughTheEmulatorsQueuePageInHeadlessChromium() async throws {
        guard Self.requireBrowser() else { return }
        // Real time: the emulator admits 1 visitor/s and its page refreshes every second.
        let emulator = QueueItEmulator(configuration: .demo)
        let server = try await QueueItEmulatorServer.start(emulator)
        defer { Task { await server.shutdown() } }
        let json = try JSONValue.parse(
            """
            {"customerId": "demo", "waitingRoomId": "sale", "waitingRoomDomain": "\(server.waitingRoomDomain)",
             "userId": "browser-user", "queuePage": "browser", "followMaxWaitSeconds": 120}
            """)
        let configuration = try QueueItConfiguration(json: json)
        #expect(configuration.queuePage == .browser)
        let urls = URLLog()
        let provider = QueueItProvider(
            configuration: configuration,
            environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: SystemClock(), passStore: MemoryPassStore()),
            observer: QueueItSessionObserver(pageEvent: { e in
                if case .queueURLChanged(let u) = e { urls.urls.withLock { $0.append(u) } }
            }))
        #expect(provider.driver is QueueItBrowserDriver)
        let started = ContinuousClock.now
        let session = try provider.enqueue(Entry(room: RoomKey(scope: "demo", room: "sale"), userId: "browser-user"))
        let outcome = await session.outcome()
        let took = ContinuousClock.now - started
        guard case .passed(let pass, let status) = outcome else {
            Issue.record("not passed: \(outcome)")
            return
        }
        #expect(status.code == 200)
        #expect(pass.redirectType == "queue")
        #expect(pass.targetURL?.hasPrefix(server.baseURL + "/queueit/target/demo/sale") == true)
        let token = try QueueItTokenValidator(secretKey: Harness.secret, eventId: "sale").validate(pass.credential, now: Date())
        #expect(pass.expiresAt == token.expiresAt)
        #expect(urls.urls.withLock { $0.first?.absoluteString.hasPrefix(server.baseURL + "/queueit/queue/demo/sale") } == true)
        #expect(took < .seconds(120))
        print("browser driver: passed in \(took)")
    }

    @Test func missingChromedriverIsATypedConfigurationError() async throws {
        let driver = QueueItBrowserDriver(chromedriverPath: "/nonexistent/chromedriver")
        #expect(throws: WaitingRoomError.self) { _ = try driver.executables() }
        let page = QueueItQueuePage(
            queueURL: URL(string: "http://127.0.0.1:9/queueit/queue/demo/sale")!,
            targetURL: URL(string: "http://127.0.0.1:9/target")!)
        let context = QueuePageContext(
            transport: AsyncHTTPTransport.shared, clock: SystemClock(),
            logger: .init(label: "test"), userAgent: "test", emit: { _ in })
        let result = await driver.wait(on: page, context: context)
        guard case .failed(let error) = result else {
            Issue.record("not failed: \(result)")
            return
        }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.field == "chromedriverPath")
        #expect(error.message.contains("apt-get install chromium chromium-driver"))
        #expect(error.message.contains("/nonexistent/chromedriver"))
        // The same through the configuration.
        let json = try JSONValue.parse(
            """
            {"customerId": "demo", "queuePage": "browser", "chromedriverPath": "/nonexistent/chromedriver", "browserPath": "/x/chromium"}
            """)
        let c = try QueueItConfiguration(json: json)
        #expect(c.chromedriverPath == "/nonexistent/chromedriver" && c.browserPath == "/x/chromium")
        let made = try #require(c.makePageDriver() as? QueueItBrowserDriver)
        #expect(made.chromedriverPath == "/nonexistent/chromedriver" && made.browserPath == "/x/chromium")
    }

    @Test func boundedByMaxWaitAndCleanedUpOnTimeoutAndCancellation() async throws {
        guard Self.requireBrowser() else { return }
        // `flash` admits nobody: the page refreshes forever.
        let server = try await QueueItEmulatorServer.start(QueueItEmulator(configuration: .demo))
        defer { Task { await server.shutdown() } }
        let configuration = try QueueItConfiguration(
            customerId: "demo", waitingRoomId: "flash",
            waitingRoomDomain: server.waitingRoomDomain, userId: "u", queuePage: .follow)
        let provider = QueueItProvider(
            configuration: configuration,
            environment: ProviderEnvironment(
                transport: AsyncHTTPTransport.shared, clock: SystemClock(), passStore: MemoryPassStore()))
        let (_, _, response) = try await provider.enqueueOnce(Entry(room: RoomKey(scope: "demo", room: "flash"), userId: "u"))
        let page = QueueItQueuePage(
            queueURL: try #require(response.queueUrl.flatMap(URL.init(string:))),
            targetURL: try #require(response.eventTargetUrl.flatMap(URL.init(string:))))
        let context = QueuePageContext(
            transport: AsyncHTTPTransport.shared, clock: SystemClock(),
            logger: .init(label: "test"), userAgent: "test", emit: { _ in })
        let browsersBefore = Self.driverBrowsers()
        let directoriesBefore = Self.driverDirectories()
        let driver = QueueItBrowserDriver(maxWait: .seconds(6))
        let result = await driver.wait(on: page, context: context)
        guard case .failed(let error) = result else {
            Issue.record("not failed: \(result)")
            return
        }
        #expect(error.vendorCode == QueueItErrorCode.queuePageTimeout.rawValue, "\(error)")
        let left = await Self.chromedriverChildrenLeft()
        #expect(left.isEmpty, "\(left)")
        // Cancelled while waiting: closed, and the same cleanup.
        let task = Task { await driver.wait(on: page, context: context) }
        try await Task.sleep(for: .seconds(4))
        task.cancel()
        #expect(await task.value == .closed)
        let leftAfterCancel = await Self.chromedriverChildrenLeft()
        #expect(leftAfterCancel.isEmpty, "\(leftAfterCancel)")
        // cancelled at once, while the session is starting: no browser outlives the wait (one was
        // left running, reparented to init, after chromedriver was stopped)
        for delay in [0, 300, 900] {
            let early = Task { await driver.wait(on: page, context: context) }
            try await Task.sleep(for: .milliseconds(delay))
            early.cancel()
            _ = await early.value
        }
        var browsersLeft = Self.driverBrowsers().subtracting(browsersBefore)
        for _ in 0..<30 where !browsersLeft.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            browsersLeft = Self.driverBrowsers().subtracting(browsersBefore)
        }
        #expect(browsersLeft.isEmpty, "browsers left running: \(browsersLeft.sorted())")
        // and no profile directory is left behind (one was, written again by a browser that was
        // still exiting when it was removed)
        var directoriesLeft = Self.driverDirectories().subtracting(directoriesBefore)
        for _ in 0..<120 where !directoriesLeft.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            directoriesLeft = Self.driverDirectories().subtracting(directoriesBefore)
        }
        #expect(directoriesLeft.isEmpty, "profile directories left: \(directoriesLeft.sorted())")
    }

    /// The `waitingroom-browser-` directories in the temporary folder now.
    static func driverDirectories() -> Set<String> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
        return Set(entries.filter { $0.hasPrefix("waitingroom-browser-") })
    }
}
