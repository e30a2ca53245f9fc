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
        let findings = Findings(subject: subject.name)
        let clock = VirtualClock()
        let store = try await subject.open(clock)
        try await checkPasses(store, clock: clock, findings)
        let now = clock.now()
        try await checkJournal(store, now: now, findings)
        try await checkTakeover(store, now: now, findings)
        let handles = try await checkConcurrentClaims(store, clock: clock, now: now, findings)
        try await checkSessionLeases(handles, now: now, findings)
        try await checkConcurrentWriters(handles, now: now, findings)
        try await checkDurability(handles, clock: clock, now: now, findings)
        try await checkDamage(clock: clock, findings)
        return findings.failures
    }
}

extension StoreConformance {
    /// What broke so far in one run, each message prefixed with the subject's name.
    private final class Findings {
        let subject: String
        var failures: [String] = []

        init(subject: String) { self.subject = subject }

        func check(_ ok: Bool, _ message: @autoclosure () -> String) {
            if !ok { failures.append("[\(subject)] \(message())") }
        }
    }

    private static func room(_ name: String) -> RoomKey { RoomKey(scope: "conformance", room: name) }

    /// A pass of vendor `v` for room `name`, issued now, expiring after `seconds` (never when nil).
    private static func pass(_ name: String, _ credential: String, _ seconds: Double?, clock: VirtualClock) -> Pass {
        Pass(
            vendor: "v", room: room(name), credential: credential, kind: .token, issuedAt: clock.now(),
            expiresAt: seconds.map { clock.now().addingTimeInterval($0) }, details: ["k": "v \(name)"])
    }

    /// A held key of vendor `v` in room `k`, owned by `owner` with a lease of `lease` seconds from `now`.
    private static func key(_ name: String, _ owner: String, _ lease: Double, now: Date) -> HeldKey {
        HeldKey(
            vendor: "v", room: room("k"), key: name, details: ["node": "n1"], takenAt: now.addingTimeInterval(Double(name.count)),
            expiresAt: now.addingTimeInterval(20), owner: owner, leaseUntil: now.addingTimeInterval(lease))
    }

    /// Passes: one per vendor and room, never expired, listed, removed.
    private func checkPasses(_ store: any StateStore, clock: VirtualClock, _ findings: Findings) async throws {
        let room = Self.room
        try await store.save(Self.pass("a", "first", 60, clock: clock))
        try await store.save(Self.pass("a", "second", 60, clock: clock))
        try await store.save(Self.pass("b", "forever", nil, clock: clock))
        try await store.save(Self.pass("c", "gone", 60, clock: clock))
        try await store.remove(vendor: "v", room: room("c"))
        findings.check(
            try await store.pass(vendor: "v", room: room("a"))?.credential == "second", "save replaces the pass of the same room")
        findings.check(try await store.pass(vendor: "v", room: room("a"))?.details == ["k": "v a"], "a pass keeps its details")
        findings.check(try await store.pass(vendor: "v", room: room("c")) == nil, "remove forgets the pass")
        findings.check(try await store.all().map(\.room.room).sorted() == ["a", "b"], "all lists the unexpired passes")
        clock.advance(by: .seconds(61))
        findings.check(try await store.pass(vendor: "v", room: room("a")) == nil, "an expired pass is never returned")
        findings.check(try await store.all().map(\.room.room) == ["b"], "all leaves expired passes out")
    }

    /// The journal of held keys.
    private func checkJournal(_ store: any StateStore, now: Date, _ findings: Findings) async throws {
        try await store.recordHeldKey(Self.key("k1", "A", 10, now: now))
        try await store.recordHeldKey(Self.key("k22", "A", 10, now: now))
        try await store.recordHeldKey(Self.key("k333", "A", 10, now: now))
        try await store.recordHeldKey(HeldKey(vendor: "w", room: Self.room("k"), key: "other", takenAt: now, owner: "A", leaseUntil: now))
        try await store.removeHeldKey(id: "v:k22")
        let listed = try await store.heldKeys()
        findings.check(
            listed.map(\.id) == ["w:other", "v:k1", "v:k333"], "heldKeys lists the journal oldest first, got \(listed.map(\.id))")
        findings.check(listed.first { $0.id == "v:k1" } == Self.key("k1", "A", 10, now: now), "a held key is kept as recorded")
    }

