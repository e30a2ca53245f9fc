import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

/// An emulator on 127.0.0.1:0 sharing one auto-advancing virtual clock with the clients.
struct Harness {
    let emulator: NetFUNNELEmulator
    let server: NetFUNNELRunningServer
    let clock: VirtualClock

    static let project = "service_1"

    /// Test segments: long timeouts so virtual time racing ahead under busy polling never
    /// auto-returns a key unless a test asks for it.
    static func segment(
        _ control: ControlMode = .basic, limit: Int = 1, _ tweak: (inout NetFUNNELEmulatorConfiguration.Segment) -> Void = { _ in }
    )
        -> NetFUNNELEmulatorConfiguration.Segment
    {
        var s = NetFUNNELEmulatorConfiguration.Segment(control: control, limit: limit)
        s.timeoutSeconds = 86_400
        s.retentionSeconds = 86_400
        s.aliveExpirySeconds = 86_400
        s.ttlMin = 1
        s.ttlMax = 3
        tweak(&s)
        return s
    }

    /// Runs `body` against a fresh emulator. Strict keys are on (a superseded key is refused
    /// with 507), so a client that does not keep the newest key shows up as a leak.
    static func run(
        segments: [String: NetFUNNELEmulatorConfiguration.Segment] = ["seg": segment()],
        emulator tweak: (inout NetFUNNELEmulatorConfiguration) -> Void = { _ in },
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Harness) async throws -> Void
    ) async throws {
        let clock = VirtualClock(autoAdvance: true)
        var configuration = NetFUNNELEmulatorConfiguration(projects: [project: .init(segments: segments)], strictKeys: true)
        tweak(&configuration)
        let emulator = NetFUNNELEmulator(configuration: configuration, clock: clock)
        let server = try await emulator.start(host: "127.0.0.1", port: 0)
        let harness = Harness(emulator: emulator, server: server, clock: clock)
        do {
            try await body(harness)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    /// A 10 s `networkTimeout`, the vendor's largest (real time: the transport's deadline is on the event loop) so a
    /// loaded CI machine running the whole suite in parallel cannot time out a loopback answer;
    /// tests of the timeout itself set their own.
    func configuration(_ tweak: (inout NetFUNNELConfiguration) -> Void = { _ in }) -> NetFUNNELConfiguration {
        var c = NetFUNNELConfiguration(clientId: "emulator-0000", serverUrl: server.baseURL, networkTimeout: 10000)
        tweak(&c)
        return c
    }

    var environment: ProviderEnvironment { ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: clock) }

    func provider(
        transport: any HTTPTransport = AsyncHTTPTransport.shared, _ tweak: (inout NetFUNNELConfiguration) -> Void = { _ in }
    ) throws -> NetFUNNELProvider {
        try NetFUNNELProvider(configuration: configuration(tweak), environment: ProviderEnvironment(transport: transport, clock: clock))
    }

    /// Sends one raw `/ts.wseq` query (no client logic) and parses the reply.
    func raw(_ query: String, host: String? = nil) async throws -> NetFUNNELReply {
        var headers: HTTPHeaderList = []
        if let host { headers.add("Host", host) }
        let response = try await AsyncHTTPTransport.shared.send(
            WaitingRoom.HTTPRequest(
                url: server.baseURL + "/ts.wseq?" + query, headers: headers, timeout: .seconds(30)))
        return try NetFUNNELReply.parse(response.body)
    }

    func entry(_ segment: String = "seg", control: ControlMode = .basic, user: String? = nil) -> Entry {
        Entry(room: RoomKey(scope: Self.project, room: segment), control: control, userId: user)
    }

    /// Every key taken was returned and nobody is left waiting.
    func expectNoLeaks(sourceLocation: SourceLocation = #_sourceLocation) {
        let counters = emulator.counters()
        #expect(counters.keysNeverReturned == 0, "keys never returned: \(counters)", sourceLocation: sourceLocation)
        #expect(counters.keysHeld == 0, sourceLocation: sourceLocation)
        #expect(counters.waiting == 0, "users left waiting: \(counters)", sourceLocation: sourceLocation)
    }

    /// Polls (real time, for synchronisation only) until `condition` holds or 10 s pass.
    func eventually(
        _ what: String, isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        for _ in 0..<2000 {
            if condition() { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
    }
}

/// A session ended otherwise than its test needs (the test stops there, failed).
struct UnexpectedOutcome: Error, CustomStringConvertible {
    let description: String
}

extension WaitingSession {
    /// Waits for the outcome and returns the pass; throws naming `who` when it did not pass.
    @discardableResult
    func requirePassed(_ who: String) async throws -> Pass {
        let outcome = await outcome()
        guard case .passed(let pass, _) = outcome else { throw UnexpectedOutcome(description: "\(who): \(outcome)") }
        return pass
    }

    /// Waits for the outcome and returns the error; throws naming `who` when it did not fail.
    func requireFailed(_ who: String) async throws -> WaitingRoomError {
        let outcome = await outcome()
        guard case .failed(let error) = outcome else { throw UnexpectedOutcome(description: "\(who): \(outcome)") }
        return error
    }
}

extension Harness {
    /// `a` enqueued and passed (holding the segment's only slot), then `b` enqueued behind it.
    func aPassedThenB(_ provider: NetFUNNELProvider) async throws -> (a: WaitingSession, b: WaitingSession) {
        let a = try provider.enqueue(entry(user: "a"))
        try await a.requirePassed("a")
        return (a, try provider.enqueue(entry(user: "b")))
    }
}

/// Collects a session's events.
final class EventLog: Sendable {
    private let storage = Mutex<[WaitingRoomEvent]>([])
    init(_ session: WaitingSession) {
        session.bind(nil) { [weak self] event in self?.storage.withLock { $0.append(event) } }
    }
    var events: [WaitingRoomEvent] { storage.withLock { $0 } }
    var names: [EventName] { events.map(\.name) }
    var progress: [QueueProgress] {
        events.compactMap { if case .progress(let p, _) = $0 { return p } else { return nil } }
    }
}

/// A thread-safe list of strings.
final class Recorder: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ item: String) { storage.withLock { $0.append(item) } }
    var items: [String] { storage.withLock { $0 } }
}

/// Sends every request for a host under `.nf.test` to the emulator on loopback, keeping the
/// host name in the `Host` header (and the scheme's default port): DNS names for node-affinity
/// tests without DNS.
struct NodeResolvingTransport: HTTPTransport {
    let port: Int
    let sentHosts = Recorder()

    func send(_ request: WaitingRoom.HTTPRequest) async throws -> WaitingRoom.HTTPResponse {
        var request = request
        if var components = URLComponents(string: request.url), let host = components.host, host.hasSuffix(".nf.test") {
            sentHosts.append(host)
            request.headers.set("Host", host)
            components.scheme = "http"
            components.host = "127.0.0.1"
            components.port = port
            request.url = components.url?.absoluteString ?? request.url
        }
        return try await AsyncHTTPTransport.shared.send(request)
    }
}
