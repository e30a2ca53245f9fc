import Cloudflare
import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// The Cloudflare emulator's rooms, in the API schema's own field names. JSON:
/// `{"seed": 1, "rooms": {"name": {"path", "new_users_per_minute", "total_active_users",
/// "session_duration", "disable_session_renewal", "queueing_method", "queue_all", "suspended",
/// "queueing_status_code", "json_response_enabled", "enabled_origin_commands", "cookie_suffix",
/// "refresh_interval_seconds", "events": [{…}]}}}`.
///
/// Cloudflare's own limits (at least 200 new users per minute, more than 200 active users) are
/// not enforced: the emulator takes 0 and up so a test can hold a line or admit by hand
/// (proposal). `refresh_interval_seconds` is the emulator's (Cloudflare's is a fixed 20 s): tests
/// may ask for a shorter one (proposal).
package struct CloudflareEmulatorConfiguration: Sendable, Hashable {
    /// How a room orders its line (`queueing_method`).
    package enum QueueingMethod: String, Sendable, Hashable, CaseIterable {
        /// First in, first out (the default).
        case fifo
        /// Users leave the line at random.
        case random
        /// Everyone goes straight through; no limit applies.
        case passthrough
        /// Everyone is rejected (a static page that does not refresh).
        case reject
    }

    /// A scheduled event: overrides the room's settings between its start and end, and may hold a
    /// pre-queue from `prequeue_start_time` (shuffled at the start with `shuffle_at_event_start`).
    package struct Event: Sendable, Hashable {
        package var name: String
        package var eventStartTime: Date
        package var eventEndTime: Date
        package var prequeueStartTime: Date?
        package var shuffleAtEventStart: Bool
        /// Ignored while true.
        package var suspended: Bool
        package var queueingMethod: QueueingMethod?
        package var newUsersPerMinute: Int?
        package var totalActiveUsers: Int?
        package var sessionDuration: Int?
        package var disableSessionRenewal: Bool?
        /// The seed of the shuffle at the start (the emulator's own key, proposal); nil: the
        /// document's `seed` plus the start's Unix seconds.
        package var seed: UInt64?

        package init(
            name: String, eventStartTime: Date, eventEndTime: Date, prequeueStartTime: Date? = nil, shuffleAtEventStart: Bool = false,
            suspended: Bool = false, queueingMethod: QueueingMethod? = nil, newUsersPerMinute: Int? = nil,
            totalActiveUsers: Int? = nil, sessionDuration: Int? = nil, disableSessionRenewal: Bool? = nil, seed: UInt64? = nil
        ) {
            self.name = name
            self.eventStartTime = eventStartTime
            self.eventEndTime = eventEndTime
            self.prequeueStartTime = prequeueStartTime
            self.shuffleAtEventStart = shuffleAtEventStart
            self.suspended = suspended
            self.queueingMethod = queueingMethod
            self.newUsersPerMinute = newUsersPerMinute
            self.totalActiveUsers = totalActiveUsers
            self.sessionDuration = sessionDuration
            self.disableSessionRenewal = disableSessionRenewal
            self.seed = seed
        }

        /// The JSON form.
        package var json: JSONValue {
            var o: [String: JSONValue] = [
                "name": .string(name), "event_start_time": .string(Self.format(eventStartTime)),
                "event_end_time": .string(Self.format(eventEndTime)), "shuffle_at_event_start": .bool(shuffleAtEventStart),
                "suspended": .bool(suspended)
            ]
            if let prequeueStartTime { o["prequeue_start_time"] = .string(Self.format(prequeueStartTime)) }
            if let queueingMethod { o["queueing_method"] = .string(queueingMethod.rawValue) }
            if let newUsersPerMinute { o["new_users_per_minute"] = .number(Double(newUsersPerMinute)) }
            if let totalActiveUsers { o["total_active_users"] = .number(Double(totalActiveUsers)) }
            if let sessionDuration { o["session_duration"] = .number(Double(sessionDuration)) }
            if let disableSessionRenewal { o["disable_session_renewal"] = .bool(disableSessionRenewal) }
            if let seed { o["seed"] = .number(Double(seed)) }
            return .object(o)
        }

        static func format(_ date: Date) -> String {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return f.string(from: date)
        }

        /// An event time as the rooms JSON writes it: ISO 8601 (Cloudflare's form), or the
        /// emulator's own (proposal) `"+SECONDS"` after `now` (the emulator's clock when it reads
        /// the JSON) or Unix seconds as a string (``EmulatorScheduledStart``).
        static func parse(_ text: String, now: Date) -> Date? {
            EmulatorScheduledStart.date(from: text, now: now)
        }
    }

    /// One room.
    package struct Room: Sendable, Hashable {
        /// The path under the emulator's site (`/cf`) the room covers, subpaths included; default `/{name}`.
        package var path: String?
        package var newUsersPerMinute: Int
        package var totalActiveUsers: Int
        /// Minutes (1–30).
        package var sessionDuration: Int
        package var disableSessionRenewal: Bool
        package var queueingMethod: QueueingMethod
        package var queueAll: Bool
        package var suspended: Bool
        /// 200, 202 or 429.
        package var queueingStatusCode: Int
        package var jsonResponseEnabled: Bool
        /// `["revoke"]` lets the origin revoke a session.
        package var enabledOriginCommands: [String]
        package var cookieSuffix: String?
        /// Seconds (Cloudflare: 20).
        package var refreshIntervalSeconds: Int
        package var events: [Event]
        /// `cookie_attributes` (SameSite, Secure).
        package var cookieAttributes = CookieAttributes()
        /// `additional_routes`: more host and path pairs the room covers (needs `cookie_suffix`).
        package var additionalRoutes: [Route] = []
        /// Bypass rules (`bypass_waiting_room`), in order.
        package var rules: [BypassRule] = []
        /// `turnstile_mode` (emulator default `off`).
        package var turnstileMode: TurnstileMode = .off
        /// `turnstile_action` (default `log`).
        package var turnstileAction: TurnstileAction = .log

        package init(
            path: String? = nil, newUsersPerMinute: Int = 200, totalActiveUsers: Int = 201, sessionDuration: Int = 5,
            disableSessionRenewal: Bool = false, queueingMethod: QueueingMethod = .fifo, queueAll: Bool = false,
            suspended: Bool = false, queueingStatusCode: Int = 200, jsonResponseEnabled: Bool = true,
            enabledOriginCommands: [String] = ["revoke"], cookieSuffix: String? = nil, refreshIntervalSeconds: Int = 20,
            events: [Event] = []
        ) {
            self.path = path
            self.newUsersPerMinute = newUsersPerMinute
            self.totalActiveUsers = totalActiveUsers
            self.sessionDuration = sessionDuration
            self.disableSessionRenewal = disableSessionRenewal
            self.queueingMethod = queueingMethod
            self.queueAll = queueAll
            self.suspended = suspended
            self.queueingStatusCode = queueingStatusCode
            self.jsonResponseEnabled = jsonResponseEnabled
            self.enabledOriginCommands = enabledOriginCommands
            self.cookieSuffix = cookieSuffix
            self.refreshIntervalSeconds = refreshIntervalSeconds
            self.events = events
        }

        /// The cookie's name: `__cfwaitingroom`, or `__cfwaitingroom_{suffix}`.
        package var cookieName: String { cookieSuffix.map { "__cfwaitingroom_\($0)" } ?? "__cfwaitingroom" }

        /// The room in the JSON form (the configuration and `POST /_emulator/cloudflare/rooms/{name}` read it).
        package var json: JSONValue {
            var o: [String: JSONValue] = [
                "new_users_per_minute": .number(Double(newUsersPerMinute)), "total_active_users": .number(Double(totalActiveUsers)),
                "session_duration": .number(Double(sessionDuration)), "disable_session_renewal": .bool(disableSessionRenewal),
                "queueing_method": .string(queueingMethod.rawValue), "queue_all": .bool(queueAll), "suspended": .bool(suspended),
                "queueing_status_code": .number(Double(queueingStatusCode)), "json_response_enabled": .bool(jsonResponseEnabled),
                "enabled_origin_commands": .array(enabledOriginCommands.map(JSONValue.string)),
                "refresh_interval_seconds": .number(Double(refreshIntervalSeconds)), "events": .array(events.map(\.json))
            ]
            if let path { o["path"] = .string(path) }
            if let cookieSuffix { o["cookie_suffix"] = .string(cookieSuffix) }
            CloudflareEmulatorConfiguration.writeRoomOptions(self, into: &o)
            return .object(o)
        }
    }

    /// Rooms by name.
    package var rooms: [String: Room]
    /// The seed of random queueing and of the shuffle at an event's start.
    package var seed: UInt64

    package init(rooms: [String: Room], seed: UInt64 = 1) {
        self.rooms = rooms
        self.seed = seed
    }

    /// Demo rooms: `demo-open` (everyone in), `demo-queue` (a line: 0 at once, 30 per minute,
    /// refresh 2 s), `demo-reject` (`reject`), `demo-suspended` (suspended), `demo-random`
    /// (random queueing).
    package static let demo = CloudflareEmulatorConfiguration(rooms: [
        "demo-open": Room(newUsersPerMinute: 1_000_000, totalActiveUsers: 1_000_000),
        "demo-queue": Room(newUsersPerMinute: 30, totalActiveUsers: 1_000_000, queueingStatusCode: 202, refreshIntervalSeconds: 2),
        "demo-reject": Room(queueingMethod: .reject),
        "demo-suspended": Room(suspended: true),
        "demo-random": Room(newUsersPerMinute: 30, totalActiveUsers: 1_000_000, queueingMethod: .random, refreshIntervalSeconds: 2)
    ])

    static let roomKeys: Set<String> = roomOptionKeys.union([
        "path", "new_users_per_minute", "total_active_users", "session_duration", "disable_session_renewal", "queueing_method",
        "queue_all", "suspended", "queueing_status_code", "json_response_enabled", "enabled_origin_commands", "cookie_suffix",
        "refresh_interval_seconds", "events"
    ])

    /// Reads the JSON form (the `cloudflare` member of the shared emulator document); relative
    /// event times (`"+SECONDS"`) count from `now`, the emulator's clock.
    package init(json: JSONValue, path: String = "cloudflare", now: Date = Date()) throws {
        let v = CloudflareConfiguration.vendorID
        let r = try ConfigurationReader(json, path: path, vendor: v)
        try r.rejectUnknownKeys(["rooms", "seed"])
        var rooms: [String: Room] = [:]
        if let roomsReader = try r.object("rooms") {
            for name in roomsReader.object.keys.sorted() {
                guard !name.isEmpty, !name.contains("/"), let value = roomsReader.object[name] else {
                    throw WaitingRoomError.invalidConfiguration(
                        field: "\(path).rooms", "a room name must be non-empty without \"/\"", vendor: v)
                }
                rooms[name] = try Self.room(value, path: "\(path).rooms.\(name)", now: now)
            }
        } else {
            rooms = Self.demo.rooms
        }
        self.init(rooms: rooms, seed: UInt64(try r.int("seed", range: 0...Int(Int32.max)) ?? 1))
    }

    /// Reads one room (relative event times count from `now`).
    static func room(_ value: JSONValue, path: String, now: Date) throws -> Room {
        let v = CloudflareConfiguration.vendorID
        let x = try ConfigurationReader(value, path: path, vendor: v)
        try x.rejectUnknownKeys(roomKeys)
        let defaults = Room()
        let method =
            try x.string("queueing_method").map { name -> QueueingMethod in
                guard let m = QueueingMethod(rawValue: name) else {
                    throw WaitingRoomError.invalidConfiguration(
                        field: "\(path).queueing_method",
                        "expected one of \(QueueingMethod.allCases.map(\.rawValue).joined(separator: ", "))", vendor: v)
                }
                return m
            } ?? .fifo
        let status = try x.int("queueing_status_code") ?? 200
        guard [200, 202, 429].contains(status) else {
            throw WaitingRoomError.invalidConfiguration(
                field: "\(path).queueing_status_code", "expected 200, 202 or 429, got \(status)", vendor: v)
        }
        var events: [Event] = []
        if let list = x.object["events"], list != .null {
            guard case .array(let items) = list else {
                throw WaitingRoomError.invalidConfiguration(field: "\(path).events", "expected an array of events", vendor: v)
            }
            for (i, item) in items.enumerated() { events.append(try event(item, path: "\(path).events[\(i)]", now: now)) }
        }
        // the suffix ends a cookie name, which must be a token (RFC 6265 §4.1.1, RFC 9110 §5.6.2):
        // `a=b` or `x;y` made a Set-Cookie the client could never send back
        if let suffix = try x.string("cookie_suffix"), suffix.isEmpty || suffix.utf8.count > 64 || !suffix.utf8.allSatisfy(Self.isTokenByte)
        {
            throw WaitingRoomError.invalidConfiguration(
                field: "\(path).cookie_suffix",
                "expected 1 to 64 cookie-name characters (letters, digits, !#$%&'*+-.^_`|~), got \(String(reflecting: String(suffix.prefix(80))))",
                vendor: v)
        }
        if let p = try x.string("path"), !p.hasPrefix("/") {
            throw WaitingRoomError.invalidConfiguration(
                field: "\(path).path", "expected a path starting with \"/\", got \"\(p)\"", vendor: v)
        }
        var room = Room(
            path: try x.string("path"),
            newUsersPerMinute: try x.int("new_users_per_minute", range: 0...100_000_000) ?? defaults.newUsersPerMinute,
            totalActiveUsers: try x.int("total_active_users", range: 0...2_147_483_647) ?? defaults.totalActiveUsers,
            sessionDuration: try x.int("session_duration", range: 1...30, unit: "min") ?? 5,
            disableSessionRenewal: try x.bool("disable_session_renewal") ?? false, queueingMethod: method,
            queueAll: try x.bool("queue_all") ?? false, suspended: try x.bool("suspended") ?? false, queueingStatusCode: status,
            jsonResponseEnabled: try x.bool("json_response_enabled") ?? true,
            enabledOriginCommands: try x.strings("enabled_origin_commands") ?? ["revoke"], cookieSuffix: try x.string("cookie_suffix"),
            refreshIntervalSeconds: try x.int("refresh_interval_seconds", range: 1...3600, unit: "s") ?? 20, events: events)
        try readRoomOptions(x, into: &room, path: path)
        return room
    }

    /// Whether `byte` may be part of a token (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Reads one event (relative times count from `now`).
    static func event(_ value: JSONValue, path: String, now: Date) throws -> Event {
        let v = CloudflareConfiguration.vendorID
        let x = try ConfigurationReader(value, path: path, vendor: v)
        try x.rejectUnknownKeys([
            "name", "event_start_time", "event_end_time", "prequeue_start_time", "shuffle_at_event_start", "suspended",
            "queueing_method", "new_users_per_minute", "total_active_users", "session_duration", "disable_session_renewal", "seed"
        ])
        func time(_ key: String, required: Bool) throws -> Date? {
            guard let text = try x.string(key) else {
                if required {
                    throw WaitingRoomError.invalidConfiguration(
                        field: "\(path).\(key)", "is required (\(EmulatorScheduledStart.expected))", vendor: v)
                }
                return nil
            }
            guard let d = Event.parse(text, now: now) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(path).\(key)", "expected \(EmulatorScheduledStart.expected), got \"\(text)\"", vendor: v)
            }
            return d
        }
        guard let start = try time("event_start_time", required: true), let end = try time("event_end_time", required: true) else {
            throw WaitingRoomError.invalidConfiguration(field: path, "an event needs event_start_time and event_end_time", vendor: v)
        }
        guard end > start else {
            throw WaitingRoomError.invalidConfiguration(field: "\(path).event_end_time", "must be after event_start_time", vendor: v)
        }
        let prequeue = try time("prequeue_start_time", required: false)
        if let prequeue, prequeue >= start {
            throw WaitingRoomError.invalidConfiguration(field: "\(path).prequeue_start_time", "must be before event_start_time", vendor: v)
        }
        let shuffle = try x.bool("shuffle_at_event_start") ?? false
        if shuffle, prequeue == nil {
            throw WaitingRoomError.invalidConfiguration(field: "\(path).shuffle_at_event_start", "requires prequeue_start_time", vendor: v)
        }
        let method = try x.string("queueing_method").map { name -> QueueingMethod in
            guard let m = QueueingMethod(rawValue: name) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(path).queueing_method", "expected one of \(QueueingMethod.allCases.map(\.rawValue).joined(separator: ", "))",
                    vendor: v)
            }
            return m
        }
        return Event(
            name: try x.string("name") ?? "event", eventStartTime: start, eventEndTime: end, prequeueStartTime: prequeue,
            shuffleAtEventStart: shuffle, suspended: try x.bool("suspended") ?? false, queueingMethod: method,
            newUsersPerMinute: try x.int("new_users_per_minute", range: 0...100_000_000),
            totalActiveUsers: try x.int("total_active_users", range: 0...2_147_483_647),
            sessionDuration: try x.int("session_duration", range: 1...30, unit: "min"),
            disableSessionRenewal: try x.bool("disable_session_renewal"),
            seed: try x.int("seed", range: 0...Int(Int32.max)).map { UInt64($0) })
    }
}
