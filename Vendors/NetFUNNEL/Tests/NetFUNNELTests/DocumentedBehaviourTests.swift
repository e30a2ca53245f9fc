import Foundation
import Testing
import WaitingRoom
import WaitingRoomTesting

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

/// The agent documents (seeds: iOS agent 4.6.1 option and delegate tables) read line by line:
/// each test names the rule it checks.
@Suite("NetFUNNEL documented behaviour")
struct DocumentedBehaviourTests {
    // MARK: codes and callbacks

    /// "nfError 500: … non-existent project/segment key …": one code; the server's is kept.
    @Test func serverErrorsAre500WithTheServerCodeInTheDetails() async throws {
        try await Harness.run { h in
            let outcome = await (try h.provider().enqueue(h.entry("no-such-segment"))).outcome()
            guard case .failed(let error) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(error.vendorCode == 500 && error.kind == .server)
            #expect(error.details["serverCode"] == "501")
            let fields = outcome.fields()
            #expect(fields["code"] == .number(500))
            #expect(fields["error"]?["details"]?["serverCode"] == .string("501"))
            h.expectNoLeaks()
        }
    }

    /// "nfContinue 201": the classic server's 202 (debug mode) is reported as 201.
    @Test func continueDebugIsFoldedInto201() async throws {
        try await Harness.run { h in
            let holder = try h.provider().enqueue(h.entry(user: "holder"))
            try await holder.requirePassed("holder")
            h.emulator.inject(NetFUNNELFault(opcode: 5002, action: .forceCode(202), count: 2))
            let session = try h.provider { $0.useNetfunnelTemplate = false }.enqueue(h.entry(user: "b"))
            let log = EventLog(session)
            await h.eventually("the forced 202s") { h.emulator.counters().faultsInjected == 2 }
            await h.eventually("a progress after them") { log.events.filter { if case .progress = $0 { true } else { false } }.count >= 3 }
            let codes = Set(log.events.compactMap { event -> Int? in if case .progress(_, let s) = event { s.code } else { nil } })
            #expect(codes == [201], "\(codes)")
            _ = try await holder.complete()
            try await session.requirePassed("b")
            _ = try await session.complete()
            h.expectNoLeaks()
        }
    }

    // MARK: options

