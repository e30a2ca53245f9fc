import Foundation
import Testing
import WaitingRoom
import WaitingRoomTesting

@Suite("VirtualClock")
struct VirtualClockTests {
    /// Sleeps cancelled at different moments (before, while and after they are stored) end exactly
    /// once, with `CancellationError`. The double resume this guards against (the cancellation
    /// handler and the sleep both resuming) trapped once in a loop of full-suite runs, in a Lua
    /// test's `wr.sleep`; its window is a few instructions wide, so this stress check does not
    /// reliably hit it on the old code (0 of 5 runs) — the fix is by construction: one decision
    /// under the lock the handler also takes.
    @Test func sleepsCancelledAtAnyMomentEndExactlyOnce() async {
        let clock = VirtualClock()
        let cancelled = await withTaskGroup(of: Bool.self) { group -> Int in
            for i in 0..<2_000 {
                group.addTask {
                    let sleeper = Task { () -> Bool in
                        do {
                            try await clock.sleep(for: .seconds(3600))
                            return false
                        } catch {
                            return error is CancellationError
                        }
                    }
                    // cancel at different points: at once, after a yield or two
                    for _ in 0..<(i % 3) { await Task.yield() }
                    sleeper.cancel()
                    return await sleeper.value
                }
            }
            var count = 0
            for await wasCancelled in group where wasCancelled { count += 1 }
            return count
        }
        #expect(cancelled == 2_000)
        #expect(clock.sleeperCount == 0)
    }

    @Test func advancingWakesSleepersAtTheirDeadlines() async {
        let clock = VirtualClock()
        let sleepers = (1...3).map { n in
            Task { () -> Bool in (try? await clock.sleep(for: .seconds(n))) != nil }
        }
        #expect(await clock.waitForSleepers(3, timeout: .seconds(30)))
        clock.advance(by: .seconds(3))
        var woken = 0
        for sleeper in sleepers where await sleeper.value { woken += 1 }
        #expect(woken == 3)
        #expect(clock.elapsed == .seconds(3))
    }
}
