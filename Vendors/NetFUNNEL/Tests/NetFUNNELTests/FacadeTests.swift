import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

/// Records every delegate call as `name code`.
@MainActor
final class RecordingDelegate: NetfunnelDelegate {
    var calls: [String] = []
    var continues: [(ahead: Int, waitTime: String, progress: Int)] = []
    var messages: [String] = []
    func nfSuccess(projectKey: String, segmentKey: String, statusCode: Int, message: String) { record("nfSuccess", statusCode, message) }
    func nfError(projectKey: String, segmentKey: String, statusCode: Int, message: String) { record("nfError", statusCode, message) }
    func nfNetworkError(projectKey: String, segmentKey: String, statusCode: Int, message: String) {
        record("nfNetworkError", statusCode, message)
    }
    func nfBlock(projectKey: String, segmentKey: String, statusCode: Int, message: String) { record("nfBlock", statusCode, message) }
    func nfClose(projectKey: String, segmentKey: String, statusCode: Int, message: String) { record("nfClose", statusCode, message) }
    func nfComplete(projectKey: String, segmentKey: String, statusCode: Int, message: String) { record("nfComplete", statusCode, message) }
    func nfContinue(
        projectKey: String, segmentKey: String, statusCode: Int, message: String, aheadWait: Int, behindWait: Int,
        waitTime: String, progressRate: Int
    ) {
        continues.append((aheadWait, waitTime, progressRate))
        if calls.last != "nfContinue 201" { calls.append("nfContinue \(statusCode)") }
    }
    private func record(_ name: String, _ code: Int, _ message: String) {
        calls.append("\(name) \(code)")
        messages.append(message)
    }