    /// "Immediate error response → No timeout wait": with retryCount 0 a refusal is reported at once.
    @Test func anImmediateFailureIsReportedWithoutWaitingTheTimeout() async throws {
        try await Harness.run { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .httpStatus(503), count: 1))
            let start = h.clock.now()
            let error = try await (try h.provider().enqueue(h.entry())).requireFailed("the session")
            #expect(error.vendorCode == 1002)
            #expect(h.clock.now().timeIntervalSince(start) < 1, "no timeout slot waited (virtual time)")
            h.expectNoLeaks()
        }
    }

    /// Retries still wait out each slot ("even if error response arrives in 35ms, retry will wait
    /// 2.965 seconds before next attempt"); only the last report is immediate.
    @Test func retriesWaitTheSlotButTheLastReportDoesNot() async throws {
        try await Harness.run { h in
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .dropConnection, count: 3))
            let start = h.clock.now()
            let outcome = await
                (try h.provider {
                    $0.retryCount = 2
                    $0.networkTimeout = 3000
                }.enqueue(h.entry())).outcome()
            guard case .failed(let error) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(error.vendorCode == 1001)
            let elapsed = h.clock.now().timeIntervalSince(start)
            #expect(elapsed >= 6 && elapsed < 7, "two slots of 3 s, then the report at once: \(elapsed)")
            h.expectNoLeaks()
        }
    }

    /// "errorBypass: true bypasses all error situations": setup errors too.
    @Test func errorBypassCoversSetupErrors() async throws {
        try await Harness.run { h in
            let provider = try h.provider { $0.errorBypass = true }
            let bad = Entry(room: RoomKey(scope: Harness.project, room: ""))
            let outcome = await (try provider.enqueue(bad)).outcome()
            guard case .passed(let pass, let status) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(status.code == 300 && pass.bypassedError?.kind == .invalidUse)
            let check = try await provider.tryPass(bad)
            #expect(check.disposition == .passed && check.status.code == 300)
            let unknown = await (try provider.enqueue(h.entry("no-such-segment"))).outcome()
            #expect(unknown.status.code == 300)
            // without errorBypass the same entry is refused
            #expect(throws: WaitingRoomError.self) { try h.provider().enqueue(bad) }
            h.expectNoLeaks()
        }
    }

    @MainActor
    @Test func errorBypassCoversARefusedInitialisation() async throws {
        try await Harness.run { h in
            let agent = Netfunnel(environment: h.environment)
            let bypassing = RecordingDelegate()
            agent.initialize(
                clientId: "emulator-0000", serverUrl: h.server.baseURL, delegate: bypassing, networkTimeout: 50,
                errorBypass: true, useNetfunnelTemplate: true)
            #expect(agent.initializationError?.field == "netfunnel.networkTimeout")
            agent.nfStart(projectKey: "service_1", segmentKey: "seg")
            await bypassing.wait(for: "nfSuccess 300")
            let strict = RecordingDelegate()
            agent.initialize(clientId: "emulator-0000", serverUrl: h.server.baseURL, delegate: strict, networkTimeout: 50)
            agent.nfStart(projectKey: "service_1", segmentKey: "seg")
            await strict.wait(for: "nfError 500")
            #expect(h.emulator.counters().requests.isEmpty)
        }
    }

    /// "If clientId is missing, the agent runs in bypass mode": a serverUrl does not change it.
    @Test func noClientIdIsBypassModeEvenWithAServerUrl() async throws {
        try await Harness.run { h in
            let provider = try NetFUNNELProvider(
                configuration: NetFUNNELConfiguration(serverUrl: h.server.baseURL), environment: h.environment)
            let outcome = await (try provider.enqueue(h.entry())).outcome()
            guard case .passed(let pass, let status) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(status.code == 300 && !pass.requiresCompletion)
            #expect(try await provider.tryPass(h.entry()).status.code == 300)
            #expect(h.emulator.counters().requests.isEmpty, "the server is never contacted")
            // a bad serverUrl is still reported
            #expect(throws: WaitingRoomError.self) { try NetFUNNELConfiguration(serverUrl: "ftp://x").validate() }
        }
    }

    /// Plain http on a non-loopback host only with the explicit opt-in.
    @Test func plainHTTPNeedsTheOptIn() throws {
        let refused = NetFUNNELConfiguration(clientId: "korail-0000", serverUrl: "http://nf.example.com")
        do {
            try refused.validate()
            Issue.record("plain http accepted without the opt-in")
        } catch let error as WaitingRoomError {
            #expect(error.field == "netfunnel.serverUrl")
            #expect(error.message.contains("allowInsecureHTTP"))
        }
        var allowed = refused
        allowed.allowInsecureHTTP = true
        try allowed.validate()
        #expect(try allowed.resolvedServerURL()?.absoluteString == "http://nf.example.com")
        #expect(allowed.usesInsecureHTTP)
        let json = try NetFUNNELConfiguration(
            json: .object([
                "clientId": .string("korail-0000"), "serverUrl": .string("http://nf.example.com"), "allowInsecureHTTP": .bool(true)
            ]))
        #expect(json.allowInsecureHTTP)
        #expect(!NetFUNNELConfiguration(clientId: "x-0000", serverUrl: "http://127.0.0.1:8080").usesInsecureHTTP)
    }

    /// Recovery mode: the key is kept through an outage; when the server has dropped it, a new
    /// key is taken — more than once in one wait, up to `recoveryReissueLimit` (proposal).
    @Test func recoveryModeReissuesAfterEachLongOutage() async throws {
        // Lenient keys and the harness's 10 s deadline, as in recoveryModeLongOutageGetsNewKey: a
        // reply lost to a loaded machine's late answer must not pass for an outage.
        try await Harness.run(segments: ["seg": Harness.segment { $0.retentionSeconds = 5 }], emulator: { $0.strictKeys = false }) { h in
            let provider = try h.provider {
                $0.useNetworkRecoveryMode = true
                $0.retryCount = 2
            }
            let (a, b) = try await h.aPassedThenB(provider)
            let log = EventLog(b)
            await h.eventually("b waiting") { !log.progress.isEmpty }
            for round in 1...2 {
                h.emulator.inject(NetFUNNELFault(opcode: 5002, action: .dropConnection, count: 8))
                await h.eventually("new key \(round)") {
                    log.names.filter { $0 == .sessionRestarted }.count == round && h.emulator.counters().keysIssued == 2 + round
                }
            }
            #expect(b.currentOutcome == nil, "still waiting after two outages")
            #expect(h.emulator.counters().waitersDropped == 2)
            _ = try await a.complete()
            try await b.requirePassed("b")
            _ = try await b.complete()
            h.expectNoLeaks()
        }
    }

    @Test func recoveryReissueLimitFollowsRetryCount() {
        #expect(NetFUNNELConfiguration(retryCount: 0).recoveryReissueLimit == 1)
        #expect(NetFUNNELConfiguration(retryCount: 3).recoveryReissueLimit == 3)
        #expect(NetFUNNELConfiguration(retryCount: 10).recoveryReissueLimit == 10)
    }

    // MARK: keys

    /// 301/302 (block, black list) and 303 (white list) on 5002 while waiting: the waiting key goes back.
    @Test(arguments: [301, 302, 303])
    func aListAnswerWhileWaitingReturnsTheWaitingKey(code: Int) async throws {
        try await Harness.run { h in
            let a = try h.provider().enqueue(h.entry(user: "a"))
            try await a.requirePassed("a")
            let b = try h.provider().enqueue(h.entry(user: "b"))
            await h.eventually("b waiting") { h.emulator.counters().waiting == 1 }
            h.emulator.inject(NetFUNNELFault(opcode: 5002, action: .forceCode(code), count: 1))
            let outcome = await b.outcome()
            #expect(outcome.status.code == code)
            if code == 303 { #expect(outcome.pass?.requiresCompletion == false) } else { #expect(outcome.pass == nil) }
            await h.eventually("b's waiting key returned") { h.emulator.counters().waitersLeft == 1 && h.emulator.counters().waiting == 0 }
            _ = try await a.complete()
            if outcome.pass != nil { _ = try await b.complete() }
            h.expectNoLeaks()
        }
    }
}
