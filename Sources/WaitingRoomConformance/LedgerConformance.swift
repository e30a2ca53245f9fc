import WaitingRoom

/// The promises of ``SingleUseLedger`` that every durable ledger (SQLite, PostgreSQL) keeps,
/// checked the same way for each: replays refused until expiry, racing handles giving each id to
/// one use, a closed handle refusing at once. Each check goes to `check` (a test passes one that
/// records an issue when the condition is false).
package enum LedgerConformance {
    /// Receives a condition and what it means (a test records an issue when it is false).
    package typealias Check = (_ condition: Bool, _ message: String) -> Void

    /// A moment in seconds since 1970 (the ledger's unit).
    package static let t0: Int64 = 1_700_000_000

    /// A second use is a refusal until the id expires; other ids, whatever they hold, are apart.
    /// `odd` is an id made to trip a careless query; `reopen` opens another handle on the same
    /// storage after `store` is closed, which must still refuse the ids.
    package static func secondUseIsARefusalUntilExpiry<Store: SingleUseLedger>(
        _ store: Store, odd: String, close: (Store) async throws -> Void, reopen: () async throws -> Store, check: Check
    ) async throws {
        let t0 = Self.t0
        check(try await store.wasUsed("a", now: t0) == false, "nothing used yet")
        check(try await store.wasUsed("a", now: t0) == false, "a look-up records nothing")
        check(try await store.use("a", expiresAt: t0 + 100, now: t0), "a first use")
        check(try await store.use("a", expiresAt: t0 + 200, now: t0 + 50) == false, "a replay")
        check(try await store.wasUsed("a", now: t0 + 50), "used")
        // Expiring at `now` still counts as used; one second later it does not.
        check(try await store.use("a", expiresAt: t0 + 200, now: t0 + 100) == false, "expiring at now is still used")
        check(try await store.wasUsed("a", now: t0 + 100), "used at its expiry")
        check(try await store.wasUsed("a", now: t0 + 101) == false, "expired one second later")
        // An expired id may be used again, with its new expiry.
        check(try await store.use("a", expiresAt: t0 + 300, now: t0 + 101), "an expired id used again")
        check(try await store.wasUsed("a", now: t0 + 250), "used with its new expiry")
        check(try await store.use("a", expiresAt: t0 + 400, now: t0 + 250) == false, "a replay of the new use")
        // Other ids are apart, whatever they hold.
        check(try await store.use(odd, expiresAt: t0 + 100, now: t0), "an odd id")
        check(try await store.use(odd, expiresAt: t0 + 100, now: t0) == false, "an odd id's replay")
        check(try await store.use("b", expiresAt: t0 + 100, now: t0), "another id")
        try await close(store)

        // The storage outlives the handle: a new one still refuses them.
        // (odd first: a use may prune, one in 64 at random, the rows expired by its `now`, odd's among them)
        let again = try await reopen()
        check(try await again.wasUsed(odd, now: t0 + 10), "the odd id still used after reopening")
        check(try await again.use("a", expiresAt: t0 + 400, now: t0 + 260) == false, "a replay after reopening")
        try await close(again)
    }

    /// Two handles on one storage racing: 200 uses of 50 ids at once, each id's four uses
    /// alternating between `a` and `b`; exactly one use per id wins, and an id one handle used is
    /// refused by the other, and seen by it. Both are closed with `close` afterwards.
    package static func racingHandlesGiveEachIdToOneUseOnly<Store: SingleUseLedger>(
        _ a: Store, _ b: Store, close: (Store) async throws -> Void, check: Check
    ) async throws {
        let t0 = Self.t0
        let ids = (0..<50).map { "race-\($0)" }
        let results = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            for i in 0..<200 {
                let id = ids[i % 50]
                let store = (i / 50) % 2 == 0 ? a : b
                group.addTask { (id, try await store.use(id, expiresAt: t0 + 60, now: t0)) }
            }
            var results: [(String, Bool)] = []
            for try await result in group { results.append(result) }
            return results
        }
        check(results.count == 200, "200 results: \(results.count)")
        check(results.filter(\.1).count == 50, "exactly one use per id wins")
        let winners = Dictionary(grouping: results.filter(\.1), by: \.0).mapValues(\.count)
        check(Set(winners.keys) == Set(ids) && winners.values.allSatisfy { $0 == 1 }, "\(winners)")

        check(try await a.use("x", expiresAt: t0 + 60, now: t0), "x used by a")
        check(try await b.use("x", expiresAt: t0 + 60, now: t0) == false, "x refused by b")
        check(try await b.wasUsed("x", now: t0 + 60), "x seen by b")
        check(try await b.use("y", expiresAt: t0 + 60, now: t0), "y used by b")
        check(try await a.use("y", expiresAt: t0 + 60, now: t0 + 1) == false, "y refused by a")
        try await close(a)
        try await close(b)
    }

    /// A closed handle throws `.invalidUse` at once, for a use and a look-up alike (`close` closes
    /// `store` after one use).
    package static func closedHandleThrowsAtOnce<Store: SingleUseLedger>(
        _ store: Store, close: (Store) async throws -> Void, check: Check
    ) async throws {
        check(try await store.use("a", expiresAt: t0 + 60, now: t0), "a use before closing")
        try await close(store)
        let timer = ContinuousClock()
        let started = timer.now
        let error = await waitingRoomError { _ = try await store.use("b", expiresAt: t0 + 60, now: t0) }
        check(error?.kind == .invalidUse, "\(String(describing: error))")
        let lookUp = await waitingRoomError { _ = try await store.wasUsed("a", now: t0) }
        check(lookUp?.kind == .invalidUse, "\(String(describing: lookUp))")
        check(timer.now - started < .seconds(5), "at once: \(timer.now - started)")
    }

    /// The ``WaitingRoomError`` `body` throws, or nil when it throws nothing or another error.
    package static func waitingRoomError(_ body: () async throws -> Void) async -> WaitingRoomError? {
        do {
            try await body()
            return nil
        } catch let error as WaitingRoomError {
            return error
        } catch {
            return nil
        }
    }
}
