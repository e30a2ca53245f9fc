import Foundation
import WaitingRoom
import WaitingRoomTesting

/// The promises of ``StateStore``, checked the same way for every store (memory, file, SQLite,
/// PostgreSQL): passes and expiry, the held-key journal, lease takeover without double claims,
/// session leases, concurrent writers, durability across reopening, and a damaged store.
package struct StoreConformance: Sendable {
    /// How to reach the store under test.
    package struct Subject: Sendable {
        /// A name for messages.
        package var name: String
        /// True for a store of one process and one handle (memory, JSON file): the concurrent
        /// checks share the first handle instead of opening more.
        package var singleHandle: Bool
        /// Opens a handle on the store's storage; every call opens another handle on the same
        /// storage (a second connection, process or instance).
        package var open: @Sendable (VirtualClock) async throws -> any StateStore
        /// Damages the storage (closed handles only), or nil when the store has no damage case.
        package var damage: (@Sendable () async throws -> Void)?
        /// After damage and a reopen: the problems the store reported and whether the damaged
        /// storage was moved aside.
        package var inspectDamage: (@Sendable (any StateStore) async throws -> (problems: [String], movedAside: Bool))?

        /// Creates a subject.
        package init(
            name: String, singleHandle: Bool = false, open: @escaping @Sendable (VirtualClock) async throws -> any StateStore,
            damage: (@Sendable () async throws -> Void)? = nil,
            inspectDamage: (@Sendable (any StateStore) async throws -> (problems: [String], movedAside: Bool))? = nil
        ) {
            self.name = name
            self.singleHandle = singleHandle
            self.open = open
            self.damage = damage
            self.inspectDamage = inspectDamage
        }
    }

    /// The subject.
    package let subject: Subject

    /// Creates the suite for `subject`.
    package init(_ subject: Subject) { self.subject = subject }

    /// Runs every promise; returns what broke (empty: the store conforms).
    package func run() async throws -> [String] {
        var failures: [String] = []
        func check(_ ok: Bool, _ message: @autoclosure () -> String) {
            if !ok { failures.append("[\(subject.name)] \(message())") }
        }
        let clock = VirtualClock()
        let store = try await subject.open(clock)
        let room = { (name: String) in RoomKey(scope: "conformance", room: name) }

        // Passes: one per vendor and room, never expired, listed, removed.
        let pass = { (name: String, credential: String, seconds: Double?) in
            Pass(
                vendor: "v", room: room(name), credential: credential, kind: .token, issuedAt: clock.now(),
                expiresAt: seconds.map { clock.now().addingTimeInterval($0) }, details: ["k": "v \(name)"])
        }
        try await store.save(pass("a", "first", 60))
        try await store.save(pass("a", "second", 60))
        try await store.save(pass("b", "forever", nil))
        try await store.save(pass("c", "gone", 60))
        try await store.remove(vendor: "v", room: room("c"))
        check(try await store.pass(vendor: "v", room: room("a"))?.credential == "second", "save replaces the pass of the same room")
        check(try await store.pass(vendor: "v", room: room("a"))?.details == ["k": "v a"], "a pass keeps its details")
        check(try await store.pass(vendor: "v", room: room("c")) == nil, "remove forgets the pass")
        check(try await store.all().map(\.room.room).sorted() == ["a", "b"], "all lists the unexpired passes")
        clock.advance(by: .seconds(61))
        check(try await store.pass(vendor: "v", room: room("a")) == nil, "an expired pass is never returned")
        check(try await store.all().map(\.room.room) == ["b"], "all leaves expired passes out")

        // The journal of held keys.
        let now = clock.now()
        let key = { (name: String, owner: String, lease: Double) in
            HeldKey(
                vendor: "v", room: room("k"), key: name, details: ["node": "n1"], takenAt: now.addingTimeInterval(Double(name.count)),
                expiresAt: now.addingTimeInterval(20), owner: owner, leaseUntil: now.addingTimeInterval(lease))
        }
        try await store.recordHeldKey(key("k1", "A", 10))
        try await store.recordHeldKey(key("k22", "A", 10))
        try await store.recordHeldKey(key("k333", "A", 10))
        try await store.recordHeldKey(HeldKey(vendor: "w", room: room("k"), key: "other", takenAt: now, owner: "A", leaseUntil: now))
        try await store.removeHeldKey(id: "v:k22")
        let listed = try await store.heldKeys()
        check(listed.map(\.id) == ["w:other", "v:k1", "v:k333"], "heldKeys lists the journal oldest first, got \(listed.map(\.id))")
        check(listed.first { $0.id == "v:k1" } == key("k1", "A", 10), "a held key is kept as recorded")

        // Takeover: nothing while A's lease runs, everything after, once.
        check(
            try await store.claimHeldKeys(
                vendor: "v", owner: "B", now: now.addingTimeInterval(5), leaseUntil: now.addingTimeInterval(15), limit: 100
            ).isEmpty,
            "no key is claimed while its owner's lease runs")
        try await store.renewLeases(owner: "A", until: now.addingTimeInterval(30))
        check(
            try await store.claimHeldKeys(
                vendor: "v", owner: "B", now: now.addingTimeInterval(20), leaseUntil: now.addingTimeInterval(40), limit: 100
            ).isEmpty,
            "renewLeases extends the owner's leases")
        let taken = try await store.claimHeldKeys(
            vendor: "v", owner: "B", now: now.addingTimeInterval(31), leaseUntil: now.addingTimeInterval(50), limit: 100)
        check(taken.map(\.id).sorted() == ["v:k1", "v:k333"], "a lapsed lease is taken over (vendor v only), got \(taken.map(\.id))")
        check(
            taken.allSatisfy { $0.owner == "B" && $0.leaseUntil == now.addingTimeInterval(50) },
            "a claimed key names its new owner and lease")
        check(
            try await store.claimHeldKeys(
                vendor: "v", owner: "C", now: now.addingTimeInterval(32), leaseUntil: now.addingTimeInterval(60), limit: 100
            ).isEmpty,
            "a claimed key is not claimed again while the claimer's lease runs")
        check(
            try await store.claimHeldKeys(
                vendor: nil, owner: "C", now: now.addingTimeInterval(32), leaseUntil: now.addingTimeInterval(60), limit: 100
            ).map(\.id) == ["w:other"],
            "vendor nil claims any vendor's lapsed keys")
        for id in ["v:k1", "v:k333", "w:other"] { try await store.removeHeldKey(id: id) }

        // Concurrent claimers on separate handles: every key to exactly one.
        let lapsed = (0..<200).map { i in
            HeldKey(
                vendor: "v", room: room("race"), key: "race-\(i)", takenAt: now.addingTimeInterval(Double(i) / 1000), owner: "dead",
                leaseUntil: now)
        }
        for chunk in stride(from: 0, to: lapsed.count, by: 50) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for held in lapsed[chunk..<min(chunk + 50, lapsed.count)] { group.addTask { try await store.recordHeldKey(held) } }
                try await group.waitForAll()
            }
        }
        var handles: [any StateStore] = [store]
        for _ in 0..<3 { handles.append(subject.singleHandle ? store : try await subject.open(clock)) }
        let opened = handles
        let claims = try await withThrowingTaskGroup(of: [String].self) { group in
            for (index, handle) in opened.enumerated() {
                group.addTask {
                    var mine: [String] = []
                    while true {
                        let got = try await handle.claimHeldKeys(
                            vendor: "v", owner: "claimer-\(index)", now: now.addingTimeInterval(1),
                            leaseUntil: now.addingTimeInterval(100), limit: 7)
                        if got.isEmpty { return mine }
                        mine += got.map(\.id)
                    }
                }
            }
            var all: [[String]] = []
            for try await ids in group { all.append(ids) }
            return all
        }
        let claimedIDs = claims.flatMap { $0 }
        check(Set(claimedIDs).count == 200, "concurrent claimers together take every lapsed key (\(Set(claimedIDs).count) of 200)")
        var seen = Set<String>()
        var doubles = 0
        for ids in claims { for id in Set(ids) { if !seen.insert(id).inserted { doubles += 1 } } }
        check(doubles == 0, "no key goes to two claimers (\(doubles) did)")
        for held in lapsed { try await store.removeHeldKey(id: held.id) }

        // Session leases.
        let session = SessionLeaseID(vendor: "v", room: room("s"), user: "user-1")
        check(
            try await store.acquireSession(session, owner: "A", now: now, until: now.addingTimeInterval(10)) == .acquired,
            "the first asker gets a session lease")
        check(
            try await handles[1].acquireSession(session, owner: "B", now: now.addingTimeInterval(1), until: now.addingTimeInterval(11))
                == .heldBy(owner: "A", until: now.addingTimeInterval(10)), "a second instance sees the lease held")
        check(
            try await store.acquireSession(session, owner: "A", now: now.addingTimeInterval(2), until: now.addingTimeInterval(12))
                == .acquired,
            "the holder may ask again")
        try await store.renewLeases(owner: "A", until: now.addingTimeInterval(20))
        check(
            try await handles[1].acquireSession(session, owner: "B", now: now.addingTimeInterval(15), until: now.addingTimeInterval(25))
                != .acquired,
            "renewLeases extends a session lease")
        let sessionPass = Pass(
            vendor: "v", room: room("s"), credential: "passed-key", kind: .key, issuedAt: now, expiresAt: now.addingTimeInterval(100))
        try await handles[1].finishSession(session, owner: "B", pass: nil, keepUntil: now.addingTimeInterval(100))
        check(
            try await handles[1].acquireSession(session, owner: "B", now: now.addingTimeInterval(16), until: now.addingTimeInterval(26))
                != .acquired,
            "only the holder can finish a session lease")
        try await store.finishSession(session, owner: "A", pass: sessionPass, keepUntil: now.addingTimeInterval(60))
        check(
            try await handles[2].acquireSession(session, owner: "C", now: now.addingTimeInterval(17), until: now.addingTimeInterval(27))
                == .passed(sessionPass),
            "after a pass, other instances get the pass, not a lease")
        check(
            try await handles[2].acquireSession(session, owner: "C", now: now.addingTimeInterval(101), until: now.addingTimeInterval(111))
                == .acquired,
            "after the pass expires the user may be enqueued again")
        try await handles[2].finishSession(session, owner: "C", pass: nil, keepUntil: now)
        check(
            try await store.acquireSession(session, owner: "A", now: now.addingTimeInterval(102), until: now.addingTimeInterval(112))
                == .acquired,
            "a lease finished without a pass is free again")
        check(
            try await handles[3].acquireSession(session, owner: "D", now: now.addingTimeInterval(113), until: now.addingTimeInterval(123))
                == .acquired,
            "a lapsed session lease is taken over")

        // Concurrent writers: many saves and one lease among many askers.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<100 {
                group.addTask {
                    let handle = opened[i % opened.count]
                    try await handle.save(
                        Pass(
                            vendor: "w", room: RoomKey(scope: "conformance", room: "w\(i)"), credential: "c\(i)", kind: .token,
                            issuedAt: now))
                }
            }
            try await group.waitForAll()
        }
        let written = try await store.all().filter { $0.vendor == "w" }.count
        check(written == 100, "concurrent writers: every pass is kept (\(written) of 100)")
        let contested = SessionLeaseID(vendor: "v", room: room("contested"), user: "u")
        let winners = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<40 {
                group.addTask {
                    try await opened[i % opened.count].acquireSession(
                        contested, owner: "owner-\(i)", now: now, until: now.addingTimeInterval(10)) == .acquired
                }
            }
            var count = 0
            for try await won in group where won { count += 1 }
            return count
        }
        check(winners == 1, "concurrent askers: one session lease (\(winners) got it)")

        // Durability: a new handle after closing sees what was written.
        try await store.recordHeldKey(key("durable", "A", 10))
        for handle in handles { try await handle.close() }
        if store.isDurable {
            let reopened = try await subject.open(clock)
            check(
                try await reopened.pass(vendor: "v", room: room("b"))?.credential == "forever",
                "a durable store keeps passes across reopening")
            check(try await reopened.heldKeys().map(\.id).contains("v:durable"), "a durable store keeps the journal across reopening")
            try await reopened.close()
        }

        // Damage: reported, moved aside, what can be read kept, and the store works.
        if let damage = subject.damage, let inspect = subject.inspectDamage {
            try await damage()
            let reopened = try await subject.open(clock)
            _ = try await reopened.all()
            try await reopened.save(pass("after-damage", "ok", nil))
            check(
                try await reopened.pass(vendor: "v", room: room("after-damage"))?.credential == "ok",
                "a damaged store works again after reopening")
            let (problems, movedAside) = try await inspect(reopened)
            check(!problems.isEmpty, "damage is reported")
            check(movedAside, "the damaged storage is moved aside")
            try await reopened.close()
        }
        return failures
    }
}
