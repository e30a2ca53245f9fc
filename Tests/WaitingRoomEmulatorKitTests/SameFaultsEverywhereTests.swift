import Testing
import WaitingRoom
import WaitingRoomEmulatorKit
import WaitingRoomEmulators
import WaitingRoomHTTP

/// Issue 26: every emulator accepts the same fault JSON on `POST /_emulator/<vendor>/faults`
/// (and its older form as an alias), injects it on the wire and reports it in the same
/// counters; the combined emulator drives them through `[any EmulatedVendor]`.
@Suite("Emulator kit: the same faults on every vendor, over loopback", .timeLimit(.minutes(2)))
struct SameFaultsEverywhereTests {
    /// One wire request of each vendor (a fault on `any` applies to it).
    static let wire: [String: HTTPRequest] = [
        "netfunnel": HTTPRequest(url: "/ts.wseq?opcode=5101&sid=service_1&aid=segKey_basic&js=yes"),
        "queueit": HTTPRequest(method: "POST", url: "/api/mobileapp/queue/demo/sale/enqueue", body: Array("{}".utf8)),
        "crowdhandler": HTTPRequest(
            method: "POST", url: "/v1/requests", headers: [("x-api-key", "k")], body: Array(#"{"url": "/site/demo-open"}"#.utf8)),
        "cloudflare": HTTPRequest(url: "/cf/demo-open", headers: [("Accept", "application/json")])
    ]
    /// The older form of each vendor, still accepted.
    static let legacy: [String: String] = [
        "netfunnel": #"{"opcode": 5002, "httpStatus": 503, "count": 2}"#,
        "queueit": #"{"kind": "nonjson", "on": "queue", "count": 2}"#,
        "crowdhandler": #"{"kind": "garbage", "on": "requests.get", "count": 2}"#,
        // Cloudflare's emulator has no older form: the kit's
        "cloudflare": #"{"action": "garbage", "on": "page", "count": 2}"#
    ]

    func send(_ request: HTTPRequest, to base: String) async throws -> HTTPResponse {
        var r = request
        r.url = base + r.url
        r.timeout = .seconds(30)
        return try await AsyncHTTPTransport.shared.send(r)
    }

    func faults(_ vendor: String, _ base: String) async throws -> [String: JSONValue] {
        let response = try await send(HTTPRequest(url: "/_emulator/\(vendor)/faults"), to: base)
        return try #require(try JSONValue.parse(response.text).objectValue)
    }

    @Test func everyVendorTakesTheSameFaultJSON() async throws {
        let suite = EmulatorSuite.demo()
        #expect(suite.vendors.map(\.vendorID) == ["netfunnel", "queueit", "crowdhandler", "cloudflare"])
        let server = try await suite.start()
        let base = server.baseURL
        for vendor in suite.vendors.map(\.vendorID) {
            let path = "/_emulator/\(vendor)/faults"
            let same = #"{"action": "status", "status": 503, "on": "any", "count": 1}"#
            let added = try await send(HTTPRequest(method: "POST", url: path, body: Array(same.utf8)), to: base)
            #expect(added.status == 200, "\(vendor): \(added.text)")
            #expect(try await faults(vendor, base)["faultsPending"] == .number(1))
            let hit = try await send(try #require(Self.wire[vendor]), to: base)
            #expect(hit.status == 503, "\(vendor): the fault answers the wire request")
            let counters = try await faults(vendor, base)
            #expect(counters["faultsInjected"] == .number(1) && counters["faultsPending"] == .number(0), "\(vendor): \(counters)")
            #expect(counters["faultsInjectedByAction"]?["status"] == .number(1))
            // the older form is an alias
            let old = try await send(HTTPRequest(method: "POST", url: path, body: Array(try #require(Self.legacy[vendor]).utf8)), to: base)
            #expect(old.status == 200, "\(vendor): \(old.text)")
            #expect(try await faults(vendor, base)["faultsPending"] == .number(2))
            // a bad one is refused naming the field; nothing is installed
            let bad = try await send(
                HTTPRequest(method: "POST", url: path, body: Array(#"[{"action": "drop"}, {"action": "drop", "count": 0}]"#.utf8)), to: base
            )
            #expect(bad.status == 400 && bad.text.contains("faults[1].count"), "\(vendor): \(bad.text)")
            #expect(try await faults(vendor, base)["faultsPending"] == .number(2))
            // a 1xx is no final answer (100 broke the HTTP on the wire, 101 hung the client)
            for status in [100, 101, 199] {
                let informational = try await send(
                    HTTPRequest(method: "POST", url: path, body: Array(#"{"action": "status", "status": \#(status)}"#.utf8)), to: base)
                #expect(informational.status == 400 && informational.text.contains("status"), "\(vendor) \(status): \(informational.text)")
            }
            #expect(try await faults(vendor, base)["faultsPending"] == .number(2))
            // the state document carries the same counters
            let state = try JSONValue.parse(try await send(HTTPRequest(url: "/_emulator/\(vendor)/state"), to: base).text)
            #expect(state["faultQueue"]?["faultsInjected"] == .number(1))
            _ = try await send(HTTPRequest(method: "DELETE", url: path), to: base)
            #expect(try await faults(vendor, base)["faultsPending"] == .number(0))
        }
        // chaos and fault files go through the same protocol
        for vendor in suite.vendors {
            let installed = try suite.installChaos(vendor: vendor.vendorID, perKind: 2)
            #expect(installed == vendor.chaosKinds.count * 8)
            #expect(vendor.faultQueue.pending == installed)
            vendor.faultQueue.clear()
        }
        #expect(
            try suite.installFaults(
                try JSONValue.parse(#"{"netfunnel": [{"action": "loseReply", "on": "5004"}], "crowdhandler": [{"action": "drop"}]}"#),
                vendor: "netfunnel") == 2)
        #expect(throws: WaitingRoomError.self) { try suite.installFaults(try JSONValue.parse(#"{"nobody": []}"#), vendor: "netfunnel") }
        await server.stop()
    }

    /// The shared room routes: `POST rooms/{room…}` changes a room, `…/admit` lets users in;
    /// 404 for an unknown room, 400 naming a bad field, 405 where the vendor admits by its own rule.
    @Test func everyVendorTakesTheSameRoomRoutes() async throws {
        let suite = EmulatorSuite.demo()
        let server = try await suite.start()
        let base = server.baseURL
        func post(_ path: String, _ body: String? = nil) async throws -> HTTPResponse {
            try await send(HTTPRequest(method: "POST", url: path, body: body.map { Array($0.utf8) }), to: base)
        }
        let cases: [(vendor: String, room: String, good: String, bad: String, admit: Int)] = [
            ("netfunnel", "service_1/segKey_basic", #"{"limit": 3}"#, #"{"limit": "x"}"#, 405),
            ("queueit", "demo/sale", #"{"admitPerSecond": 2}"#, #"{"admitPerSecond": "fast"}"#, 200),
            ("crowdhandler", "demo-queue", #"{"rate": 60}"#, #"{"rate": "fast"}"#, 200)
        ]
        for c in cases {
            let root = "/_emulator/\(c.vendor)/rooms/"
            let good = try await post(root + c.room, c.good)
            #expect(good.status == 200, "\(c.vendor): \(good.text)")
            let bad = try await post(root + c.room, c.bad)
            #expect(bad.status == 400, "\(c.vendor): \(bad.text)")
            let admit = try await post(root + c.room + "/admit?count=1")
            #expect(admit.status == c.admit, "\(c.vendor): \(admit.text)")
            if c.vendor != "netfunnel" {
                let unknown = c.room.contains("/") ? "demo/none" : "none"
                #expect(try await post(root + unknown, "{}").status == 404, "\(c.vendor)")
                #expect(try await post(root + unknown + "/admit", #"{"count": 1}"#).status == 404, "\(c.vendor)")
                // a count that is no whole number is named (1e300 trapped and ended the emulator)
                for count in ["1e300", "2.5", #""many""#, "[1]"] {
                    let refused = try await post(root + c.room + "/admit", #"{"count": \#(count)}"#)
                    #expect(refused.status == 400 && refused.text.contains(#""field":"count""#), "\(c.vendor) \(count): \(refused.text)")
                }
                #expect(try await post(root + c.room + "/admit", #"{"count": "2"}"#).status == 200, "\(c.vendor)")
                // the query form is checked the same way (`?count=abc` admitted 1)
                for count in ["abc", "2.5", "99999999999999999999", ""] {
                    let refused = try await post(root + c.room + "/admit?count=" + count)
                    #expect(
                        refused.status == 400 && refused.text.contains(#""field":"count""#), "\(c.vendor) ?count=\(count): \(refused.text)")
                }
            }
        }
        await server.stop()
    }

    /// Cloudflare's `cookie_suffix` ends a cookie name: it must be a token (`a=b` made a cookie
    /// the client never sent back, so each refresh joined the line anew).
    @Test func aCookieSuffixIsACookieName() async throws {
        let suite = EmulatorSuite.demo()
        let server = try await suite.start()
        let path = "/_emulator/cloudflare/rooms/demo-queue"
        for bad in [#""a=b""#, #""x;y""#, #""""#, #""caf\u00e9""#, #""a\r\nb""#, "\"" + String(repeating: "s", count: 65) + "\""] {
            let r = try await send(
                HTTPRequest(method: "POST", url: path, body: Array(#"{"cookie_suffix": \#(bad)}"#.utf8)), to: server.baseURL)
            #expect(r.status == 400 && r.text.contains("cookie_suffix"), "\(bad): \(r.text)")
        }
        let good = try await send(
            HTTPRequest(method: "POST", url: path, body: Array(#"{"cookie_suffix": "shop_2"}"#.utf8)), to: server.baseURL)
        #expect(good.status == 200, "\(good.text)")
        await server.stop()
    }

    /// Path parameters are percent-decoded, as a client that encodes its ids meant them: `s%61le`
    /// is room `sale` (it was an unknown room named as it came on the wire), and the URLs the
    /// emulator builds from ids encode them again.
    @Test func percentEncodedIdsNameTheirDecodedRooms() async throws {
        let suite = EmulatorSuite.demo()
        let server = try await suite.start()
        let base = server.baseURL
        for path in [
            "/_emulator/queueit/rooms/demo/s%61le", "/_emulator/crowdhandler/rooms/demo%2Dqueue",
            "/_emulator/netfunnel/rooms/service_1/segKey%5Fbasic"
        ] {
            let r = try await send(HTTPRequest(method: "POST", url: path, body: Array("{}".utf8)), to: base)
            #expect(r.status == 200, "\(path): \(r.status) \(r.text)")
        }
        let enqueued = try await send(
            HTTPRequest(
                method: "POST", url: "/api/mobileapp/queue/d%65mo/s%61le/enqueue",
                body: Array(#"{"userId":"u1","userAgent":"tests/1","sdkVersion":"tests-1"}"#.utf8)), to: base)
        #expect(enqueued.status == 200, "\(enqueued.text)")
        #expect(enqueued.text.contains("/queueit/queue/demo/sale") || enqueued.text.contains("queueittoken"), "\(enqueued.text)")
        let unknown = try await send(
            HTTPRequest(method: "POST", url: "/_emulator/queueit/rooms/demo/%2e%2e%2Fx", body: Array("{}".utf8)), to: base)
        #expect(unknown.status == 404 && unknown.text.contains("../x"), "\(unknown.text)")
        await server.stop()
    }
}
