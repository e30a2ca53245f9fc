import Foundation
import Testing

@testable import NetFUNNEL

@Suite("NetFUNNEL codec")
struct CodecTests {
    // MARK: requests

    @Test func request5101HasJSDialectParametersInOrder() throws {
        let request = NetFUNNELRequest(
            opcode: .issueAndEnter, projectKey: "service_1", segmentKey: "segKey_8612", userData: "user 1",
            timestampMillis: 1_712_345_678_901)
        #expect(request.queryItems.map(\.name) == ["opcode", "nfid", "prefix", "sid", "aid", "js", "user_data", "1712345678901"])
        #expect(
            request.query
                == "opcode=5101&nfid=0&prefix=NetFunnel.gRtype%3D5101%3B&sid=service_1&aid=segKey_8612&js=yes&user_data=user%201&1712345678901"
        )
        let url = try #require(request.url(base: URL(string: "https://tenant-0001.example.test")!))
        #expect(url.absoluteString.hasPrefix("https://tenant-0001.example.test/ts.wseq?opcode=5101&"))
    }

    @Test func request5002EchoesTTLAndKey() {
        let request = NetFUNNELRequest(
            opcode: .checkEnter, key: "ABC", ttl: 8, projectKey: "p", segmentKey: "s", timestampMillis: 5)
        #expect(request.queryItems.map(\.name) == ["opcode", "key", "nfid", "prefix", "ttl", "sid", "aid", "js", "5"])
        let noTTL = NetFUNNELRequest(opcode: .checkEnter, key: "ABC", ttl: 0, projectKey: "p", segmentKey: "s", timestampMillis: 5)
        #expect(!noTTL.queryItems.map(\.name).contains("ttl"))
    }

    @Test func request5003And5004() {
        let alive = NetFUNNELRequest(opcode: .aliveNotice, key: "K", ttl: 5, projectKey: "p", segmentKey: "s", timestampMillis: 9)
        #expect(alive.queryItems.map(\.name) == ["opcode", "key", "nfid", "prefix", "sid", "aid", "js", "9"])
        let complete = NetFUNNELRequest(
            opcode: .complete, key: "K", projectKey: "p", segmentKey: "s", userData: "u", timestampMillis: 9)
        #expect(complete.queryItems.map(\.name) == ["opcode", "key", "nfid", "prefix", "user_data", "js", "9"])
    }

    @Test func urlKeepsExplicitPath() throws {
        let request = NetFUNNELRequest(opcode: .issueAndEnter, projectKey: "p", segmentKey: "s", timestampMillis: 1)
        let url = try #require(request.url(base: URL(string: "http://127.0.0.1:8080/ts.wseq")!))
        #expect(url.path == "/ts.wseq")
        let nested = try #require(request.url(base: URL(string: "http://127.0.0.1:8080/nf/")!))
        #expect(nested.path == "/nf/ts.wseq")
    }

    // MARK: replies

    @Test func parsesJSPassWith256CharKey() throws {
        let reply = try NetFUNNELReply.parse(try TestSupport.fixture("replies/js_5101_pass.js"))
        #expect(reply.code == 200)
        #expect(reply.status == .success)
        #expect(reply.requestType == 5002)
        #expect(reply.key?.count == 256)
        #expect(reply.ip == "nf1.example.test")
        #expect(reply.port == 443)
        #expect(reply.tps == 0)
        #expect(reply.envelope == .javascript(prefix: "NetFunnel.gRtype=5101;"))
    }

    @Test func parsesSpacedVariant() throws {
        let reply = try NetFUNNELReply.parse(try TestSupport.fixture("replies/js_5002_wait_spaced.js"))
        #expect(reply.code == 201)
        #expect(reply.requestType == 5002)
        #expect(reply.key == "ABCDEF0123")
        #expect(reply.nwait == 1532)
        #expect(reply.nnext == 410)
        #expect(reply.tps == 37.5)
        #expect(reply.ttl == 8)
        #expect(reply.clampedTTL == 8)
    }

    @Test func keepsNF4ExtrasAndUnknownFields() throws {
        let reply = try NetFUNNELReply.parse(try TestSupport.fixture("replies/js_nf4_extras.js"))
        #expect(reply.vwrPageURL?.host == "vwr.example.test")
        #expect(reply.vwrType == "")
        #expect(reply.checkEnterCount == 1)
        #expect(reply.sticky == "nf4")
        let custom = try NetFUNNELReply.parse("200:key=A&zzz=1&weird=a=b=c")
        #expect(custom["zzz"] == "1")
        #expect(custom["weird"] == "a=b=c")
        #expect(custom.parameters.count == 3)
    }

    @Test func releasedKeyIsEmptyAndErrorsCarryMessage() throws {
        let released = try NetFUNNELReply.parse(try TestSupport.fixture("replies/js_5004_released.js"))
        #expect(released.requestType == 5004)
        #expect(released.key == "")
        let wrong = try NetFUNNELReply.parse(try TestSupport.fixture("replies/js_5004_wrong_server.js"))
        #expect(wrong.status == .wrongServer)
        #expect(wrong.message == "Wrong Server ID")
        #expect(wrong.key == nil)
    }

    @Test func parsesNativeDialect() throws {
        let reply = try NetFUNNELReply.parse(try TestSupport.fixture("replies/native_201.txt"))
        #expect(reply.envelope == .native)
        #expect(reply.requestType == nil)
        #expect(reply.code == 201)
        #expect(reply.ip == "10.0.0.7")
        #expect(reply.port == 80)
        let bare = try NetFUNNELReply.parse("505")
        #expect(bare.code == 505 && bare.parameters.isEmpty)
    }

    @Test func newestKeyWins() throws {
        let reply = try NetFUNNELReply.parse("NetFunnel.gControl.result='5002:201:key=OLD&nwait=1&key=NEW';")
        #expect(reply.key == "NEW")
        #expect(reply.envelope == .javascript(prefix: ""))
    }

    @Test func doubleQuotesAndValueWithEquals() throws {
        let reply = try NetFUNNELReply.parse("x;NetFunnel.gControl.result=\"5002:200:key=A==&ip=h\";")
        #expect(reply.key == "A==")
        #expect(reply.code == 200)
    }

    @Test func longKeysAreKept() throws {
        let key = String(repeating: "AB12", count: 1024)
        let reply = try NetFUNNELReply.parse("5002:201:key=\(key)&nwait=3")
        #expect(reply.key == key)
        #expect(reply.requestType == 5002)
    }

    @Test func absurdNumbersAreClampedOrIgnored() throws {
        let reply = try NetFUNNELReply.parse("201:nwait=99999999999999999999999&nnext=-4&tps=NaN&ttl=1e300&port=70000")
        #expect(reply.nwait == NetFUNNELReply.numberCeiling)
        #expect(reply.nnext == nil)
        #expect(reply.tps == nil)
        #expect(reply.ttl == NetFUNNELReply.numberCeiling)
        #expect(reply.clampedTTL == 30)
        #expect(reply.port == nil)
        #expect(NetFUNNELReply.clampTTL(0) == 1)
        #expect(NetFUNNELReply.clampTTL(nil) == 1)
        #expect(NetFUNNELReply.clampTTL(12) == 12)
    }

    @Test func badBodiesAreTypedErrors() throws {
        #expect(throws: NetFUNNELReplyError.empty) { try NetFUNNELReply.parse("  \n ") }
        #expect(throws: NetFUNNELReplyError.self) { try NetFUNNELReply.parse(try TestSupport.fixture("replies/html_502.html")) }
        #expect(throws: NetFUNNELReplyError.unterminatedToken) { try NetFUNNELReply.parse("NetFunnel.gControl.result='5002:200:key=A") }
        #expect(throws: NetFUNNELReplyError.invalidCode("2000")) { try NetFUNNELReply.parse("2000:x=1") }
        #expect(throws: NetFUNNELReplyError.self) { try NetFUNNELReply.parse("hello world") }
        let huge = [UInt8](repeating: 0x41, count: NetFUNNELReply.maximumBodySize + 1)
        #expect(throws: NetFUNNELReplyError.tooLarge(bytes: huge.count, limit: NetFUNNELReply.maximumBodySize)) {
            try NetFUNNELReply.parse(huge)
        }
    }

    @Test func renderRoundTrips() throws {
        let reply = NetFUNNELReply(
            envelope: .javascript(prefix: "NetFunnel.gRtype=5101;"), requestType: 5002, code: 201,
            parameters: [.init("key", "K"), .init("nwait", "3"), .init("x", "a=b")])
        #expect(try NetFUNNELReply.parse(reply.rendered()) == reply)
        var native = reply
        native.envelope = .native
        native.requestType = nil
        #expect(try NetFUNNELReply.parse(native.rendered()) == native)
    }

    // MARK: code table

    @Test func codeTableDispositions() {
        #expect(NetFUNNELStatusCode.success.disposition == .pass)
        #expect(NetFUNNELStatusCode.bypass.disposition == .pass)
        #expect(NetFUNNELStatusCode.express.disposition == .pass)
        #expect(NetFUNNELStatusCode.continue.disposition == .wait)
        #expect(NetFUNNELStatusCode.block.disposition == .block)
        #expect(NetFUNNELStatusCode.macroBlock.disposition == .block)
        #expect(NetFUNNELStatusCode.waitingRoomClosed.disposition == .close)
        #expect(NetFUNNELStatusCode.networkTimeout.disposition == .networkError)
        #expect(NetFUNNELStatusCode.noKey.disposition == .serverError)
        #expect(NetFUNNELStatusCode.disposition(of: 599) == .serverError)
        #expect(Set(NetFUNNELStatusCode.allCases.map(\.rawValue)).count == NetFUNNELStatusCode.allCases.count)
    }

    // MARK: progress

    @Test func etaNeverIncreasesAndProgressUsesLargestNwait() {
        var tracker = NetFUNNELProgressTracker()
        let first = tracker.update(nwait: 100, nnext: 5, tps: 10)
        #expect(first.etaSeconds == 10 && first.waitTime == "00:00:10" && first.progressRate == 0)
        let second = tracker.update(nwait: 150, nnext: nil, tps: 2)  // would be 75 s
        #expect(second.etaSeconds == 10 && second.progressRate == 0 && second.behindWait == 0)
        let third = tracker.update(nwait: 75, nnext: 1, tps: 0)
        #expect(third.progressRate == 50)
        #expect(third.etaSeconds == 10)
        #expect(NetFUNNELProgressTracker.format(seconds: 3 * 3600 + 62) == "03:01:02")
    }
}
