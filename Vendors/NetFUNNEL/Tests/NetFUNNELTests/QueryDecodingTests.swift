import Foundation
import Testing

@testable import NetFUNNELEmulator

/// The emulator's byte-level query decoder gives what Foundation's `removingPercentEncoding` and
/// `trimmingCharacters(in: .whitespaces)` would, including their failure cases.
@Suite("NetFUNNEL emulator query decoding")
struct QueryDecodingTests {
    static func reference(_ query: String) -> [String: String] {
        var parameters: [String: String] = [:]
        for piece in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let rawName = String(parts[0])
            let rawValue = parts.count > 1 ? String(parts[1]) : ""
            let name = rawName.removingPercentEncoding ?? rawName
            let value = rawValue.removingPercentEncoding ?? rawValue
            parameters[name.trimmingCharacters(in: .whitespaces)] = value.trimmingCharacters(in: .whitespaces)
        }
        return parameters
    }

    @Test func knownCases() {
        #expect(
            NetFUNNELEmulator.decodeQuery("opcode=5101&sid=service_1&aid=seg%20A&js=yes") == [
                "opcode": "5101", "sid": "service_1", "aid": "seg A", "js": "yes"
            ])
        #expect(
            NetFUNNELEmulator.decodeQuery("a=%zz&b=%4&c=%E2%82%AC&d=%FF&e=+x+") == [
                "a": "%zz", "b": "%4", "c": "€", "d": "\u{FFFD}", "e": "+x+"
            ])
        #expect(NetFUNNELEmulator.decodeQuery("k=%20%09v%20&&=x&flag") == ["k": "v", "": "x", "flag": ""])
    }

    /// Random queries whose escapes decode to UTF-8 (Foundation's handling of bytes that are not
    /// UTF-8 differs between platforms; the decoder repairs them with U+FFFD).
    @Test func matchesFoundationOnRandomQueries() {
        let atoms = [
            "a", "b", "=", "&", "%20", "%zz", "%4", "%E2%82%AC", "%41", "%3D", "%26", "%09", " ", "\t", "+", ".", "~", "é", "\u{00A0}",
            "%C2%A0"
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...16, using: &generator)
            let query = (0..<length).map { _ in atoms.randomElement(using: &generator) ?? "a" }.joined()
            #expect(NetFUNNELEmulator.decodeQuery(query) == Self.reference(query), "query \(query.debugDescription)")
        }
    }
}
