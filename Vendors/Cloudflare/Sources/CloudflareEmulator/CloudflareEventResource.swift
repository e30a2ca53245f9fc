import Foundation
import WaitingRoom

/// A waiting room event as the management API (`/client/v4/…/events`) reads and writes it: the
/// fields, required fields and rules of Cloudflare's API reference (create/update/patch event),
/// checked field by field, and the event's v4 JSON (and its `details`: the settings in force
/// while it is active, inherited ones filled in from the room).
enum CloudflareEventResource {
    typealias Event = CloudflareEmulatorConfiguration.Event
    typealias Room = CloudflareEmulatorConfiguration.Room

    static let required = ["name", "event_start_time", "event_end_time"]

    /// The writable fields (Cloudflare's create parameters) plus the emulator's `seed` (proposal).
    static let fields: Set<String> = [
        "name", "description", "event_start_time", "event_end_time", "prequeue_start_time", "shuffle_at_event_start", "suspended",
        "queueing_method", "new_users_per_minute", "total_active_users", "session_duration", "disable_session_renewal",
        "custom_page_html", "turnstile_action", "turnstile_mode", "seed"
    ]

    /// The fields the emulator's configuration runs on (``CloudflareEmulatorConfiguration/event(_:path:now:)``);
    /// the others are kept and echoed.
    static let runs: Set<String> = [
        "name", "event_start_time", "event_end_time", "prequeue_start_time", "shuffle_at_event_start", "suspended",
        "queueing_method", "new_users_per_minute", "total_active_users", "session_duration", "disable_session_renewal", "seed"
    ]

    static let readOnly: Set<String> = ["id", "created_on", "modified_on"]

    /// What a read shows for a field never set: the overrides are null ("If null, the event will
    /// inherit it").
    static let defaults: [String: JSONValue] = [
        "description": .string(""), "prequeue_start_time": .null, "shuffle_at_event_start": .bool(false), "suspended": .bool(false),
        "queueing_method": .null, "new_users_per_minute": .null, "total_active_users": .null, "session_duration": .null,
        "disable_session_renewal": .null, "custom_page_html": .null, "turnstile_action": .null, "turnstile_mode": .null
    ]

    /// Checks every given field against Cloudflare's types and limits (`create`/`replace`: the
    /// required ones too); answers the fields given (nulls kept).
    static func check(_ body: JSONValue, mode: CloudflareRoomResource.Mode) throws(CloudflareV4Failure) -> [String: JSONValue] {
        var r = try CloudflareV4BodyReader(body)
        r.rejectUnknown(fields.union(readOnly))
        if mode != .patch { r.required(required) }
        _ = r.string("name", check: CloudflareV4BodyReader.nameProblem)
        _ = r.string("description")
        for key in ["event_start_time", "event_end_time", "prequeue_start_time"] {
            _ = r.string(key, maxLength: 64) {
                Event.parse($0, now: Date()) == nil ? "expected an ISO 8601 time (2026-05-01T10:00:00Z), got \"\($0.prefix(80))\"" : nil
            }
        }
        for key in ["shuffle_at_event_start", "suspended", "disable_session_renewal"] { _ = r.bool(key) }
        _ = r.oneOf("queueing_method", CloudflareEmulatorConfiguration.QueueingMethod.allCases.map(\.rawValue))
        _ = r.int("new_users_per_minute", range: 200...2_147_483_647)
        _ = r.int("total_active_users", range: 200...2_147_483_647)
        _ = r.int("session_duration", range: 1...30)
        _ = r.string("custom_page_html", maxLength: 1 << 20)
        _ = r.oneOf("turnstile_action", ["log", "infinite_queue"])
        _ = r.oneOf("turnstile_mode", ["off", "invisible", "visible_non_interactive", "visible_managed"])
        _ = r.int("seed", range: 0...Int(Int32.max))
        if !r.errors.isEmpty { throw .badRequest(r.errors) }
        return r.object.filter { !readOnly.contains($0.key) }
    }

