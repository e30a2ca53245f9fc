import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

@Suite("NetFUNNEL end to end over loopback")
struct EndToEndTests {
    // MARK: flows

    @Test func basicQueueAdmitsThreeUsersInArrivalOrder() async throws {
        try await Harness.run { h in
            let provider = try h.provider { $0.useNetfunnelTemplate = false }
            let a = try provider.enqueue(h.entry(user: "a"))
            let aOutcome = await a.outcome()
            guard case .passed(let aPass, let aStatus) = aOutcome else {
                Issue.record("a: \(aOutcome)")
                return
            }
            #expect(aStatus.code == 200 && aPass.requiresCompletion && !aPass.credential.isEmpty)

            let b = try provider.enqueue(h.entry(user: "b"))
            let bLog = EventLog(b)
            await h.eventually("b waiting") { h.emulator.counters().waiting == 1 }
            let c = try provider.enqueue(h.entry(user: "c"))
            let cLog = EventLog(c)
            await h.eventually("c waiting") { h.emulator.counters().waiting == 2 }
            await h.eventually("progress for c") { !cLog.progress.isEmpty && !bLog.progress.isEmpty }
            // item 13: the head of the line reads 1 (not 0) until it is admitted
            #expect(cLog.progress.last?.ahead == 2)
            #expect(bLog.progress.last?.ahead == 1)
            #expect(cLog.progress.last?.etaText?.count == 8)

            let order = Recorder()
            let bTask = Task {
                _ = await b.outcome()
                order.append("b")
            }
            let cTask = Task {
                _ = await c.outcome()
                order.append("c")
            }
            // nobody else gets in while a holds the key
            #expect(b.currentOutcome == nil && c.currentOutcome == nil)
            #expect(try await a.complete().code == 200)
            await bTask.value
            #expect(c.currentOutcome == nil)
            #expect(try await b.complete().code == 200)
            await cTask.value
            #expect(try await c.complete().code == 200)
            #expect(order.items == ["b", "c"])
            #expect(bLog.names.contains(.progress) && bLog.names.contains(.passed) && bLog.names.contains(.completed))
            let counters = h.emulator.counters()
            #expect(counters.keysTaken == 3 && counters.keysReturned == 3)
            h.expectNoLeaks()
        }
    }

    @Test func sectionFlowSendsAliveNoticesUntilStop() async throws {
        try await Harness.run(segments: ["sec": Harness.segment(.section) { $0.aliveCycleSeconds = 5 }]) { h in
            let provider = try h.provider()
            let session = try provider.enqueue(h.entry("sec", control: .section))
            let outcome = await session.outcome()
            guard case .passed(let pass, _) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(pass.requiresCompletion)
            await h.eventually("three alive notices") { (h.emulator.counters().requests["5003"] ?? 0) >= 3 }
            #expect(h.emulator.counters().keysHeld == 1)
            let stop = try await session.complete()
            #expect(stop.code == 200)
            #expect(session.state == .completed)
            let after = h.emulator.counters().requests["5003"] ?? 0
            try await Task.sleep(for: .milliseconds(50))
            #expect((h.emulator.counters().requests["5003"] ?? 0) == after, "alive notices must stop after 5004")
            h.expectNoLeaks()
        }
    }

    @Test func sectionKeyLostToAliveExpiryCompletesWith500() async throws {
        try await Harness.run(segments: [
            "sec": Harness.segment(.section) {
                $0.aliveExpirySeconds = 30
                $0.aliveCycleSeconds = 5
            }
        ]) { h in
            let provider = try h.provider()
            let session = try provider.enqueue(h.entry("sec", control: .section))
            guard case .passed = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            await h.eventually("alive expiry") { h.emulator.counters().keysAutoReturned == 1 }
            let stop = try await session.complete()
            #expect(stop.code == 500)
            let counters = h.emulator.counters()
            #expect(counters.keysAutoReturned == 1 && counters.keysHeld == 0 && counters.waiting == 0)
        }
    }

    // MARK: the code table

