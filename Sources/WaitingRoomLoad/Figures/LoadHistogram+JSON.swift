import WaitingRoom

/// A ``LoadHistogram`` in `waitingroom load --json`, and read back by `load merge`:
///
///     {"scheme": {"name": "log-linear", "unit": "microseconds", "subBucketBits": 7, "lowest": 1,
///                 "highest": 4294967295, "buckets": 3327},
///      "count": 3, "sumMicroseconds": 1500, "minMicroseconds": 200, "maxMicroseconds": 900,
///      "belowRange": 0, "aboveRange": 0, "buckets": [[199, 1], [304, 2]]}
///
/// Sparse: only non-empty buckets, as `[index, count]` in rising index order. Every number is
/// a whole number no larger than 2^53, so a JSON double holds it exactly and the round trip
/// is exact.
extension LoadHistogram {
    /// The largest whole number a JSON number (a double) holds exactly: 2^53.
    static let largestExact: UInt64 = 1 << 53

    /// The histogram as JSON (see the type's comment).
    package var json: JSONValue {
        let sparse: [JSONValue] = buckets.enumerated().compactMap { index, n in
            n > 0 ? .array([.number(Double(index)), .number(Double(n))]) : nil
        }
        return .object([
            "scheme": Scheme.json, "count": .number(Double(count)), "sumMicroseconds": .number(Double(sumMicroseconds)),
            "minMicroseconds": .number(Double(minMicroseconds)), "maxMicroseconds": .number(Double(maxMicroseconds)),
            "belowRange": .number(Double(belowRange)), "aboveRange": .number(Double(aboveRange)), "buckets": .array(sparse)
        ])
    }

    /// Reads ``json``'s form back; refuses (``LoadHistogramError``, naming the field) a
    /// histogram of another bucket scheme, a missing field, a number that is not a whole count,
    /// a bucket index out of range or out of order, and fields that contradict each other.
    package init(json: JSONValue) throws(LoadHistogramError) {
        guard let object = json.objectValue else { throw .wrongType(field: "histogram", expected: "an object") }
        try Self.checkScheme(object["scheme"])
        let count = try Self.whole(object, "count")
        let sum = try Self.whole(object, "sumMicroseconds")
        let min = try Self.whole(object, "minMicroseconds")
        let max = try Self.whole(object, "maxMicroseconds")
        let below = try Self.whole(object, "belowRange")
        let above = try Self.whole(object, "aboveRange")
        let buckets = try Self.readBuckets(object["buckets"])
        let histogram = LoadHistogram(buckets: buckets, count: count, sum: sum, min: min, max: max, belowRange: below, aboveRange: above)
        try histogram.checkConsistent()
        self = histogram
    }

    /// Refuses a scheme other than this build's, naming the first parameter that differs.
    static func checkScheme(_ found: JSONValue?) throws(LoadHistogramError) {
        guard let found else { throw .missingField("scheme") }
        guard let members = found.objectValue else { throw .wrongType(field: "scheme", expected: "an object") }
        let expected = Scheme.json.objectValue ?? [:]
        for key in Set(expected.keys).union(members.keys).sorted() where members[key] != expected[key] {
            throw .otherScheme(field: "scheme.\(key)", found: members[key], expected: expected[key])
        }
    }

    /// The member `key` of `object` as a whole number 0 … 2^53.
    static func whole(_ object: [String: JSONValue], _ key: String) throws(LoadHistogramError) -> UInt64 {
        guard let value = object[key] else { throw .missingField(key) }
        return try whole(value, field: key, atLeast: 0)
    }

    /// `value` as a whole number `atLeast` … 2^53, or an error naming `field`.
    static func whole(_ value: JSONValue, field: String, atLeast low: UInt64) throws(LoadHistogramError) -> UInt64 {
        guard let n = value.numberValue, n.rounded() == n, n >= Double(low), n <= Double(largestExact) else {
            throw .notACount(field: field, found: value, range: "from \(low) to 2^53")
        }
        return UInt64(n)
    }

