import AsyncHTTPClient
import CloudflareEmulator
import Foundation
import NIOCore
import Testing

/// A client written from Cloudflare's JSON-mode documentation alone, with no code of this
/// package's client: request the protected URL with the header `Accept: application/json` (that
/// value exactly), send back the waiting-room cookie the previous response set, and while the
/// body is `{"cfWaitingRoom": {…}}` ask again after `refreshIntervalSeconds`; any other response
/// is the origin's (developers.cloudflare.com/waiting-room/how-to/json-response/).
@Suite("Cloudflare plain HTTP client")
struct PlainHTTPClientTests {
    @Test func waitsInTheEmulatorsRoomAndGetsThrough() async throws {
        let emulator = CloudflareEmulator(configuration: .testRooms)
        let h = try await EmulatorHarness.start(emulator)
        defer { Task { await h.stop() } }
        let url = h.baseURL + "/cf/line/tickets"
        var cookie: String?
        var queuedReplies = 0
        var through: String?
        for _ in 0..<60 {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            if let cookie { request.headers.add(name: "Cookie", value: cookie) }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 20)
            for line in response.headers["Set-Cookie"] where line.hasPrefix("__cfwaitingroom") {
                cookie = String(line.split(separator: ";")[0])
            }
            let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
            guard let room = object?["cfWaitingRoom"] as? [String: Any] else {
                through = String(buffer: body)
                break
            }
            queuedReplies += 1
            #expect(room["inWaitingRoom"] as? Bool == true)
            #expect([200, 202, 429].contains(Int(response.status.code)))
            if queuedReplies == 2 { emulator.admit(room: "line", count: 1) }
            let refresh = room["refreshIntervalSeconds"] as? Int ?? 20
            try await Task.sleep(for: .seconds(refresh))
        }
        #expect(queuedReplies == 2)
        #expect(through?.contains("cloudflare-emulator") == true)
        #expect(emulator.counters.visitorsCreated == 1)
    }
}
