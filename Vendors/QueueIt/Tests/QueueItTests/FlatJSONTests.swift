import Foundation
import Testing

@testable import QueueIt
@testable import QueueItEmulator

/// The enqueue call's JSON fast paths (`QueueItFlatJSON`) give what the Foundation paths give,
/// and step aside (nil) for everything outside their subset.
@Suite struct FlatJSONTests {
    /// `QueueItEnqueueBody.decode` through Foundation only (the path before the fast one).
    static func foundationDecode(_ bytes: [UInt8]) -> Result<QueueItEnqueueBody, QueueItConfigurationError> {
        let value: Any
        do { value = try JSONSerialization.jsonObject(with: Data(bytes), options: []) } catch {
            return .failure(QueueItConfigurationError(field: "body", message: "body is not JSON"))
        }
        guard let obj = value as? [String: Any] else {
            return .failure(QueueItConfigurationError(field: "body", message: "body is not a JSON object"))
        }
        func str(_ k: String, required: Bool) throws(QueueItConfigurationError) -> String? {
            guard let v = obj[k], !(v is NSNull) else {
                if required { throw QueueItConfigurationError(field: k, message: "is required") }
                return nil
            }
            guard let s = v as? String else { throw QueueItConfigurationError(field: k, message: "must be a string") }
            return s
        }
        do throws(QueueItConfigurationError) {
            let token = try str("enqueueToken", required: false)
            let key = try str("enqueueKey", required: false)
            if token != nil && key != nil {
                throw QueueItConfigurationError(field: "enqueueKey", message: "enqueueToken and enqueueKey are exclusive")
            }
            var body = QueueItEnqueueBody(
                userId: try str("userId", required: true) ?? "", userAgent: try str("userAgent", required: true) ?? "",
                sdkVersion: try str("sdkVersion", required: true) ?? "", layoutName: try str("layoutName", required: false),
                language: try str("language", required: false))
            body.enqueueToken = token
            body.enqueueKey = key
            return .success(body)
        } catch {
            return .failure(error)
        }
    }

    static func decode(_ bytes: [UInt8]) -> Result<QueueItEnqueueBody, QueueItConfigurationError> {
        do throws(QueueItConfigurationError) { return .success(try QueueItEnqueueBody.decode(bytes)) } catch { return .failure(error) }
    }

    static let bodies = [
        #"{"userId":"u","userAgent":"a","sdkVersion":"s"}"#,
        #" { "userId" : "u" , "userAgent":"a/1 (x; y)","sdkVersion":"s", "layoutName": "", "language": "en-US" } "#,
        "{\n\t\"userId\":\"u\",\r\n\"userAgent\":\"a\",\"sdkVersion\":\"s\",\"enqueueToken\":\"t.t.t\"}",
        #"{"userId":"u","userAgent":"a","sdkVersion":"s","enqueueKey":"k"}"#,
        #"{"userId":"u","userAgent":"a","sdkVersion":"s","enqueueKey":"k","enqueueToken":"t"}"#,
        #"{"userId":"u","userAgent":"a","sdkVersion":"s","enqueueKey":null,"enqueueToken":"t"}"#,
        #"{"userId":null,"userAgent":"a","sdkVersion":"s"}"#,
        #"{"userAgent":"a","sdkVersion":"s"}"#,
        #"{"userId":"u","userAgent":"a","sdkVersion":"s","extra":"kept out"}"#,
        #"{}"#, #"{ }"#, #""#, #"  "#, #"[]"#, #""u""#, #"null"#, #"{"#, #"}"#, #"{"userId""#, #"{"userId":}"#,
        #"{"userId":"u",}"#, #"{,"userId":"u"}"#, #"{"userId":"u""userAgent":"a"}"#, #"{"userId":'u'}"#,
        #"{"userId":"u","userAgent":"a","sdkVersion":"s"} x"#, #"{"userId":"u","userAgent":"a","sdkVersion":"s"}{}"#,
        #"{"userId":1,"userAgent":"a","sdkVersion":"s"}"#, #"{"userId":true,"userAgent":"a","sdkVersion":"s"}"#,
        #"{"userId":["u"],"userAgent":"a","sdkVersion":"s"}"#, #"{"userId":{"a":"b"},"userAgent":"a","sdkVersion":"s"}"#,
        #"{"userId":"u\"v","userAgent":"a","sdkVersion":"s"}"#, #"{"userId":"\u0075","userAgent":"a","sdkVersion":"s"}"#,
        #"{"user\u0049d":"u","userAgent":"a","sdkVersion":"s"}"#, #"{"userId":"u","userId":"v","userAgent":"a","sdkVersion":"s"}"#,
        "{\"userId\":\"ü\",\"userAgent\":\"a\",\"sdkVersion\":\"s\"}", "{\"userId\":\"u\tv\",\"userAgent\":\"a\",\"sdkVersion\":\"s\"}",
        #"{"userId":nul,"userAgent":"a","sdkVersion":"s"}"#, #"{"userId":nulll,"userAgent":"a","sdkVersion":"s"}"#,
        #"{"userId":NULL,"userAgent":"a","sdkVersion":"s"}"#
    ]

