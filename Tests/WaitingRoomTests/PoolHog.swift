import Foundation
import Synchronization

/// Loops that hold threads of Swift's cooperative pool without ever suspending, the way a
/// CPU-bound job in an app would, until ``release()`` is called or a safety cap passes.
final class PoolHog: Sendable {
    private let running = Atomic<Int>(0)
    private let released = Atomic<Bool>(false)
    private let runningWhenReleased = Atomic<Int>(-1)
    private let capped = Atomic<Int>(0)
    private let cap: Duration

    /// A hog whose loops give up after `cap` (so a broken test cannot hang the suite).
    init(cap: Duration) { self.cap = cap }

    /// How many loops were spinning when ``release()`` was first called (-1 if never).
    var spinningAtRelease: Int { runningWhenReleased.load(ordering: .acquiring) }
    /// How many loops stopped at the cap instead of being released.
    var loopsThatHitTheCap: Int { capped.load(ordering: .acquiring) }

    /// Ends the loops; callable from any thread (an event loop here).
    func release() {
        let count = running.load(ordering: .acquiring)
        if runningWhenReleased.compareExchange(expected: -1, desired: count, ordering: .acquiringAndReleasing).exchanged {
            released.store(true, ordering: .releasing)
        }
    }

    /// Runs `loops` non-suspending loops as child tasks (one per cooperative thread when
    /// `loops` is the pool's width) and returns when all of them have ended.
    func occupy(_ loops: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<loops {
                group.addTask { self.spin() }
            }
        }
    }

    private func spin() {
        let limit = ContinuousClock.now + cap
        running.add(1, ordering: .acquiringAndReleasing)
        defer { running.subtract(1, ordering: .acquiringAndReleasing) }
        while !released.load(ordering: .acquiring) {
            if ContinuousClock.now >= limit {
                capped.add(1, ordering: .acquiringAndReleasing)
                return
            }
        }
    }
}
