import Synchronization
import WaitingRoom

/// The first expected wait a vendor showed one virtual user: the ETA of its first progress event
/// that carried one (``WaitingRoom/QueueProgress/eta``: NetFUNNEL's and CrowdHandler's position-
/// derived estimate, Queue-it's queue-page figure), and when it was shown. Kept per visit by
/// ``Crowd`` as two 32-bit floats of seconds, so a visit stays a few numbers.
struct ExpectedWait: Sendable, Equatable {
    /// The wait the vendor showed, in seconds.
    var wait: Float
    /// When it was shown, in seconds from the start of the run.
    var shownAt: Float

    init(wait: Double, shownAt: Double) {
        self.wait = Float(max(0, wait))
        self.shownAt = Float(max(0, shownAt))
    }

    /// The two floats in one word, with the top bit set so that no value packs to 0 (both
    /// floats are non-negative, so neither sign bit is needed).
    var packed: UInt64 {
        (UInt64(shownAt.bitPattern & 0x7FFF_FFFF) << 32) | UInt64(wait.bitPattern & 0x7FFF_FFFF) | (1 << 63)
    }

    /// The value ``packed`` holds; nil for 0 (nothing recorded).
    init?(packed: UInt64) {
        guard packed & (1 << 63) != 0 else { return nil }
        wait = Float(bitPattern: UInt32(truncatingIfNeeded: packed) & 0x7FFF_FFFF)
        shownAt = Float(bitPattern: UInt32(truncatingIfNeeded: packed >> 32) & 0x7FFF_FFFF)
    }
}

/// Catches the first ETA a session's progress events show (``ExpectedWait``), from the emitting
/// task, for ``Crowd``: one atomic word per waiting user, written once.
final class ExpectedWaitProbe: Sendable {
    private let word = Atomic<UInt64>(0)

    /// Records `eta` shown at `shownAt` unless an earlier one was recorded.
    func record(eta: Duration, shownAt: Duration) {
        guard word.load(ordering: .relaxed) == 0 else { return }
        let value = ExpectedWait(wait: eta.seconds, shownAt: shownAt.seconds)
        _ = word.compareExchange(expected: 0, desired: value.packed, ordering: .relaxed)
    }

    /// The first expected wait recorded, if any.
    var value: ExpectedWait? { ExpectedWait(packed: word.load(ordering: .relaxed)) }
}
