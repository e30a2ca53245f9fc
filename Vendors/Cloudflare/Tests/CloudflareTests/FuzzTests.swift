import Cloudflare
import Foundation
import Testing
import WaitingRoom

/// The JSON-mode codec and the answer classifier never crash on outside input: every input is a
/// value or a `WaitingRoomError`.
@Suite("Cloudflare codec fuzz")
struct CloudflareFuzzTests {
    static let sample = Array(
        #"{"cfWaitingRoom":{"inWaitingRoom":true,"waitTimeKnown":true,"waitTime":5,"waitTime25Percentile":2,"waitTime50Percentile":5,"waitTime75Percentile":9,"waitTimeFormatted":"5 minutes","queueIsFull":false,"queueAll":false,"lastUpdated":"2021-08-03T23:46:00.000Z","refreshIntervalSeconds":20}}"#
            .utf8)

    @Test func documentedSampleDecodes() throws {
        let reply = try CloudflareWaitingRoomReply.decode(Self.sample)
        #expect(reply.inWaitingRoom && reply.waitTimeKnown)
        #expect(reply.waitTime == 5 && reply.waitTime25Percentile == 2 && reply.waitTime75Percentile == 9)
        #expect(reply.waitTimeFormatted == "5 minutes" && reply.refreshIntervalSeconds == 20)
        #expect(reply.lastUpdated == "2021-08-03T23:46:00.000Z")
        #expect(reply.estimatedWait == .seconds(300))
        #expect(try CloudflareWaitingRoomReply.decode(Array(reply.json.jsonText.utf8)) == reply)
    }

    @Test func wrongTypesAreInvalidResponses() {
        for body in [
            #"{"cfWaitingRoom":{"waitTime":"five"}}"#, #"{"cfWaitingRoom":{"queueIsFull":1}}"#, #"{"cfWaitingRoom":[]}"#,
            #"{"cfWaitingRoom":{"waitTime":-3}}"#, #"{"cfWaitingRoom":{"waitTime":1e300}}"#, "[1,2]", "", "{"
        ] {
            do {
                _ = try CloudflareWaitingRoomReply.decode(Array(body.utf8))
                Issue.record("decoded \(body)")
            } catch {
                #expect(error.kind == .invalidResponse && error.vendorCode == CloudflareCode.invalidReply.rawValue)
            }
        }
    }

    @Test func randomMutationsNeverCrash() {
        var rng = SystemRandomNumberGenerator()
        var decoded = 0
        for _ in 0..<5000 {
            var bytes = Self.sample
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[i] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.remove(at: i)
                default: bytes.insert(UInt8.random(in: 32...126, using: &rng), at: i)
                }
                if bytes.isEmpty { bytes = [0x7b] }
            }
            if (try? CloudflareWaitingRoomReply.decode(bytes)) != nil { decoded += 1 }
            var jar = CloudflareCookieJar()
            let response = HTTPResponse(
                status: [200, 202, 429, 403, 503].randomElement(using: &rng) ?? 200,
                headers: [("Set-Cookie", String(decoding: bytes.prefix(40), as: UTF8.self))], body: bytes, url: "http://x")
            _ = try? CloudflareClient.classify(response, jar: &jar)
        }
        #expect(decoded >= 0)
    }

    @Test func cookieJarKeepsOnlyWaitingRoomCookies() {
        var jar = CloudflareCookieJar()
        jar.store([
            ("Set-Cookie", "__cfwaitingroom=abc; Path=/; HttpOnly"), ("Set-Cookie", "session=xyz; Path=/"),
            ("Set-Cookie", "__cfwaitingroom_shop=def; Max-Age=300")
        ])
        #expect(jar.cookies == ["__cfwaitingroom": "abc", "__cfwaitingroom_shop": "def"])
        #expect(jar.header == "__cfwaitingroom=abc; __cfwaitingroom_shop=def")
        jar.store([("Set-Cookie", "__cfwaitingroom=; Max-Age=0")])
        #expect(jar.cookies == ["__cfwaitingroom_shop": "def"])
        #expect(CloudflareCookieJar(cookieHeader: "a=1; __cfwaitingroom=z").cookies == ["__cfwaitingroom": "z"])
    }

    @Test func classification() throws {
        var jar = CloudflareCookieJar()
        let origin = try CloudflareClient.classify(
            HTTPResponse(
                status: 200, headers: [("Set-Cookie", "__cfwaitingroom=v1")],
                body: Array("{\"ok\":true}".utf8), url: "u"), jar: &jar)
        guard case .origin(let o) = origin else {
            Issue.record("expected origin, got \(origin)")
            return
        }
        #expect(o.cookieHeld && !o.revoked)
        let queued = try CloudflareClient.classify(HTTPResponse(status: 429, body: Self.sample, url: "u"), jar: &jar)
        guard case .queued(_, let status) = queued else {
            Issue.record("expected queued, got \(queued)")
            return
        }
        #expect(status == 429)
        #expect(throws: WaitingRoomError.self) { try CloudflareClient.classify(HTTPResponse(status: 403, url: "u"), jar: &jar) }
        do {
            _ = try CloudflareClient.classify(HTTPResponse(status: 503, url: "u"), jar: &jar)
        } catch {
            #expect(error.kind == .server && error.vendorCode == 503)
        }
    }
}
