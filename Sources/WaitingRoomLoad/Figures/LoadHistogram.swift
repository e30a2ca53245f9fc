/// A latency histogram that adds up: `waitingroom load`'s shards each record their users'
/// durations into one, and the merge of their histograms is exactly the histogram one process
/// would have recorded (same buckets, count, minimum, maximum and sum, so every percentile).
///
/// Values are microseconds in fixed log-linear buckets (``Scheme``: 128 per power of two, 1 µs
/// to 2^32 − 1 µs ≈ 71.6 minutes). A percentile reports its bucket's upper bound, clamped into
/// the exact minimum … maximum: at most 1/128 ≈ 0.78 % above the recorded value it stands for,
/// never below. Values outside the range are recorded as the range's end (the first or last
/// bucket; minimum, maximum and sum see the clamped value) and counted in ``belowRange`` and
/// ``aboveRange``.
///
/// Memory: a dense array of 3,327 `UInt64` counts (26 KiB), allocated on the first value (an
/// empty histogram holds none). Recording is a shift and an increment, with no hashing and no
/// allocation; merging adds two arrays; equality compares them. A sparse dictionary would save
/// memory only for histograms with a few hundred distinct buckets at most, and a load keeps a
/// handful of histograms per process, not one per user. The JSON form (``json``) is sparse.
package struct LoadHistogram: Sendable, Equatable {
    /// Values per bucket, indexed by ``Scheme/index(of:)``; empty exactly when ``count`` is 0.
    package private(set) var buckets: [UInt64] = []
    /// How many values were recorded.
    package private(set) var count: UInt64 = 0
    /// The sum of the recorded (clamped) values, in microseconds: exact (saturating at
    /// `UInt64.max`, half a million years).
    package private(set) var sumMicroseconds: UInt64 = 0
    /// The smallest recorded (clamped) value in microseconds; 0 when empty.
    package private(set) var minMicroseconds: UInt64 = 0
    /// The largest recorded (clamped) value in microseconds; 0 when empty.
    package private(set) var maxMicroseconds: UInt64 = 0
    /// Values below ``Scheme/lowest`` (under 1 µs, or negative), recorded as 1 µs.
    package private(set) var belowRange: UInt64 = 0
    /// Values above ``Scheme/highest`` (about 71.6 minutes), recorded as the highest.
    package private(set) var aboveRange: UInt64 = 0

    /// An empty histogram.
    package init() {}

    /// A histogram of exactly these fields, for ``init(json:)`` once it has checked them.
    init(buckets: [UInt64], count: UInt64, sum: UInt64, min: UInt64, max: UInt64, belowRange: UInt64, aboveRange: UInt64) {
        self.buckets = buckets
        self.count = count
        self.sumMicroseconds = sum
        self.minMicroseconds = min
        self.maxMicroseconds = max
        self.belowRange = belowRange
        self.aboveRange = aboveRange
    }

    /// Records a duration, truncated to whole microseconds.
    package mutating func record(_ value: Duration) {
        record(microseconds: Self.microseconds(value))
    }

    /// Records a value in microseconds.
    package mutating func record(microseconds value: UInt64) {
        var v = value
        if v < Scheme.lowest {
            belowRange += 1
            v = Scheme.lowest
        } else if v > Scheme.highest {
            aboveRange += 1
            v = Scheme.highest
        }
        if buckets.isEmpty { buckets = Array(repeating: 0, count: Scheme.bucketCount) }
        buckets[Scheme.index(of: v)] += 1
        minMicroseconds = count == 0 ? v : Swift.min(minMicroseconds, v)
        maxMicroseconds = count == 0 ? v : Swift.max(maxMicroseconds, v)
        count += 1
        sumMicroseconds = Self.add(sumMicroseconds, v)
    }

    /// The smallest recorded value (.zero when empty).
    package var min: Duration { .microseconds(minMicroseconds) }
    /// The largest recorded value (.zero when empty).
    package var max: Duration { .microseconds(maxMicroseconds) }
    /// The mean of the recorded values, from the exact sum, truncated to the attosecond (.zero
    /// when empty).
    package var mean: Duration { count > 0 ? .microseconds(sumMicroseconds) / count : .zero }

    /// The nearest-rank percentile `p` (0…100; outside is clamped, NaN read as 0): the upper
    /// bound of the bucket holding the value of rank ⌈p × count ÷ 100⌉ (at least 1), clamped into
    /// ``min`` … ``max``; the first rank reports ``min`` and the last ``max`` exactly. At most
    /// ``Scheme/relativeError`` above the recorded value of that rank, never below; .zero when
    /// empty.
    package func percentile(_ p: Double) -> Duration {
        .microseconds(percentileMicroseconds(p))
    }

    /// ``percentile(_:)`` in microseconds (0 when empty).
    package func percentileMicroseconds(_ p: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let fraction = p.isNaN ? 0 : Swift.min(100, Swift.max(0, p)) / 100
        let rank = Swift.min(count, Swift.max(1, UInt64((fraction * Double(count)).rounded(.up))))
        if rank == 1 { return minMicroseconds }
        if rank == count { return maxMicroseconds }
        var seen: UInt64 = 0
        for (index, n) in buckets.enumerated() where n > 0 {
            seen += n
            if seen >= rank {
                return Swift.min(maxMicroseconds, Swift.max(minMicroseconds, Scheme.upperBound(ofBucket: index)))
            }
        }
        return maxMicroseconds
    }

    /// Adds `other`'s values to this histogram: the result is the histogram of both samples.
    package mutating func merge(_ other: LoadHistogram) {
        guard other.count > 0 else { return }
        guard count > 0 else {
            self = other
            return
        }
        // saturating, so thousands of files each claiming 2^53 values cannot trap
        for index in buckets.indices { buckets[index] = Self.add(buckets[index], other.buckets[index]) }
        minMicroseconds = Swift.min(minMicroseconds, other.minMicroseconds)
        maxMicroseconds = Swift.max(maxMicroseconds, other.maxMicroseconds)
        count = Self.add(count, other.count)
        sumMicroseconds = Self.add(sumMicroseconds, other.sumMicroseconds)
        belowRange = Self.add(belowRange, other.belowRange)
        aboveRange = Self.add(aboveRange, other.aboveRange)
    }

    /// This histogram and `other`'s values together.
    package func merging(_ other: LoadHistogram) -> LoadHistogram {
        var merged = self
        merged.merge(other)
        return merged
    }

    /// `value` in whole microseconds, truncated; 0 for a negative duration, `UInt64.max` past
    /// what a `UInt64` holds.
    package static func microseconds(_ value: Duration) -> UInt64 {
        let (seconds, attoseconds) = value.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return .max }
        return add(whole, UInt64(attoseconds / 1_000_000_000_000))
    }

    /// `a + b`, or `UInt64.max` past it.
    static func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
