import Foundation
import InMemoryTracing
import Testing
import Tracing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomHTTP
import WaitingRoomVendors

/// The SDK's traces (issue 28 §2): a session inside the app's own span, in the in-memory
/// tracer: the app's span → `waitingroom.session` → `waitingroom.wait` → the vendor requests
/// of the wait, and `waitingroom.complete` → the key return's request.
@Suite("SDK traces")
struct TracingTests {
    @Test func aTracedSessionIsASpanTreeWithTheVendorRequestsAsChildren() async throws {
        let suite = EmulatorSuite.demo()
        let server = try await suite.start()
        defer { Task { await server.stop() } }
        let tracer = InMemoryTracer()
        let environment = ProviderEnvironment(transport: AsyncHTTPTransport.shared, metrics: nil, tracer: tracer)
        var configuration = try #require(EmulatorSuite.clientDefaults(for: server)["netfunnel"]?.objectValue)
        configuration.merge(MetricsTests.patientTimeouts["netfunnel"] ?? [:]) { _, patient in patient }  // no retry on a loaded machine
        let provider = try VendorRegistry.standard.makeProvider(
            vendor: "netfunnel", configuration: .object(configuration), environment: environment)

        try await tracer.withSpan("app.checkout", context: .topLevel) { _ in
            let session = try provider.enqueue(Entry(room: RoomKey(scope: "service_1", room: "segKey_basic")))
            guard case .passed = await session.outcome() else {
                Issue.record("not passed")
                return
            }
            _ = try await session.complete()
        }
        let spans = tracer.finishedSpans
        func named(_ name: String) -> [FinishedInMemorySpan] { spans.filter { $0.operationName == name } }
        let app = try #require(named("app.checkout").first)
        let session = try #require(named("waitingroom.session").first)
        let wait = try #require(named("waitingroom.wait").first)
        let complete = try #require(named("waitingroom.complete").first)
        #expect(session.spanContext.parentSpanID == app.spanContext.spanID, "the session is part of the app's trace")
        #expect(session.traceID == app.traceID)
        #expect(wait.spanContext.parentSpanID == session.spanContext.spanID)
        #expect(complete.spanContext.parentSpanID == session.spanContext.spanID)
        #expect(session.attributes["waitingroom.vendor"]?.toSpanAttribute() == "netfunnel")
        #expect(session.attributes["waitingroom.room"]?.toSpanAttribute() == "segKey_basic")
        #expect(session.attributes["waitingroom.outcome"]?.toSpanAttribute() == "passed")
        #expect(wait.attributes["waitingroom.code"]?.toSpanAttribute() == 200)

        let issue = try #require(named("HTTP GET 5101").first)
        #expect(issue.spanContext.parentSpanID == wait.spanContext.spanID, "the wait's request is its child")
        #expect(issue.kind == .client)
        #expect(issue.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(issue.attributes["waitingroom.attempt"]?.toSpanAttribute() == 0)
        #expect(issue.attributes["waitingroom.request.kind"]?.toSpanAttribute() == "5101")
        let giveBack = try #require(named("HTTP GET 5004").first)
        #expect(giveBack.spanContext.parentSpanID == complete.spanContext.spanID, "the key return is the completion's child")
        // The context went into the requests' headers (the tracer's own injection).
        #expect(tracer.performedContextInjections.count >= 2)
    }
}
