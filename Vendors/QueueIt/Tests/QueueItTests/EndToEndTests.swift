import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import QueueIt
@testable import QueueItEmulator

/// Shared helpers: an emulator on 127.0.0.1:0 whose time is the test's virtual clock.
struct Harness {
    let clock: VirtualClock
    let server: QueueItEmulatorServer
    let store: MemoryPassStore
    var emulator: QueueItEmulator { server.emulator }
    static let secret = QueueItEmulatorConfiguration.demo.customers["demo"]?.secretKey ?? ""

    static func start(_ config: QueueItEmulatorConfiguration = .demo, autoAdvance: Bool = true) async throws -> Harness {
        let clock = VirtualClock(autoAdvance: autoAdvance)
        let emulator = QueueItEmulator(configuration: config, now: { clock.now() })
        let server = try await QueueItEmulatorServer.start(emulator)
        return Harness(clock: clock, server: server, store: MemoryPassStore(clock: clock))
    }

    var environment: ProviderEnvironment {
        ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: clock, passStore: store)
    }

    func configuration(room: String, customer: String = "demo", autoRestart: Bool = true) throws -> QueueItConfiguration {
        // The emulator's queue page is followed over HTTP: chosen explicitly since the default became `host` (issue 15).
        try QueueItConfiguration(
            customerId: customer, waitingRoomId: room, waitingRoomDomain: server.waitingRoomDomain,
            userId: "user-1", pollInterval: .seconds(1), queuePage: .follow, autoRestartSession: autoRestart)
    }

    func provider(
        room: String, driver: (any QueuePageDriver)? = nil, connectivity: any QueueItConnectivity = QueueItAssumeOnline(),
        autoRestart: Bool = true
    ) throws -> QueueItProvider {
        QueueItProvider(
            configuration: try configuration(room: room, autoRestart: autoRestart), environment: environment,
            driver: driver, connectivity: connectivity)
    }

    func entry(_ room: String, credential: Credential? = nil) -> Entry {
        Entry(room: RoomKey(scope: "demo", room: room), credential: credential, userId: "user-1")
    }

    func stop() async { await server.shutdown() }
}

func events(of session: WaitingSession) -> Task<[WaitingRoomEvent], Never> {
    let stream = session.events
    return Task {
        var out: [WaitingRoomEvent] = []
        for await e in stream { out.append(e) }
        return out
    }
}