    @Test(arguments: [200, 300, 303, 301, 302, 500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513, 514, 515, 516, 517])
    func everyServerCodeOn5101(code: Int) async throws {
        try await Harness.run { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .forceCode(code), count: 1))
            let provider = try h.provider()
            let session = try provider.enqueue(h.entry())
            let outcome = await session.outcome()
            switch NetFUNNELStatusCode.disposition(of: code) {
            case .pass:
                guard case .passed(_, let status) = outcome else {
                    Issue.record("\(code): \(outcome)")
                    return
                }
                #expect(status.code == code)
            case .block:
                #expect(outcome == .blocked(outcome.status) && outcome.status.code == code)
            default:
                guard case .failed(let error) = outcome else {
                    Issue.record("\(code): \(outcome)")
                    return
                }
                // nfError knows one code, 500; the server's own is kept in the details
                #expect(error.kind == .server && error.vendorCode == 500)
                #expect(error.details["serverCode"] == String(code))
            }
            if outcome.pass != nil { _ = try await session.complete() }
            h.expectNoLeaks()
        }
    }

    @Test(arguments: [201, 202])
    func waitCodesKeepPolling(code: Int) async throws {
        try await Harness.run { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .forceCode(code), count: 1))
            let session = try h.provider().enqueue(h.entry())
            let log = EventLog(session)
            guard case .passed(_, let status) = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            #expect(status.code == 200)
            #expect(try await session.complete().code == 200)
            #expect(log.names.contains(.passed))
            h.expectNoLeaks()
        }
    }

    @Test func cancelWhileWaitingClosesWith499AndReturnsTheKey() async throws {
        try await Harness.run { h in
            let provider = try h.provider()
            let (a, b) = try await h.aPassedThenB(provider)
            await h.eventually("b waiting") { h.emulator.counters().waiting == 1 }
            b.cancel()
            let outcome = await b.outcome()
            #expect(outcome == .closed(VendorStatus(vendor: "netfunnel", code: 499, message: "Waiting room closed")))
            await h.eventually("b left") { h.emulator.counters().waitersLeft == 1 }
            _ = try await a.complete()
            h.expectNoLeaks()
        }
    }

    @Test func completeAfter502CountsAsReturned() async throws {
        try await Harness.run { h in
            let session = try h.provider().enqueue(h.entry())
            guard case .passed(let pass, _) = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            let provider = try h.provider()
            #expect(try await provider.release(pass).code == 200)  // returned behind the session's back
            #expect(try await session.complete().code == 200)  // server says 502: already returned
            #expect(h.emulator.counters().replies["502"] == 1)
            h.expectNoLeaks()
        }
    }

    @Test func keyReturnFailureReports500() async throws {
        try await Harness.run { h in
            // the agent's own behaviour: no background return
            let session = try h.provider { $0.backgroundReturnSeconds = 0 }.enqueue(h.entry())
            guard case .passed(let pass, _) = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            h.emulator.inject(NetFUNNELFault(opcode: 5004, action: .forceCode(503), count: 1))
            let status = try await session.complete()
            #expect(status.code == 500)
            #expect(h.emulator.counters().keysHeld == 1)
            #expect(try await h.provider().release(pass).code == 200)  // clean up
            h.expectNoLeaks()
        }
    }

    // MARK: faults

    @Test func droppedConnectionOn5101Is1001() async throws {
        try await Harness.run { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .dropConnection, count: 1))
            let error = try await (try h.provider().enqueue(h.entry())).requireFailed("the session")
            #expect(error.kind == .networkOffline && error.vendorCode == 1001)
            h.expectNoLeaks()
        }
    }

    @Test func delayBeyondNetworkTimeoutOn5002Is1002AndTheKeyIsReturned() async throws {
        // 2 s against a 6 s delay: on a loaded machine a 500 ms deadline also timed out the
        // key return (and its background retries), leaving the waiting key to the server. Under
        // the whole suite even b's 5101 has once taken over 2 s to be answered: b then never
        // learnt its key (the server keeps it until it expires) and no 5002 was sent. Such an
        // attempt does not test the 5002 timeout; it is repeated, and only an attempt whose 5002
        // reached the emulator is judged.
        for attempt in 1...3 {
            var conclusive = true
            try await Harness.run { h in
                let provider = try h.provider { $0.networkTimeout = 2000 }
                let a = try h.provider().enqueue(h.entry(user: "a"))
                try await a.requirePassed("a")
                h.emulator.inject(NetFUNNELFault(opcode: 5002, action: .delay(.milliseconds(6000)), count: 1))
                let b = try provider.enqueue(h.entry(user: "b"))
                let error = try await b.requireFailed("the session")
                #expect(error.kind == .networkTimeout && error.vendorCode == 1002)
                guard (h.emulator.counters().requests["5002"] ?? 0) > 0 || attempt == 3 else {
                    print("attempt \(attempt): b's 5101 timed out before any 5002 (\(h.emulator.counters())); again")
                    conclusive = false
                    _ = try await a.complete()
                    return
                }
                await h.eventually("b's key returned") { h.emulator.counters().waiting == 0 }
                _ = try await a.complete()
                h.expectNoLeaks()
            }
            if conclusive { return }
        }
    }

    @Test func httpErrorAndHTMLPageAre1002() async throws {
        try await Harness.run { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .httpStatus(503), count: 1))
            let error = try await (try h.provider().enqueue(h.entry())).requireFailed("the session")
            #expect(error.vendorCode == 1002)
            h.expectNoLeaks()
        }
    }

    @Test func malformedBodyIs500() async throws {
        try await Harness.run { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .malformedBody, count: 1))
            let error = try await (try h.provider().enqueue(h.entry())).requireFailed("the session")
            #expect(error.kind == .invalidResponse && error.vendorCode == 500)
            h.expectNoLeaks()
        }
    }

    @Test func retriesRecoverWithinRetryCountOnFixedSlots() async throws {
        try await Harness.run { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .dropConnection, count: 2))
            let start = h.clock.now()
            // slots of 10 s (virtual time; the third attempt's answer has 10 s of real time)
            let session = try h.provider {
                $0.retryCount = 2
                $0.networkTimeout = 10000
            }.enqueue(h.entry())
            guard case .passed = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            // two failed slots of 10 s each before the third attempt
            #expect(h.clock.now().timeIntervalSince(start) >= 20)
            #expect(h.emulator.counters().requests["5101"] == 3)
            _ = try await session.complete()
            h.expectNoLeaks()
        }
    }

    @Test func forcedCodeOn5003StopsAliveNotices() async throws {
        try await Harness.run(segments: ["sec": Harness.segment(.section)]) { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5003, action: .forceCode(505), count: 1))
            let session = try h.provider().enqueue(h.entry("sec", control: .section))
            guard case .passed = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            await h.eventually("the forced 505") { h.emulator.counters().faultsInjected == 1 }
            try await Task.sleep(for: .milliseconds(30))
            #expect((h.emulator.counters().requests["5003"] ?? 0) == 1)
            #expect(try await session.complete().code == 200)
            h.expectNoLeaks()
        }
    }

    // MARK: recovery mode

    @Test func recoveryModeShortOutageKeepsKeyAndPosition() async throws {
        try await Harness.run { h in
            let provider = try h.provider { $0.useNetworkRecoveryMode = true }
            let (a, b) = try await h.aPassedThenB(provider)
            let log = EventLog(b)
            await h.eventually("b waiting") { !log.progress.isEmpty }
            h.emulator.inject(NetFUNNELFault(opcode: 5002, action: .dropConnection, count: 3))
            await h.eventually("outage over") { h.emulator.counters().faultsInjected == 3 }
            let before = h.emulator.counters().replies["201"] ?? 0
            await h.eventually("b polls again") { (h.emulator.counters().replies["201"] ?? 0) > before }
            #expect(h.emulator.counters().keysIssued == 2, "no new key")
            #expect(b.currentOutcome == nil)
            _ = try await a.complete()
            try await b.requirePassed("b")
            #expect(!log.names.contains(.sessionRestarted))
            #expect(log.progress.allSatisfy { $0.ahead == 1 }, "same position (the head of the line reads 1)")
            // Issue 25 §3: the outage is visible: reconnecting while it lasts, connected after.
            let states = log.events.compactMap { e -> ConnectionState? in if case .connection(let s, _) = e { return s } else { return nil }
            }
            #expect(states.contains { $0.name == "reconnecting" } && states.last == .connected, "\(states)")
            _ = try await b.complete()
            h.expectNoLeaks()
        }
    }

    @Test func recoveryModeLongOutageGetsNewKey() async throws {
        // Lenient keys and the harness's 10 s deadline: what is tested is recovery across an outage;
        // on a loaded machine a 1 s deadline lost 5002 replies (each carries a new key), and strict
        // keys then refused the key the client still had (key replacement is tested in WireTests).
        try await Harness.run(segments: ["seg": Harness.segment { $0.retentionSeconds = 5 }], emulator: { $0.strictKeys = false }) { h in
            let provider = try h.provider { $0.useNetworkRecoveryMode = true }
            let (a, b) = try await h.aPassedThenB(provider)
            let log = EventLog(b)
            await h.eventually("b waiting") { !log.progress.isEmpty }
            h.emulator.inject(NetFUNNELFault(opcode: 5002, action: .dropConnection, count: 8))
            await h.eventually("new key") { log.names.contains(.sessionRestarted) && h.emulator.counters().keysIssued == 3 }
            #expect(h.emulator.counters().waitersDropped == 1)
            _ = try await a.complete()
            try await b.requirePassed("b")
            _ = try await b.complete()
            h.expectNoLeaks()
        }
    }

    @Test func withoutRecoveryModeAnOutageWhileWaitingFails() async throws {
        try await Harness.run { h in
            let provider = try h.provider()
            let (a, b) = try await h.aPassedThenB(provider)
            await h.eventually("b waiting") { h.emulator.counters().waiting == 1 }
            h.emulator.inject(NetFUNNELFault(opcode: 5002, action: .dropConnection, count: 1))
            let error = try await b.requireFailed("b")
            #expect(error.vendorCode == 1001)
            await h.eventually("b's key returned") { h.emulator.counters().waiting == 0 }
            _ = try await a.complete()
            h.expectNoLeaks()
        }
    }

    @Test func recoveryModeStillFailsBeforeWaitingStarts() async throws {
        try await Harness.run { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .dropConnection, count: 1))
            let error = try await (try h.provider { $0.useNetworkRecoveryMode = true }.enqueue(h.entry())).requireFailed("the session")
            #expect(error.vendorCode == 1001)
            h.expectNoLeaks()
        }
    }

    // MARK: options

    @Test func errorBypassPassesWithTheOriginalError() async throws {
        try await Harness.run { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .forceCode(513), count: 1))
            let outcome = await (try h.provider { $0.errorBypass = true }.enqueue(h.entry())).outcome()
            guard case .passed(let pass, let status) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(status.code == 300)
            #expect(pass.bypassedError?.vendorCode == 500)
            #expect(pass.bypassedError?.details["serverCode"] == "513")
            #expect(!pass.requiresCompletion)
            h.expectNoLeaks()
        }
    }

    @Test func bypassModeSendsNothing() async throws {
        try await Harness.run { h in
            let provider = try NetFUNNELProvider(configuration: .init(), environment: h.environment)
            let outcome = await (try provider.enqueue(h.entry())).outcome()
            guard case .passed(_, let status) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(status.code == 300)
            #expect(try await provider.tryPass(h.entry()).disposition == .passed)
            #expect(h.emulator.counters().requests.isEmpty)
        }
    }

    @Test func userIdTravelsAsUserDataForLists() async throws {
        try await Harness.run(segments: [
            "seg": Harness.segment {
                $0.whitelist = ["vip"]
                $0.blacklist = ["bot"]
            }
        ]) { h in
            let vip = await (try h.provider { $0.userId = "vip" }.enqueue(h.entry())).outcome()
            #expect(vip.status.code == 303)
            let bot = await (try h.provider().enqueue(h.entry(user: "bot"))).outcome()
            #expect(bot == .blocked(bot.status) && bot.status.code == 302)
            h.expectNoLeaks()
        }
    }

    @Test func templateModeOpensTheQueuePage() async throws {
        try await Harness.run { h in
            let provider = try h.provider()  // useNetfunnelTemplate defaults to true
            let (a, b) = try await h.aPassedThenB(provider)
            let log = EventLog(b)
            await h.eventually("queue page") { log.names.contains(.queueOpened) && log.names.contains(.progress) }
            let page = log.events.compactMap { if case .queueOpened(let p, _) = $0 { return p } else { return nil } }.first
            #expect(page?.queueURL.hasSuffix("/_emulator/netfunnel/waiting-room.html") == true)
            b.cancel()
            _ = await b.outcome()
            _ = try await a.complete()
            h.expectNoLeaks()
        }
    }

    @Test func foreignNodeInRepliesIsNotFollowed() async throws {
        try await Harness.run { h in
            var config = h.emulator.configuration
            config.advertisedHost = "evil.example.test"
            h.emulator.setConfiguration(config)
            let provider = try h.provider()
            let a = try provider.enqueue(h.entry(user: "a"))
            let pass = try await a.requirePassed("a")
            #expect(pass.details["ip"] == nil)
            #expect(try await a.complete().code == 200)
            h.expectNoLeaks()
        }
    }

    // MARK: tryPass

    @Test func tryPassPassesQueuesAndReturnsUnusedKeys() async throws {
        try await Harness.run { h in
            let provider = try h.provider()
            let first = try await provider.tryPass(h.entry())
            #expect(first.disposition == .passed && first.pass?.requiresCompletion == true)
            let second = try await provider.tryPass(h.entry())
            #expect(second.disposition == .queue && second.progress?.ahead == 1)
            #expect(h.emulator.counters().waitersLeft == 1)
            let pass = try #require(first.pass)
            #expect(try await provider.release(pass).code == 200)
            h.expectNoLeaks()
        }
    }

    // MARK: admin over HTTP

    @Test func adminEndpointsChangeSegmentsReadCountersAndInjectFaults() async throws {
        try await Harness.run { h in
            let transport = AsyncHTTPTransport.shared
            let base = h.server.baseURL
            let put = try await transport.send(
                WaitingRoom.HTTPRequest(
                    method: "PUT", url: base + "/_emulator/netfunnel/segments/service_1/seg",
                    body: Array(#"{"entryStatus": "block"}"#.utf8), timeout: .seconds(5)))
            #expect(put.status == 200)
            let blocked = await (try h.provider().enqueue(h.entry())).outcome()
            #expect(blocked.status.code == 301)
            let bad = try await transport.send(
                WaitingRoom.HTTPRequest(
                    method: "PUT", url: base + "/_emulator/netfunnel/segments/service_1/seg",
                    body: Array(#"{"limit": "many"}"#.utf8), timeout: .seconds(5)))
            #expect(bad.status == 400 && bad.text.contains("limit"))
            let fault = try await transport.send(
                WaitingRoom.HTTPRequest(
                    method: "POST", url: base + "/_emulator/netfunnel/faults", body: Array(#"{"opcode": 5101, "code": 501}"#.utf8),
                    timeout: .seconds(5)))
            #expect(fault.status == 200)
            let counters = try await transport.send(
                WaitingRoom.HTTPRequest(url: base + "/_emulator/netfunnel/counters", timeout: .seconds(5)))
            let decoded = try JSONDecoder().decode(NetFUNNELEmulatorCounters.self, from: Data(counters.body))
            #expect(decoded.replies["301"] == 1 && decoded.keysNeverReturned == 0)
            #expect(counters.text.contains("\"keysNeverReturned\":0"))
            let settings = try await transport.send(
                WaitingRoom.HTTPRequest(url: base + "/emulator-0000.netfunnel/nf-setting.json", timeout: .seconds(5)))
            #expect(settings.status == 200 && settings.text.contains("\"segmentKey\":\"seg\""))
            h.expectNoLeaks()
        }
    }

    @Test func nativeDialectOverHTTP() async throws {
        try await Harness.run { h in
            let response = try await AsyncHTTPTransport.shared.send(
                WaitingRoom.HTTPRequest(
                    url: h.server.baseURL + "/ts.wseq?opcode=5101&sid=service_1&aid=seg", timeout: .seconds(5)))
            let reply = try NetFUNNELReply.parse(response.body)
            #expect(reply.envelope == .native && reply.code == 200)
            let key = try #require(reply.key)
            let done = try await AsyncHTTPTransport.shared.send(
                WaitingRoom.HTTPRequest(
                    url: h.server.baseURL + "/ts.wseq?opcode=5004&key=\(key)", timeout: .seconds(5)))
            #expect(try NetFUNNELReply.parse(done.body).code == 200)
            h.expectNoLeaks()
        }
    }
}
