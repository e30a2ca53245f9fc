import Cloudflare
import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomTesting

/// `cookie_attributes` (and the partitioned cookie in an iframe), `additional_routes` with
/// `cookie_suffix`, bypass rules and Turnstile's `infinite_queue` (issue 50 §2).
@Suite("Cloudflare room options")
struct CloudflareRoomOptionsTests: CloudflareRoomSuite {
    static func room(_ json: [String: JSONValue]) throws -> Room {
        try CloudflareEmulatorConfiguration(json: .object(["rooms": .object(["r": .object(json)])])).rooms["r"] ?? Room()
    }

    static func field(of body: () throws -> Void) -> String? {
        do { try body() } catch let e as WaitingRoomError { return e.field } catch {}
        return nil
    }

    @Test func cookieAttributesAndThePartitionedCookieInAnIframe() async throws {
        let clock = VirtualClock()
        let embeddable = try Self.room([
            "cookie_attributes": .object(["samesite": .string("none"), "secure": .string("always")]),
            "new_users_per_minute": .number(0), "total_active_users": .number(0)
        ])
        let strict = try Self.room(["cookie_attributes": .object(["samesite": .string("strict"), "secure": .string("never")])])
        let h = try await Self.harness(["embed": embeddable, "strict": strict], clock: clock)
        defer { Task { await h.stop() } }
        var framed = JSONModeVisitor(h, headers: [("Sec-Fetch-Dest", "iframe")])
        let a = try await framed.get("/embed").0.headers.value(for: "Set-Cookie") ?? ""
        #expect(a.contains("SameSite=None") && a.contains("; Secure") && a.hasSuffix("; Partitioned"), "\(a)")
        var top = JSONModeVisitor(h)
        let b = try await top.get("/embed").0.headers.value(for: "Set-Cookie") ?? ""
        #expect(b.contains("SameSite=None; Secure") && !b.contains("Partitioned"), "\(b)")
        var plain = JSONModeVisitor(h, headers: [("Sec-Fetch-Dest", "iframe")])
        let c = try await plain.get("/strict").0.headers.value(for: "Set-Cookie") ?? ""
        #expect(c.contains("SameSite=Strict") && !c.contains("Secure") && !c.contains("Partitioned"), "\(c)")
        // documented: samesite none cannot go with secure never; unknown values are named
        #expect(
            Self.field { _ = try Self.room(["cookie_attributes": .object(["samesite": .string("none"), "secure": .string("never")])]) }
                == "cloudflare.rooms.r.cookie_attributes.secure")
        #expect(
            Self.field { _ = try Self.room(["cookie_attributes": .object(["samesite": .string("loose")])]) }
                == "cloudflare.rooms.r.cookie_attributes.samesite")
    }

    @Test func additionalRoutesNeedACookieSuffix() async throws {
        let clock = VirtualClock()
        let multi = try Self.room([
            "path": .string("/shop"), "cookie_suffix": .string("shop"),
            "additional_routes": .array([
                .object(["host": .string("127.0.0.1"), "path": .string("/boutique")]),
                .object(["host": .string("shop2.example.com"), "path": .string("/elsewhere")])
            ]), "new_users_per_minute": .number(0), "total_active_users": .number(0)
        ])
        let h = try await Self.harness(["multi": multi], clock: clock)
        defer { Task { await h.stop() } }
        var v = JSONModeVisitor(h)
        let first = try await v.get("/boutique/item")
        #expect(first.1?["inWaitingRoom"] == .bool(true), "an additional route on this host is the room's")
        #expect(v.cookie?.hasPrefix("__cfwaitingroom_shop=") == true)
        _ = try await v.get("/shop")
        #expect(h.emulator.counters.visitorsCreated == 1, "one cookie across the room's routes")
        var other = JSONModeVisitor(h)
        let elsewhere = try await other.get("/elsewhere")
        #expect(elsewhere.1 == nil && other.cookie == nil, "a route of another host does not cover this one")
        #expect(
            Self.field { _ = try Self.room(["additional_routes": .array([.object(["host": .string("a.example")])])]) }
                == "cloudflare.rooms.r.cookie_suffix")
        #expect(
            Self.field {
                _ = try Self.room([
                    "cookie_suffix": .string("x"), "additional_routes": .array([.object(["host": .string("https://a.example")])])
                ])
            }
                == "cloudflare.rooms.r.additional_routes[0].host")
    }

    @Test func bypassRulesSendMatchingTrafficToTheOrigin() async throws {
        let clock = VirtualClock()
        func rule(_ expression: String) -> JSONValue {
            .object(["action": .string("bypass_waiting_room"), "expression": .string(expression)])
        }
        let r = try Self.room([
            "queue_all": .bool(true),
            "rules": .array([
                rule(#"starts_with(http.request.uri.path, "/r/static/") or http.request.uri.path in {"/r/health" "/r/ping"}"#),
                rule(#"any(http.request.headers["x-admin"][*] == "yes") and ip.src in {127.0.0.0/8 ::1}"#),
                rule(#"http.cookie contains "staff=1" && not http.request.method eq "POST""#),
                rule(#"ip.src in {10.0.0.0/8}"#),
                rule(#"ip.src eq 2001:db8::1"#)
            ])
        ])
        let h = try await Self.harness(["r": r], clock: clock)
        defer { Task { await h.stop() } }
        for (path, headers) in [
            ("/r/static/app.js", [(String, String)]()), ("/r/health", []), ("/r", [("X-Admin", "yes"), ("CF-Connecting-IP", "127.0.0.1")]),
            ("/r", [("Cookie", "staff=1")])
        ] {
            var v = JSONModeVisitor(h, headers: headers)
            let (response, reply) = try await v.get(path)
            #expect(reply == nil && response.status == 200 && v.cookie == nil, "\(path) \(headers): bypassed, no cookie")
        }
        for (path, headers) in [
            ("/r", [(String, String)]()), ("/r/static", []), ("/r", [("X-Admin", "no"), ("CF-Connecting-IP", "127.0.0.1")]),
            ("/r", [("X-Admin", "yes")])
        ] {
            var v = JSONModeVisitor(h, headers: headers)
            #expect(try await v.get(path).1?["queueAll"] == .bool(true), "\(path) \(headers): queued")
        }
        var v6 = JSONModeVisitor(h, headers: [("CF-Connecting-IP", "2001:db8::1")])
        #expect(try await v6.get("/r").1 == nil)
        var ten = JSONModeVisitor(h, headers: [("CF-Connecting-IP", "10.1.2.3")])
        #expect(try await ten.get("/r").1 == nil)
        #expect(h.emulator.counters.replies["bypassed"] == 6)
        // bad expressions: the field, the column and what was expected
        for bad in [
            #"http.request.uri.path eq"#, #"http.request.uri.path matches "^/a""#, #"ip.src in {300.1.1.1}"#, #"(http.host eq "a""#,
            #"cf.bot_management.score lt 30"#, String(repeating: "(", count: 40) + #"http.host eq "a""# + String(repeating: ")", count: 40),
            #""unterminated"#, ""
        ] {
            do {
                _ = try Self.room(["rules": .array([rule(bad)])])
                Issue.record("accepted \(bad)")
            } catch let e as WaitingRoomError {
                #expect(e.field == "cloudflare.rooms.r.rules[0].expression" && e.message.contains("column"), "\(bad): \(e.message)")
            }
        }
        #expect(
            Self.field {
                _ = try Self.room(["rules": .array([.object(["action": .string("block"), "expression": .string("http.host eq \"a\"")])])])
            }
                == "cloudflare.rooms.r.rules[0].action")
    }

    @Test func turnstileFailuresGoToAnInfiniteQueue() async throws {
        let clock = VirtualClock()
        let r = try Self.room([
            "turnstile_mode": .string("invisible"), "turnstile_action": .string("infinite_queue"),
            "new_users_per_minute": .number(0), "total_active_users": .number(100), "refresh_interval_seconds": .number(1)
        ])
        let logOnly = try Self.room([
            "turnstile_mode": .string("invisible"), "new_users_per_minute": .number(1000), "total_active_users": .number(100)
        ])
        let h = try await Self.harness(["r": r, "log": logOnly], clock: clock)
        defer { Task { await h.stop() } }
        var bot = JSONModeVisitor(h, headers: [("X-Emulator-Turnstile", "fail")])
        var human = JSONModeVisitor(h)
        let page = try await bot.get("/r", accept: "text/html").0
        #expect(page.text.contains("You are in line") && page.headers.value(for: "Refresh") == "1", "it looks like a real wait")
        _ = try await human.get("/r", accept: "text/html")
        #expect(h.emulator.waiting()["r"] == 1, "the failing client takes no place")
        h.emulator.admit(room: "r", count: 10)
        clock.advance(by: .seconds(5))
        #expect(try await bot.get("/r", accept: "text/html").0.text.contains("You are in line"), "never let in")
        #expect(try await human.get("/r", accept: "text/html").0.text.contains("You are through"))
        // Turnstile does not apply to JSON answers; with action log a failure is only counted
        var app = JSONModeVisitor(h, headers: [("X-Emulator-Turnstile", "fail")])
        _ = try await app.get("/r")
        #expect(h.emulator.waiting()["r"] == 1)
        var logged = JSONModeVisitor(h, headers: [("X-Emulator-Turnstile", "fail")])
        #expect(try await logged.get("/log", accept: "text/html").0.text.contains("You are through"))
        #expect(h.emulator.counters.turnstileFailed == 2)
        #expect(h.emulator.counters.replies["infiniteQueue"] == nil, "an HTML answer is counted as html")
        #expect(Self.field { _ = try Self.room(["turnstile_action": .string("block")]) } == "cloudflare.rooms.r.turnstile_action")
    }
}