@Suite(.serialized) struct EndToEndTests {
    @Test func everyRedirectType() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        for (room, disposition, rt) in [
            ("open", TryPassResult.Disposition.passed, "safetynet"), ("closed", .disabled, "disabled"),
            ("early", .disabled, "idle"), ("over", .disabled, "afterevent"), ("sale", .queue, "queue")
        ] {
            let p = try h.provider(room: room)
            let r = try await p.tryPass(h.entry(room))
            #expect(r.disposition == disposition, "\(room)")
            #expect(r.status.code == 200)
            if disposition == .queue {
                #expect(r.queuePage?.queueURL.hasPrefix(h.server.baseURL + "/queueit/queue/demo/sale") == true)
                #expect(r.pass == nil)
            } else {
                let pass = try #require(r.pass)
                #expect(pass.redirectType == rt)
                #expect(
                    try QueueItTokenValidator(secretKey: Harness.secret, eventId: room).validate(pass.credential, now: h.clock.now())
                        .queueId != nil)
            }
            // A session ends the same way without a page for non-queue rooms.
            if disposition != .queue {
                let s = try p.enqueue(h.entry(room))
                let outcome = await s.outcome()
                #expect(outcome.state == (disposition == .passed ? .passed : .disabled), "\(room)")
            }
        }
    }

    @Test func queueThenPassThroughHTTPFollowDriverAndReuseStoredPass() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        let p = try h.provider(room: "sale")
        // Three visitors ahead.
        for i in 0..<3 { _ = try await p.enqueueOnce(Entry(room: RoomKey(scope: "demo", room: "sale"), userId: "other-\(i)")) }
        let session = try p.enqueue(h.entry("sale"))
        let collected = events(of: session)
        let outcome = await session.outcome()
        guard case .passed(let pass, let status) = outcome else {
            Issue.record("not passed: \(outcome)")
            return
        }
        #expect(status.code == 200)
        #expect(pass.redirectType == "queue")
        #expect(pass.targetURL?.hasPrefix(h.server.baseURL + "/queueit/target/demo/sale") == true)
        let token = try QueueItTokenValidator(secretKey: Harness.secret, eventId: "sale").validate(pass.credential, now: h.clock.now())
        #expect(pass.expiresAt == token.expiresAt)
        let evs = await collected.value
        #expect(
            evs.contains {
                if case .queueOpened = $0 { return true }
                return false
            })
        let aheads = evs.compactMap { e -> Int? in
            if case .progress(let p, _) = e { return p.ahead }
            return nil
        }
        #expect(aheads.first == 3 || aheads.first == 2)
        // Stored: tryPass answers from the store, no request.
        let before = h.emulator.enqueueCount
        let again = try await p.tryPass(h.entry("sale"))
        #expect(again.disposition == .passed && again.status.code == QueueItErrorCode.storedPass.rawValue)
        #expect(again.pass?.credential == pass.credential)
        #expect(h.emulator.enqueueCount == before)
        // Once expired (ts_), the server is asked again.
        h.clock.advance(by: .seconds(601))
        let later = try await p.tryPass(h.entry("sale"))
        #expect(later.disposition == .queue)
        #expect(h.emulator.enqueueCount == before + 1)
    }

    @Test func retryScheduleInVirtualTimeThenUnavailable() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        h.emulator.inject(QueueItEmulatorFault(kind: .status, count: 5, status: 503))
        let p = try h.provider(room: "open")
        do {
            _ = try await p.tryPass(h.entry("open"))
            Issue.record("expected unavailable")
        } catch let e as WaitingRoomError {
            #expect(e.kind == .unavailable)
            #expect(e.vendorCode == 3)
            #expect(e.message.hasPrefix("Error! Queue is unavailable."))
        }
        #expect(h.clock.sleepLog == [.seconds(1), .seconds(2), .seconds(4), .seconds(8)])
        #expect(h.emulator.enqueueCount == 0)  // every attempt hit a fault
        // A new enqueue starts a fresh backoff (the SDK's leftover-backoff quirk is fixed).
        h.emulator.inject(QueueItEmulatorFault(kind: .nonjson, count: 1))
        h.emulator.inject(QueueItEmulatorFault(kind: .drop, count: 1))
        h.emulator.inject(QueueItEmulatorFault(kind: .delay, count: 1, delayMs: 20))
        let r = try await p.tryPass(h.entry("open"))
        #expect(r.disposition == .passed)
        #expect(Array(h.clock.sleepLog.dropFirst(4)) == [.seconds(1), .seconds(2)])
    }

    @Test func clientErrorsAreRejectedWithoutRetry() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        for (room, code) in [("nope", 404), ("members", 403)] {
            do {
                _ = try await h.provider(room: room).tryPass(h.entry(room))
                Issue.record("expected rejection for \(room)")
            } catch let e as WaitingRoomError {
                #expect(e.kind == .rejected)
                #expect(e.vendorCode == code)
            }
        }
        h.emulator.inject(QueueItEmulatorFault(kind: .status, count: 1, status: 429, body: "slow down"))
        do {
            _ = try await h.provider(room: "open").tryPass(h.entry("open"))
            Issue.record("expected 429")
        } catch let e as WaitingRoomError {
            #expect(e.kind == .rejected && e.vendorCode == 429 && e.message == "slow down")
        }
        #expect(h.clock.sleepLog.isEmpty)
    }

    @Test func enqueueWithTokenAndWithKey() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        let p = try h.provider(room: "members")
        #expect(try await p.tryPass(h.entry("members", credential: .enqueueKey("member-key"))).disposition == .queue)
        // Issue 15: an enqueue token must be a signed QueueToken.V1 token (any text was accepted before).
        let token = try #require(h.emulator.mintEnqueueToken(customerId: "demo", waitingRoomId: "members"))
        #expect(try await p.tryPass(h.entry("members", credential: .enqueueToken(token))).disposition == .queue)
        await #expect(throws: WaitingRoomError.self) {
            try await p.tryPass(h.entry("members", credential: .enqueueToken("any-enqueue-token")))
        }
        await #expect(throws: WaitingRoomError.self) { try await p.tryPass(h.entry("members", credential: .enqueueKey("wrong"))) }
        // The facade provider hands out the raw result.
        let facade = try QueueITWaitingRoomProvider(
            customerId: "demo", eventOrAliasId: "members", waitingRoomDomain: h.server.waitingRoomDomain,
            environment: h.environment)
        let raw = try await facade.tryPassWithEnqueueKey("member-key")
        #expect(raw.redirectType == "queue" && !raw.isPassedThrough && raw.queueitToken == nil && raw.queueUrl != nil)
        let open = try QueueITWaitingRoomProvider(
            customerId: "demo", eventOrAliasId: "open", waitingRoomDomain: h.server.waitingRoomDomain,
            environment: h.environment)
        let safe = try await open.tryPass()
        #expect(safe.redirectType == "safetynet" && safe.isPassedThrough && safe.queueitToken != nil)
    }

    @Test func offlineFailsAtOnceWithMinus100() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        let net = QueueItManualConnectivity(offline: true)
        let p = try h.provider(room: "open", connectivity: net)
        do {
            _ = try await p.tryPass(h.entry("open"))
            Issue.record("expected offline")
        } catch let e as WaitingRoomError {
            #expect(e.kind == .networkOffline && e.vendorCode == -100)
        }
        #expect(h.clock.sleepLog.isEmpty && h.emulator.enqueueCount == 0)
        let engine = try QueueITEngine(
            customerId: "demo", eventOrAliasId: "open", waitingRoomDomain: h.server.waitingRoomDomain,
            environment: h.environment, connectivity: net)
        #expect(throws: QueueITRuntimeError.networkUnavailable) { try engine.run() }
        net.set(offline: false)
        #expect(try await p.tryPass(h.entry("open")).disposition == .passed)
    }

    @Test func restartFromThePageAndFromTheCaller() async throws {
        let h = try await Harness.start(autoAdvance: false)
        defer { Task { await h.stop() } }
        let driver = QueueItHostDrivenPageDriver()
        let p = try h.provider(room: "flash", driver: driver)
        let session = try p.enqueue(h.entry("flash"))
        let collected = events(of: session)
        try await waitFor { driver.currentPage != nil }
        let first = try #require(driver.currentPage)
        #expect(h.emulator.enqueueCount == 1)
        #expect(driver.navigate(to: first.queueURL.absoluteString) == .queueURLChanged(first.queueURL))
        #expect(driver.navigate(to: "https://elsewhere.example/what-is-this.html") == .blocked)
        #expect(driver.navigate(to: "queueit://restartSession") == .restartSession)
        try await waitFor { h.emulator.enqueueCount == 2 && driver.currentPage != nil && driver.currentPage != first }
        // restart() from the caller enqueues anew as well.
        try await session.restart()
        try await waitFor { h.emulator.enqueueCount == 3 && driver.currentPage != nil }
        let page = try #require(driver.currentPage)
        // Reaching the target with a token passes.
        let token = try QueueItTokenMinter(secretKey: Harness.secret).mint(
            eventId: "flash", queueId: "q", expiresAt: 1_900_000_000, redirectType: .queue)
        #expect(driver.navigate(to: page.targetURL.absoluteString + "?queueittoken=" + token) == .passed(token: token))
        let outcome = await session.outcome()
        #expect(outcome.pass?.credential == token)
        let evs = await collected.value
        #expect(evs.filter { $0.name == .sessionRestarted }.count == 2)
        // The pass is kept per room; release() forgets it, so the next session queues again.
        let released = try await p.release(try #require(outcome.pass))
        #expect(released.code == 0)
        // queueit://close closes.
        let s2 = try p.enqueue(Entry(room: RoomKey(scope: "demo", room: "flash"), userId: "user-2"))
        try await waitFor { h.emulator.enqueueCount == 4 && driver.currentPage != nil }
        driver.navigate(to: "queueit://close")
        let closed = await s2.outcome()
        #expect(closed == .closed(VendorStatus(vendor: "queueit", code: -203, message: QueueItErrorCode.viewClosed.message)))
    }

    @Test func hybridCycleAgainstTheProtectedAPI() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        let client = QueueItHybridClient(environment: h.environment, template: try h.configuration(room: "sale"))
        let url = h.server.baseURL + "/queueit/api/demo/sale/products?page=1"
        let first = try await client.send(HTTPRequest(method: "GET", url: url))
        #expect(first.status == 200)
        #expect(first.text.contains("\"ok\":true"))
        #expect(client.queueItToken != nil)
        let cookie = try #require(client.cookieHeader)
        #expect(cookie.hasPrefix("QueueITAccepted-SDFrts345E-V3_sale=EventId=sale&QueueId="))
        let enqueues = h.emulator.enqueueCount
        // The cookie lets the next call through without queueing.
        let second = try await client.send(HTTPRequest(method: "GET", url: h.server.baseURL + "/queueit/api/demo/sale/cart"))
        #expect(second.status == 200 && second.headers.value(for: "x-queueit-redirect") == nil)
        #expect(h.emulator.enqueueCount == enqueues)
        // After the cookie expires (20 min, extended on use), the connector queues again.
        h.clock.advance(by: .seconds(21 * 60))
        let third = try await client.send(HTTPRequest(method: "GET", url: h.server.baseURL + "/queueit/api/demo/sale/cart"))
        #expect(third.status == 200)
        #expect(h.emulator.enqueueCount == enqueues + 1)
    }

    @Test func hybridBehindProxy() async throws {
        var config = QueueItEmulatorConfiguration.demo
        var room = QueueItEmulatorConfiguration.Room(state: .queue, admitPerSecond: 10)
        room.proxyPrefix = "queue"
        config.customers["demo"]?.rooms["proxied"] = room
        let h = try await Harness.start(config)
        defer { Task { await h.stop() } }
        // The connector's redirect names the proxy host and prefix.
        let raw = try await AsyncHTTPTransport.shared.send(
            HTTPRequest(
                url: h.server.baseURL + "/queueit/api/demo/proxied/x", headers: [("x-queueit-ajaxpageurl", "http%3A%2F%2Fapp%2Fx")]))
        let info = try #require(QueueItRedirectInfo.parse(headerValue: raw.headers.value(for: "x-queueit-redirect") ?? ""))
        #expect(info.customerId == "demo" && info.waitingRoomId == "proxied")
        #expect(info.waitingRoomDomain == h.server.baseURL && info.pathPrefix == "queue")
        let endpoint = try QueueItEndpoint(
            customerId: "demo", waitingRoomId: "proxied", waitingRoomDomain: info.waitingRoomDomain, pathPrefix: info.pathPrefix)
        #expect(endpoint.enqueueURL.absoluteString == h.server.baseURL + "/queue/api/mobileapp/queue/demo/proxied/enqueue")
        let client = QueueItHybridClient(environment: h.environment, template: try h.configuration(room: "proxied"))
        let r = try await client.send(HTTPRequest(url: h.server.baseURL + "/queueit/api/demo/proxied/x"))
        #expect(r.status == 200 && r.text.contains("\"ok\":true"))
    }

    @Test func badTokensAreRejectedWithTheConnectorsCode() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        let t = AsyncHTTPTransport.shared
        func mint(_ extra: String) async throws -> String {
            let r = try await t.send(
                HTTPRequest(
                    method: "POST", url: h.server.baseURL + "/_emulator/queueit/tokens",
                    headers: [("Content-Type", "application/json")],
                    body: Array(#"{"customerId":"demo","waitingRoomId":"sale"\#(extra)}"#.utf8)))
            let obj = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]
            return try #require(obj?["token"] as? String)
        }
        func call(_ token: String, ip: String? = nil) async throws -> (Int, String?) {
            var headers: HTTPHeaderList = [("x-queueit-ajaxpageurl", "http%3A%2F%2Fapp%2Fx")]
            if let ip { headers.add("X-Forwarded-For", ip) }
            let r = try await t.send(
                HTTPRequest(url: h.server.baseURL + "/queueit/api/demo/sale/x?queueittoken=" + token, headers: headers))
            let redirect = r.headers.value(for: "x-queueit-redirect").map { QueueItPercent.decode($0) }
            return (r.status, redirect)
        }
        let good = try await mint("")
        #expect(try await call(good).1 == nil)
        let h0 = QueueItToken(good).hash ?? ""
        let minted = QueueItToken(good).value("q") ?? ""
        let tampered = good.replacingOccurrences(of: "q_" + minted, with: "q_" + minted.dropLast() + (minted.hasSuffix("0") ? "1" : "0"))
        let cases: [(String, String?, String)] = [
            (tampered, nil, "hash"),
            (good.replacingOccurrences(of: h0, with: String(h0.reversed())), nil, "hash"),
            (try await mint(#","expiresIn":-10"#), nil, "timestamp"),
            (try await mint(#","eventId":"other""#), nil, "eventid"),
            (try await mint(#","clientIP":"10.0.0.1""#), "10.0.0.2", "ip")
        ]
        for (token, ip, code) in cases {
            let (status, redirect) = try await call(token, ip: ip)
            #expect(status == 200)
            #expect(redirect?.contains("/error/\(code)/?c=demo&e=sale") == true, "\(code): \(redirect ?? "nil")")
        }
        #expect(try await call(try await mint(#","clientIP":"10.0.0.1""#), ip: "10.0.0.1").1 == nil)
        // Without the ajax header the connector answers 302 with Location.
        let plain = try await t.send(HTTPRequest(url: h.server.baseURL + "/queueit/api/demo/sale/x"))
        #expect(plain.status == 302 && plain.headers.value(for: "Location")?.contains("?c=demo&e=sale") == true)
    }

    @Test func engineFacadeDelegates() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        let rec = Recorder()
        func engine(_ room: String) throws -> QueueITEngine {
            let e = try QueueITEngine(
                customerId: "demo", eventOrAliasId: room, waitingRoomDomain: h.server.waitingRoomDomain,
                environment: h.environment, template: try h.configuration(room: room))
            e.queuePassedDelegate = rec
            e.queueDisabledDelegate = rec
            e.queueITUnavailableDelegate = rec
            e.queueErrorDelegate = rec
            e.queueViewWillOpenDelegate = rec
            e.queueViewDidAppearDelegate = rec
            e.queueUrlChangedDelegate = rec
            e.queueViewClosedDelegate = rec
            e.queueSessionRestartDelegate = rec
            e.queueUserExitedDelegate = rec
            return e
        }
        let open = try engine("open")
        try open.run()
        #expect(throws: QueueITRuntimeError.requestAlreadyInProgress) { try open.run() }
        await open.waitUntilFinished()
        #expect(!open.isRequestInProgress)
        let closed = try engine("closed")
        try closed.run()
        await closed.waitUntilFinished()
        let sale = try engine("sale")
        sale.setViewDelay(2)
        try sale.run()
        await sale.waitUntilFinished()
        h.emulator.inject(QueueItEmulatorFault(kind: .status, count: 5, status: 500))
        let down = try engine("open")
        try down.runWithEnqueueToken("t")
        await down.waitUntilFinished()
        let log = rec.log
        #expect(log.first?.hasPrefix("yourTurn:e_open~") == true)
        #expect(log.contains { $0.hasPrefix("disabled:e_closed~") })
        let willOpen = try #require(log.firstIndex(of: "willOpen"))
        let didAppear = try #require(log.firstIndex(of: "didAppear"))
        #expect(willOpen < didAppear)
        #expect(log.contains { $0.hasPrefix("urlChanged:") })
        #expect(log.contains { $0.hasPrefix("yourTurn:e_sale~") })
        // Issue 15: exactly the vendor's text (the last failure is in WaitingRoomError.details).
        #expect(log.suffix(2) == ["unavailable:Error! Queue is unavailable.", "error:3"])
    }
}

final class Recorder: QueuePassedDelegate, QueueViewWillOpenDelegate, QueueViewDidAppearDelegate, QueueDisabledDelegate,
    QueueITUnavailableDelegate, QueueITErrorDelegate, QueueViewClosedDelegate, QueueUserExitedDelegate,
    QueueSessionRestartDelegate, QueueUrlChangedDelegate, Sendable
{
    let entries = Mutex<[String]>([])
    var log: [String] { entries.withLock { $0 } }
    func add(_ s: String) { entries.withLock { $0.append(s) } }
    func notifyYourTurn(_ info: QueuePassedInfo) { add("yourTurn:\(info.queueitToken ?? "nil")") }
    func notifyQueueViewWillOpen() { add("willOpen") }
    func notifyQueueViewDidAppear() { add("didAppear") }
    func notifyQueueDisabled(_ info: QueueDisabledInfo?) { add("disabled:\(info?.queueitToken ?? "nil")") }
    func notifyQueueITUnavailable(_ errorMessage: String) { add("unavailable:\(errorMessage)") }
    func notifyQueueError(_ errorMessage: String, errorCode: Int) { add("error:\(errorCode)") }
    func notifyViewClosed() { add("closed") }
    func notifyUserExited() { add("exited") }
    func notifySessionRestart() { add("restart") }
    func notifyQueueUrlChanged(_ url: String) { add("urlChanged:\(url)") }
}

/// Polls `condition` with real (short) sleeps until it holds; used only to wait for work on other
/// tasks. Throws after `timeout`, which only has to catch a hang: in the full parallel suite on two
/// cores one wait took over 5 s once (the old default).
func waitFor(_ timeout: Duration = .seconds(30), line: Int = #line, _ condition: @Sendable () -> Bool) async throws {
    let start = ContinuousClock.now
    while !condition() {
        if ContinuousClock.now - start > timeout {
            throw WaitingRoomError(.networkTimeout, message: "condition of line \(line) not met in time")
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