    func wait(for call: String, sourceLocation: SourceLocation = #_sourceLocation) async {
        for _ in 0..<2000 {
            if calls.contains(call) { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("timed out waiting for \(call); calls: \(calls)", sourceLocation: sourceLocation)
    }
}

@Suite("Netfunnel facade")
@MainActor
struct FacadeTests {
    /// The agent's largest `networkTimeout` for calls against the emulator: with the default 3 s, a
    /// heavily loaded machine once answered a loopback 5101 too late (nfNetworkError 1002).
    static let timeout = 10_000

    @Test func startStopBasic() async throws {
        try await Harness.run { h in
            let agent = Netfunnel(environment: h.environment)
            let delegate = RecordingDelegate()
            agent.initialize(clientId: "emulator-0000", serverUrl: h.server.baseURL, delegate: delegate, networkTimeout: Self.timeout)
            agent.nfStart(projectKey: "service_1", segmentKey: "seg")
            await delegate.wait(for: "nfSuccess 200")
            agent.nfStop(projectKey: "service_1", segmentKey: "seg")
            await delegate.wait(for: "nfComplete 200")
            #expect(delegate.calls == ["nfSuccess 200", "nfComplete 200"])
            h.expectNoLeaks()
        }
    }

    @Test func continueWithoutTemplateThenSuccessAndSection() async throws {
        try await Harness.run(segments: ["seg": Harness.segment(.section)]) { h in
            let holder = try h.provider().enqueue(h.entry(control: .section, user: "holder"))
            try await holder.requirePassed("holder")
            let agent = Netfunnel(environment: h.environment)
            let delegate = RecordingDelegate()
            agent.initialize(
                clientId: "emulator-0000", serverUrl: h.server.baseURL, delegate: delegate, networkTimeout: Self.timeout,
                useNetfunnelTemplate: false)
            agent.nfStartSection(projectKey: "service_1", segmentKey: "seg")
            await delegate.wait(for: "nfContinue 201")
            #expect(delegate.continues.first?.ahead == 1)  // item 13: the head of the line reads 1
            #expect(delegate.continues.first?.waitTime.count == 8)
            _ = try await holder.complete()
            await delegate.wait(for: "nfSuccess 200")
            agent.nfStopSection(projectKey: "service_1", segmentKey: "seg")
            await delegate.wait(for: "nfComplete 200")
            h.expectNoLeaks()
        }
    }

    @Test func stopWhileWaitingClosesWith499() async throws {
        try await Harness.run { h in
            let holder = try h.provider().enqueue(h.entry(user: "holder"))
            try await holder.requirePassed("holder")
            let agent = Netfunnel(environment: h.environment)
            let delegate = RecordingDelegate()
            agent.initialize(clientId: "emulator-0000", serverUrl: h.server.baseURL, delegate: delegate, networkTimeout: Self.timeout)
            agent.nfStart(projectKey: "service_1", segmentKey: "seg")
            await h.eventually("waiting") { h.emulator.counters().waiting == 1 }
            agent.nfStop(projectKey: "service_1", segmentKey: "seg")
            await delegate.wait(for: "nfClose 499")
            _ = try await holder.complete()
            h.expectNoLeaks()
        }
    }

    @Test func blockNetworkErrorServerErrorAndBypass() async throws {
        try await Harness.run(segments: ["seg": Harness.segment(), "blocked": Harness.segment { $0.entryStatus = .block }]) { h in
            let agent = Netfunnel(environment: h.environment)
            let delegate = RecordingDelegate()
            agent.initialize(clientId: "emulator-0000", serverUrl: h.server.baseURL, delegate: delegate, networkTimeout: Self.timeout)
            agent.nfStart(projectKey: "service_1", segmentKey: "blocked")
            await delegate.wait(for: "nfBlock 301")
            h.emulator.inject(NetFUNNELFault(opcode: 5101, action: .dropConnection, count: 1))
            agent.nfStart(projectKey: "service_1", segmentKey: "seg")
            await delegate.wait(for: "nfNetworkError 1001")
            agent.nfStart(projectKey: "service_1", segmentKey: "nope")
            await delegate.wait(for: "nfError 500")  // unknown segment: the server's 501, reported as documented

            let bypassing = RecordingDelegate()
            agent.initialize(
                clientId: "emulator-0000", serverUrl: h.server.baseURL, delegate: bypassing, networkTimeout: Self.timeout,
                errorBypass: true, useNetfunnelTemplate: true)
            agent.nfStart(projectKey: "service_1", segmentKey: "nope")
            await bypassing.wait(for: "nfSuccess 300")
            h.expectNoLeaks()
        }
    }

    @Test func initialisationErrorsNameTheField() async {
        let agent = Netfunnel(
            environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: VirtualClock(autoAdvance: true)))
        let delegate = RecordingDelegate()
        agent.nfStart(projectKey: "p", segmentKey: "s")
        #expect(delegate.calls.isEmpty)  // no delegate yet: nothing to call
        agent.initialize(clientId: "stclab-0000", delegate: delegate, networkTimeout: 50)
        #expect(agent.initializationError?.field == "netfunnel.networkTimeout")
        agent.nfStart(projectKey: "p", segmentKey: "s")
        #expect(delegate.calls == ["nfError 500"])
        #expect(delegate.messages.first?.contains("networkTimeout") == true)
        agent.initialize(clientId: "x", serverUrl: "http://example.test", delegate: delegate)
        #expect(agent.initializationError?.field == "netfunnel.serverUrl")
        agent.initialize(clientId: "x", delegate: delegate, retryCount: 11)
        #expect(agent.initializationError?.field == "netfunnel.retryCount")
    }

    @Test func staticInitialiseInBothDocumentedOrders() async {
        let delegate = RecordingDelegate()
        // the option reference's "complete example" order (errorBypass before useNetfunnelTemplate)
        Netfunnel.initialize(
            clientId: "", delegate: delegate, networkTimeout: 5000, retryCount: 2, printLog: false, errorBypass: false,
            useNetfunnelTemplate: true, userId: "user_67890", useNetworkRecoveryMode: true)
        #expect(Netfunnel.shared.initializationError == nil)
        // the agent guide's order
        Netfunnel.initialize(
            clientId: "", serverUrl: nil, errorUrl: nil, delegate: delegate, networkTimeout: 3000, retryCount: 0,
            printLog: false, useNetfunnelTemplate: true, errorBypass: false, userId: nil, useNetworkRecoveryMode: false)
        // keys of its own: other tests use the shared agent too, and an entry still in flight would be joined
        Netfunnel.shared.nfStart(projectKey: "static_project", segmentKey: "static_segment")
        await delegate.wait(for: "nfSuccess 300")
        Netfunnel.shared.nfStop(projectKey: "static_project", segmentKey: "static_segment")
        await delegate.wait(for: "nfComplete 200")
    }

    @Test func bypassModeWithEmptyClientId() async {
        let agent = Netfunnel(
            environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: VirtualClock(autoAdvance: true)))
        let delegate = RecordingDelegate()
        agent.initialize(clientId: "", delegate: delegate)
        agent.nfStart(projectKey: "p", segmentKey: "s")
        await delegate.wait(for: "nfSuccess 300")
    }

    @Test func seedNetfunnelHandlerReceivesCallbacks() async throws {
        try await Harness.run { h in
            let agent = Netfunnel(environment: h.environment)
            var received: [Int] = []
            NetfunnelHandler.shared.onSuccess = { _, _, code, _ in received.append(code) }
            NetfunnelHandler.shared.onComplete = { _, _, code, _ in received.append(code) }
            agent.initialize(
                clientId: "emulator-0000", serverUrl: h.server.baseURL, errorUrl: h.server.baseURL + "/error",
                delegate: NetfunnelHandler.shared, networkTimeout: Self.timeout, retryCount: 0, printLog: false,
                useNetfunnelTemplate: true, errorBypass: false, userId: "user_67890", useNetworkRecoveryMode: false)
            agent.nfStart(projectKey: "service_1", segmentKey: "seg")
            for _ in 0..<2000 where received.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            #expect(received == [200])
            agent.nfStop(projectKey: "service_1", segmentKey: "seg")
            for _ in 0..<2000 where received.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(received == [200, 200])
            NetfunnelHandler.shared.onSuccess = nil
            NetfunnelHandler.shared.onComplete = nil
            h.expectNoLeaks()
        }
    }
}
