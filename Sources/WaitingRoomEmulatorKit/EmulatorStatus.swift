import WaitingRoom

/// What one vendor's local emulator reports to the vendor-neutral `/_emulator/` dashboard:
/// its rooms with their live figures, its counters, and the admin calls that change them.
///
/// A vendor plugs into the dashboard by conforming its emulator to ``EmulatorStatusSource``;
/// the dashboard draws whatever the status lists (rooms, counters, controls) and never names
/// a vendor.
package struct EmulatorStatus: Sendable, Equatable {
    /// The vendor id (`netfunnel`, `queueit`, …): also the admin path segment `/_emulator/<vendor>/`.
    package var vendor: String
    /// The name people know the vendor by.
    package var displayName: String
    /// Every room (segment, waiting room) the emulator serves.
    package var rooms: [Room]
    /// Keys handed out and never returned to the server; nil for a vendor whose passes hold no key.
    package var keysNeverReturned: Int?
    /// Faults injected so far (each fault use counts once).
    package var faultsInjected: Int
    /// Fault uses still pending.
    package var faultsPending: Int
    /// Further vendor counters, by the vendor's own names (shown as is).
    package var counters: [String: Double]
    /// Admin calls on the whole emulator (add a fault, clear faults, reset).
    package var controls: [EmulatorControl]

    package init(
        vendor: String, displayName: String, rooms: [Room], keysNeverReturned: Int?, faultsInjected: Int,
        faultsPending: Int, counters: [String: Double] = [:], controls: [EmulatorControl] = []
    ) {
        self.vendor = vendor
        self.displayName = displayName
        self.rooms = rooms
        self.keysNeverReturned = keysNeverReturned
        self.faultsInjected = faultsInjected
        self.faultsPending = faultsPending
        self.counters = counters
        self.controls = controls
    }

    /// One room's live figures.
    package struct Room: Sendable, Equatable {
        /// The room as a client names it.
        package var key: RoomKey
        /// The room's state in the vendor's words (`waiting`, `block`, `queue`, `safetynet`, …).
        package var state: String
        /// Users waiting in line now.
        package var waiting: Int
        /// Users admitted since the emulator started (or was reset): a counter that only grows.
        package var admittedTotal: Int
        /// Users inside now (holding a slot), for vendors with concurrency limits; else nil.
        package var inside: Int?
        /// Admissions per second, measured or configured (see ``rateNote``).
        package var rate: Double
        /// What ``rate`` is (`measured over 10 s`, `configured`).
        package var rateNote: String
        /// The room's limit (concurrent users or admissions per second, see ``limitNote``), if any.
        package var limit: Double?
        /// What ``limit`` limits (`users inside`, `admissions/s`).
        package var limitNote: String
        /// The page a person opens to wait in this room, relative to the emulator's base URL.
        package var queuePagePath: String?
        /// Admin calls on this room (change the limit, open, close, block).
        package var controls: [EmulatorControl]

        package init(
            key: RoomKey, state: String, waiting: Int, admittedTotal: Int, inside: Int? = nil, rate: Double,
            rateNote: String, limit: Double?, limitNote: String, queuePagePath: String? = nil,
            controls: [EmulatorControl] = []
        ) {
            self.key = key
            self.state = state
            self.waiting = waiting
            self.admittedTotal = admittedTotal
            self.inside = inside
            self.rate = rate
            self.rateNote = rateNote
            self.limit = limit
            self.limitNote = limitNote
            self.queuePagePath = queuePagePath
            self.controls = controls
        }
    }

    /// The status as JSON (the `/_emulator/status` document's entry for this vendor).
    package var json: JSONValue {
        var object: [String: JSONValue] = [
            "vendor": .string(vendor), "displayName": .string(displayName),
            "rooms": .array(rooms.map(\.json)),
            "keysNeverReturned": keysNeverReturned.map { .number(Double($0)) } ?? .null,
            "faultsInjected": .number(Double(faultsInjected)), "faultsPending": .number(Double(faultsPending)),
            "counters": .object(counters.mapValues { .number($0) }),
            "controls": .array(controls.map(\.json))
        ]
        object["waiting"] = .number(Double(rooms.reduce(0) { $0 + $1.waiting }))
        object["admittedTotal"] = .number(Double(rooms.reduce(0) { $0 + $1.admittedTotal }))
        return .object(object)
    }
}

extension EmulatorStatus.Room {
    /// The room as JSON.
    package var json: JSONValue {
        .object([
            "scope": .string(key.scope), "room": .string(key.room), "state": .string(state),
            "waiting": .number(Double(waiting)), "admittedTotal": .number(Double(admittedTotal)),
            "inside": inside.map { .number(Double($0)) } ?? .null,
            "rate": .number(rate), "rateNote": .string(rateNote),
            "limit": limit.map { .number($0) } ?? .null, "limitNote": .string(limitNote),
            "queuePagePath": queuePagePath.map { .string($0) } ?? .null,
            "controls": .array(controls.map(\.json))
        ])
    }
}

/// One admin call the dashboard offers as a button (or a number field with a button): an HTTP
/// request to the emulator's own admin route. In ``body``, the string `"$value"` is replaced
/// by the number a person typed (when ``input`` is set).
package struct EmulatorControl: Sendable, Equatable {
    /// The button's text.
    package var label: String
    /// `POST`, `PUT` or `DELETE`.
    package var method: String
    /// The admin path (`/_emulator/<vendor>/…`).
    package var path: String
    /// The JSON body, if any.
    package var body: JSONValue?
    /// The label of a number field whose value replaces `"$value"` in ``body``; nil for a plain button.
    package var input: String?
    /// The field's starting value.
    package var value: Double?

    package init(label: String, method: String = "POST", path: String, body: JSONValue? = nil, input: String? = nil, value: Double? = nil) {
        self.label = label
        self.method = method
        self.path = path
        self.body = body
        self.input = input
        self.value = value
    }

    /// The control as JSON.
    package var json: JSONValue {
        var object: [String: JSONValue] = ["label": .string(label), "method": .string(method), "path": .string(path)]
        if let body { object["body"] = body }
        if let input { object["input"] = .string(input) }
        if let value { object["value"] = .number(value) }
        return .object(object)
    }
}

/// A vendor emulator that reports its rooms and counters to the `/_emulator/` dashboard.
/// Conform to it and add the emulator to the combined emulator's sources: the dashboard needs
/// no change.
package protocol EmulatorStatusSource: Sendable {
    /// The live status, read at the moment of the call.
    func emulatorStatus() -> EmulatorStatus
}
