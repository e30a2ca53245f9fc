import WaitingRoom

/// The pass store of a crowd's virtual users (`waitingroom load` without `--state`, the crowd of
/// `waitingroom demo`): it remembers no pass. A provider files passes per vendor and room (one
/// app, one visitor), but a crowd's users are different visitors sharing one provider: with a
/// shared store, a user who starts after another passed would take that pass instead of queueing
/// (seen as Queue-it users "passing" in a millisecond under `--arrivals uniform:…`, and as the
/// demo's own user passing a Cloudflare room on a crowd user's pass). Held keys and session leases
/// stay in memory, as with the default store.
struct CrowdPasses: PassStore {
    func pass(vendor: String, room: RoomKey) async throws -> Pass? { nil }
    func save(_ pass: Pass) async throws {}
    func remove(vendor: String, room: RoomKey) async throws {}
    func all() async throws -> [Pass] { [] }
}