    /// The sparse `[[index, count], …]` as the dense array (empty when there are none).
    static func readBuckets(_ found: JSONValue?) throws(LoadHistogramError) -> [UInt64] {
        guard let found else { throw .missingField("buckets") }
        guard let pairs = found.arrayValue else { throw .wrongType(field: "buckets", expected: "an array of [index, count]") }
        guard !pairs.isEmpty else { return [] }
        var buckets = Array(repeating: UInt64(0), count: Scheme.bucketCount)
        var previous = -1
        for (position, pair) in pairs.enumerated() {
            let field = "buckets[\(position)]"
            guard let members = pair.arrayValue, members.count == 2 else { throw .wrongType(field: field, expected: "[index, count]") }
            let index = try whole(members[0], field: field + "[0]", atLeast: 0)
            guard index < UInt64(Scheme.bucketCount) else { throw .bucketOutOfRange(field: field, index: Int(index)) }
            guard Int(index) > previous else { throw .bucketOutOfOrder(field: field, index: Int(index)) }
            buckets[Int(index)] = try whole(members[1], field: field + "[1]", atLeast: 1)
            previous = Int(index)
        }
        return buckets
    }

    /// Refuses fields that no sequence of ``record(microseconds:)`` and ``merge(_:)`` produces.
    func checkConsistent() throws(LoadHistogramError) {
        let total = buckets.reduce(UInt64(0)) { Self.add($0, $1) }
        guard total == count else { throw .inconsistent(field: "count", reason: "\(count), but the buckets hold \(total)") }
        guard let first = buckets.firstIndex(where: { $0 > 0 }), let last = buckets.lastIndex(where: { $0 > 0 }) else {
            for (field, value) in [
                ("sumMicroseconds", sumMicroseconds), ("minMicroseconds", minMicroseconds), ("maxMicroseconds", maxMicroseconds),
                ("belowRange", belowRange), ("aboveRange", aboveRange)
            ] where value != 0 {
                throw .inconsistent(field: field, reason: "\(value) in an empty histogram")
            }
            return
        }
        guard (Scheme.lowest...Scheme.highest).contains(minMicroseconds), Scheme.index(of: minMicroseconds) == first else {
            throw .inconsistent(field: "minMicroseconds", reason: "\(minMicroseconds) is not in the first non-empty bucket, \(first)")
        }
        guard (Scheme.lowest...Scheme.highest).contains(maxMicroseconds), Scheme.index(of: maxMicroseconds) == last,
            maxMicroseconds >= minMicroseconds, count > 1 || maxMicroseconds == minMicroseconds
        else {
            throw .inconsistent(
                field: "maxMicroseconds",
                reason: "\(maxMicroseconds) is not in the last non-empty bucket (\(last)), or not the minimum with one value")
        }
        guard belowRange <= buckets[0], belowRange == 0 || minMicroseconds == Scheme.lowest else {
            throw .inconsistent(field: "belowRange", reason: "\(belowRange), more than the first bucket's values at 1 µs")
        }
        guard aboveRange <= buckets[Scheme.bucketCount - 1], aboveRange == 0 || maxMicroseconds == Scheme.highest else {
            throw .inconsistent(field: "aboveRange", reason: "\(aboveRange), more than the last bucket's values at its top")
        }
        // the sum lies between count × min and count × max (unless saturated)
        let (low, lowOverflow) = count.multipliedReportingOverflow(by: minMicroseconds)
        let (high, highOverflow) = count.multipliedReportingOverflow(by: maxMicroseconds)
        guard lowOverflow || sumMicroseconds >= low, highOverflow || sumMicroseconds <= high else {
            throw .inconsistent(field: "sumMicroseconds", reason: "\(sumMicroseconds) is outside count × min … count × max")
        }
    }
}
