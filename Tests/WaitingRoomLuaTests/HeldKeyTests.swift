import Foundation
import Logging
import NetFUNNEL
import NetFUNNELEmulator
import Testing
import WaitingRoom
import WaitingRoomHTTP

@testable import WaitingRoomLua

/// Issue 25 §2: no key a flow cannot give back. Flows take NetFUNNEL keys with `room:try_pass`
/// and end every way a flow can end; the emulator (loopback, real clock) must end with no key
/// held and none auto-returned by its timeout.
@Suite("Keys a flow holds go back")
struct HeldKeyTests {
    /// How a flow ends after taking a key with `room:try_pass`.
    enum Ending: String, CaseIterable {
        case finishes, releases, completesAlias, handlerError, aborts, chunkError, cancelled, enqueuedAndLeft
    }

    static func emulator() -> NetFUNNELEmulator {
        var configuration = NetFUNNELEmulatorConfiguration.demo
        var wide = NetFUNNELEmulatorConfiguration.Segment(control: .basic, limit: 10_000)
        wide.timeoutSeconds = 60
        configuration.projects["service_1"]?.segments["wide"] = wide
        return NetFUNNELEmulator(configuration: configuration)
    }

    static func registry() -> VendorRegistry {
        let registry = VendorRegistry()
        registry.register(NetFUNNELConfiguration.self)
        return registry
    }

