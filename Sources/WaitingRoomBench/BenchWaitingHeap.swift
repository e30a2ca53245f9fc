import CHeapInUse
import Foundation
import Synchronization
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomHTTP
import WaitingRoomLoad
import WaitingRoomSQLite
import WaitingRoomVendors

/// `waitingroom bench state`'s steady-state memory figure: what a user *waiting* in line costs
/// when the state is durable, against the memory store, measured in this process.
///
/// A NetFUNNEL room on the embedded emulator admits one user, who keeps the pass; every other
/// user waits in line, each holding a waiting key (journaled with a durable store), and polls
/// every 30 s, so no request is out when the heap is read. Once all
/// `users` wait (and, with SQLite, every key is in the journal), the C allocator's bytes in use
/// are read (``wr_heap_in_use()``, glibc's `mallinfo2`), and the difference with the reading
/// taken before the crowd arrived, divided by the users, is the cost of one waiting user.
/// After a warm-up crowd, the same crowd runs with the memory store, with an SQLite file, and with
/// the memory store again: the SQLite figure less the mean of the two memory figures is what
/// durability adds. Unlike a peak resident set this does not count what a
/// burst of arrivals touched once, nor pages the allocator keeps after it.
enum BenchWaitingHeap {
    static let roomDocument = """
        { "netfunnel": { "projects": { "service_1": { "segments": {
          "line": { "control": "basic", "limit": 1, "ttlMin": 30, "ttlMax": 30, "timeoutSec": 300, "retentionSec": 300 } } } } } }
        """

    /// Bytes per waiting user with the memory store and with SQLite, or why there is no figure.
    static func run(users: Int, directory: URL) async -> [BenchFigure] {
        guard wr_heap_in_use() > 0 else {
            return [BenchFigure(name: "state: heap per waiting user skipped (this C library has no mallinfo2)", value: .nan, unit: "")]
        }
        let memory: Double
        let sqlite: Double
        do {
            // A first crowd warms up what the process allocates once (connection pools, the
            // emulator's tables, lazily made globals); then the memory store before and after
            // the SQLite run, so what drifts with time is not counted as durability's cost.
            _ = try await perWaitingUser(users: min(users, 1000), store: nil)
            let first = try await perWaitingUser(users: users, store: nil)
            let path = directory.appendingPathComponent("waiting-heap.sqlite").path
            let store = try await SQLiteStateStore.open(path: path)
            sqlite = try await perWaitingUser(users: users, store: store)
            try? await store.close()
            let second = try await perWaitingUser(users: users, store: nil)
            memory = (first + second) / 2
        } catch {
            return [BenchFigure(name: "state: heap per waiting user failed: \(error)", value: .nan, unit: "")]
        }
        return [
            BenchFigure(
                name: "state: heap per waiting user, memory store (\(users) waiting)", value: memory, unit: "bytes",
                note: "client, emulator and crowd in one process, steady state"),
            BenchFigure(
                name: "state: heap per waiting user, SQLite journal over the memory store", value: sqlite - memory, unit: "bytes",
                baseline: .init(name: "512 B", value: 512, unit: "bytes"), goal: .value(atMost: 512),
                note: "SQLite \(Int(sqlite.rounded())) B − memory \(Int(memory.rounded())) B per waiting user")
        ]
    }

    struct Stalled: Error, CustomStringConvertible {
        var description: String
    }

    /// Lets `users` wait in line with `store` (nil: the memory store) and returns the heap bytes
    /// per waiting user once they all wait.
    static func perWaitingUser(users: Int, store: (any StateStore)?) async throws -> Double {
        let suite = try EmulatorSuite(document: JSONValue.parse(roomDocument))
        let server = try await suite.start()
        defer { Task { await server.stop() } }
        let environment =
            store.map { ProviderEnvironment(transport: AsyncHTTPTransport.shared, passStore: $0, recoversHeldKeysOnStart: false) }
            ?? ProviderEnvironment(transport: AsyncHTTPTransport.shared, passStore: CrowdStore(inner: MemoryPassStore()))
        guard let configuration = EmulatorSuite.clientDefaults(for: server)["netfunnel"] else {
            throw Stalled(description: "no NetFUNNEL defaults for the embedded emulator")
        }
        let provider = try VendorRegistry.standard.makeProvider(vendor: "netfunnel", configuration: configuration, environment: environment)
        let room = RoomKey(scope: "service_1", room: "line")
        let waiting = Atomic<Int>(0)

        try await settle()
        let before = wr_heap_in_use()
        var sessions: [WaitingSession] = []
        sessions.reserveCapacity(users)
        for index in 0..<users {
            let session = try provider.enqueue(Entry(room: room, control: .basic, userId: "waiting-\(index)"))
            let counted = Atomic<Bool>(false)
            session.bind(.progress) { _ in
                if !counted.exchange(true, ordering: .relaxed) { waiting.add(1, ordering: .relaxed) }
            }
            sessions.append(session)
            // arrivals spread a little, as a line forms (1,000 a second)
            if index % 50 == 49 { try await Task.sleep(for: .milliseconds(50)) }
        }
        // Everyone but the one admitted user waits; with a durable store each waiting key is journaled.
        let deadline = ContinuousClock.now + .seconds(120)
        while waiting.load(ordering: .relaxed) < users - 1
            || (environment.keyJournal.isActive && environment.keyJournal.heldCount < users)
        {
            guard ContinuousClock.now < deadline else {
                throw Stalled(
                    description:
                        "\(waiting.load(ordering: .relaxed)) of \(users - 1) waiting, \(environment.keyJournal.heldCount) journaled")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        try await settle()
        let during = wr_heap_in_use()
        for session in sessions { session.cancel() }
        for session in sessions { _ = await session.outcome() }
        return Double(Int(during) - Int(before)) / Double(users)
    }

    /// A pause for in-flight work (polls, background returns) to finish.
    private static func settle() async throws {
        try await Task.sleep(for: .seconds(2))
    }
}