    /// The event and its echoed fields from a complete document, with Cloudflare's rules across
    /// fields: the start at least a minute before the end, the pre-queue at least five minutes
    /// before the start, `shuffle_at_event_start` only with a pre-queue, `new_users_per_minute`
    /// and `total_active_users` set together.
    static func settings(from document: [String: JSONValue], now: Date) throws(CloudflareV4Failure) -> (Event, extras: [String: JSONValue])
    {
        var config: [String: JSONValue] = [:]
        var extras: [String: JSONValue] = [:]
        for (key, value) in document where !readOnly.contains(key) {
            if runs.contains(key) {
                if value != .null { config[key] = value }
            } else {
                extras[key] = value
            }
        }
        var errors: [CloudflareV4Error] = []
        if (config["new_users_per_minute"] == nil) != (config["total_active_users"] == nil) {
            let missing = config["new_users_per_minute"] == nil ? "new_users_per_minute" : "total_active_users"
            errors.append(
                .field(
                    missing,
                    "must be set when \(missing == "new_users_per_minute" ? "total_active_users" : "new_users_per_minute") is (Cloudflare sets them together)"
                ))
        }
        let event: Event
        do {
            event = try CloudflareEmulatorConfiguration.event(.object(config), path: "event", now: now)
        } catch let error as WaitingRoomError {
            let field = error.field.map { $0.hasPrefix("event.") ? String($0.dropFirst("event.".count)) : $0 }
            errors.append(
                CloudflareV4Error(.invalidField, (field.map { "\($0): " } ?? "") + error.message, pointer: field.map { "/" + $0 }))
            throw .badRequest(errors)
        } catch {
            throw .badRequest(errors + [CloudflareV4Error(.invalidField, "\(error)")])
        }
        if event.eventEndTime.timeIntervalSince(event.eventStartTime) < 60 {
            errors.append(.field("event_start_time", "must be at least one minute before event_end_time"))
        }
        if let pq = event.prequeueStartTime, event.eventStartTime.timeIntervalSince(pq) < 300 {
            errors.append(.field("prequeue_start_time", "must be at least five minutes before event_start_time"))
        }
        if !errors.isEmpty { throw .badRequest(errors) }
        return (event, extras)
    }

    /// The event's v4 document as a read answers it.
    static func json(_ event: Event, record: CloudflareManagementRegistry.EventRecord) -> JSONValue {
        var o = defaults
        for (k, v) in record.extras { o[k] = v }
        if case .object(let settings) = event.json { for (k, v) in settings { o[k] = v } }
        o["id"] = .string(record.id)
        o["created_on"] = .string(Event.format(record.createdOn))
        o["modified_on"] = .string(Event.format(record.modifiedOn))
        return .object(o)
    }

    /// `…/events/{id}/details`: the event "as if it was active", each inherited field showing the
    /// room's current value.
    static func details(
        _ event: Event, record: CloudflareManagementRegistry.EventRecord, room: Room,
        roomRecord: CloudflareManagementRegistry.RoomRecord
    ) -> JSONValue {
        guard case .object(var o) = json(event, record: record) else { return .null }
        o["queueing_method"] = .string((event.queueingMethod ?? room.queueingMethod).rawValue)
        o["new_users_per_minute"] = .number(Double(event.newUsersPerMinute ?? room.newUsersPerMinute))
        o["total_active_users"] = .number(Double(event.totalActiveUsers ?? room.totalActiveUsers))
        o["session_duration"] = .number(Double(event.sessionDuration ?? room.sessionDuration))
        o["disable_session_renewal"] = .bool(event.disableSessionRenewal ?? room.disableSessionRenewal)
        for key in ["custom_page_html", "turnstile_action", "turnstile_mode"] where o[key] == nil || o[key] == .null {
            let inherited = roomRecord.extras[key] ?? CloudflareRoomResource.defaults[key] ?? .null
            o[key] = inherited
        }
        return .object(o)
    }
}
