import Foundation
import Testing
import WaitingRoom
import WaitingRoomEmulatorKit
import WaitingRoomLoad

/// Issue 52 §2: `load`'s mergeable latency histogram: the relative error its log-linear buckets
/// promise, merges equal to one histogram of the whole sample, percentiles against a sorted
/// array, and its recording of durations and out-of-range values.
@Suite("load histogram")
struct LoadHistogramTests {
    typealias Scheme = LoadHistogram.Scheme

    /// A value log-uniform over 1 µs … 2^32 − 1 µs: a random power of two, then uniform in it.
    static func logUniform(using generator: inout EmulatorSeededGenerator) -> UInt64 {
        let power = UInt64.random(in: 0...31, using: &generator)
        return UInt64.random(in: (1 << power)...((1 << power) * 2 - 1), using: &generator)
    }

    /// A sample mixing latencies (mostly 1 ms … 10 s), values across the whole range, and a
    /// few outside it at both ends.
    static func sample(count: Int, seed: UInt64) -> [UInt64] {
        var generator = EmulatorSeededGenerator(seed: seed)
        return (0..<count).map { _ in
            switch UInt64.random(in: 0..<100, using: &generator) {
            case 0: 0
            case 1: Scheme.highest + UInt64.random(in: 1...1_000_000_000, using: &generator)
            case 2..<40: logUniform(using: &generator)
            default: UInt64.random(in: 1_000...10_000_000, using: &generator)
            }
        }
    }

    /// The nearest-rank value of `p` in `sorted` (clamped into the scheme's range).
    static func nearestRank(_ p: Double, _ sorted: [UInt64]) -> UInt64 {
        let rank = min(sorted.count, max(1, Int((p / 100 * Double(sorted.count)).rounded(.up))))
        return min(max(sorted[rank - 1], Scheme.lowest), Scheme.highest)
    }

    /// The percentiles the tests compare: every half percent, and the tail.
    static let percentiles: [Double] = stride(from: 0, through: 100, by: 0.5).map { $0 } + [99.9, 99.99, 99.999]

