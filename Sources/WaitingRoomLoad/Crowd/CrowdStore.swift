import Foundation
import WaitingRoom

/// The state store of a crowd's virtual users (`waitingroom load`, the crowd of
/// `waitingroom demo`): every held key and session lease goes to `inner` (a `--state` store
/// journals them, so a crash loses no key), but no pass is kept.
///
/// A provider files passes per vendor and room (one app, one visitor), but a crowd's users are
/// different visitors sharing one provider: with a shared pass store, a user who starts after
/// another passed would take that pass instead of queueing. Seen: `load --state … --arrivals
/// uniform:10` with 20 Queue-it users, 17 "passed" in under a millisecond and 3 enqueued; the
/// demo's own user passing the Cloudflare room on a crowd user's pass.
package struct CrowdStore: StateStore {
    /// Where held keys and session leases go.
    package let inner: any StateStore

    /// A crowd's store over `inner` (a memory store, or one a `--state` option opened).
    package init(inner: any StateStore) { self.inner = inner }

    package var isShared: Bool { inner.isShared }
    package var isDurable: Bool { inner.isDurable }

    // No pass is kept: each virtual user asks the vendor.
    package func pass(vendor: String, room: RoomKey) async throws -> Pass? { nil }
    package func save(_ pass: Pass) async throws {}
    package func remove(vendor: String, room: RoomKey) async throws {}
    package func all() async throws -> [Pass] { [] }

    package func recordHeldKey(_ key: HeldKey) async throws { try await inner.recordHeldKey(key) }
    package func removeHeldKey(id: String) async throws { try await inner.removeHeldKey(id: id) }
    package func heldKeys() async throws -> [HeldKey] { try await inner.heldKeys() }
    package func claimHeldKeys(vendor: String?, owner: String, now: Date, leaseUntil: Date, limit: Int) async throws -> [HeldKey] {
        try await inner.claimHeldKeys(vendor: vendor, owner: owner, now: now, leaseUntil: leaseUntil, limit: limit)
    }
    package func renewLeases(owner: String, until: Date) async throws { try await inner.renewLeases(owner: owner, until: until) }
    package func acquireSession(_ id: SessionLeaseID, owner: String, now: Date, until: Date) async throws -> SessionClaim {
        try await inner.acquireSession(id, owner: owner, now: now, until: until)
    }
    package func finishSession(_ id: SessionLeaseID, owner: String, pass: Pass?, keepUntil: Date) async throws {
        try await inner.finishSession(id, owner: owner, pass: pass, keepUntil: keepUntil)
    }
    /// Nothing: whoever opened `inner` closes it.
    package func close() async throws {}
}
