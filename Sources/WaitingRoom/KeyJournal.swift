import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The journal of keys this process took from vendors' servers, kept in a durable
/// ``StateStore`` so that a process that dies leaves a record another one can finish.
///
/// A vendor calls ``hold(vendor:room:key:details:expiresAt:)`` when its server hands out a key
/// (before the app sees it) and ``released(vendor:key:)`` when the key went back or the server
/// no longer knows it. While this process holds keys or session leases, a heartbeat renews its
/// leases every third of ``lease``; when the process dies the heartbeat stops, the leases lapse,
/// and any instance (or `waitingroom returns`) claims the keys with ``recover(vendor:bound:returning:)``.
///
/// With a store that is not durable (the memory store) every call is a no-op: nothing is
/// written and nothing is kept per user.
///
/// Threading: any method from any thread; the owned-key count and the heartbeat task are behind
/// one lock; store calls run in the caller's task, the heartbeat in its own.
package final class KeyJournal: Sendable {
    /// The store the journal writes to.
    package let store: any StateStore
    /// This process's name in the store: host, process id and a random part.
    package let owner: String
    /// How long a claim stands without a renewal; a dead process's keys are taken over this
    /// long after its last heartbeat.
    package let lease: Duration
    /// Whether anything is written (the store is durable).
    package let isActive: Bool
    private let clock: any WaitingRoomClock
    private let logger: Logger

    private struct State {
        /// Keys recorded by this process and not yet released, by the hash of their id (8 bytes
        /// a key instead of its string: a waiting user's cost; two ids sharing a 64-bit hash
        /// would only end the heartbeat early, once both are released or one is, 2⁻⁶⁴).
        var keys: Set<Int> = []
        /// Session leases this process holds.
        var sessions = 0
        var holding: Bool { !keys.isEmpty || sessions > 0 }
        var heartbeat: Task<Void, Never>?
        var writeFailures = 0
    }
    private let state = Mutex(State())

    /// Creates the journal of one process (or one provider environment).
    package init(
        store: any StateStore, clock: any WaitingRoomClock, lease: Duration = .seconds(10),
        owner: String = KeyJournal.processOwner(), logger: Logger = Logger(label: "waitingroom.journal")
    ) {
        self.store = store
        self.clock = clock
        self.lease = max(lease, .milliseconds(300))
        self.owner = owner
        self.logger = logger
        self.isActive = store.isDurable
    }

    /// `host/pid/random`: unique per process start.
    package static func processOwner() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "host"
        return "\(host)/\(getpid())/\(String(UInt32.random(in: .min ... .max), radix: 16))"
    }

    /// Store writes that failed (logged; the user is never kept waiting for the journal).
    package var writeFailures: Int { state.withLock { $0.writeFailures } }

    /// Records a key taken from a vendor's server. Failures are logged and counted, not thrown:
    /// the key is still returned by this process as before, only a crash would lose it.
    ///
    /// Call it from a short-lived task (the request's), not from the task that keeps a user in
    /// line: a task keeps the memory its deepest frames once needed for as long as it lives, and
    /// the store's frames would stay with every waiting user (NetFUNNEL: about 1.8 KB a user
    /// with SQLite before it moved the call into its request task).
    package func hold(vendor: String, room: RoomKey, key: String, details: [String: String] = [:], expiresAt: Date? = nil) async {
        guard isActive, !key.isEmpty else { return }
        let now = clock.now()
        let entry = HeldKey(
            vendor: vendor, room: room, key: key, details: details, takenAt: now, expiresAt: expiresAt,
            owner: owner, leaseUntil: now.addingTimeInterval(lease.seconds))
        do {
            try await store.recordHeldKey(entry)
            state.withLock { _ = $0.keys.insert(entry.id.hashValue) }
            startHeartbeat()
        } catch {
            noteFailure("recording a held key", error)
        }
    }

    /// Forgets a key that went back (or that the server no longer knows).
    package func released(vendor: String, key: String) async {
        guard isActive, !key.isEmpty else { return }
        let id = "\(vendor):\(key)"
        do {
            try await store.removeHeldKey(id: id)
        } catch {
            noteFailure("removing a returned key", error)
        }
        state.withLock { _ = $0.keys.remove(id.hashValue) }
    }

    /// Keys this process recorded and has not released yet.
    package var heldCount: Int { state.withLock { $0.keys.count } }

    /// Counts a session lease this process holds (so the heartbeat runs while it does).
    func beginSessionLease() {
        state.withLock { $0.sessions += 1 }
        startHeartbeat()
    }

    /// A session lease ended.
    func endSessionLease() {
        state.withLock { $0.sessions = max(0, $0.sessions - 1) }
    }

    private func startHeartbeat() {
        state.withLock { state in
            guard state.heartbeat == nil else { return }
            state.heartbeat = Task { [weak self] in await self?.beat() }
        }
    }

    /// Renews every lease of this owner every third of ``lease`` while anything is held.
    private func beat() async {
        let interval = lease / 3
        var lastRenewal = ContinuousClock.now
        while !Task.isCancelled {
            do { try await clock.sleep(for: interval) } catch { break }
            let holding = state.withLock { state -> Bool in
                if !state.holding {
                    state.heartbeat = nil
                    return false
                }
                return true
            }
            guard holding else { return }
            do {
                try await store.renewLeases(owner: owner, until: clock.now().addingTimeInterval(lease.seconds))
                lastRenewal = ContinuousClock.now
            } catch {
                noteFailure("renewing leases", error)
                // A closed store takes no more writes: renewing again cannot succeed. Stop now;
                // the leases lapse and the keys are taken over as after a crash.
                if let failure = error as? WaitingRoomError, failure.kind == .invalidUse {
                    logger.notice(
                        "state store: closed while this process holds keys; their leases lapse and another instance (or `waitingroom returns`) takes them over"
                    )
                    break
                }
                // Past the lease, the claims have lapsed and other instances may have taken the
                // keys over: stop (the next key held starts the heartbeat again).
                if ContinuousClock.now - lastRenewal > lease {
                    logger.error(
                        "state store: leases not renewed for longer than the lease; other instances may take this process's keys over")
                    break
                }
            }
        }
        state.withLock { $0.heartbeat = nil }
    }

    private func noteFailure(_ what: String, _ error: any Error) {
        state.withLock { $0.writeFailures += 1 }
        logger.warning("state store: \(what) failed", metadata: ["error": "\(error)"])
    }

    deinit {
        state.withLock { $0.heartbeat?.cancel() }
    }

    /// Finishes the returns the journal holds for `vendor` whose owner is gone (its lease
    /// lapsed) or is this process: each is claimed, then returned with `returning` (tried again
    /// with a doubling pause from 250 ms while time is left), until `bound` passes.
    ///
    /// A key the server has timed out already (past ``HeldKey/expiresAt``) is dropped from the
    /// journal and reported as given up with that reason; a key that could not be returned in
    /// time stays in the journal for the next recovery.
    package func recover(
        vendor: String?, bound: Duration, returning: @escaping @Sendable (HeldKey) async -> PendingReturns.Attempt
    ) async -> KeyRecoveryReport {
        var report = KeyRecoveryReport()
        let started = ContinuousClock.now
        var claimed: [HeldKey]
        do {
            let now = clock.now()
            claimed = try await store.claimHeldKeys(
                vendor: vendor, owner: owner, now: now, leaseUntil: now.addingTimeInterval(max(lease.seconds, bound.seconds)), limit: 10_000
            )
            let all = try await store.heldKeys()
            report.heldByLiveOwners =
                all.filter { key in
                    (vendor == nil || key.vendor == vendor) && key.owner != owner && key.leaseUntil > now
                }.count
            report.nextLeaseLapse = all.filter { (vendor == nil || $0.vendor == vendor) && $0.owner != owner }.map(\.leaseUntil).min()
        } catch {
            report.problems.append("cannot read the journal: \(error)")
            return report
        }
        report.claimed = claimed.count
        await withTaskGroup(of: KeyRecoveryReport.Line.self) { group in
            for key in claimed {
                group.addTask { [self] in await finish(key, started: started, bound: bound, returning: returning) }
            }
            for await line in group { report.lines.append(line) }
        }
        report.lines.sort { $0.id < $1.id }
        return report
    }

    private func finish(
        _ key: HeldKey, started: ContinuousClock.Instant, bound: Duration,
        returning: @escaping @Sendable (HeldKey) async -> PendingReturns.Attempt
    ) async -> KeyRecoveryReport.Line {
        func line(_ result: KeyRecoveryReport.Result, _ message: String, code: Int? = nil) -> KeyRecoveryReport.Line {
            KeyRecoveryReport.Line(id: key.id, vendor: key.vendor, room: key.room, result: result, code: code, message: message)
        }
        if let expiresAt = key.expiresAt, expiresAt <= clock.now() {
            try? await store.removeHeldKey(id: key.id)
            return line(.gaveUp, "the server has timed the key out on its own (at \(expiresAt))")
        }
        var pause: Duration = .milliseconds(250)
        var lastFailure = "no attempt fitted in the bound"
        // At least one attempt per claimed key, however long the claim took.
        var first = true
        while first || ContinuousClock.now - started < bound {
            first = false
            switch await returning(key) {
            case .returned(let status):
                try? await store.removeHeldKey(id: key.id)
                return line(.returnedLate, status.message, code: status.code)
            case .gone(let status):
                try? await store.removeHeldKey(id: key.id)
                return line(.alreadyGone, status.message, code: status.code)
            case .failed(let reason):
                lastFailure = reason
            }
            if let expiresAt = key.expiresAt, expiresAt <= clock.now() {
                try? await store.removeHeldKey(id: key.id)
                return line(.gaveUp, "the server timed the key out while it was being returned: \(lastFailure)")
            }
            let left = bound - (ContinuousClock.now - started)
            guard left > .zero else { break }
            do { try await SystemClock().sleep(for: min(pause, left)) } catch { break }
            pause = min(pause * 2, .seconds(2))
        }
        return line(.gaveUp, "not returned within \(bound): \(lastFailure) (kept in the journal)")
    }
}
