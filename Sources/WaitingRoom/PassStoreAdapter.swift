import Foundation

/// A plain ``PassStore`` (an app's own) as a ``StateStore``: passes go to it, the journal and
/// session leases stay in memory (not durable, not shared).
actor PassStoreAdapter: StateStore {
    private let passes: any PassStore
    private let rest: MemoryPassStore

    init(passes: any PassStore, clock: any WaitingRoomClock) {
        self.passes = passes
        self.rest = MemoryPassStore(clock: clock)
    }

    nonisolated var isShared: Bool { false }
    nonisolated var isDurable: Bool { false }

    func pass(vendor: String, room: RoomKey) async throws -> Pass? { try await passes.pass(vendor: vendor, room: room) }
    func save(_ pass: Pass) async throws { try await passes.save(pass) }
    func remove(vendor: String, room: RoomKey) async throws { try await passes.remove(vendor: vendor, room: room) }
    func all() async throws -> [Pass] { try await passes.all() }

    func recordHeldKey(_ key: HeldKey) async { await rest.recordHeldKey(key) }
    func removeHeldKey(id: String) async { await rest.removeHeldKey(id: id) }
    func heldKeys() async -> [HeldKey] { await rest.heldKeys() }
    func claimHeldKeys(vendor: String?, owner: String, now: Date, leaseUntil: Date, limit: Int) async -> [HeldKey] {
        await rest.claimHeldKeys(vendor: vendor, owner: owner, now: now, leaseUntil: leaseUntil, limit: limit)
    }
    func renewLeases(owner: String, until: Date) async { await rest.renewLeases(owner: owner, until: until) }
    func acquireSession(_ id: SessionLeaseID, owner: String, now: Date, until: Date) async -> SessionClaim {
        await rest.acquireSession(id, owner: owner, now: now, until: until)
    }
    func finishSession(_ id: SessionLeaseID, owner: String, pass: Pass?, keepUntil: Date) async {
        await rest.finishSession(id, owner: owner, pass: pass, keepUntil: keepUntil)
    }
}