    /// The flow's source for `ending`; `url` is the emulator's.
    static func source(_ ending: Ending, url: String) -> String {
        let open = #"local room = wr.open("netfunnel", { clientId = "emulator-0000", serverUrl = "\#(url)", networkTimeout = 5000 })"#
        let take =
            #"local answer = room:try_pass{ scope = "service_1", room = "wide" }; assert(answer and answer.pass and answer.pass.handle, "no key")"#
        let flow = #"vendor = "netfunnel", entry = { scope = "service_1", room = "wide" }"#
        switch ending {
        case .finishes:
            return "\(open)\n\(take)\nreturn { \(flow) }"
        case .releases:
            return """
                \(open)
                \(take)
                local status = room:release(answer)
                assert(status.code == 200, "release: " .. tostring(status.code))
                assert(room:release(answer).code == 0, "a second release is a no-op")
                return { \(flow) }
                """
        case .completesAlias:
            return "\(open)\n\(take)\nassert(room:complete(answer.pass).code == 200)\nreturn { \(flow) }"
        case .handlerError:
            return "\(open)\nreturn { \(flow), on_success = function() \(take) error(\"boom\") end }"
        case .aborts:
            return "\(open)\nreturn { \(flow), on_success = function() \(take) return wr.abort(\"changed my mind\") end }"
        case .chunkError:
            return "\(open)\n\(take)\nerror(\"the flow file is broken\")"
        case .cancelled:
            return "\(open)\nreturn { \(flow), on_success = function() \(take) wr.emit(\"took\") wr.sleep(600) end }"
        case .enqueuedAndLeft:
            return #"""
                \#(open)
                return { \#(flow), on_success = function()
                    local s = room:enqueue{ scope = "service_1", room = "wide", user_id = "side-" .. tostring(math.random(1, 1e9)) }
                    local outcome = s:wait()
                    assert(outcome.outcome == "passed", outcome.outcome)
                end }
                """#
        }
    }

    /// What the host must report as given back for `ending`.
    static func expectedReturns(_ ending: Ending) -> Int {
        switch ending {
        case .releases, .completesAlias: return 0
        default: return 1
        }
    }

    static func runOne(_ ending: Ending, url: String) async throws -> FlowResult {
        var options = FlowOptions(registry: registry(), environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared))
        options.logger.logLevel = .critical  // the handlerError flows log their error on purpose
        options.config = .object(["clientId": .string("emulator-0000"), "serverUrl": .string(url), "networkTimeout": .number(5000)])
        let runtime = try FlowRuntime(source: source(ending, url: url), name: ending.rawValue, options: options)
        guard ending == .cancelled else { return await runtime.run() }
        let task = Task { await runtime.run() }
        for await action in runtime.actions where action.name == "took" { break }
        task.cancel()
        return await task.value
    }

    @Test("200 flows that take a key with try_pass and end every way leave no key held")
    func everyEndingGivesTheKeyBack() async throws {
        let emulator = Self.emulator()
        let server = try await emulator.start()
        let url = server.baseURL
        let endings = (0..<200).map { Ending.allCases[$0 % Ending.allCases.count] }
        var failures: [String] = []
        try await withThrowingTaskGroup(of: (Ending, FlowResult).self) { group in
            var next = 0
            func add() {
                let ending = endings[next]
                next += 1
                group.addTask { (ending, try await Self.runOne(ending, url: url)) }
            }
            for _ in 0..<8 { add() }
            while let (ending, result) = try await group.next() {
                if result.keysReturnedByHost != Self.expectedReturns(ending) {
                    failures.append(
                        "\(ending): returned \(result.keysReturnedByHost), expected \(Self.expectedReturns(ending)) (\(result.outcome))")
                }
                if result.keysReturnedByHost > 0 {
                    let reported = result.actions.filter { $0.name == "key_returned" }.count
                    if reported != result.keysReturnedByHost { failures.append("\(ending): \(reported) key_returned actions") }
                }
                if next < endings.count { add() }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
        let counters = emulator.counters()
        await server.shutdown()
        #expect(counters.keysHeld == 0, "keys held: \(counters.keysHeld)")
        #expect(counters.keysNeverReturned == 0, "keys never returned: \(counters.keysNeverReturned)")
        #expect(counters.keysTaken >= 200)
    }

    @Test("A dropped runtime (a REPL that closes) gives back the keys it still holds")
    func droppedRuntimeGivesKeysBack() async throws {
        let emulator = Self.emulator()
        let server = try await emulator.start()
        do {
            let runtime = try FlowRuntime(
                options: FlowOptions(registry: Self.registry(), environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared)))
            let result = await runtime.evaluate(
                #"""
                room = wr.open("netfunnel", { clientId = "emulator-0000", serverUrl = "\#(server.baseURL)", networkTimeout = 5000 })
                a = room:try_pass{ scope = "service_1", room = "wide" }
                b = room:try_pass{ scope = "service_1", room = "wide" }
                return a.pass.handle ~= nil and b.pass.handle ~= nil
                """#)
            guard case .values(let values) = result else {
                Issue.record("\(result)")
                return
            }
            #expect(values == ["true"])
            #expect(emulator.counters().keysHeld == 2)
        }
        // The runtime is gone: its keys go back in a task of their own.
        let deadline = ContinuousClock.now + .seconds(20)
        while emulator.counters().keysHeld > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let counters = emulator.counters()
        await server.shutdown()
        #expect(counters.keysHeld == 0 && counters.keysNeverReturned == 0, "\(counters)")
    }

    @Test("room:release refuses misuse with a message, and returnHeldKeys() gives back what a REPL holds")
    func releaseMisuseAndReplExit() async throws {
        let emulator = Self.emulator()
        let server = try await emulator.start()
        let runtime = try FlowRuntime(
            options: FlowOptions(registry: Self.registry(), environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared)))
        let misuse = await runtime.evaluate(
            #"""
            room = wr.open("netfunnel", { clientId = "emulator-0000", serverUrl = "\#(server.baseURL)", networkTimeout = 5000 })
            return pcall(room.release, room, "not a table")
            """#)
        guard case .values(let values) = misuse else {
            Issue.record("\(misuse)")
            return
        }
        #expect(values.first == "false" && values.last?.contains("room:release(answer)") == true, "\(values)")
        _ = await runtime.evaluate(#"kept = room:try_pass{ scope = "service_1", room = "wide" }"#)
        #expect(emulator.counters().keysHeld == 1)
        #expect(await runtime.returnHeldKeys() == 1)
        #expect(await runtime.returnHeldKeys() == 0)
        let counters = emulator.counters()
        await server.shutdown()
        #expect(counters.keysHeld == 0 && counters.keysNeverReturned == 0, "\(counters)")
    }
}