    @Test func bucketsTileTheRangeWithinTheStatedRelativeError() {
        #expect(Scheme.bucketCount == 3_327)
        #expect(Scheme.index(of: Scheme.lowest) == 0 && Scheme.index(of: Scheme.highest) == Scheme.bucketCount - 1)
        #expect(Scheme.upperBound(ofBucket: Scheme.bucketCount - 1) == Scheme.highest)
        #expect(Double(Scheme.highest) / 1_000_000 >= 3_600, "at least an hour")
        var worst = 0.0
        for index in 0..<Scheme.bucketCount {
            let lower = Scheme.lowerBound(ofBucket: index)
            let upper = Scheme.upperBound(ofBucket: index)
            #expect(lower <= upper && Scheme.index(of: lower) == index && Scheme.index(of: upper) == index, "bucket \(index)")
            if index > 0 { #expect(Scheme.upperBound(ofBucket: index - 1) + 1 == lower, "no gap before bucket \(index)") }
            // the worst value of a bucket is its lowest, reported as its upper bound
            worst = max(worst, Double(upper - lower) / Double(lower))
        }
        #expect(worst < Scheme.relativeError)
        print("load histogram: \(Scheme.bucketCount) buckets, worst relative error \(worst) (bound \(Scheme.relativeError))")
        // values 1 … 255 µs are exact
        for v in UInt64(1)...255 {
            #expect(Scheme.lowerBound(ofBucket: Scheme.index(of: v)) == Scheme.upperBound(ofBucket: Scheme.index(of: v)))
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func everyRandomValueIsReportedWithinTheRelativeError(seed: UInt64) {
        var generator = EmulatorSeededGenerator(seed: seed)
        var worst = 0.0
        for _ in 0..<200_000 {
            let v = Self.logUniform(using: &generator)
            let index = Scheme.index(of: v)
            let reported = Scheme.upperBound(ofBucket: index)
            #expect(Scheme.lowerBound(ofBucket: index) <= v && v <= reported)
            worst = max(worst, Double(reported - v) / Double(v))
            // every 50th through a histogram, between 1 µs and the highest so that its rank is
            // neither the first nor the last (which report the exact minimum and maximum)
            guard v % 50 == 0 else { continue }
            var h = LoadHistogram()
            h.record(microseconds: 1)
            h.record(microseconds: v)
            h.record(microseconds: Scheme.highest)
            let p50 = h.percentileMicroseconds(50)
            #expect(v <= p50 && Double(p50 - v) / Double(v) < Scheme.relativeError, "\(v) reported as \(p50)")
        }
        #expect(worst < Scheme.relativeError)
    }

    @Test(arguments: [1, 7, 42, 1_234] as [UInt64], [1, 2, 3, 5, 16])
    func mergingASplitSampleGivesTheWholeSamplesHistogram(seed: UInt64, parts: Int) {
        let values = Self.sample(count: 4_000, seed: seed)
        var whole = LoadHistogram()
        values.forEach { whole.record(microseconds: $0) }
        var generator = EmulatorSeededGenerator(seed: seed &+ 99)
        var split = Array(repeating: LoadHistogram(), count: parts)
        for v in values { split[Int.random(in: 0..<parts, using: &generator)].record(microseconds: v) }
        var merged = LoadHistogram()
        split.forEach { merged.merge($0) }
        let mergedBackwards = split.reversed().reduce(LoadHistogram()) { $0.merging($1) }
        for m in [merged, mergedBackwards] {
            #expect(m == whole)
            #expect(m.buckets == whole.buckets && m.count == whole.count && m.sumMicroseconds == whole.sumMicroseconds)
            #expect(m.min == whole.min && m.max == whole.max && m.mean == whole.mean)
            #expect(m.belowRange == whole.belowRange && m.aboveRange == whole.aboveRange)
            for p in Self.percentiles { #expect(m.percentile(p) == whole.percentile(p), "p\(p)") }
        }
        #expect(whole.count == UInt64(values.count) && whole.belowRange > 0 && whole.aboveRange > 0)
    }

    @Test func mergingWithEmptyIsTheSameHistogram() {
        var h = LoadHistogram()
        h.record(.milliseconds(3))
        #expect(h.merging(LoadHistogram()) == h && LoadHistogram().merging(h) == h)
        #expect(LoadHistogram().merging(LoadHistogram()) == LoadHistogram())
    }

    @Test(arguments: [3, 8, 21] as [UInt64])
    func percentilesOfKnownSamplesAreWithinTheErrorOfTheSortedArrays(seed: UInt64) {
        for count in [1, 2, 3, 10, 999, 20_000] {
            let values = Self.sample(count: count, seed: seed)
            var h = LoadHistogram()
            values.forEach { h.record(microseconds: $0) }
            let sorted = values.sorted()
            for p in Self.percentiles {
                let exact = Self.nearestRank(p, sorted)
                let reported = h.percentileMicroseconds(p)
                #expect(exact <= reported && Double(reported - exact) / Double(exact) < Scheme.relativeError, "p\(p) of \(count)")
            }
            #expect(
                h.percentileMicroseconds(0) == Self.nearestRank(0, sorted)
                    && h.percentileMicroseconds(100) == sorted.last.map { min($0, Scheme.highest) })
        }
    }

    @Test func smallValuesAreExactAndTheFiguresAreTheSamples() {
        var h = LoadHistogram()
        for v in UInt64(1)...100 { h.record(microseconds: v) }
        #expect(h.count == 100 && h.min == .microseconds(1) && h.max == .microseconds(100))
        #expect(h.percentile(50) == .microseconds(50) && h.percentile(90) == .microseconds(90) && h.percentile(99) == .microseconds(99))
        #expect(h.mean == .nanoseconds(50_500) && h.sumMicroseconds == 5_050)
        #expect(h.percentile(-5) == h.min && h.percentile(250) == h.max && h.percentile(.nan) == h.min)
        #expect(LoadHistogram().percentile(50) == .zero && LoadHistogram().mean == .zero && LoadHistogram().count == 0)
    }

    @Test func durationsAreTruncatedToMicrosecondsAndOutOfRangeValuesClamped() {
        var h = LoadHistogram()
        h.record(.milliseconds(1.5))
        h.record(.nanoseconds(2_999))
        #expect(h.min == .microseconds(2) && h.max == .microseconds(1_500) && h.belowRange == 0)
        h.record(.nanoseconds(400))
        h.record(.seconds(-3))
        #expect(h.belowRange == 2 && h.min == .microseconds(1) && h.buckets[0] == 2)
        h.record(.seconds(2 * 3_600))
        h.record(.seconds(Int64.max))
        #expect(h.aboveRange == 2 && h.max == .microseconds(Scheme.highest) && h.buckets[Scheme.bucketCount - 1] == 2)
        #expect(h.count == 6 && h.sumMicroseconds == 1_500 + 2 + 1 + 1 + 2 * Scheme.highest)
        #expect(LoadHistogram.microseconds(.seconds(Int64.max)) == .max)
    }
}
