import Foundation

/// Remembers passes per vendor and room until they expire, so a user who passed is not queued
/// again (the shape of hummingbird's `PersistDriver`: set / get / remove with expiry).
///
/// Requirements: ``pass(vendor:room:)`` never returns an expired pass (expiry is judged by the
/// store's injected clock); ``save(_:)`` replaces the pass for the same vendor and room.
public protocol PassStore: Sendable {
    /// The unexpired pass for `vendor` and `room`, if any.
    func pass(vendor: String, room: RoomKey) async throws -> Pass?
    /// Stores `pass`, replacing any earlier pass for its vendor and room.
    func save(_ pass: Pass) async throws
    /// Forgets the pass for `vendor` and `room`.
    func remove(vendor: String, room: RoomKey) async throws
    /// Every unexpired pass.
    func all() async throws -> [Pass]
}

/// The key a store files a pass under.
struct PassStoreKey: Hashable, Sendable {
    var vendor: String
    var room: RoomKey
    init(_ vendor: String, _ room: RoomKey) {
        self.vendor = vendor
        self.room = room
    }
}

/// A ``StateStore`` in memory, for one process: passes, held keys and session leases live as
/// long as the process (the default store).
package actor MemoryPassStore: StateStore {
    private var passes: [PassStoreKey: Pass] = [:]
    private var held: [String: HeldKey] = [:]
    private var sessions: [SessionLeaseID: SessionLeaseRecord] = [:]
    private let clock: any WaitingRoomClock

    /// Creates an empty store judging expiry by `clock`.
    package init(clock: any WaitingRoomClock = SystemClock()) { self.clock = clock }

    /// One process: nothing is shared.
    package nonisolated var isShared: Bool { false }
    /// Gone with the process.
    package nonisolated var isDurable: Bool { false }

    package func pass(vendor: String, room: RoomKey) -> Pass? {
        let key = PassStoreKey(vendor, room)
        guard let pass = passes[key] else { return nil }
        if pass.isExpired(at: clock.now()) {
            passes[key] = nil
            return nil
        }
        return pass
    }

    package func save(_ pass: Pass) { passes[PassStoreKey(pass.vendor, pass.room)] = pass }

    package func remove(vendor: String, room: RoomKey) { passes[PassStoreKey(vendor, room)] = nil }

    package func all() -> [Pass] {
        let now = clock.now()
        return passes.values.filter { !$0.isExpired(at: now) }.sorted(by: Pass.storeOrder)
    }

    package func recordHeldKey(_ key: HeldKey) { held[key.id] = key }

    package func removeHeldKey(id: String) { held[id] = nil }

    package func heldKeys() -> [HeldKey] { held.values.sorted(by: HeldKey.journalOrder) }

    package func claimHeldKeys(vendor: String?, owner: String, now: Date, leaseUntil: Date, limit: Int) -> [HeldKey] {
        let claimed = HeldKey.claim(from: &held, vendor: vendor, owner: owner, now: now, leaseUntil: leaseUntil, limit: limit)
        return claimed
    }

    package func renewLeases(owner: String, until: Date) {
        for (id, key) in held where key.owner == owner { held[id]?.leaseUntil = until }
        for (id, record) in sessions where record.owner == owner && record.pass == nil { sessions[id]?.leaseUntil = until }
    }

    package func acquireSession(_ id: SessionLeaseID, owner: String, now: Date, until: Date) -> SessionClaim {
        let (claim, record) = SessionLeaseRecord.claim(sessions[id], id: id, owner: owner, now: now, until: until)
        sessions[id] = record
        return claim
    }

    package func finishSession(_ id: SessionLeaseID, owner: String, pass: Pass?, keepUntil: Date) {
        guard let record = sessions[id], record.owner == owner else { return }
        if let pass {
            sessions[id] = SessionLeaseRecord(id: id, owner: owner, leaseUntil: pass.expiresAt ?? keepUntil, pass: pass)
        } else {
            sessions[id] = nil
        }
    }
}

extension Pass {
    /// A stable order for listings and files: by issue time, then vendor, scope and room.
    static func storeOrder(_ a: Pass, _ b: Pass) -> Bool {
        (a.issuedAt, a.vendor, a.room.scope, a.room.room) < (b.issuedAt, b.vendor, b.room.scope, b.room.room)
    }
}
