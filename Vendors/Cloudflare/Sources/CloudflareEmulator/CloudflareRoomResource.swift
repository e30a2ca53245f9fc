import Foundation
import WaitingRoom

/// A waiting room as the management API (`/client/v4`) reads and writes it: the fields, required
/// fields, defaults and limits of Cloudflare's API reference (create/update/patch waiting room,
/// README "Management API (v4)"), checked field by field, and the room's v4 JSON.
///
/// Fields the emulator runs on are the configuration's (``CloudflareEmulatorConfiguration/roomKeys``,
/// same names); the other documented fields (`host`, `description`, `custom_page_html`, …) are
/// kept and echoed (``CloudflareManagementRegistry``).
enum CloudflareRoomResource {
    typealias Room = CloudflareEmulatorConfiguration.Room

    /// How a body is read: `create` (POST) and `replace` (PUT) need the required fields and reset
    /// what is not given to its default; `patch` (PATCH) changes only what is given.
    enum Mode { case create, replace, patch }

    static let required = ["name", "host", "new_users_per_minute", "total_active_users"]

    /// The writable fields (Cloudflare's create parameters), plus the emulator's own
    /// `refresh_interval_seconds` (proposal).
    static let fields: Set<String> = [
        "name", "host", "path", "description", "new_users_per_minute", "total_active_users", "session_duration",
        "disable_session_renewal", "queueing_method", "queueing_status_code", "json_response_enabled", "queue_all", "suspended",
        "cookie_suffix", "cookie_attributes", "additional_routes", "custom_page_html", "default_template_language",
        "enabled_origin_commands", "turnstile_action", "turnstile_mode", "refresh_interval_seconds"
    ]

    /// Read-only fields a client may send back from a read (ignored).
    static let readOnly: Set<String> = ["id", "created_on", "modified_on", "next_event_prequeue_start_time", "next_event_start_time"]

    /// Cloudflare's defaults for fields not given on create or replace.
    static let defaults: [String: JSONValue] = [
        "path": .string("/"), "description": .string(""), "session_duration": .number(5), "disable_session_renewal": .bool(false),
        "queueing_method": .string("fifo"), "queueing_status_code": .number(200), "json_response_enabled": .bool(false),
        "queue_all": .bool(false), "suspended": .bool(false), "enabled_origin_commands": .array([]),
        "default_template_language": .string("en-US"), "turnstile_action": .string("log"), "turnstile_mode": .string("invisible"),
        "cookie_attributes": .object(["samesite": .string("auto"), "secure": .string("auto")]), "additional_routes": .array([]),
        "custom_page_html": .null, "cookie_suffix": .null
    ]

    static let languages = [
        "en-US", "es-ES", "de-DE", "fr-FR", "it-IT", "ja-JP", "ko-KR", "pt-BR", "zh-CN", "zh-TW", "nl-NL", "pl-PL", "id-ID", "tr-TR",
        "ar-EG", "ru-RU", "fa-IR", "bg-BG", "hr-HR", "cs-CZ", "da-DK", "fi-FI", "lt-LT", "lv-LV", "ms-MY", "nb-NO", "ro-RO", "el-GR",
        "he-IL", "hi-IN", "hu-HU", "sr-BA", "sk-SK", "sl-SI", "sv-SE", "tl-PH", "th-TH", "uk-UA", "vi-VN"
    ]

