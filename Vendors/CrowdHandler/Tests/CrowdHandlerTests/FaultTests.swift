import CrowdHandler
import CrowdHandlerEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomTesting

/// Every fault kind on each request kind, with `trustOnFail` true and false, with and without a
/// safety-net room. Delays are 15 s against a 6 s deadline (generous both ways on a loaded machine).
@Suite("CrowdHandler faults and the failure policy", .timeLimit(.minutes(4)))
struct FaultTests {
    static let kinds = CrowdHandlerEmulatorFault.Kind.allCases
    /// The request deadline: well below a delay fault's pause, well above a loaded machine's
    /// loopback answer (3 s read a `garbage` fault as a timeout twice in CI, with the whole suite
    /// running in parallel on two cores).
    static let deadline = Duration.seconds(6)

    func fault(_ kind: CrowdHandlerEmulatorFault.Kind, on: CrowdHandlerEmulatorFault.Target = .requestsPost) -> CrowdHandlerEmulatorFault {
        CrowdHandlerEmulatorFault(kind: kind, on: on, count: 1, status: 503, delayMs: 15_000)
    }

    @Test(arguments: kinds)
    func trustOnFailLetsTheUserIn(_ kind: CrowdHandlerEmulatorFault.Kind) async throws {
        let h = try await EmulatorHarness.start()
        h.emulator.inject(fault(kind))
        let store = MemoryPassStore()
        let p = h.provider(try h.configuration(timeout: Self.deadline, trustOnFail: true), passStore: store)
        let outcome = try await p.enqueue(Entry(room: RoomKey(scope: "", room: "line"))).outcome()
        guard case .passed(let pass, let status) = outcome else {
            Issue.record("\(kind): expected passed, got \(outcome)")
            return
        }
        #expect(status.code == CrowdHandlerCode.checkFailed.rawValue)
        let error = try #require(pass.bypassedError, "\(kind): the failure is kept on the pass")
        #expect(error.vendor == "crowdhandler")
        switch kind {
        case .status: #expect(error.vendorCode == 503 && error.kind == .server)
        case .garbage: #expect(error.kind == .invalidResponse)
        case .delay: #expect(error.kind == .networkTimeout)
        case .drop: #expect(error.vendorCode != nil)
        }
        #expect(await store.all().isEmpty, "a pass trusted on fail is not stored")
        #expect(h.emulator.counters.faults[kind.rawValue] == 1)
        await h.stop()
    }

    @Test(arguments: kinds)
    func withoutTrustNorSafetyNetTheSessionFails(_ kind: CrowdHandlerEmulatorFault.Kind) async throws {
        let h = try await EmulatorHarness.start()
        h.emulator.inject(fault(kind))
        let p = h.provider(try h.configuration(timeout: Self.deadline, trustOnFail: false))
        let outcome = try await p.enqueue(Entry(room: RoomKey(scope: "", room: "open"))).outcome()
        guard case .failed(let error) = outcome else {
            Issue.record("\(kind): expected failed, got \(outcome)")
            return
        }
        #expect(error.kind == .unavailable)
        #expect(error.vendorCode == CrowdHandlerCode.checkFailed.rawValue)
        #expect(error.details["cause"] != nil)
        await h.stop()
    }

    @Test(arguments: kinds)
    func safetyNetRoomThenRecovery(_ kind: CrowdHandlerEmulatorFault.Kind) async throws {
        let h = try await EmulatorHarness.start()
        h.emulator.inject(fault(kind))
        let p = h.provider(try h.configuration(timeout: Self.deadline, trustOnFail: false, safetyNetSlug: "safety"))
        let session = try p.enqueue(Entry(room: RoomKey(scope: "", room: "open")))
        let events = Events(session)
        let outcome = await session.outcome()
        guard case .passed(_, let status) = outcome else {
            Issue.record("\(kind): expected passed after recovery, got \(outcome)")
            return
        }
        #expect(status.code == 200)
        let opened = events.all.compactMap { e -> (QueuePage, VendorStatus)? in
            if case .queueOpened(let q, let s) = e { return (q, s) } else { return nil }
        }
        #expect(opened.first?.0.queueURL.hasPrefix(h.baseURL + "/safety?") == true, "\(kind): sent to the safety-net room first")
        #expect(opened.first?.1.code == CrowdHandlerCode.safetyNet.rawValue)
        let t = try await h.provider(try h.configuration(timeout: Self.deadline, trustOnFail: false, safetyNetSlug: "safety"))
            .tryPassAfter(fault: fault(kind), on: h.emulator)
        #expect(t.disposition == .queue)
        #expect(t.queuePage?.queueURL.contains("/safety?") == true)
        await h.stop()
    }

    @Test(arguments: kinds)
    func faultWhileWaitingFollowsThePolicy(_ kind: CrowdHandlerEmulatorFault.Kind) async throws {
        let h = try await EmulatorHarness.start()
        let p = h.provider(try h.configuration(timeout: Self.deadline, trustOnFail: false))
        let session = try p.enqueue(Entry(room: RoomKey(scope: "", room: "line")))
        let events = Events(session)
        #expect(await eventually { events.all.contains { $0.name == .progress } })
        h.emulator.inject(fault(kind, on: .requestsGet))
        let outcome = await session.outcome()
        guard case .failed(let error) = outcome else {
            Issue.record("\(kind): expected failed, got \(outcome)")
            return
        }
        #expect(error.kind == .unavailable)
        await h.stop()
    }

    @Test func throttleStatusSixFollowsTrustOnFail() throws {
        let body = Array(#"{"result":{"promoted":0,"status":6,"token":"tokA","slug":"line"}}"#.utf8)
        let r = try CrowdHandlerResult.decode(body)
        #expect(r.status == CrowdHandlerCode.throttled.rawValue)
        #expect(r.promoted == false)
    }
}

extension CrowdHandlerProvider {
    /// One tryPass with `fault` installed first.
    func tryPassAfter(fault: CrowdHandlerEmulatorFault, on emulator: CrowdHandlerEmulator) async throws -> TryPassResult {
        emulator.inject(fault)
        return try await tryPass(Entry(room: RoomKey(scope: "", room: "open"), userId: "try"))
    }
}

@Suite("CrowdHandler abnormal API statuses")
struct AbnormalStatusTests {
    @Test(arguments: [
        #"{"result":{"promoted":0,"status":2,"token":"tokA","slug":null}}"#,
        #"{"result":{"promoted":0,"status":6,"token":"tokA","slug":"sale"}}"#
    ])
    func abnormalAnswersFollowTheFailurePolicy(_ body: String) async throws {
        func provider(trust: Bool, safetyNet: String?) throws -> CrowdHandlerProvider {
            CrowdHandlerProvider(
                configuration: try CrowdHandlerConfiguration(publicKey: "k", trustOnFail: trust, safetyNetSlug: safetyNet),
                environment: ProviderEnvironment(transport: StubTransport(body: body)))
        }
        let entry = Entry(room: RoomKey(scope: "site", room: "sale"))
        let trusted = try await provider(trust: true, safetyNet: nil).tryPass(entry)
        #expect(trusted.disposition == .passed)
        #expect(trusted.pass?.bypassedError != nil)
        let net = try await provider(trust: false, safetyNet: "net").tryPass(entry)
        #expect(net.disposition == .queue)
        #expect(net.status.code == CrowdHandlerCode.safetyNet.rawValue)
        #expect(net.queuePage?.queueURL.hasPrefix("https://wait.crowdhandler.com/net?") == true)
        await #expect(throws: WaitingRoomError.self) { try await provider(trust: false, safetyNet: nil).tryPass(entry) }
    }
}
