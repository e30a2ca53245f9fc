import WaitingRoom

extension LoadHistogram {
    /// The fixed log-linear bucket scheme every ``LoadHistogram`` uses, HDR-style: a value in
    /// microseconds keeps its ``subBucketBits`` + 1 most significant binary digits.
    ///
    /// - Values 1 … 255 µs (below 2 × ``subBuckets``) each have a bucket of their own: exact.
    /// - Above, each power of two [2^e, 2^(e+1)) is cut into ``subBuckets`` (128) equal buckets
    ///   of width 2^(e − 7), so a bucket's width is at most 1/128 of its lower bound.
    ///
    /// A bucket is reported as its upper bound (the largest value that falls in it), so a
    /// recorded value `v` is reported as some `r` with `v ≤ r < v × (1 + 1/128)`: at most
    /// ``relativeError`` (0.78 %) above, never below. The range is ``lowest`` (1 µs) to
    /// ``highest`` (2^32 − 1 µs ≈ 71.6 minutes) in ``bucketCount`` (3,327) buckets.
    package enum Scheme {
        /// Binary digits kept below the leading one: 2^7 = 128 buckets per power of two.
        package static let subBucketBits = 7
        /// Buckets per power of two above the exact range.
        package static let subBuckets: UInt64 = 1 << UInt64(subBucketBits)
        /// The smallest value a bucket holds, in microseconds; smaller ones count in the first bucket.
        package static let lowest: UInt64 = 1
        /// The largest value a bucket holds, in microseconds (2^32 − 1, ≈ 71.6 minutes); larger
        /// ones count in the last bucket.
        package static let highest: UInt64 = (1 << 32) - 1
        /// How many buckets there are: indices 0 ..< bucketCount.
        package static let bucketCount = index(of: highest) + 1
        /// The bound on how far above a recorded value its bucket's reported value lies, relative
        /// to the value: 1 ÷ ``subBuckets`` = 1/128 ≈ 0.78 % (strictly less in fact).
        package static let relativeError = 1 / Double(subBuckets)

        /// The bucket holding `value` (clamped into ``lowest`` … ``highest``).
        package static func index(of value: UInt64) -> Int {
            let v = Swift.min(Swift.max(value, lowest), highest)
            // how far the value is shifted right to keep subBucketBits + 1 binary digits
            let magnitude = UInt64(v.bitWidth - v.leadingZeroBitCount - 1)
            let shift = magnitude > UInt64(subBucketBits) ? magnitude - UInt64(subBucketBits) : 0
            // shift s ≥ 1 covers [2^(s+7), 2^(s+8)), where v >> s is 128 … 255: index s × 128 + (v >> s) − 1
            return Int(shift * subBuckets + (v >> shift) - lowest)
        }

        /// The smallest value bucket `index` holds (`index` in 0 ..< ``bucketCount``).
        package static func lowerBound(ofBucket index: Int) -> UInt64 {
            let position = UInt64(index) + lowest
            guard position >= 2 * subBuckets else { return position }
            let shift = position / subBuckets - 1
            return (position - shift * subBuckets) << shift
        }

        /// The largest value bucket `index` holds: the value a percentile in it reports.
        package static func upperBound(ofBucket index: Int) -> UInt64 {
            index + 1 < bucketCount ? lowerBound(ofBucket: index + 1) - 1 : highest
        }

        /// The scheme's parameters as a histogram's JSON carries them, so a reader refuses a
        /// histogram bucketed another way.
        package static var json: JSONValue {
            .object([
                "name": .string("log-linear"), "unit": .string("microseconds"),
                "subBucketBits": .number(Double(subBucketBits)), "lowest": .number(Double(lowest)),
                "highest": .number(Double(highest)), "buckets": .number(Double(bucketCount))
            ])
        }
    }
}
