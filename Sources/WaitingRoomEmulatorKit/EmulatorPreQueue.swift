import Foundation

/// The pre-queue of a room with a scheduled start (a sale): visitors who arrive before the start
/// are held, and at the start they are released together in an order that does not depend on how
/// early they came — shuffled with a seeded generator when `shuffle` is on (Queue-it's and
/// CrowdHandler's "random position at the start", Cloudflare's `shuffle_at_event_start`), else
/// in arrival order. Visitors arriving at or after the start are not held: they join the room's
/// queue behind the released ones, first come first served.
///
/// A value type with no clock of its own: the emulator passes its injected clock's `now` to every
/// call and keeps the value behind its own lock, so the same seed, arrivals and clock give the
/// same admission order on every run.
///
/// ```swift
/// var pre = EmulatorPreQueue<String>(startsAt: sale, shuffle: true, seed: 42)
/// if pre.hold(visitor, now: clock.now) { return .waitingForStart }
/// for member in pre.release(now: clock.now) { queue.append(member) }   // once, at the start
/// ```
package struct EmulatorPreQueue<Member: Hashable & Sendable>: Sendable {
    /// When the sale starts: arrivals before it are held. `nil` = no scheduled start (nobody is
    /// held). Changing it to a different date after the release opens a new pre-queue for that
    /// start (a room rescheduled for another sale); changing it before the release keeps the
    /// members already held.
    package var startsAt: Date? {
        didSet { if released, startsAt != oldValue { released = false } }
    }

    /// Whether the held members are shuffled at the start (else released in arrival order); may
    /// change until the release.
    package var shuffle: Bool

    /// The seed of the shuffle: the same seed and the same arrivals give the same order.
    package var seed: UInt64

    private var held: [Member] = []
    private var heldSet: Set<Member> = []
    private var released = false

    /// A pre-queue for a sale at `startsAt` (`nil`: none), shuffling the early arrivals at the
    /// start with a generator seeded by `seed` when `shuffle` is on.
    package init(startsAt: Date?, shuffle: Bool, seed: UInt64) {
        self.startsAt = startsAt
        self.shuffle = shuffle
        self.seed = seed
    }

    /// Whether arrivals are being held now: a start is scheduled, it has not come yet, and the
    /// pre-queue for it has not been released.
    package func isPrequeueing(now: Date) -> Bool {
        guard let startsAt, !released else { return false }
        return now < startsAt
    }

    /// Holds `member` for the start if it arrives before it. Returns `true` when the member is
    /// held (it arrived before the start, now or on an earlier call: holding twice keeps the first
    /// arrival and returns `true`), `false` when there is no pre-queue at `now` and the member
    /// should join the queue directly.
    package mutating func hold(_ member: Member, now: Date) -> Bool {
        if heldSet.contains(member) { return true }
        guard isPrequeueing(now: now) else { return false }
        held.append(member)
        heldSet.insert(member)
        return true
    }

    /// Releases the held members, once: at or after the start (or at once if the start was
    /// cancelled by setting ``startsAt`` to `nil` while members were held), in admission order —
    /// shuffled (Fisher–Yates with an ``EmulatorSeededGenerator`` seeded by ``seed``, every order
    /// equally likely) when ``shuffle`` is on, else in arrival order. Returns an empty array before
    /// the start and on every later call.
    package mutating func release(now: Date) -> [Member] {
        guard !released else { return [] }
        if let startsAt {
            guard now >= startsAt else { return [] }
        } else if held.isEmpty {
            return []
        }
        released = true
        var order = held
        held = []
        heldSet = []
        if shuffle {
            var generator = EmulatorSeededGenerator(seed: seed)
            order.shuffle(using: &generator)
        }
        return order
    }

    /// How many members are held now (0 after the release).
    package var heldCount: Int { held.count }

    /// Whether `member` is held now, waiting for the start.
    package func isHeld(_ member: Member) -> Bool { heldSet.contains(member) }

    /// Whether the pre-queue for the current ``startsAt`` has been released.
    package var hasReleased: Bool { released }
}
