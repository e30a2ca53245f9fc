import CrowdHandler
import Foundation
import WaitingRoom

/// The CrowdHandler emulator's rooms and keys. JSON: `{"publicKeys": [...], "privateKey": "…",
/// "rooms": {"slug": {"urlPattern", "capacity", "rate", "blocked", "closed", "timeout", "queueActivatesOn", "message",
/// "shuffleAtActivation", "seed"}}}`. A `queueActivatesOn` in the future opens the room before its
/// queue activates: users who arrive early wait without a position and get random positions when
/// it activates (`CrowdHandlerEmulatorModel+Prequeue.swift`).
package struct CrowdHandlerEmulatorConfiguration: Sendable, Hashable {
    /// One room.
    package struct Room: Sendable, Hashable {
        /// A URL whose text contains this is guarded by the room (pattern type `contains`);
        /// default `/{slug}`.
        package var urlPattern: String?
        /// Users let in at once before a line forms; nil: everyone (an open room).
        package var capacity: Int?
        /// Users let in from the head of the line per minute (0: only the admin `admit`).
        package var rate: Double
        /// Every check is refused with HTTP 403.
        package var blocked: Bool
        /// The room is not active: checks are promoted with no slug.
        package var closed: Bool
        /// Minutes a promotion stays valid (signature timeout).
        package var timeout: Int
        /// When the room's queue activates, in milliseconds since 1970 as digits (part of the
        /// signature). The JSON form also takes ``EmulatorScheduledStart``'s forms (ISO 8601,
        /// `"+SECONDS"`), stored as milliseconds. In the future: users arriving before it get
        /// random positions when it comes.
        package var queueActivatesOn: String
        /// Whether early arrivals are shuffled when the queue activates (default true; false:
        /// arrival order, proposal).
        package var shuffleAtActivation = true
        /// The seed of that shuffle.
        package var seed: UInt64 = 0
        /// The room's message on the waiting page (proposal: the emulator's stand-in for the
        /// text a room's template shows); nil or empty: none.
        package var message: String?

        package init(
            urlPattern: String? = nil, capacity: Int? = nil, rate: Double = 0, blocked: Bool = false, closed: Bool = false,
            timeout: Int = 20, queueActivatesOn: String = "1700000000000", message: String? = nil
        ) {
            self.urlPattern = urlPattern
            self.capacity = capacity
            self.rate = rate
            self.blocked = blocked
            self.closed = closed
            self.timeout = timeout
            self.queueActivatesOn = queueActivatesOn
            self.message = message
        }

        /// The room in the JSON form the configuration and `POST /_emulator/crowdhandler/rooms/{slug}` read.
        package var json: JSONValue {
            var o: [String: JSONValue] = [
                "rate": .number(rate), "blocked": .bool(blocked), "closed": .bool(closed), "timeout": .number(Double(timeout)),
                "queueActivatesOn": .string(queueActivatesOn)
            ]
            if let urlPattern { o["urlPattern"] = .string(urlPattern) }
            if let capacity { o["capacity"] = .number(Double(capacity)) }
            if let message { o["message"] = .string(message) }
            o["shuffleAtActivation"] = .bool(shuffleAtActivation)
            o["seed"] = .number(Double(seed))
            return .object(o)
        }
    }

    /// Keys accepted as `x-api-key` (empty: any non-empty key).
    package var publicKeys: [String]
    /// The private key signatures are made with.
    package var privateKey: String
    /// Rooms by slug.
    package var rooms: [String: Room]

    package init(publicKeys: [String] = [], privateKey: String = "emulator-private-key", rooms: [String: Room]) {
        self.publicKeys = publicKeys
        self.privateKey = privateKey
        self.rooms = rooms
    }

    /// The demo public key.
    package static let demoPublicKey = "demo-public-key"

    /// Demo rooms: `demo-open` (everyone in), `demo-queue` (a line, 30 per minute),
    /// `demo-blocked` (403), `demo-closed` (not active).
    package static let demo = CrowdHandlerEmulatorConfiguration(rooms: [
        "demo-open": Room(),
        "demo-queue": Room(capacity: 0, rate: 30),
        "demo-blocked": Room(blocked: true),
        "demo-closed": Room(closed: true)
    ])

    /// Reads the JSON form (the `crowdhandler` member of the shared emulator document).
    /// `now` resolves a `"+SECONDS"` activation (the emulator's clock).
    package init(json: JSONValue, path: String = "crowdhandler", now: Date = Date()) throws {
        let r = try ConfigurationReader(json, path: path, vendor: CrowdHandlerConfiguration.vendorID)
        try r.rejectUnknownKeys(["publicKeys", "privateKey", "rooms"])
        var rooms: [String: Room] = [:]
        if let roomsReader = try r.object("rooms") {
            for slug in roomsReader.object.keys.sorted() {
                guard !slug.isEmpty, !slug.contains("/"), let value = roomsReader.object[slug] else {
                    throw WaitingRoomError.invalidConfiguration(field: "\(path).rooms", "a room slug must be non-empty without \"/\"")
                }
                let x = try ConfigurationReader(value, path: "\(path).rooms.\(slug)", vendor: CrowdHandlerConfiguration.vendorID)
                try x.rejectUnknownKeys([
                    "urlPattern", "capacity", "rate", "blocked", "closed", "timeout", "queueActivatesOn", "message",
                    "shuffleAtActivation", "seed"
                ])
                var room = Room(
                    urlPattern: try x.string("urlPattern"), capacity: try x.int("capacity", range: 0...100_000_000),
                    rate: try x.double("rate", range: 0...1_000_000) ?? 0, blocked: try x.bool("blocked") ?? false,
                    closed: try x.bool("closed") ?? false, timeout: try x.int("timeout", range: 1...100_000) ?? 20,
                    queueActivatesOn: Self.activationStamp(try x.string("queueActivatesOn"), now: now) ?? "1700000000000",
                    message: try x.string("message"))
                room.shuffleAtActivation = try x.bool("shuffleAtActivation") ?? true
                room.seed = UInt64(try x.int("seed", range: 0...Int(Int32.max)) ?? 0)
                rooms[slug] = room
            }
        } else {
            rooms = Self.demo.rooms
        }
        self.init(
            publicKeys: try r.strings("publicKeys") ?? [], privateKey: try r.string("privateKey") ?? "emulator-private-key", rooms: rooms)
    }
}
