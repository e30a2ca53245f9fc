import Foundation
import WaitingRoom

/// What the management API (`/client/v4`) knows about rooms and events beyond the settings the
/// emulator runs on: their 32-hex ids, `created_on`/`modified_on`, and the documented fields the
/// emulator stores and echoes without acting on them (`host`, `description`, `custom_page_html`,
/// `default_template_language`, `turnstile_mode`, …). Kept in the model's state, by room name;
/// it outlives `reset` (rooms do too).
struct CloudflareManagementRegistry: Sendable {
    struct EventRecord: Sendable {
        var id: String
        var createdOn: Date
        var modifiedOn: Date
        var extras: [String: JSONValue] = [:]
    }

    struct RoomRecord: Sendable {
        var id: String
        var createdOn: Date
        var modifiedOn: Date
        var extras: [String: JSONValue] = [:]
        /// By event name.
        var events: [String: EventRecord] = [:]
    }

    /// By room name.
    var rooms: [String: RoomRecord] = [:]
    /// Custom pages uploaded with `POST …/waiting_rooms/preview`, by preview id (the newest
    /// ``previewLimit`` kept).
    var previews: [String: String] = [:]
    var previewOrder: [String] = []
    static let previewLimit = 100

    /// The record of room `name`, made on first use for a configured room (its id derived from
    /// its name, so it is the same in every run).
    mutating func room(_ name: String, at t: Date) -> RoomRecord {
        if let r = rooms[name] { return r }
        let r = RoomRecord(id: Self.stableID(name), createdOn: t, modifiedOn: t)
        rooms[name] = r
        return r
    }

    /// The record of event `event` of room `room`, made on first use for a configured event.
    mutating func event(_ event: String, room: String, at t: Date) -> EventRecord {
        var r = self.room(room, at: t)
        if let e = r.events[event] { return e }
        let e = EventRecord(id: Self.stableID(room + "/" + event), createdOn: t, modifiedOn: t)
        r.events[event] = e
        rooms[room] = r
        return e
    }

    /// Keeps `html` as a preview; its id.
    mutating func addPreview(_ html: String) -> String {
        let id = Self.newID()
        previews[id] = html
        previewOrder.append(id)
        while previewOrder.count > Self.previewLimit { previews[previewOrder.removeFirst()] = nil }
        return id
    }

    /// A fresh id: 32 lowercase hex digits, as Cloudflare's ids are.
    static func newID() -> String {
        UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }

    /// A 32-hex id derived from `text` (two FNV-1a hashes): configured rooms and events keep
    /// their id from run to run.
    static func stableID(_ text: String) -> String {
        func fnv(_ basis: UInt64) -> UInt64 {
            var h = basis
            for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            return h
        }
        let a = String(fnv(0xcbf2_9ce4_8422_2325), radix: 16)
        let b = String(fnv(0x8422_2325_cbf2_9ce4), radix: 16)
        return String(repeating: "0", count: 16 - a.count) + a + String(repeating: "0", count: 16 - b.count) + b
    }
}
