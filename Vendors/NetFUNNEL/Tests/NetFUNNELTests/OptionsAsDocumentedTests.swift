import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

/// Issue 25, item 5: the agent's options exactly as its documents describe them (seeds
/// `000_*` parameter table and "Agent Operation Flow", `001_*` option reference).
@Suite("NetFUNNEL options as documented", .timeLimit(.minutes(2)))
struct OptionsAsDocumentedTests {
    /// "serverUrl … Cannot be empty string", "errorUrl … Cannot be empty string": refused with
    /// the field named, from JSON, from the initialiser and from the facade's `initialize`.
    @MainActor
    @Test func emptyServerAndErrorURLsAreRefusedNamingTheField() async throws {
        for field in ["serverUrl", "errorUrl", "settingUrl"] {
            do {
                _ = try NetFUNNELConfiguration(json: try JSONValue.parse(#"{"clientId": "stclab-0000", "\#(field)": ""}"#))
                Issue.record("an empty \(field) was accepted from JSON")
            } catch let error as WaitingRoomError {
                #expect(error.field == "netfunnel.\(field)")
                #expect(error.kind == .invalidConfiguration)
                #expect(error.message.contains("empty"))
            }
        }
        var c = NetFUNNELConfiguration(clientId: "stclab-0000", serverUrl: "")
        #expect(throws: WaitingRoomError.self) { try NetFUNNELProvider(configuration: c) }
        c.serverUrl = nil
        c.errorUrl = ""
        do {
            _ = try NetFUNNELProvider(configuration: c)
            Issue.record("an empty errorUrl was accepted")
        } catch let error as WaitingRoomError {
            #expect(error.field == "netfunnel.errorUrl")
        }
        // bypass mode too: the option is checked whatever the clientId
        #expect(throws: WaitingRoomError.self) { try NetFUNNELConfiguration(serverUrl: "").validate() }

        let agent = Netfunnel(environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared))
        let delegate = RecordingDelegate()
        agent.initialize(clientId: "stclab-0000", serverUrl: "", delegate: delegate)
        #expect(agent.initializationError?.field == "netfunnel.serverUrl")
        agent.initialize(clientId: "stclab-0000", errorUrl: "", delegate: delegate)
        #expect(agent.initializationError?.field == "netfunnel.errorUrl")
        agent.nfStart(projectKey: "service_1", segmentKey: "seg")
        await delegate.wait(for: "nfError 500")
    }

    /// `errorUrl` ("NetFUNNEL error page address") goes with every error: the session's
    /// failure, `tryPass`'s, a setup error, and an error `errorBypass` turned into a pass.
    @Test func theErrorPageGoesWithEveryError() async throws {
        try await Harness.run { h in
            let page = "https://errors.example/netfunnel"
            let provider = try h.provider { $0.errorUrl = page }
            #expect(provider.errorURL == page)
            // the server does not know the segment: 500 from a session and from tryPass
            let missing = Entry(room: RoomKey(scope: Harness.project, room: "no_such_segment"))
            guard case .failed(let error) = await (try provider.enqueue(missing)).outcome() else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.details["errorUrl"] == page)
            do {
                _ = try await provider.tryPass(missing)
                Issue.record("tryPass passed an unknown segment")
            } catch let error as WaitingRoomError {
                #expect(error.details["errorUrl"] == page)
            }
            // a bad room (no segment key) is refused before any request
            do {
                _ = try provider.enqueue(Entry(room: RoomKey(scope: Harness.project, room: "")))
                Issue.record("an empty segment was accepted")
            } catch let error as WaitingRoomError {
                #expect(error.details["errorUrl"] == page)
            }
            // errorBypass keeps it on the bypassed error
            let bypassing = try h.provider {
                $0.errorUrl = page
                $0.errorBypass = true
            }
            guard case .passed(let pass, let status) = await (try bypassing.enqueue(missing)).outcome() else {
                Issue.record("errorBypass did not pass")
                return
            }
            #expect(status.code == 300)
            #expect(pass.bypassedError?.details["errorUrl"] == page)
            // the event fields (`--json`, Lua `error.details`) carry it
            let fields = WaitingRoomEvent.failed(error).fields()
            #expect(fields["error"]?["details"]?["errorUrl"]?.stringValue == page)
            h.expectNoLeaks()
        }
    }

