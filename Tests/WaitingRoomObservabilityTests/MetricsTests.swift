import CoreMetrics
import Foundation
import MetricsTestKit
import NetFUNNEL
import NetFUNNELEmulator
import Testing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomHTTP
import WaitingRoomVendors

/// The SDK's swift-metrics (issue 28 §1): a session of each vendor against the embedded
/// emulator, with every metric checked by name, dimensions and value (MetricsTestKit; the
/// backend is given to the environment, not bootstrapped, so parallel tests do not share it).
@Suite("SDK metrics")
struct MetricsTests {
    typealias Label = WaitingRoomMetrics.Label

    struct Case: Sendable, CustomStringConvertible {
        var vendor: String
        var scope: String
        var room: String
        var description: String { "\(vendor) \(scope)/\(room)" }
    }

    static let cases = [
        Case(vendor: "netfunnel", scope: "service_1", room: "segKey_basic"),
        Case(vendor: "queueit", scope: "demo", room: "open"),
        Case(vendor: "crowdhandler", scope: "site", room: "demo-open")
    ]

    /// Per vendor, request timeouts long enough that only a hang times out.
    static let patientTimeouts: [String: [String: JSONValue]] = [
        "netfunnel": ["networkTimeout": .number(Double(NetFUNNELConfiguration.networkTimeoutRange.upperBound))],
        "queueit": ["requestTimeoutSeconds": .number(60)],
        "crowdhandler": ["timeout": .number(60_000)]
    ]