    /// Takeover: nothing while A's lease runs, everything after, once.
    private func checkTakeover(_ store: any StateStore, now: Date, _ findings: Findings) async throws {
        findings.check(
            try await store.claimHeldKeys(
                vendor: "v", owner: "B", now: now.addingTimeInterval(5), leaseUntil: now.addingTimeInterval(15), limit: 100
            ).isEmpty,
            "no key is claimed while its owner's lease runs")
        try await store.renewLeases(owner: "A", until: now.addingTimeInterval(30))
        findings.check(
            try await store.claimHeldKeys(
                vendor: "v", owner: "B", now: now.addingTimeInterval(20), leaseUntil: now.addingTimeInterval(40), limit: 100
            ).isEmpty,
            "renewLeases extends the owner's leases")
        let taken = try await store.claimHeldKeys(
            vendor: "v", owner: "B", now: now.addingTimeInterval(31), leaseUntil: now.addingTimeInterval(50), limit: 100)
        findings.check(
            taken.map(\.id).sorted() == ["v:k1", "v:k333"], "a lapsed lease is taken over (vendor v only), got \(taken.map(\.id))")
        findings.check(
            taken.allSatisfy { $0.owner == "B" && $0.leaseUntil == now.addingTimeInterval(50) },
            "a claimed key names its new owner and lease")
        findings.check(
            try await store.claimHeldKeys(
                vendor: "v", owner: "C", now: now.addingTimeInterval(32), leaseUntil: now.addingTimeInterval(60), limit: 100
            ).isEmpty,
            "a claimed key is not claimed again while the claimer's lease runs")
        findings.check(
            try await store.claimHeldKeys(
                vendor: nil, owner: "C", now: now.addingTimeInterval(32), leaseUntil: now.addingTimeInterval(60), limit: 100
            ).map(\.id) == ["w:other"],
            "vendor nil claims any vendor's lapsed keys")
        for id in ["v:k1", "v:k333", "w:other"] { try await store.removeHeldKey(id: id) }
    }

    /// Concurrent claimers on separate handles: every key to exactly one. Returns the handles
    /// the later checks share (the first handle and three more, or the first four times for a
    /// single-handle store).
    private func checkConcurrentClaims(
        _ store: any StateStore, clock: VirtualClock, now: Date, _ findings: Findings
    ) async throws -> [any StateStore] {
        let room = Self.room
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
        findings.check(Set(claimedIDs).count == 200, "concurrent claimers together take every lapsed key (\(Set(claimedIDs).count) of 200)")
        var seen = Set<String>()
        var doubles = 0
        for ids in claims { for id in Set(ids) { if !seen.insert(id).inserted { doubles += 1 } } }
        findings.check(doubles == 0, "no key goes to two claimers (\(doubles) did)")
        for held in lapsed { try await store.removeHeldKey(id: held.id) }
        return opened
    }