    /// "Before waiting, configuration is initialized. This process involves fetching
    /// configuration from the NetFUNNEL server": the settings document is fetched once and
    /// applied (its error page, template page and longest poll).
    @Test func theSettingsDocumentIsFetchedAndApplied() async throws {
        try await Harness.run { h in
            let provider = try h.provider()
            guard case .success(let settings)? = await provider.settings() else {
                Issue.record("the emulator's settings were not applied")
                return
            }
            #expect(settings.waitingRoomPageURL == h.server.baseURL + "/_emulator/netfunnel/waiting-room.html")
            #expect(settings.errorURL == h.server.baseURL + "/_emulator/netfunnel/error.html")
            #expect(settings.maxTTL == 30)
            #expect(settings.ignored.isEmpty)
            // with no errorUrl of the app's, the document's goes with errors
            #expect(provider.errorURL == settings.errorURL)
            let missing = Entry(room: RoomKey(scope: Harness.project, room: "no_such_segment"))
            guard case .failed(let error) = await (try provider.enqueue(missing)).outcome() else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.details["errorUrl"] == settings.errorURL)
            // the page it names exists
            let errorPage = try await AsyncHTTPTransport.shared.send(
                HTTPRequest(url: try #require(settings.errorURL), timeout: .seconds(30)))
            #expect(errorPage.status == 200 && errorPage.text.contains("could not be reached"))
            // the app's errorUrl wins
            #expect(try h.provider { $0.errorUrl = "https://mine.example/e" }.errorURL == "https://mine.example/e")
        }
    }

    /// The document's fields, applied or ignored (never an error).
    @Test func settingsDocumentFields() throws {
        let s = try NetFUNNELSettings(
            json: try JSONValue.parse(
                #"{"vwrPageUrl": "https://p.example/vwr", "errorUrl": "javascript:alert(1)", "maxTtl": 5, "other": 1}"#))
        #expect(s.waitingRoomPageURL == "https://p.example/vwr")
        #expect(s.errorURL == nil && s.ignored["errorUrl"] != nil)
        #expect(s.maxTTL == 5)
        #expect(s.pollSeconds(20) == 5 && s.pollSeconds(3) == 3 && s.pollSeconds(0) == 1 && s.pollSeconds(nil) == 1)
        let odd = try NetFUNNELSettings(json: try JSONValue.parse(#"{"maxTtl": 0.5, "vwrPageUrl": 7}"#))
        #expect(odd.maxTTL == nil && odd.waitingRoomPageURL == nil && odd.ignored.count == 2)
        #expect(odd.pollSeconds(45) == 30)
        #expect(throws: WaitingRoomError.self) { try NetFUNNELSettings(json: .array([])) }
        // where the document is looked for
        #expect(
            try NetFUNNELConfiguration(clientId: "stclab-0000").resolvedSettingURL()?.absoluteString
                == "https://nf-setting-bucket.stclab.com/stclab-0000.netfunnel/nf-setting.json")
        #expect(
            try NetFUNNELConfiguration(clientId: "stclab-0000", serverUrl: "http://127.0.0.1:9").resolvedSettingURL()?.absoluteString
                == "http://127.0.0.1:9/stclab-0000.netfunnel/nf-setting.json")
        #expect(try NetFUNNELConfiguration(clientId: "").resolvedSettingURL() == nil)
        #expect(throws: WaitingRoomError.self) {
            try NetFUNNELConfiguration(clientId: "stclab-0000", settingUrl: "http://settings.example/x.json").validate()
        }
    }

    /// The template page handed to hosts: the reply's `vwr_html`, else the settings document's
    /// `vwrPageUrl`, else the SaaS page derived from the client id.
    @Test func theTemplatePageComesFromTheReplyThenTheSettings() async throws {
        try await Harness.run { h in
            let provider = try h.provider()
            _ = await provider.settings()
            let client = try #require(provider.client)
            let withPage = try NetFUNNELReply.parse(
                Array(
                    "NetFunnel.gRtype=5101;NetFunnel.gControl.result='5101:201:key=AB&nwait=2&vwr_html=https%3A%2F%2Fvwr.example%2Fpage';"
                        .utf8))
            #expect(client.waitingRoomPage(withPage) == "https://vwr.example/page")
            let without = try NetFUNNELReply.parse(Array("NetFunnel.gRtype=5101;NetFunnel.gControl.result='5101:201:key=AB&nwait=2';".utf8))
            #expect(client.waitingRoomPage(without) == h.server.baseURL + "/_emulator/netfunnel/waiting-room.html")
            let unfetched = try NetFUNNELClient(
                configuration: NetFUNNELConfiguration(clientId: "stclab-0000"), serverURL: try #require(URL(string: "https://x.example")),
                environment: h.environment)
            #expect(unfetched.waitingRoomPage(without) == "https://agent-lib.stclab.com/vwr-page/stclab-0000.netfunnel/index.html")
        }
    }

    /// A failed fetch (the document is missing, the host does not answer) is reported by
    /// `settings()` and logged; entries go on with the app's options.
    @Test func aFailedSettingsFetchFallsBackToTheAppsOptions() async throws {
        try await Harness.run { h in
            // the emulator knows only its own client id: another one's document is 404
            let other = try h.provider { $0.clientId = "other-0001" }
            guard case .failure(let error)? = await other.settings() else {
                Issue.record("expected a failed fetch")
                return
            }
            #expect(error.vendorCode == 404 && error.message.contains("other-0001.netfunnel/nf-setting.json"))
            #expect(other.errorURL == nil)
            let passing = try other.enqueue(h.entry(user: "other"))
            guard case .passed = await passing.outcome() else {
                Issue.record("not passed")
                return
            }
            _ = try await passing.complete()
            // nothing listens on the settings host: refused at once
            let dead = try h.provider { $0.settingUrl = "http://127.0.0.1:9/nf-setting.json" }
            guard case .failure = await dead.settings() else {
                Issue.record("expected a failed fetch")
                return
            }
            let session = try dead.enqueue(h.entry(user: "dead"))
            guard case .passed = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            _ = try await session.complete()
            let tried = try await dead.tryPass(h.entry(user: "t"))
            #expect(tried.disposition == .passed)
            if let pass = tried.pass { _ = try await dead.release(pass) }
            h.expectNoLeaks()
        }
    }

    /// `errorBypass` "bypasses all error situations" and, with it, `nfError` and
    /// `nfNetworkError` "are not called": a user who leaves the line is not an error, so
    /// `nfClose` 499 is still reported (the option reference lists it with the delegate
    /// callbacks, not with what is turned into `nfSuccess`).
    @Test func errorBypassLeavesACancellationClosed() async throws {
        try await Harness.run { h in
            let provider = try h.provider { $0.errorBypass = true }
            let first = try provider.enqueue(h.entry(user: "first"))
            try await first.requirePassed("first")
            let second = try provider.enqueue(h.entry(user: "second"))
            await h.eventually("second waits") { (h.emulator.counters().requests["5002"] ?? 0) >= 1 }
            second.cancel()
            guard case .closed(let status) = await second.outcome() else {
                Issue.record("not closed")
                return
            }
            #expect(status.code == 499)
            _ = try await first.complete()
            h.expectNoLeaks()
        }
    }

    /// `useNetfunnelTemplate: true`: a host gets the template page's address once
    /// (`queueOpened`) and the live numbers in `progress` events, and can render a page of its
    /// own from them (``NetFUNNELTemplatePage``).
    @Test func aHostGetsTheTemplatePageAndCanRenderOne() async throws {
        try await Harness.run { h in
            let provider = try h.provider()
            let first = try provider.enqueue(h.entry(user: "first"))
            try await first.requirePassed("first")
            let second = try provider.enqueue(h.entry(user: "second"))
            var pages: [QueuePage] = []
            var progress: QueueProgress?
            for await event in second.events {
                if case .queueOpened(let page, _) = event { pages.append(page) }
                if case .progress(let p, _) = event {
                    progress = p
                    break
                }
            }
            #expect(pages.count == 1)
            #expect(pages.first?.queueURL.hasPrefix(h.server.baseURL + "/_emulator/netfunnel/waiting-room.html") == true)
            let numbers = try #require(progress)
            #expect(numbers.ahead == 1, "nwait counts the user: one ahead at the head of the line")
            let html = NetFUNNELTemplatePage.html(
                progress: numbers, room: second.entry.room,
                liveMessage: "<script>alert(1)</script> & more", refreshSeconds: 2)
            #expect(html.contains("<strong id=\"ahead\">1</strong>"))
            #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"))
            #expect(!html.contains("<script>"))
            #expect(html.contains("http-equiv=\"refresh\" content=\"2\""))
            #expect(html.contains(Harness.project))
            second.cancel()
            _ = await second.outcome()
            _ = try await first.complete()
            h.expectNoLeaks()
        }
    }
}