    @Test(arguments: cases)
    func aSessionOfEachVendorIsMeasured(_ c: Case) async throws {
        let suite = EmulatorSuite.demo()
        let server = try await suite.start()
        defer { Task { await server.stop() } }
        let metrics = TestMetrics()
        let environment = ProviderEnvironment(
            transport: AsyncHTTPTransport.shared, metrics: WaitingRoomMetrics(factory: metrics), tracer: nil)
        var configuration = try #require(EmulatorSuite.clientDefaults(for: server)[c.vendor]?.objectValue)
        // every request must end "ok": the longest timeouts the clients allow, so a loaded machine's
        // late answer is not a timeout (NetFUNNEL's 3 s default timed a 5004 out once in CI)
        configuration.merge(Self.patientTimeouts[c.vendor] ?? [:]) { _, patient in patient }
        let provider = try VendorRegistry.standard.makeProvider(
            vendor: c.vendor, configuration: .object(configuration), environment: environment)
        let session = try provider.enqueue(Entry(room: RoomKey(scope: c.scope, room: c.room), userId: "metrics-user"))
        guard case .passed(_, let status) = await session.outcome() else {
            Issue.record("\(c) did not pass")
            return
        }
        _ = try await session.complete()

        let room: [(String, String)] = [("vendor", c.vendor), ("scope", c.scope), ("room", c.room)]
        #expect(try metrics.expectCounter(Label.sessionsStarted, room).totalValue == 1)
        #expect(
            try metrics.expectCounter(Label.sessionsFinished, room + [("outcome", "passed"), ("code", String(status.code))]).totalValue == 1
        )
        #expect(metrics.counters(label: Label.sessionsFinished).count == 1, "one outcome")
        let timer = try metrics.expectTimer(Label.timeToPass, room)
        #expect(timer.values.count == 1)
        #expect((timer.values.first ?? -1) >= 0)
        #expect(try metrics.expectCounter(Label.events, [("vendor", c.vendor), ("event", "passed")]).totalValue == 1)
        #expect(try metrics.expectCounter(Label.events, [("vendor", c.vendor), ("event", "completed")]).totalValue == 1)
        #expect(try metrics.expectCounter(Label.events, [("vendor", c.vendor), ("event", "stateChanged")]).totalValue >= 2)
        // Requests: every one labelled with the vendor, a bounded kind and its result.
        let requests = metrics.counters(label: Label.vendorRequests)
        #expect(!requests.isEmpty)
        for counter in requests {
            let dims = Dictionary(uniqueKeysWithValues: counter.dimensions)
            #expect(Set(dims.keys) == ["vendor", "kind", "result"])
            #expect(dims["vendor"] == c.vendor)
            #expect(dims["result"] == "ok", "\(counter.dimensions)")
            #expect(dims["kind"].map { !$0.contains("metrics-user") } == true, "no user id in a dimension")
        }
        #expect(metrics.counters(label: Label.vendorRetries).isEmpty)
        #expect(metrics.counters(label: Label.connectionChanges).isEmpty, "a clean run changes no connection state")
        if c.vendor == "netfunnel" {
            #expect(
                try metrics.expectCounter(Label.vendorRequests, [("vendor", "netfunnel"), ("kind", "5101"), ("result", "ok")]).totalValue
                    == 1)
            #expect(
                try metrics.expectCounter(Label.vendorRequests, [("vendor", "netfunnel"), ("kind", "5004"), ("result", "ok")]).totalValue
                    == 1)
        }
        if c.vendor == "crowdhandler" {
            #expect(
                metrics.counters(label: Label.vendorRequests).contains {
                    Dictionary(uniqueKeysWithValues: $0.dimensions)["kind"] == "requests"
                })
        }
    }

    @Test func retriesConnectionStatesAndLateReturnsAreCounted() async throws {
        let suite = EmulatorSuite.demo()
        let server = try await suite.start()
        defer { Task { await server.stop() } }
        let metrics = TestMetrics()
        let environment = ProviderEnvironment(
            transport: AsyncHTTPTransport.shared, metrics: WaitingRoomMetrics(factory: metrics), tracer: nil)
        var configuration = try #require(EmulatorSuite.clientDefaults(for: server)["netfunnel"]?.objectValue)
        configuration["retryCount"] = .number(2)
        let provider = try VendorRegistry.standard.makeProvider(
            vendor: "netfunnel", configuration: .object(configuration), environment: environment)
        suite.netfunnel.inject(NetFUNNELFault(opcode: 5101, action: .httpStatus(503), count: 1))
        let session = try provider.enqueue(Entry(room: RoomKey(scope: "service_1", room: "segKey_basic")))
        guard case .passed = await session.outcome() else {
            Issue.record("not passed")
            return
        }
        // The key return fails its documented attempts (1 + 2 retries) and goes on in the background.
        suite.netfunnel.inject(NetFUNNELFault(opcode: 5004, action: .httpStatus(503), count: 3))
        #expect(try await session.complete().code == 500)
        #expect(await provider.drainPendingReturns(timeout: .seconds(20)) == 0)

        #expect(
            try metrics.expectCounter(Label.vendorRequests, [("vendor", "netfunnel"), ("kind", "5101"), ("result", "http_5xx")]).totalValue
                == 1)
        #expect(
            try metrics.expectCounter(Label.vendorRequests, [("vendor", "netfunnel"), ("kind", "5101"), ("result", "ok")]).totalValue == 1)
        #expect(try metrics.expectCounter(Label.vendorRetries, [("vendor", "netfunnel"), ("kind", "5101")]).totalValue == 1)
        #expect(
            try metrics.expectCounter(Label.vendorRequests, [("vendor", "netfunnel"), ("kind", "5004"), ("result", "http_5xx")]).totalValue
                == 3)
        #expect(try metrics.expectCounter(Label.vendorRetries, [("vendor", "netfunnel"), ("kind", "5004")]).totalValue == 2)
        #expect(try metrics.expectCounter(Label.keyReturns, [("vendor", "netfunnel"), ("result", "started")]).totalValue == 1)
        #expect(try metrics.expectCounter(Label.keyReturns, [("vendor", "netfunnel"), ("result", "late")]).totalValue == 1)
        #expect(try metrics.expectGauge(Label.keyReturnsPending).lastValue == 0)
        #expect(try metrics.expectCounter(Label.connectionChanges, [("vendor", "netfunnel"), ("state", "reconnecting")]).totalValue >= 1)
        #expect(try metrics.expectCounter(Label.events, [("vendor", "netfunnel"), ("event", "keyReturnedLate")]).totalValue == 1)
    }

    @Test func nothingIsMeasuredWithoutABackend() async throws {
        let environment = ProviderEnvironment(transport: NoNetworkTransport(), metrics: nil, tracer: nil)
        #expect(environment.metrics == nil)
        #expect(environment.transport is NoNetworkTransport, "no backend, no tracer: the transport is not wrapped")
    }
}
