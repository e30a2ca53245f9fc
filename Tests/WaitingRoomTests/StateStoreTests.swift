import Foundation
import Testing
import WaitingRoom
import WaitingRoomConformance
import WaitingRoomTesting

/// The store conformance suite on the stores of the core (the SQLite and PostgreSQL stores run
/// it in their own test targets).
@Suite("StateStore conformance")
struct StateStoreTests {
    @Test func memoryStoreConforms() async throws {
        let failures = try await StoreConformance(.init(name: "memory", singleHandle: true, open: { MemoryPassStore(clock: $0) })).run()
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func fileStoreConforms() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wr-statestore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("state.json").path
        let subject = StoreConformance.Subject(
            name: "file", singleHandle: true,
            open: { FilePassStore(path: path, clock: $0) },
            damage: {
                // Cut the file in the middle of a line: the lines before it stay readable.
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                try data.prefix(data.count * 2 / 3).write(to: URL(fileURLWithPath: path))
            },
            inspectDamage: { store in
                let file = try #require(store as? FilePassStore)
                let aside = try FileManager.default.contentsOfDirectory(atPath: dir.path).contains { $0.hasPrefix("state.json.corrupt-") }
                return (await file.problems, aside)
            })
        let failures = try await StoreConformance(subject).run()
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aPlainPassStoreKeepsPassesThereAndTheJournalInMemory() async throws {
        let clock = VirtualClock()
        let passes = MemoryPassStore(clock: clock)
        let environment = ProviderEnvironment(transport: NoNetworkTransport(), clock: clock, passStore: PassesOnly(inner: passes))
        #expect(environment.store.isDurable == false)
        #expect(environment.keyJournal.isActive == false)
        try await environment.passStore.save(
            Pass(vendor: "v", room: RoomKey(scope: "s", room: "r"), credential: "c", kind: .token, issuedAt: clock.now()))
        #expect(await passes.all().count == 1)
    }

    @Test func theJournalIsWrittenOnlyToADurableStore() async throws {
        let clock = VirtualClock()
        let memory = ProviderEnvironment(transport: NoNetworkTransport(), clock: clock)
        await memory.keyJournal.hold(vendor: "v", room: RoomKey(scope: "s", room: "r"), key: "k")
        #expect(try await memory.store.heldKeys().isEmpty)
        #expect(memory.keyJournal.heldCount == 0)

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wr-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = FilePassStore(path: dir.appendingPathComponent("state.json").path, clock: clock)
        let durable = ProviderEnvironment(transport: NoNetworkTransport(), clock: clock, passStore: file, leaseDuration: .seconds(3))
        await durable.keyJournal.hold(vendor: "v", room: RoomKey(scope: "s", room: "r"), key: "k", details: ["ip": "a"])
        let held = try await file.heldKeys()
        #expect(held.map(\.id) == ["v:k"])
        #expect(held.first?.owner == durable.keyJournal.owner)
        #expect(held.first?.leaseUntil == clock.now().addingTimeInterval(3))
        // The heartbeat renews the lease every third of it while the key is held.
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(1))
        await eventually { (try? await file.heldKeys().first?.leaseUntil) == clock.now().addingTimeInterval(3) }
        await durable.keyJournal.released(vendor: "v", key: "k")
        #expect(try await file.heldKeys().isEmpty)
        #expect(durable.keyJournal.heldCount == 0)
    }

    @Test func recoveryClaimsOnlyLapsedKeysAndReportsEachEnding() async throws {
        let clock = VirtualClock()
        let store = MemoryPassStore(clock: clock)
        let room = RoomKey(scope: "s", room: "r")
        let now = clock.now()
        for (key, lease, expiry) in [
            ("live", 60.0, 100.0), ("back", -1.0, 100.0), ("gone", -1.0, 100.0), ("late", -1.0, -5.0), ("stuck", -1.0, 100.0)
        ] {
            await store.recordHeldKey(
                HeldKey(
                    vendor: "v", room: room, key: key, takenAt: now, expiresAt: now.addingTimeInterval(expiry),
                    owner: "dead", leaseUntil: now.addingTimeInterval(lease)))
        }
        let journal = KeyJournal(store: store, clock: clock, lease: .seconds(5), owner: "me")
        let report = await journal.recover(vendor: "v", bound: .seconds(2)) { held in
            switch held.key {
            case "back": return .returned(VendorStatus(vendor: "v", code: 200, message: "Success"))
            case "gone": return .gone(VendorStatus(vendor: "v", code: 503, message: "no key"))
            default: return .failed("unreachable")
            }
        }
        #expect(report.claimed == 4)
        #expect(report.heldByLiveOwners == 1)
        #expect(report.count(.returnedLate) == 1)
        #expect(report.count(.alreadyGone) == 1)
        #expect(report.count(.gaveUp) == 2)
        #expect(report.lines.first { $0.id == "v:late" }?.message.contains("timed the key out") == true)
        #expect(report.events.count == 1)
        // What could not be returned stays in the journal (now this owner's), the rest is gone.
        #expect(await store.heldKeys().map(\.id).sorted() == ["v:live", "v:stuck"])
    }

    private func eventually(_ condition: @Sendable () async -> Bool) async {
        for _ in 0..<200 where !(await condition()) { try? await Task.sleep(for: .milliseconds(10)) }
        #expect(await condition())
    }
}

/// A plain `PassStore` that is not a `StateStore` (an app's own).
private struct PassesOnly: PassStore {
    let inner: MemoryPassStore
    func pass(vendor: String, room: RoomKey) async throws -> Pass? { await inner.pass(vendor: vendor, room: room) }
    func save(_ pass: Pass) async throws { await inner.save(pass) }
    func remove(vendor: String, room: RoomKey) async throws { await inner.remove(vendor: vendor, room: room) }
    func all() async throws -> [Pass] { await inner.all() }
}