    /// Checks every given field of `body` against Cloudflare's types and limits; in `create` and
    /// `replace` mode the required fields too. Answers the fields given (nulls kept: in a patch
    /// they mean "back to the default").
    /// - Throws: ``CloudflareV4Failure`` 400 listing every bad field.
    static func check(_ body: JSONValue, mode: Mode) throws(CloudflareV4Failure) -> [String: JSONValue] {
        var r = try CloudflareV4BodyReader(body)
        r.rejectUnknown(fields.union(readOnly))
        if mode != .patch { r.required(required) }
        _ = r.string("name", check: CloudflareV4BodyReader.nameProblem)
        _ = r.string("host", maxLength: 255) { h in
            if h.isEmpty { return "must not be empty" }
            if h.contains("://") { return "must not include the scheme (http:// or https://), got \"\(h.prefix(80))\"" }
            if h.contains("*") || h.contains("/") || h.contains(" ") {
                return "expected a host name without wildcards or a path, got \"\(h.prefix(80))\""
            }
            return nil
        }
        _ = r.string("path", maxLength: 2048, check: pathProblem)
        _ = r.string("description")
        _ = r.int("new_users_per_minute", range: 200...2_147_483_647)
        _ = r.int("total_active_users", range: 200...2_147_483_647)
        _ = r.int("session_duration", range: 1...30)
        for key in ["disable_session_renewal", "json_response_enabled", "queue_all", "suspended"] { _ = r.bool(key) }
        _ = r.oneOf("queueing_method", CloudflareEmulatorConfiguration.QueueingMethod.allCases.map(\.rawValue))
        if let code = r.int("queueing_status_code", range: 200...429), ![200, 202, 429].contains(code) {
            r.fail("queueing_status_code", "expected 200, 202 or 429, got \(code)")
        }
        _ = r.string("cookie_suffix", maxLength: 64)
        _ = r.string("custom_page_html", maxLength: 1 << 20)
        _ = r.oneOf("default_template_language", languages)
        _ = r.oneOf("turnstile_action", ["log", "infinite_queue"])
        _ = r.oneOf("turnstile_mode", ["off", "invisible", "visible_non_interactive", "visible_managed"])
        _ = r.int("refresh_interval_seconds", range: 1...3600)
        if let v = r.object["enabled_origin_commands"], v != .null,
            !(v.arrayValue?.allSatisfy { $0 == .string("revoke") } ?? false)
        {
            r.fail("enabled_origin_commands", "expected an array of \"revoke\"")
        }
        if let v = r.object["cookie_attributes"], v != .null {
            if let o = v.objectValue {
                let allowed: [String: [String]] = ["samesite": ["auto", "lax", "none", "strict"], "secure": ["auto", "always", "never"]]
                for (k, value) in o.sorted(by: { $0.key < $1.key }) {
                    guard let values = allowed[k] else {
                        r.fail("cookie_attributes/\(k)", "is not a cookie attribute (samesite, secure)")
                        continue
                    }
                    if !(value.stringValue.map(values.contains) ?? false) {
                        r.fail(
                            "cookie_attributes/\(k)",
                            "expected one of \(values.joined(separator: ", ")), got \(CloudflareV4BodyReader.kind(value))")
                    }
                }
            } else {
                r.fail("cookie_attributes", "expected an object {samesite, secure}, got \(CloudflareV4BodyReader.kind(v))")
            }
        }
        if let v = r.object["additional_routes"], v != .null {
            if let routes = v.arrayValue {
                for (i, route) in routes.enumerated() {
                    guard let o = route.objectValue, let host = o["host"]?.stringValue, !host.isEmpty,
                        o.keys.allSatisfy({ ["host", "path"].contains($0) })
                    else {
                        r.fail("additional_routes/\(i)", "expected {\"host\": string, \"path\": string}")
                        continue
                    }
                    if let path = o["path"], path != .null, let problem = path.stringValue.map(pathProblem) ?? "expected a string" {
                        r.fail("additional_routes/\(i)/path", problem)
                    }
                }
                if !routes.isEmpty, !r.has("cookie_suffix"), mode != .patch {
                    r.fail("cookie_suffix", "is required when additional_routes is used")
                }
            } else {
                r.fail("additional_routes", "expected an array of {host, path}, got \(CloudflareV4BodyReader.kind(v))")
            }
        }
        if !r.errors.isEmpty { throw .badRequest(r.errors) }
        return r.object.filter { !readOnly.contains($0.key) }
    }

    /// Why `path` is not a waiting room path, or nil (Cloudflare: no wildcards, no query).
    static func pathProblem(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "expected a path starting with \"/\", got \"\(path.prefix(80))\"" }
        if path.contains("*") || path.contains("?") || path.contains("#") {
            return "wildcards and query parameters are not supported, got \"\(path.prefix(80))\""
        }
        return nil
    }

    /// The room settings and the echoed fields a complete v4 document describes (`name` and
    /// read-only fields excluded).
    /// - Throws: ``CloudflareV4Failure`` 400 when the emulator's configuration refuses a value
    ///   (its message names the field).
    static func settings(from document: [String: JSONValue], now: Date) throws(CloudflareV4Failure) -> (Room, extras: [String: JSONValue]) {
        var config: [String: JSONValue] = [:]
        var extras: [String: JSONValue] = [:]
        let runs = CloudflareEmulatorConfiguration.roomKeys.subtracting(["events", "rules"])
        for (key, value) in document where key != "name" && !readOnly.contains(key) {
            if runs.contains(key) {
                if value != .null { config[key] = value }
            } else {
                extras[key] = value
            }
        }
        do {
            return (try CloudflareEmulatorConfiguration.room(.object(config), path: "waiting_room", now: now), extras)
        } catch let error as WaitingRoomError {
            let field = error.field.map { $0.hasPrefix("waiting_room.") ? String($0.dropFirst("waiting_room.".count)) : $0 }
            let pointer = field.map { "/" + $0.replacingOccurrences(of: ".", with: "/") }
            throw .badRequest([CloudflareV4Error(.invalidField, (field.map { "\($0): " } ?? "") + error.message, pointer: pointer)])
        } catch {
            throw .badRequest([CloudflareV4Error(.invalidField, "\(error)")])
        }
    }

    /// The room's v4 document as a read answers it.
    static func json(name: String, room: Room, record: CloudflareManagementRegistry.RoomRecord, defaultHost: String, now: Date) -> JSONValue
    {
        var o = defaults
        o["host"] = .string(defaultHost)
        for (k, v) in record.extras { o[k] = v }
        if case .object(let settings) = room.json {
            // events and bypass rules are resources of their own
            for (k, v) in settings where k != "events" && k != "rules" { o[k] = v }
        }
        o["path"] = .string(room.path ?? "/" + name)
        o["id"] = .string(record.id)
        o["name"] = .string(name)
        o["created_on"] = .string(CloudflareEmulatorConfiguration.Event.format(record.createdOn))
        o["modified_on"] = .string(CloudflareEmulatorConfiguration.Event.format(record.modifiedOn))
        let next = room.events.filter { !$0.suspended && $0.eventStartTime > now }.min { $0.eventStartTime < $1.eventStartTime }
        o["next_event_start_time"] = next.map { .string(CloudflareEmulatorConfiguration.Event.format($0.eventStartTime)) } ?? .null
        o["next_event_prequeue_start_time"] =
            next?.prequeueStartTime.map { .string(CloudflareEmulatorConfiguration.Event.format($0)) } ?? .null
        return .object(o)
    }
}
