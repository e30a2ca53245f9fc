import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting
import WebDriver

/// Cloudflare's own Python SDK (the `cloudflare` package on PyPI, which `Scripts/setup` installs
/// into a venv) drives the emulator's `/client/v4` (issue 50 §4): rooms and an event created,
/// read, replaced, patched, listed and deleted, status and event details read, a page preview,
/// bad input refused with each field named; then the rooms it made serve traffic on `/cf`.
@Suite struct ManagementSDKTests {
    /// The venv's Python: `$WAITINGROOM_CLOUDFLARE_PYTHON`, else
    /// `${XDG_CACHE_HOME:-~/.cache}/waitingroom/pyenv/bin/python3` (where `Scripts/setup` makes it).
    static var python: String {
        let env = ProcessInfo.processInfo.environment
        if let p = env["WAITINGROOM_CLOUDFLARE_PYTHON"], !p.isEmpty { return p }
        let cache = env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.cache")
        return cache + "/waitingroom/pyenv/bin/python3"
    }

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scripts/cloudflare_sdk_check.py").path
    }

    @Test func cloudflaresPythonSDKManagesRoomsAndEvents() async throws {
        let python = Self.python
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "\(python) is missing: run Scripts/setup (it makes that venv and installs Cloudflare's Python SDK, pip install cloudflare)")
        let h = try await EmulatorHarness.start(CloudflareEmulator(configuration: .testRooms))
        defer { Task { await h.stop() } }
        let script = Self.script
        let base = h.baseURL + CloudflareEmulator.apiPrefix
        let (status, output) = try await DedicatedThread.run(name: "cloudflare-sdk") {
            try SpawnedProcess.run(python, arguments: [script, base], stderr: .pipe)
        }
        let text = String(decoding: output, as: UTF8.self)
        try #require(status == 0, "the SDK script failed (exit \(status)): \(text.suffix(4000))")
        let line = try #require(text.split(separator: "\n").last { $0.hasPrefix("{") }, "no JSON line: \(text.suffix(2000))")
        let r = try JSONValue.parse(String(line))

        // create: an id of 32 hex digits, the fields given, Cloudflare's defaults for the rest
        let created = try #require(r["created"]?.objectValue)
        let id = try #require(created["id"]?.stringValue)
        #expect(id.count == 32 && id.allSatisfy(\.isHexDigit), "\(id)")
        #expect(
            created["name"] == .string("sdk_shop") && created["host"] == .string("shop.example.com")
                && created["path"] == .string("/sdk-shop"))
        #expect(created["new_users_per_minute"] == .number(200) && created["total_active_users"] == .number(300))
        #expect(created["session_duration"] == .number(5) && created["queueing_method"] == .string("fifo"))
        #expect(created["queueing_status_code"] == .number(200) && created["json_response_enabled"] == .bool(true))
        #expect(created["description"] == .string("made by the SDK") && created["default_template_language"] == .string("en-US"))
        #expect(created["cookie_attributes"] == .object(["samesite": .string("strict"), "secure": .string("always")]))
        #expect(created["created_on"]?.stringValue != nil)
        #expect(r["got"] == r["created"])
        #expect(r["status"]?["status"] == .string("not_queueing") && r["status"]?["event_id"] == .string(""))
        #expect(r["status"]?["estimated_queued_users"] == .number(0))

        // the event: its id, the times as sent, the overrides; details fill in nothing here
        let event = try #require(r["event_created"]?.objectValue)
        let eventID = try #require(event["id"]?.stringValue)
        #expect(eventID.count == 32 && eventID != id)
        #expect(event["name"] == .string("launch") && event["shuffle_at_event_start"] == .bool(true))
        #expect(event["new_users_per_minute"] == .number(400) && event["description"] == .string("the launch"))
        #expect(event["queueing_method"] == nil || event["queueing_method"] == .null, "not set: inherited")
        #expect(r["event_got"]?["id"] == .string(eventID))
        #expect(r["event_details"]?["queueing_method"] == .string("fifo"), "inherited from the room in details")
        #expect(r["event_details"]?["session_duration"] == .number(5) && r["event_details"]?["new_users_per_minute"] == .number(400))
        #expect(r["created"]?["next_event_start_time"] == nil || r["created"]?["next_event_start_time"] == .null)

        // PUT resets what it does not give (description back to ""), PATCH changes only what it gives
        #expect(r["replaced"]?["id"] == .string(id) && r["replaced"]?["session_duration"] == .number(10))
        #expect(r["replaced"]?["description"] == .string("") && r["replaced"]?["new_users_per_minute"] == .number(250))
        #expect(r["replaced"]?["next_event_start_time"]?.stringValue != nil, "the event is the room's next")
        #expect(r["patched"]?["description"] == .string("patched") && r["patched"]?["queueing_method"] == .string("random"))
        #expect(r["patched"]?["session_duration"] == .number(10) && r["patched"]?["total_active_users"] == .number(350))
        #expect(r["event_replaced"]?["id"] == .string(eventID) && r["event_replaced"]?["name"] == .string("launch2"))
        #expect(r["event_replaced"]?["shuffle_at_event_start"] == .bool(false), "PUT: not given, back to the default")
        #expect(r["event_patched"]?["suspended"] == .bool(true) && r["event_patched"]?["name"] == .string("launch2"))
        #expect(r["event_patched"]?["queueing_method"] == .string("fifo"))
        #expect(r["event_patched"]?["description"] == .string("replaced"), "PATCH: not given, kept")
        #expect(r["events"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [eventID])

        // lists: every room (the configured ones too), paged as asked
        let names = Set(r["rooms"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
        #expect(names.isSuperset(of: ["sdk_shop", "sdk_open", "sdk_queue", "open", "line"]), "\(names)")
        #expect(r["rooms_page_2_of_5"]?.arrayValue?.count == min(5, max(0, names.count - 5)))

        // bad input: 400, each bad field named in Cloudflare's error form
        let bad = try #require(r["bad_create"]?.objectValue)
        #expect(bad["status"] == .number(400) && bad["type"] == .string("BadRequestError"))
        #expect(bad["body"]?["success"] == .bool(false))
        let pointers = Set(bad["body"]?["errors"]?.arrayValue?.compactMap { $0["source"]?["pointer"]?.stringValue } ?? [])
        #expect(pointers == ["/name", "/host", "/new_users_per_minute"], "\(bad)")
        let badEventPointers = Set(
            r["bad_event"]?["body"]?["errors"]?.arrayValue?.compactMap { $0["source"]?["pointer"]?.stringValue } ?? [])
        #expect(
            r["bad_event"]?["status"] == .number(400) && badEventPointers.contains("/event_start_time"),
            "\(String(describing: r["bad_event"]))")

        // deletes answer the id; reads after them are 404 in the envelope
        #expect(r["event_deleted"]?["id"] == .string(eventID))
        #expect(r["event_after_delete"]?["status"] == .number(404))
        #expect(r["deleted"]?["id"] == .string(id))
        let gone = try #require(r["after_delete"]?.objectValue)
        #expect(gone["status"] == .number(404) && gone["type"] == .string("NotFoundError"))
        #expect(gone["body"]?["success"] == .bool(false) && gone["body"]?["result"] == .null)
        #expect(gone["body"]?["errors"]?.arrayValue?.first?["code"] == .number(Double(CloudflareV4ErrorCode.roomNotFound.rawValue)))

        // the rooms the SDK made serve traffic at once on /cf, matched by path
        let transport = AsyncHTTPTransport.shared
        let json: HTTPHeaderList = [("Accept", "application/json")]
        let open = try await transport.send(HTTPRequest(url: h.siteURL + "/sdk-open/cart", headers: json))
        #expect(open.status == 200 && open.text.contains("\"origin\""), "\(open.status) \(open.text)")
        #expect(open.headers.value(for: "Set-Cookie")?.hasPrefix("__cfwaitingroom=") == true)
        let queued = try await transport.send(HTTPRequest(url: h.siteURL + "/sdk-queue", headers: json))
        #expect(queued.status == 202, "queueing_status_code 202")
        #expect(try JSONValue.parse(Data(queued.body))["cfWaitingRoom"]?["queueAll"] == .bool(true), "\(queued.text)")
        let deleted = try await transport.send(HTTPRequest(url: h.siteURL + "/sdk-shop", headers: json))
        #expect(deleted.headers.value(for: "Set-Cookie") == nil, "a deleted room covers nothing: \(deleted.text)")

        // the preview URL renders the uploaded page
        let previewURL = try #require(r["preview"]?["preview_url"]?.stringValue)
        let preview = try await transport.send(HTTPRequest(url: previewURL + "?waitTime=50"))
        #expect(preview.status == 200 && preview.text == "<p>50 minutes</p>", "\(preview.text)")
        let hidden = try await transport.send(HTTPRequest(url: previewURL + "?force_queue=true"))
        #expect(hidden.text == "<p></p>", "queue_all: the wait is unknown")
    }
}