    /// Session leases.
    private func checkSessionLeases(_ handles: [any StateStore], now: Date, _ findings: Findings) async throws {
        let store = handles[0]
        let room = Self.room
        let session = SessionLeaseID(vendor: "v", room: room("s"), user: "user-1")
        findings.check(
            try await store.acquireSession(session, owner: "A", now: now, until: now.addingTimeInterval(10)) == .acquired,
            "the first asker gets a session lease")
        findings.check(
            try await handles[1].acquireSession(session, owner: "B", now: now.addingTimeInterval(1), until: now.addingTimeInterval(11))
                == .heldBy(owner: "A", until: now.addingTimeInterval(10)), "a second instance sees the lease held")
        findings.check(
            try await store.acquireSession(session, owner: "A", now: now.addingTimeInterval(2), until: now.addingTimeInterval(12))
                == .acquired,
            "the holder may ask again")
        try await store.renewLeases(owner: "A", until: now.addingTimeInterval(20))
        findings.check(
            try await handles[1].acquireSession(session, owner: "B", now: now.addingTimeInterval(15), until: now.addingTimeInterval(25))
                != .acquired,
            "renewLeases extends a session lease")
        let sessionPass = Pass(
            vendor: "v", room: room("s"), credential: "passed-key", kind: .key, issuedAt: now, expiresAt: now.addingTimeInterval(100))
        try await handles[1].finishSession(session, owner: "B", pass: nil, keepUntil: now.addingTimeInterval(100))
        findings.check(
            try await handles[1].acquireSession(session, owner: "B", now: now.addingTimeInterval(16), until: now.addingTimeInterval(26))
                != .acquired,
            "only the holder can finish a session lease")
        try await store.finishSession(session, owner: "A", pass: sessionPass, keepUntil: now.addingTimeInterval(60))
        findings.check(
            try await handles[2].acquireSession(session, owner: "C", now: now.addingTimeInterval(17), until: now.addingTimeInterval(27))
                == .passed(sessionPass),
            "after a pass, other instances get the pass, not a lease")
        findings.check(
            try await handles[2].acquireSession(session, owner: "C", now: now.addingTimeInterval(101), until: now.addingTimeInterval(111))
                == .acquired,
            "after the pass expires the user may be enqueued again")
        try await handles[2].finishSession(session, owner: "C", pass: nil, keepUntil: now)
        findings.check(
            try await store.acquireSession(session, owner: "A", now: now.addingTimeInterval(102), until: now.addingTimeInterval(112))
                == .acquired,
            "a lease finished without a pass is free again")
        findings.check(
            try await handles[3].acquireSession(session, owner: "D", now: now.addingTimeInterval(113), until: now.addingTimeInterval(123))
                == .acquired,
            "a lapsed session lease is taken over")
    }

    /// Concurrent writers: many saves and one lease among many askers.
    private func checkConcurrentWriters(_ opened: [any StateStore], now: Date, _ findings: Findings) async throws {
        let store = opened[0]
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
        findings.check(written == 100, "concurrent writers: every pass is kept (\(written) of 100)")
        let contested = SessionLeaseID(vendor: "v", room: Self.room("contested"), user: "u")
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
        findings.check(winners == 1, "concurrent askers: one session lease (\(winners) got it)")
    }

    /// Durability: a new handle after closing sees what was written.
    private func checkDurability(_ handles: [any StateStore], clock: VirtualClock, now: Date, _ findings: Findings) async throws {
        let store = handles[0]
        try await store.recordHeldKey(Self.key("durable", "A", 10, now: now))
        for handle in handles { try await handle.close() }
        if store.isDurable {
            let reopened = try await subject.open(clock)
            findings.check(
                try await reopened.pass(vendor: "v", room: Self.room("b"))?.credential == "forever",
                "a durable store keeps passes across reopening")
            findings.check(
                try await reopened.heldKeys().map(\.id).contains("v:durable"), "a durable store keeps the journal across reopening")
            try await reopened.close()
        }
    }

    /// Damage: reported, moved aside, what can be read kept, and the store works.
    private func checkDamage(clock: VirtualClock, _ findings: Findings) async throws {
        if let damage = subject.damage, let inspect = subject.inspectDamage {
            try await damage()
            let reopened = try await subject.open(clock)
            _ = try await reopened.all()
            try await reopened.save(Self.pass("after-damage", "ok", nil, clock: clock))
            findings.check(
                try await reopened.pass(vendor: "v", room: Self.room("after-damage"))?.credential == "ok",
                "a damaged store works again after reopening")
            let (problems, movedAside) = try await inspect(reopened)
            findings.check(!problems.isEmpty, "damage is reported")
            findings.check(movedAside, "the damaged storage is moved aside")
            try await reopened.close()
        }
    }
}
