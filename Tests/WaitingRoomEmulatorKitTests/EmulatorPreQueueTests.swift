import Foundation
import Testing
import WaitingRoomEmulatorKit

/// Issue 30 §2: the kit's pre-queue — arrivals before a scheduled start are held and released
/// once at the start, shuffled reproducibly from a seed (or in arrival order without shuffle).
@Suite("EmulatorPreQueue: a seeded shuffle of the early arrivals, released once at the start")
struct EmulatorPreQueueTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let before = start.addingTimeInterval(-60)

    static func released(_ n: Int, shuffle: Bool, seed: UInt64) -> [Int] {
        var pre = EmulatorPreQueue<Int>(startsAt: start, shuffle: shuffle, seed: seed)
        for i in 0..<n { _ = pre.hold(i, now: before.addingTimeInterval(Double(i) / 1000)) }
        return pre.release(now: start)
    }

    @Test func sameSeedSameOrderOtherSeedOtherOrder() {
        let a = Self.released(500, shuffle: true, seed: 7)
        let b = Self.released(500, shuffle: true, seed: 7)
        let c = Self.released(500, shuffle: true, seed: 8)
        #expect(a == b)
        #expect(a != c)
        #expect(a.sorted() == Array(0..<500))
        #expect(a != Array(0..<500))
    }

    @Test func withoutShuffleArrivalOrder() {
        #expect(Self.released(300, shuffle: false, seed: 7) == Array(0..<300))
    }

    /// Uniformity sanity: over 4,000 seeds, each of 5 members lands in each of the 5 positions
    /// about 800 times (chi-square over the 25 cells, 16 degrees of freedom: the 0.999 quantile is
    /// 39.25; a biased shuffle such as "swap with any index" fails it by far).
    @Test func everyPositionEquallyLikely() {
        let n = 5
        let trials = 4_000
        var counts = Array(repeating: Array(repeating: 0, count: n), count: n)
        for seed in 0..<trials {
            for (position, member) in Self.released(n, shuffle: true, seed: UInt64(seed)).enumerated() {
                counts[member][position] += 1
            }
        }
        let expected = Double(trials) / Double(n)
        let chiSquare = counts.joined().reduce(0.0) { $0 + pow(Double($1) - expected, 2) / expected }
        #expect(chiSquare < 39.25, "chi-square \(chiSquare): \(counts)")
    }

    @Test func releasedExactlyOnceAtOrAfterTheStart() {
        var pre = EmulatorPreQueue<String>(startsAt: Self.start, shuffle: true, seed: 1)
        #expect(pre.isPrequeueing(now: Self.before))
        let r1 = pre.hold("a", now: Self.before)
        #expect(r1)
        let r2 = pre.hold("b", now: Self.before)
        #expect(r2)
        let r3 = pre.hold("a", now: Self.before)
        #expect(r3, "holding twice keeps the member held")
        #expect(pre.heldCount == 2)
        let r4 = pre.release(now: Self.before)
        #expect(r4.isEmpty, "nothing before the start")
        #expect(Set(pre.release(now: Self.start)) == ["a", "b"])
        let r5 = pre.release(now: Self.start.addingTimeInterval(1))
        #expect(r5.isEmpty, "only once")
        #expect(!pre.isPrequeueing(now: Self.before), "released: nobody is held any more")
        let r6 = pre.hold("c", now: Self.start)
        #expect(!r6, "an arrival at the start joins the queue")
        #expect(pre.hasReleased)
    }

    @Test func noStartHoldsNobody() {
        var pre = EmulatorPreQueue<Int>(startsAt: nil, shuffle: true, seed: 1)
        #expect(!pre.isPrequeueing(now: Self.before))
        let r7 = pre.hold(1, now: Self.before)
        #expect(!r7)
        let r8 = pre.release(now: Self.start)
        #expect(r8.isEmpty)
    }

    @Test func cancellingTheStartReleasesTheHeldAndReschedulingOpensANewPreQueue() {
        var pre = EmulatorPreQueue<Int>(startsAt: Self.start, shuffle: false, seed: 1)
        let r9 = pre.hold(1, now: Self.before)
        #expect(r9)
        pre.startsAt = nil
        let r10 = pre.release(now: Self.before)
        #expect(r10 == [1])
        pre.startsAt = Self.start.addingTimeInterval(3600)
        let r11 = pre.hold(2, now: Self.start)
        #expect(r11)
        let r12 = pre.release(now: Self.start.addingTimeInterval(3600))
        #expect(r12 == [2])
    }
}
