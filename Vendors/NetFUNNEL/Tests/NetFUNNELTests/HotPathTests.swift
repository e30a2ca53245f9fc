import Foundation
import Testing

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

/// The emulator's and the codec's per-request code, checked against the plain text rules it
/// replaced (Foundation trimming, `lowercased()`, `map`/`joined` rendering, `Set` lookups).
@Suite struct HotPathTests {
    @Test func javaScriptDialectIsCaseInsensitive() {
        for js in ["yes", "YES", "Yes", "true", "TRUE", "tRuE", "no", "", "yes ", " yes", "ye", "yess", "ｙｅｓ", "truе", "1"] {
            let request = NetFUNNELIncomingRequest(parameters: ["js": js])
            let lowered = js.lowercased()
            #expect(request.wantsJavaScript == (lowered == "yes" || lowered == "true"), "\(js)")
        }
        #expect(!NetFUNNELIncomingRequest(parameters: [:]).wantsJavaScript)
    }

    @Test func opcodeIgnoresBlanksAtTheEnds() {
        for text in ["5002", " 5002", "5002\t", "\u{3000}5002", "5002\u{00A0}", "+5002", "-1", "50 02", "", " ", "x", "5002x", "٥٠٠٢"] {
            let request = NetFUNNELIncomingRequest(parameters: ["opcode": text])
            #expect(request.opcode == Int(text.trimmingCharacters(in: .whitespaces)), "\(text)")
        }
        #expect(NetFUNNELIncomingRequest(parameters: [:]).opcode == nil)
    }

    /// The encoding rule spelled out: `%XX` outside printable ASCII minus `&=:;'"\%<>`, and for
    /// a space at either end.
    static func referenceEncode(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var out = ""
        for (index, byte) in bytes.enumerated() {
            let plain = (0x20...0x7E).contains(byte) && !Array("&=:;'\"\\%<>".utf8).contains(byte)
            if plain && !(byte == 0x20 && (index == 0 || index == bytes.count - 1)) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    @Test func valueEncodingMatchesTheRule() {
        let samples = [
            "", " ", "  ", "plain", "Wrong Server ID", " lead", "trail ", "a&b=c:d;e'f\"g\\h%i<j>k", "é", "tab\there", "\u{7F}",
            "50% off", "日本語", "a b c", "~!@#$^*()_+-[]{}|,./?`"
        ]
        for text in samples {
            #expect(NetFUNNELReply.encodeValue(text) == Self.referenceEncode(text), "\(text)")
            #expect(NetFUNNELReply.decodeValue(NetFUNNELReply.encodeValue(text)) == text, "\(text)")
        }
    }

    /// Rendering as `map`/`joined` wrote it.
    static func referenceRendered(_ reply: NetFUNNELReply) -> String {
        let parameters = reply.parameters.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        switch reply.envelope {
        case .native:
            return "\(reply.code):" + parameters
        case .javascript(let prefix):
            let token = (reply.requestType.map { "\($0):" } ?? "") + "\(reply.code):" + parameters
            return prefix + "NetFunnel.gControl.result='" + token + "';NetFunnel.gControl._showResult();"
        }
    }

    @Test func renderingMatchesTheTextForm() throws {
        let parameters: [NetFUNNELReply.Parameter] = [.init("key", "ABC"), .init("nwait", "3"), .init("empty", ""), .init("msg", "\"x y\"")]
        let replies = [
            NetFUNNELReply(code: 201, parameters: parameters),
            NetFUNNELReply(code: 200),
            NetFUNNELReply(envelope: .javascript(prefix: "NetFunnel.gRtype=5101;"), requestType: 5002, code: 201, parameters: parameters),
            NetFUNNELReply(envelope: .javascript(prefix: ""), requestType: nil, code: 502, parameters: [.init("msg", "\"é\"")])
        ]
        for reply in replies {
            #expect(reply.rendered() == Self.referenceRendered(reply))
            #expect(reply.parameterString == reply.parameters.map { "\($0.name)=\($0.value)" }.joined(separator: "&"))
            #expect(try NetFUNNELReply.parse(reply.rendered()).parameters == reply.parameters)
        }
    }

    @Test func textAndBytesParseAlike() {
        let bodies = [
            "NetFunnel.gControl.result='5002:201:key=K&nwait=1';", "201:key=K", "", "   ", "<html>", "x",
            "NetFunnel.gControl.result='5002:201",
            "201:" + String(repeating: "a", count: NetFUNNELReply.maximumBodySize), "\u{FEFF}201:key=é&x= y "
        ]
        for body in bodies {
            let fromText = Result { () throws(NetFUNNELReplyError) in try NetFUNNELReply.parse(body) }
            let fromBytes = Result { () throws(NetFUNNELReplyError) in try NetFUNNELReply.parse(Array(body.utf8)) }
            #expect(fromText == fromBytes, "\(body.prefix(40))")
        }
    }

    @Test func keysKeepTheirShape() {
        var state = NetFUNNELServerState(configuration: .demo)
        let issued = state.handle(
            NetFUNNELIncomingRequest(parameters: ["opcode": "5101", "sid": "service_1", "aid": "segKey_basic"]), now: Date())
        let key = issued.key ?? ""
        #expect(key.utf8.count == 60)
        #expect(key.hasPrefix("0000000000000001") && key.hasSuffix("4E4634454D55"))
        #expect(key.allSatisfy { $0.isHexDigit && !$0.isLowercase })
        let body = Array(key.dropFirst(16).prefix(16))
        let mirrored = Array(key.dropFirst(32).prefix(16))
        #expect(Array(body.reversed()) == mirrored)
        let checked = state.handle(
            NetFUNNELIncomingRequest(parameters: ["opcode": "5002", "key": key, "sid": "service_1", "aid": "segKey_basic"]),
            now: Date())
        let short = checked.key ?? ""
        #expect(short.utf8.count == 36 && short.hasPrefix("0000000000000001") && short.hasSuffix("4E46"), "\(checked)")
    }
}
