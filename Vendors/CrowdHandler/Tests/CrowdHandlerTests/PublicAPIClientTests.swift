import CrowdHandlerEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP

/// A client written from CrowdHandler's public API alone (plain HTTP and JSON, none of this
/// package's CrowdHandler types), its base URL pointed at the emulator: create a session, poll
/// until promoted, record a response.
@Suite("CrowdHandler public API client", .timeLimit(.minutes(2)))
struct PublicAPIClientTests {
    struct Plain {
        let base: String
        let key = "any-public-key"

        func call(_ method: String, _ path: String, json: [String: Any]? = nil) async throws -> (Int, [String: Any]) {
            var headers: HTTPHeaderList = [("x-api-key", key)]
            var body: [UInt8]?
            if let json {
                headers.add("Content-Type", "application/json")
                body = Array(try JSONSerialization.data(withJSONObject: json))
            }
            let r = try await AsyncHTTPTransport.shared.send(
                HTTPRequest(method: method, url: base + path, headers: headers, body: body, timeout: .seconds(30)))
            let object = (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:]
            return (r.status, object["result"] as? [String: Any] ?? [:])
        }
    }

    @Test func createPollUntilPromotedAndRecordAResponse() async throws {
        let h = try await EmulatorHarness.start()
        let api = Plain(base: h.baseURL)
        let url = h.baseURL + "/site/line?item=1"
        let (status, created) = try await api.call(
            "POST", "/v1/requests", json: ["url": url, "ip": "127.0.0.1", "agent": "plain", "lang": "en"])
        #expect(status == 200)
        #expect(created["promoted"] as? Int == 0)
        #expect(created["slug"] as? String == "line")
        #expect(created["position"] as? Int == 1)
        let token = try #require(created["token"] as? String)
        #expect(token.hasPrefix("tok"))

        var promoted: [String: Any] = [:]
        var polls = 0
        let query = "?url=\(url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")&agent=plain&lang=en"
        while polls < 50 {
            polls += 1
            if polls == 3 {
                _ = try await AsyncHTTPTransport.shared.send(
                    HTTPRequest(
                        method: "POST", url: h.baseURL + "/_emulator/crowdhandler/rooms/line/admit",
                        headers: [("Content-Type", "application/json")], body: Array(#"{"count": 1}"#.utf8), timeout: .seconds(30)))
            }
            let (s, r) = try await api.call("GET", "/v1/requests/\(token)\(query)")
            #expect(s == 200)
            #expect(r["token"] as? String == token, "the session keeps its token")
            if r["promoted"] as? Int == 1 {
                promoted = r
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(polls == 3)
        let responseID = try #require(promoted["responseID"] as? String)
        #expect((promoted["hash"] as? String)?.count == 64)
        #expect(promoted["requested"] is String)

        let (putStatus, recorded) = try await api.call("PUT", "/v1/responses/\(responseID)", json: ["code": 200, "time": 123])
        #expect(putStatus == 200)
        #expect(recorded["responseID"] as? String == responseID)
        #expect(h.emulator.counters.responsesRecorded == 1)
        #expect(h.emulator.counters.sessionsCreated == 1)
        #expect(h.emulator.counters.sessionsChecked == 3)

        let (roomsStatus, _) = try await api.call("GET", "/v1/rooms")
        #expect(roomsStatus == 200)
        await h.stop()
    }

    @Test func theWaitingPageIsALivePage() async throws {
        let h = try await EmulatorHarness.start()
        let r = try await AsyncHTTPTransport.shared.send(
            HTTPRequest(url: h.baseURL + "/line?url=x&ch-id=&ch-public-key=k", timeout: .seconds(30)))
        #expect(r.status == 200)
        let html = r.text
        #expect(html.contains("role=\"progressbar\""))
        #expect(html.contains("aria-valuenow"))
        #expect(html.contains("fetch("))
        #expect(html.contains("location.assign"))
        #expect(!html.contains("src=\"http"), "no external assets")
        #expect(!html.contains("http-equiv=\"refresh\""), "no full-page refresh")
        let missing = try await AsyncHTTPTransport.shared.send(HTTPRequest(url: h.baseURL + "/nowhere", timeout: .seconds(30)))
        #expect(missing.status == 404)
        await h.stop()
    }
}
