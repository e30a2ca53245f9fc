import Foundation
import Testing
import WaitingRoom

/// `JSONValue.parse`: what vendor answers, configuration files, emulator requests and
/// `wr.json.decode` go through.
@Suite("JSONValue parsing")
struct JSONValueTests {
    static func nested(_ levels: Int, open: String = "[", close: String = "]") -> String {
        String(repeating: open, count: levels) + String(repeating: close, count: levels)
    }

    /// Decoding cost grew with the cube of the depth (500 nested arrays, 1 KB, took 1.3 s of
    /// CPU), so a document nested deeper than `maximumDepth` is refused before it is decoded.
    @Test func nestingIsBoundedBeforeDecoding() throws {
        var value = try JSONValue.parse(Self.nested(JSONValue.maximumDepth))
        var depth = 0
        while case .array(let items) = value {
            depth += 1
            value = items.first ?? .null
        }
        #expect(depth == JSONValue.maximumDepth)
        let objects =
            String(repeating: #"{"a":"#, count: JSONValue.maximumDepth) + "1" + String(repeating: "}", count: JSONValue.maximumDepth)
        #expect(throws: Never.self) { try JSONValue.parse(objects) }
        for text in [
            Self.nested(JSONValue.maximumDepth + 1), Self.nested(100_000),
            String(repeating: #"{"a":["#, count: 40) + "1" + String(repeating: "]}", count: 40)
        ] {
            do {
                _ = try JSONValue.parse(text)
                Issue.record("parsed \(text.prefix(20))… of \(text.count) bytes")
            } catch let error as WaitingRoomError {
                #expect(error.kind == .invalidResponse)
                #expect(error.message.contains("nested more than \(JSONValue.maximumDepth) levels"), "\(error)")
            }
        }
    }

    /// Brackets inside strings are text, escaped quotes included.
    @Test func bracketsInStringsAreNotNesting() throws {
        let brackets = String(repeating: "[{", count: 200)
        let text = #"{"a": "\#(brackets)", "b": "say \"\#(brackets)\" twice", "c": ["\\", "]]]"]}"#
        let value = try JSONValue.parse(text)
        #expect(value["a"]?.stringValue == brackets)
        #expect(value["b"]?.stringValue == "say \"\(brackets)\" twice")
        #expect(value["c"] == .array([.string("\\"), .string("]]]")]))
        // malformed text is still the decoder's to refuse
        #expect(throws: WaitingRoomError.self) { try JSONValue.parse("]]]]") }
        #expect(throws: WaitingRoomError.self) { try JSONValue.parse(#"["unterminated"#) }
    }
}
