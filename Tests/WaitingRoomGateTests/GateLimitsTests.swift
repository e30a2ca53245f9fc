import Testing
import WaitingRoomGate

/// Oversize and malformed requests are refused before any vendor logic (issue 29 §4).
@Suite struct GateLimitsTests {
    let limits = GateLimits(maxHeaderCount: 8, maxHeaderBytes: 512, maxHeaderValueBytes: 256, maxURLBytes: 256, maxBodyBytes: 1024)

    @Test func withinBoundsPasses() {
        #expect(limits.refusal(for: GateRequest(url: "http://a/b", headers: [GateHeader("Accept", "*/*")], bodyLength: 10)) == nil)
    }

    @Test func oversizeURLIs414() {
        #expect(limits.refusal(for: GateRequest(url: "http://a/" + String(repeating: "x", count: 300)))?.response?.status == 414)
    }

    @Test func oversizeHeaderValueIs431() {
        let r = GateRequest(url: "http://a/", headers: [GateHeader("Cookie", String(repeating: "c", count: 300))])
        #expect(limits.refusal(for: r)?.response?.status == 431)
    }

    @Test func tooManyHeadersIs431() {
        let r = GateRequest(url: "http://a/", headers: (0..<9).map { GateHeader("X-\($0)", "v") })
        #expect(limits.refusal(for: r)?.response?.status == 431)
    }

    @Test func headersTooLargeInAllIs431() {
        let r = GateRequest(url: "http://a/", headers: (0..<4).map { GateHeader("X-\($0)", String(repeating: "v", count: 200)) })
        #expect(limits.refusal(for: r)?.response?.status == 431)
    }

    @Test func oversizeBodyIs413() {
        #expect(limits.refusal(for: GateRequest(method: "POST", url: "http://a/", bodyLength: 4096))?.response?.status == 413)
    }

    @Test func controlCharacterInHeaderIs400() {
        let r = GateRequest(url: "http://a/", headers: [GateHeader("X-A", "a\u{1}b")])
        #expect(limits.refusal(for: r)?.verdict == .refuse)
    }
}
