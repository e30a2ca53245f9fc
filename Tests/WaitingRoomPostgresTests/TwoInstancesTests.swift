import Foundation
import NetFUNNEL
import NetFUNNELEmulator
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomPostgres

/// Two (and three) provider instances, each with its own pool, on one PostgreSQL database and
/// one NetFUNNEL emulator (issue 27 §4): one enqueue and one pass per user, and the keys of an
/// instance that stopped taken over by the others without a double return.
@Suite("Instances sharing PostgreSQL")
struct TwoInstancesTests {
    static let room = RoomKey(scope: "service_1", room: "seg")

    static func emulator(limit: Int) async throws -> (NetFUNNELEmulator, NetFUNNELRunningServer) {
        var segment = NetFUNNELEmulatorConfiguration.Segment(control: .basic, limit: limit)
        segment.ttlMin = 1
        segment.ttlMax = 1
        segment.timeoutSeconds = 120
        let emulator = NetFUNNELEmulator(
            configuration: NetFUNNELEmulatorConfiguration(projects: ["service_1": .init(segments: ["seg": segment])]), clock: SystemClock())
        return (emulator, try await emulator.start(host: "127.0.0.1", port: 0))
    }

    static func instance(url: String, server: NetFUNNELRunningServer, lease: Duration = .seconds(3), recoverOnStart: Bool = false)
        async throws
        -> (NetFUNNELProvider, PostgresStateStore)
    {
        let store = try await PostgresStateStore.connect(url: url, maximumConnections: 4)
        // The longest request timeout the client allows: these tests count the server's requests
        // exactly, and a 5004 that timed out under a loaded full run was sent again (7 of 6).
        let provider = try NetFUNNELProvider(
            configuration: NetFUNNELConfiguration(clientId: "emulator-0000", serverUrl: server.baseURL, networkTimeout: 10_000),
            environment: ProviderEnvironment(
                transport: AsyncHTTPTransport.shared, passStore: store, leaseDuration: lease, recoversHeldKeysOnStart: recoverOnStart))
        return (provider, store)
    }

    @Test func aUserIsEnqueuedOnceAndPassesOnceAcrossInstances() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let (emulator, server) = try await Self.emulator(limit: 1)
        // A lease longer than a loaded machine's stalls: one of 3 s ran out under a full parallel
        // run, and the follower, taking it over as it should, enqueued alice a second time.
        let (one, storeOne) = try await Self.instance(url: url, server: server, lease: .seconds(20))
        let (two, storeTwo) = try await Self.instance(url: url, server: server, lease: .seconds(20))
        // Someone holds the only slot, so alice has to wait in line.
        let holder = try one.enqueue(Entry(room: Self.room, userId: "holder"))
        guard case .passed = await holder.outcome() else {
            Issue.record("holder did not pass")
            return
        }
        let first = try one.enqueue(Entry(room: Self.room, userId: "alice"))
        let second = try two.enqueue(Entry(room: Self.room, userId: "alice"))
        for _ in 0..<500 where emulator.counters().waiting < 1 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(600))  // the follower polls the lease meanwhile
        #expect(emulator.counters().requests["5101"] == 2, "alice sent one 5101, not one per instance: \(emulator.counters().requests)")
        _ = try await holder.complete()
        let outcomes = [await first.outcome(), await second.outcome()]
        let passes = outcomes.compactMap(\.pass)
        #expect(passes.count == 2, "\(outcomes)")
        #expect(Set(passes.map(\.credential)).count == 1, "one pass for alice, seen by both instances")
        #expect(outcomes.contains { $0.status.message.contains("another instance") })
        #expect(emulator.counters().keysIssued == 2)
        // The instance that waited gives the key back; the journal is empty again.
        let leader = outcomes[0].status.message.contains("another instance") ? second : first
        #expect(try await leader.complete().code == 200)
        for _ in 0..<200 where try await !storeOne.heldKeys().isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try await storeOne.heldKeys().isEmpty)
        #expect(emulator.counters().keysNeverReturned == 0)
        try await storeOne.close()
        try await storeTwo.close()
        await server.shutdown()
    }

    @Test func theKeysOfAStoppedInstanceAreTakenOverOnceEach() async throws {
        let url = try await PostgresTestCluster.shared.makeDatabase()
        let (emulator, server) = try await Self.emulator(limit: 10)
        do {
            let (stopping, store) = try await Self.instance(url: url, server: server, lease: .seconds(1))
            for user in 0..<6 {
                guard case .passed = await (try stopping.enqueue(Entry(room: Self.room, userId: "u\(user)"))).outcome() else {
                    Issue.record("u\(user) did not pass")
                    return
                }
            }
            #expect(try await store.heldKeys().count == 6)
            // The instance stops without returning its keys: its pool closes, its heartbeat fails.
            try await store.close()
        }
        #expect(emulator.counters().keysHeld == 6)
        try await Task.sleep(for: .milliseconds(1200))  // its 1 s lease lapses
        let (two, storeTwo) = try await Self.instance(url: url, server: server)
        let (three, storeThree) = try await Self.instance(url: url, server: server)
        async let a = two.recoverHeldKeys(bound: .seconds(10))
        async let b = three.recoverHeldKeys(bound: .seconds(10))
        let reports = await [a, b]
        #expect(reports.map(\.claimed).reduce(0, +) == 6, "every key claimed once: \(reports.map(\.claimed))")
        #expect(reports.map { $0.count(.returnedLate) }.reduce(0, +) == 6)
        let counters = emulator.counters()
        #expect(counters.requests["5004"] == 6, "no double return: \(counters.requests)")
        #expect(counters.keysReturned == 6)
        #expect(counters.keysNeverReturned == 0)
        #expect(try await storeTwo.heldKeys().isEmpty)
        try await storeTwo.close()
        try await storeThree.close()
        await server.shutdown()
    }
}
