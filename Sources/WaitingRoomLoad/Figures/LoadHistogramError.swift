import WaitingRoom

/// Why ``LoadHistogram/init(json:)`` refused a histogram's JSON; each case names the field
/// (`count`, `scheme.subBucketBits`, `buckets[3]`, …).
package enum LoadHistogramError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The field is absent.
    case missingField(String)
    /// The field is there but not of the shape expected (described in words).
    case wrongType(field: String, expected: String)
    /// The field is not a whole number in the range it must be in (a negative count, a
    /// fraction, more than 2^53).
    case notACount(field: String, found: JSONValue, range: String)
    /// The histogram was bucketed by another scheme: the field's value differs from this
    /// build's (`nil`: absent on that side).
    case otherScheme(field: String, found: JSONValue?, expected: JSONValue?)
    /// A bucket index past the scheme's last bucket.
    case bucketOutOfRange(field: String, index: Int)
    /// A bucket index not above the one before it (repeated or out of order).
    case bucketOutOfOrder(field: String, index: Int)
    /// The fields contradict each other (the count is not the sum of the buckets, the minimum
    /// is not in the first bucket, …).
    case inconsistent(field: String, reason: String)

    /// The field the error is about.
    package var field: String {
        switch self {
        case .missingField(let field), .wrongType(let field, _), .notACount(let field, _, _), .otherScheme(let field, _, _),
            .bucketOutOfRange(let field, _), .bucketOutOfOrder(let field, _), .inconsistent(let field, _):
            field
        }
    }

    /// One line: `load histogram: count: …`.
    package var description: String {
        let problem =
            switch self {
            case .missingField: "missing"
            case .wrongType(_, let expected): "expected \(expected)"
            case .notACount(_, let found, let range): "\(found) is not a whole number \(range)"
            case .otherScheme(_, let found, let expected):
                "bucketed by another scheme: \(found.map { "\($0)" } ?? "absent") here, \(expected.map { "\($0)" } ?? "absent") expected"
            case .bucketOutOfRange(_, let index): "bucket index \(index) is past the last bucket, \(LoadHistogram.Scheme.bucketCount - 1)"
            case .bucketOutOfOrder(_, let index): "bucket index \(index) is not above the index before it"
            case .inconsistent(_, let reason): reason
            }
        return "load histogram: \(field): \(problem)"
    }
}
