import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

/// The emulator's `/client/v4` over plain HTTP: the envelope on every answer, typed errors for
/// bad input (never a crash), rooms by id and by name, the admin routes beside it, and the
/// page-template renderer.
@Suite struct ManagementAPITests {
    static let rooms = "/client/v4/zones/z/waiting_rooms"

    static func send(_ h: EmulatorHarness, _ method: String, _ path: String, _ body: String? = nil) async throws -> (
        status: Int, json: JSONValue
    ) {
        let r = try await AsyncHTTPTransport.shared.send(
            HTTPRequest(
                method: method, url: h.baseURL + path, headers: body == nil ? [] : [("Content-Type", "application/json")],
                body: body.map { Array($0.utf8) }))
        return (r.status, try JSONValue.parse(Data(r.body)))
    }

    static func iso(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: date)
    }

    static func pointers(_ json: JSONValue) -> Set<String> {
        Set(json["errors"]?.arrayValue?.compactMap { $0["source"]?["pointer"]?.stringValue } ?? [])
    }

    @Test func badInputIsATypedErrorNamingEachField() async throws {
        let h = try await EmulatorHarness.start(CloudflareEmulator(configuration: .testRooms))
        defer { Task { await h.stop() } }
        for body in ["{", "[]", "\"x\"", ""] {
            let r = try await Self.send(h, "POST", Self.rooms, body)
            #expect(r.status == 400 && r.json["success"] == .bool(false), "\(body): \(r.json)")
            #expect(r.json["errors"]?.arrayValue?.first?["code"] == .number(Double(CloudflareV4ErrorCode.invalidBody.rawValue)))
        }
        let missing = try await Self.send(h, "POST", Self.rooms, "{}")
        #expect(missing.status == 400)
        #expect(Self.pointers(missing.json) == ["/name", "/host", "/new_users_per_minute", "/total_active_users"], "\(missing.json)")
        let types = try await Self.send(
            h, "POST", Self.rooms,
            """
            {"name": "a", "host": "a.example", "new_users_per_minute": "200", "total_active_users": 200.5, "queue_all": 1,
             "queueing_method": "lifo", "session_duration": 31, "queueing_status_code": 201, "path": "shop", "colour": "red",
             "cookie_attributes": {"samesite": "loose"}}
            """)
        #expect(
            Self.pointers(types.json) == [
                "/new_users_per_minute", "/total_active_users", "/queue_all", "/queueing_method", "/session_duration",
                "/queueing_status_code", "/path", "/colour", "/cookie_attributes/samesite"
            ], "\(types.json)")
        // a value only the emulator's own rules refuse still names its field
        let suffix = try await Self.send(
            h, "POST", Self.rooms,
            #"{"name": "a", "host": "a.example", "new_users_per_minute": 200, "total_active_users": 200, "cookie_suffix": "a=b"}"#)
        #expect(suffix.status == 400 && Self.pointers(suffix.json) == ["/cookie_suffix"], "\(suffix.json)")
        // taken name and path
        let taken = try await Self.send(
            h, "POST", Self.rooms,
            #"{"name": "open", "host": "a.example", "path": "/line", "new_users_per_minute": 200, "total_active_users": 200}"#)
        #expect(taken.status == 400 && Self.pointers(taken.json) == ["/name", "/path"], "\(taken.json)")
        // unknown ids, routes and pages
        for (method, path) in [
            ("GET", "/nope"), ("DELETE", "/nope"), ("PATCH", "/nope"), ("GET", "/nope/status"), ("GET", "/nope/events"),
            ("GET", "/open/events/0123"), ("GET", "/open/events/0123/details"), ("DELETE", "/open/events/0123")
        ] {
            let r = try await Self.send(h, method, Self.rooms + path, method == "PATCH" ? "{}" : nil)
            #expect(r.status == 404 && r.json["success"] == .bool(false) && r.json["result"] == .null, "\(method) \(path): \(r.json)")
        }
        let noRoute = try await Self.send(h, "GET", "/client/v4/zones/z/dns_records")
        #expect(noRoute.status == 404 && noRoute.json["errors"]?.arrayValue?.first?["code"] == .number(7003))
        let paging = try await Self.send(h, "GET", Self.rooms + "?per_page=7&page=0")
        #expect(Self.pointers(paging.json) == ["/page", "/per_page"], "\(paging.json)")
        // events: required fields, the rules across fields, overlaps
        let event = try await Self.send(
            h, "POST", Self.rooms + "/open/events",
            #"{"name": "e", "event_start_time": "2030-01-01T00:00:00Z", "event_end_time": "2030-01-01T01:00:00Z", "prequeue_start_time": "2029-12-31T23:50:00Z", "new_users_per_minute": 300}"#
        )
        #expect(Self.pointers(event.json) == ["/total_active_users"], "\(event.json)")
        let rules = try await Self.send(
            h, "POST", Self.rooms + "/open/events",
            #"{"name": "e", "event_start_time": "2030-01-01T00:00:00Z", "event_end_time": "2030-01-01T00:00:30Z", "prequeue_start_time": "2029-12-31T23:58:00Z"}"#
        )
        #expect(Self.pointers(rules.json) == ["/event_start_time", "/prequeue_start_time"], "\(rules.json)")
        let first = try await Self.send(
            h, "POST", Self.rooms + "/open/events",
            #"{"name": "e1", "event_start_time": "2030-01-01T00:00:00Z", "event_end_time": "2030-01-01T01:00:00Z"}"#)
        #expect(first.status == 200 && first.json["result"]?["id"]?.stringValue?.count == 32)
        let overlap = try await Self.send(
            h, "POST", Self.rooms + "/open/events",
            #"{"name": "e2", "event_start_time": "2030-01-01T00:30:00Z", "event_end_time": "2030-01-01T02:00:00Z"}"#)
        #expect(overlap.status == 400 && Self.pointers(overlap.json) == ["/event_start_time"], "\(overlap.json)")
        #expect(h.emulator.room(named: "open")?.events.map(\.name) == ["e1"], "a refused write leaves the room as it was")
    }

    @Test func configuredRoomsKeepTheirNameRoutesAndGetAStableID() async throws {
        let h = try await EmulatorHarness.start(CloudflareEmulator(configuration: .testRooms))
        defer { Task { await h.stop() } }
        let byName = try await Self.send(h, "GET", Self.rooms + "/line")
        let id = try #require(byName.json["result"]?["id"]?.stringValue)
        #expect(id.count == 32 && byName.json["result"]?["name"] == .string("line") && byName.json["result"]?["path"] == .string("/line"))
        let again = try await EmulatorHarness.start(CloudflareEmulator(configuration: .testRooms))
        defer { Task { await again.stop() } }
        #expect(try await Self.send(again, "GET", Self.rooms + "/line").json["result"]?["id"] == .string(id), "the same id in every run")
        #expect(try await Self.send(h, "GET", Self.rooms + "/\(id)/status").json["result"]?["status"] == .string("not_queueing"))
        // a PATCH by name keeps limits the API would refuse on create (the configured 0/min)
        let patched = try await Self.send(h, "PATCH", Self.rooms + "/\(id)", #"{"queue_all": true}"#)
        #expect(patched.status == 200 && patched.json["result"]?["new_users_per_minute"] == .number(0), "\(patched.json)")
        #expect(h.emulator.room(named: "line")?.queueAll == true)
        // the admin routes are still there, and see rooms the API made
        let made = try await Self.send(
            h, "POST", Self.rooms,
            #"{"name": "api", "host": "a.example", "path": "/api", "new_users_per_minute": 200, "total_active_users": 200}"#)
        #expect(made.status == 200)
        let admin = try await AsyncHTTPTransport.shared.send(
            HTTPRequest(
                method: "POST", url: h.baseURL + "/_emulator/cloudflare/rooms/api", headers: [("Content-Type", "application/json")],
                body: Array(#"{"suspended": true}"#.utf8)))
        #expect(admin.status == 200, "\(admin.text)")
        #expect(try await Self.send(h, "GET", Self.rooms + "/api").json["result"]?["suspended"] == .bool(true))
        // a rename carries the room along; its id stays
        let apiID = try #require(made.json["result"]?["id"]?.stringValue)
        let renamed = try await Self.send(h, "PATCH", Self.rooms + "/\(apiID)", #"{"name": "api2"}"#)
        #expect(
            renamed.json["result"]?["id"] == .string(apiID) && h.emulator.room(named: "api2") != nil && h.emulator.room(named: "api") == nil
        )
        h.emulator.reset()
        #expect(
            try await Self.send(h, "GET", Self.rooms + "/\(apiID)").json["result"]?["name"] == .string("api2"), "reset keeps rooms and ids")
    }

    @Test func statusNamesTheActiveEventByItsID() async throws {
        let clock = VirtualClock()
        let h = try await EmulatorHarness.start(CloudflareEmulator(configuration: .testRooms, now: { clock.now() }))
        defer { Task { await h.stop() } }
        let start = Self.iso(clock.now().addingTimeInterval(600))
        let end = Self.iso(clock.now().addingTimeInterval(3600))
        let pq = Self.iso(clock.now().addingTimeInterval(-60))
        let e = try await Self.send(
            h, "POST", Self.rooms + "/open/events",
            #"{"name": "sale", "event_start_time": "\#(start)", "event_end_time": "\#(end)", "prequeue_start_time": "\#(pq)"}"#)
        let id = try #require(e.json["result"]?["id"]?.stringValue, "\(e.json)")
        let status = try await Self.send(h, "GET", Self.rooms + "/open/status")
        #expect(
            status.json["result"]?["status"] == .string("event_prequeueing") && status.json["result"]?["event_id"] == .string(id),
            "\(status.json)")
    }

    @Test func pageTemplateRendersTheDocumentedSubsetAndAnyText() {
        let v: [String: JSONValue] = ["a": .string("<b>"), "yes": .bool(true), "no": .bool(false), "n": .number(3)]
        #expect(CloudflarePageTemplate.render("{{a}}|{{{a}}}|{{& a}}|{{n}}|{{missing}}", v) == "&lt;b&gt;|<b>|<b>|3|")
        #expect(CloudflarePageTemplate.render("{{#yes}}Y{{#no}}N{{/no}}{{/yes}}{{^no}}!{{/no}}{{! note}}", v) == "Y!")
        #expect(CloudflarePageTemplate.render("open {{a", v) == "open {{a")
        #expect(CloudflarePageTemplate.render("{{#yes}}runs on", v) == "runs on")
        let deep = String(repeating: "{{#yes}}", count: 10_000) + "x" + String(repeating: "{{/yes}}", count: 10_000)
        #expect(CloudflarePageTemplate.render(deep, v) == "x")
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let pieces = ["{{", "}}", "{{{", "}}}", "#", "^", "/", "!", "&", "yes", "no", "a", " ", "x"]
            let text = (0..<40).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &rng)] }.joined()
            _ = CloudflarePageTemplate.render(text, v)
        }
    }
}
