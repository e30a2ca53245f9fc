import Foundation
import Testing
import WaitingRoom
import WaitingRoomLoad

/// Issue 52 §2: a load histogram's JSON (what `load --json` writes and `load merge` reads):
/// exact round trips, and a typed error naming the field for JSON it must refuse.
@Suite("load histogram JSON")
struct LoadHistogramJSONTests {
    /// A histogram with values in and out of range.
    static let example: LoadHistogram = {
        var h = LoadHistogram()
        for v in LoadHistogramTests.sample(count: 3_000, seed: 5) { h.record(microseconds: v) }
        return h
    }()

    /// `example`'s JSON with `change` applied to its members.
    static func edited(_ change: (inout [String: JSONValue]) -> Void) -> JSONValue {
        var object = example.json.objectValue ?? [:]
        change(&object)
        return .object(object)
    }

    /// The error reading `json` throws, or nil.
    static func error(_ json: JSONValue) -> LoadHistogramError? {
        do {
            _ = try LoadHistogram(json: json)
            return nil
        } catch {
            return error
        }
    }

    @Test func roundTripsExactlyThroughJSONText() throws {
        var small = LoadHistogram()
        small.record(.microseconds(200))
        for h in [LoadHistogram(), small, Self.example] {
            #expect(try LoadHistogram(json: h.json) == h)
            let text = h.json.jsonText
            let back = try LoadHistogram(json: try JSONValue.parse(text))
            #expect(back == h && back.json.jsonText == text)
            for p in LoadHistogramTests.percentiles { #expect(back.percentile(p) == h.percentile(p)) }
        }
        let sparse = Self.example.json["buckets"]?.arrayValue ?? []
        #expect(sparse.count == Self.example.buckets.filter { $0 > 0 }.count, "only non-empty buckets")
        #expect(LoadHistogram().json["buckets"] == .array([]))
        #expect(small.json["buckets"] == .array([.array([.number(199), .number(1)])]))
    }

    @Test func refusesAnotherSchemeNamingTheParameter() {
        #expect(Self.error(Self.edited { $0["scheme"] = nil }) == .missingField("scheme"))
        let fewer = Self.edited {
            var scheme = $0["scheme"]?.objectValue ?? [:]
            scheme["subBucketBits"] = .number(6)
            $0["scheme"] = .object(scheme)
        }
        #expect(Self.error(fewer) == .otherScheme(field: "scheme.subBucketBits", found: .number(6), expected: .number(7)))
        let extra = Self.edited {
            var scheme = $0["scheme"]?.objectValue ?? [:]
            scheme["base"] = .number(10)
            $0["scheme"] = .object(scheme)
        }
        #expect(Self.error(extra)?.field == "scheme.base")
        #expect(Self.error(Self.edited { $0["scheme"] = .string("hdr") }) == .wrongType(field: "scheme", expected: "an object"))
    }

    @Test func refusesMissingFieldsAndNumbersThatAreNotCounts() {
        for field in ["count", "sumMicroseconds", "minMicroseconds", "maxMicroseconds", "belowRange", "aboveRange", "buckets"] {
            #expect(Self.error(Self.edited { $0[field] = nil }) == .missingField(field))
        }
        #expect(Self.error(Self.edited { $0["count"] = .number(-1) })?.field == "count")
        #expect(Self.error(Self.edited { $0["count"] = .number(2.5) })?.field == "count")
        #expect(Self.error(Self.edited { $0["minMicroseconds"] = .string("3") })?.field == "minMicroseconds")
        #expect(Self.error(.array([])) == .wrongType(field: "histogram", expected: "an object"))
    }

    @Test func refusesBadBuckets() {
        func buckets(_ pairs: [[Double]]) -> JSONValue {
            Self.edited { $0["buckets"] = .array(pairs.map { .array($0.map { .number($0) }) }) }
        }
        #expect(Self.error(buckets([[3, -2]])) == .notACount(field: "buckets[0][1]", found: .number(-2), range: "from 1 to 2^53"))
        #expect(Self.error(buckets([[3, 0]]))?.field == "buckets[0][1]")
        #expect(Self.error(buckets([[3327, 1]])) == .bucketOutOfRange(field: "buckets[0]", index: 3_327))
        #expect(Self.error(buckets([[-1, 1]]))?.field == "buckets[0][0]")
        #expect(Self.error(buckets([[5, 1], [5, 1]])) == .bucketOutOfOrder(field: "buckets[1]", index: 5))
        #expect(Self.error(buckets([[6, 1], [5, 1]])) == .bucketOutOfOrder(field: "buckets[1]", index: 5))
        #expect(
            Self.error(Self.edited { $0["buckets"] = .array([.array([.number(1)])]) })
                == .wrongType(field: "buckets[0]", expected: "[index, count]"))
        #expect(Self.error(Self.edited { $0["buckets"] = .number(1) })?.field == "buckets")
    }

    @Test func refusesFieldsThatContradictEachOther() {
        let count = Double(Self.example.count)
        #expect(Self.error(Self.edited { $0["count"] = .number(count + 1) })?.field == "count")
        #expect(
            Self.error(Self.edited { $0["minMicroseconds"] = .number(Double(Self.example.minMicroseconds) + 1_000) })?.field
                == "minMicroseconds")
        #expect(Self.error(Self.edited { $0["maxMicroseconds"] = .number(1) })?.field == "maxMicroseconds")
        #expect(Self.error(Self.edited { $0["belowRange"] = .number(count) })?.field == "belowRange")
        #expect(Self.error(Self.edited { $0["aboveRange"] = .number(count) })?.field == "aboveRange")
        #expect(Self.error(Self.edited { $0["sumMicroseconds"] = .number(0) })?.field == "sumMicroseconds")
        let empty = LoadHistogram().json.objectValue ?? [:]
        var claimsAMinimum = empty
        claimsAMinimum["minMicroseconds"] = .number(5)
        #expect(Self.error(.object(claimsAMinimum)) == .inconsistent(field: "minMicroseconds", reason: "5 in an empty histogram"))
        #expect(LoadHistogramError.missingField("count").description == "load histogram: count: missing")
    }
}