    @Test func decodeMatchesFoundation() {
        for text in Self.bodies {
            let bytes = Array(text.utf8)
            #expect(Self.decode(bytes) == Self.foundationDecode(bytes), "\(text)")
        }
        var invalid = Array(#"{"userId":"u","userAgent":"a","sdkVersion":"s"}"#.utf8)
        invalid[11] = 0xFF
        #expect(Self.decode(invalid) == Self.foundationDecode(invalid))
    }

    @Test func fastReaderTakesOnlyItsSubset() {
        let expected: [String: String?] = ["a": "b", "c": String?.none]
        #expect(QueueItFlatJSON.parseObject(Array(#"{"a":"b","c":null}"#.utf8)) == expected)
        #expect(QueueItFlatJSON.parseObject(Array("{}".utf8)) == [:])
        for outside in [#"{"a":1}"#, #"{"a":"\n"}"#, #"{"a":"b","a":"c"}"#, "{\"a\":\"é\"}", #"{"a":"b"} 1"#, #"["a"]"#, "", #"{"a":"b""#] {
            #expect(QueueItFlatJSON.parseObject(Array(outside.utf8)) == nil, "\(outside)")
        }
    }

    @Test func encodedMatchesFoundation() {
        let answers = [
            QueueItEnqueueResponse(
                queueId: "00000001-ab12-0123456789ab", queueUrl: "http://127.0.0.1:8080/queueit/queue/demo/sale?c=demo&e=sale&q=1",
                eventTargetUrl: "http://127.0.0.1:8080/queueit/target/demo/sale", queueitToken: nil, queueUrlTTLInMinutes: 0),
            QueueItEnqueueResponse(
                queueId: nil, queueUrl: nil, eventTargetUrl: "https://shop.example/", queueitToken: "e_sale~q_1~ts_1~h_ab"),
            QueueItEnqueueResponse(),
            QueueItEnqueueResponse(queueId: "q", queueUrlTTLInMinutes: -5),
            QueueItEnqueueResponse(queueId: "quote\"inside", queueUrl: "back\\slash", eventTargetUrl: "tab\there"),
            QueueItEnqueueResponse(queueId: "ünïcödé", eventTargetUrl: "ctl\u{1}")
        ]
        for answer in answers {
            #expect(answer.encoded() == answer.foundationEncoded(), "\(answer)")
        }
    }
}

@Suite struct QueueIdTests {
    @Test func queueIdsReadAsThePrintfFormat() {
        var generator = SystemRandomNumberGenerator()
        let numbers: [UInt64] = [0, 1, 0xffff_ffff, 0x1_0000_0000, 0xfff_ffff_ffff_ffff, .max]
        for number in numbers
            + (0..<200).map({ _ in UInt64.random(in: 0...UInt64.max, using: &generator) >> UInt64.random(in: 0...63, using: &generator) })
        {
            let r = UInt64.random(in: 0...UInt64.max, using: &generator)
            #expect(
                QueueItEmulatorModel.queueId(number: number, random: r)
                    == String(format: "%08llx-%04llx-%012llx", number, (r >> 48) & 0xffff, r & 0xffff_ffff_ffff))
        }
    }
}
