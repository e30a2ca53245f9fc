import WaitingRoom

/// The pass store of `waitingroom load`'s virtual users when no `--state` is given: it remembers
/// no pass. A provider files passes per vendor and room (one app, one visitor), but the load's
/// users are different visitors sharing one provider: with a shared store, a user who starts
/// after another passed would take that pass instead of queueing (seen as Queue-it users
/// "passing" in a millisecond under `--arrivals uniform:…`). Held keys and session leases stay
/// in memory, as with the default store.
struct LoadVisitorPasses: PassStore {
    func pass(vendor: String, room: RoomKey) async throws -> Pass? { nil }
    func save(_ pass: Pass) async throws {}
    func remove(vendor: String, room: RoomKey) async throws {}
    func all() async throws -> [Pass] { [] }
}
