import Synchronization
import WaitingRoom

/// The first expected wait a vendor showed one virtual user: the ETA of its first progress event
/// that carried one (``WaitingRoom/QueueProgress/eta``: NetFUNNEL's and CrowdHandler's position-
/// derived estimate, Queue-it's queue-page figure), and when it was shown. Kept per visit by
/// ``Crowd`` as two 32-bit floats of seconds, so a visit stays a few numbers.
package struct ExpectedWait: Sendable, Equatable {
    /// The wait the vendor showed, in seconds.
    package var wait: Float
    /// When it was shown, in seconds from the start of the run.
    package var shownAt: Float

    /// A wait of `wait` seconds shown `shownAt` seconds into the run (negative values count as 0).
    package init(wait: Double, shownAt: Double) {
        self.wait = Float(max(0, wait))
        self.shownAt = Float(max(0, shownAt))
    }

    /// The two floats in one word, with the top bit set so that no value packs to 0 (both
    /// floats are non-negative, so neither sign bit is needed).
    package var packed: UInt64 {
        (UInt64(shownAt.bitPattern & 0x7FFF_FFFF) << 32) | UInt64(wait.bitPattern & 0x7FFF_FFFF) | (1 << 63)
    }

    /// The value ``packed`` holds; nil for 0 (nothing recorded).
    package init?(packed: UInt64) {
        guard packed & (1 << 63) != 0 else { return nil }
        wait = Float(bitPattern: UInt32(truncatingIfNeeded: packed) & 0x7FFF_FFFF)
        shownAt = Float(bitPattern: UInt32(truncatingIfNeeded: packed >> 32) & 0x7FFF_FFFF)
    }
}

/// Catches what a session's vendor showed first, from the emitting task, for ``Crowd``: the first
/// ETA of its progress events (``ExpectedWait``), and when the vendor first answered the user (its
/// first queue page or progress event). Two atomic words per waiting user, each written once.
package final class ExpectedWaitProbe: Sendable {
    private let word = Atomic<UInt64>(0)
    /// Nanoseconds from the run's start to the first answer, plus one (0: none yet).
    private let answered = Atomic<UInt64>(0)

    /// A probe with nothing recorded.
    package init() {}

    /// Records that the vendor answered the user `at` (from the run's start) unless an earlier
    /// answer was recorded.
    package func recordAnswer(at: Duration) {
        guard answered.load(ordering: .relaxed) == 0 else { return }
        let (seconds, attoseconds) = at.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds / 1_000_000_000)
        _ = answered.compareExchange(expected: 0, desired: UInt64(nanoseconds) + 1, ordering: .relaxed)
    }

    /// When the vendor first answered the user, from the run's start (nil: no queue page or
    /// progress event came).
    package var firstAnswer: Duration? {
        let value = answered.load(ordering: .relaxed)
        return value == 0 ? nil : .nanoseconds(Int64(value - 1))
    }

    /// Records `eta` shown at `shownAt` unless an earlier one was recorded.
    package func record(eta: Duration, shownAt: Duration) {
        guard word.load(ordering: .relaxed) == 0 else { return }
        let value = ExpectedWait(wait: eta.seconds, shownAt: shownAt.seconds)
        _ = word.compareExchange(expected: 0, desired: value.packed, ordering: .relaxed)
    }

    /// The first expected wait recorded, if any.
    package var value: ExpectedWait? { ExpectedWait(packed: word.load(ordering: .relaxed)) }
}
