import Foundation
import WaitingRoom

/// The management API's operations on the model (README "Management API (v4)"): rooms and
/// events listed, created, read, replaced, patched and deleted, each under the model's one lock
/// so a request sees and leaves a consistent state. A room is found by its 32-hex id or, for the
/// routes that existed before ids (proposal), by its name. Answers are v4 `result` documents;
/// refusals are ``CloudflareV4Failure``.
extension CloudflareEmulatorModel {
    /// `body` on the state under the lock, its typed failure passed on.
    func withState<T>(_ body: (inout State) throws(CloudflareV4Failure) -> T) throws(CloudflareV4Failure) -> T {
        try state.withLockedValue { s -> Result<T, CloudflareV4Failure> in
            do throws(CloudflareV4Failure) { return .success(try body(&s)) } catch { return .failure(error) }
        }.get()
    }

    /// Room names, sorted (configured rooms and rooms created through the API).
    func roomNames() -> [String] { state.withLockedValue { $0.rooms.keys.sorted() } }

    /// The name of the room `idOrName` names in `s` (its id first, then its name).
    static func roomName(_ idOrName: String, _ s: inout State, at t: Date) -> String? {
        for name in s.rooms.keys where s.management.room(name, at: t).id == idOrName { return name }
        return s.rooms[idOrName] != nil ? idOrName : nil
    }

    /// The v4 document of room `name` in `s`.
    static func roomDocument(_ name: String, _ s: inout State, host: String, at t: Date) -> JSONValue {
        guard let r = s.rooms[name] else { return .null }
        return CloudflareRoomResource.json(name: name, room: r.room, record: s.management.room(name, at: t), defaultHost: host, now: t)
    }

    /// Every room's v4 document, by name.
    func listRooms(host: String) -> [JSONValue] {
        let t = now()
        return state.withLockedValue { s in s.rooms.keys.sorted().map { Self.roomDocument($0, &s, host: host, at: t) } }
    }

    /// Room `idOrName`'s v4 document.
    func roomDocument(_ idOrName: String, host: String) throws(CloudflareV4Failure) -> JSONValue {
        let t = now()
        return try withState { s throws(CloudflareV4Failure) -> JSONValue in
            guard let name = Self.roomName(idOrName, &s, at: t) else { throw .roomNotFound(idOrName) }
            return Self.roomDocument(name, &s, host: host, at: t)
        }
    }

    /// Creates a room from a POST body; it serves traffic at once. Its v4 document.
    func createRoom(_ body: JSONValue, host: String) throws(CloudflareV4Failure) -> JSONValue {
        let given = try CloudflareRoomResource.check(body, mode: .create)
        var document = CloudflareRoomResource.defaults
        for (k, v) in given { document[k] = v }
        let t = now()
        let (room, extras) = try CloudflareRoomResource.settings(from: document, now: t)
        let name = document["name"]?.stringValue ?? ""
        return try withState { s throws(CloudflareV4Failure) -> JSONValue in
            try Self.checkUnique(name: name, path: room.path ?? "/" + name, except: nil, s)
            s.rooms[name] = RoomState(room: room, seed: s.configuration.seed &+ UInt64(truncatingIfNeeded: s.rooms.count))
            s.configuration.rooms[name] = room
            s.management.rooms[name] = CloudflareManagementRegistry.RoomRecord(
                id: CloudflareManagementRegistry.newID(), createdOn: t, modifiedOn: t, extras: extras)
            return Self.roomDocument(name, &s, host: host, at: t)
        }
    }

    /// Replaces (PUT: what is not given goes back to its default) or patches (PATCH) room
    /// `idOrName`; its events, visitors and sessions stay (a new name carries them along).
    func updateRoom(_ idOrName: String, _ body: JSONValue, replace: Bool, host: String) throws(CloudflareV4Failure) -> JSONValue {
        let given = try CloudflareRoomResource.check(body, mode: replace ? .replace : .patch)
        let t = now()
        // the current document (outside the lock: settings(from:) parses), then checked again under it
        let current = try roomDocument(idOrName, host: host)
        var document = replace ? CloudflareRoomResource.defaults : current.objectValue ?? [:]
        for (k, v) in given { document[k] = v == .null ? CloudflareRoomResource.defaults[k] ?? .null : v }
        let (newRoom, extras) = try CloudflareRoomResource.settings(from: document, now: t)
        let newName = document["name"]?.stringValue ?? ""
        return try withState { s throws(CloudflareV4Failure) -> JSONValue in
            guard let old = Self.roomName(idOrName, &s, at: t), var r = s.rooms[old] else { throw .roomNotFound(idOrName) }
            try Self.checkUnique(name: newName, path: newRoom.path ?? "/" + newName, except: old, s)
            var room = newRoom
            // events and bypass rules are resources of their own: a PUT keeps them
            room.events = r.room.events
            room.rules = r.room.rules
            r.room = room
            var record = s.management.room(old, at: t)
            record.extras = extras
            record.modifiedOn = t
            s.rooms[old] = nil
            s.configuration.rooms[old] = nil
            s.management.rooms[old] = nil
            s.rooms[newName] = r
            s.configuration.rooms[newName] = room
            s.management.rooms[newName] = record
            if newName != old {
                for (id, v) in s.visitors where v.room == old { s.visitors[id]?.room = newName }
            }
            return Self.roomDocument(newName, &s, host: host, at: t)
        }
    }

    /// Deletes room `idOrName`, its events, visitors and sessions; its id.
    func deleteRoom(_ idOrName: String) throws(CloudflareV4Failure) -> JSONValue {
        let t = now()
        return try withState { s throws(CloudflareV4Failure) -> JSONValue in
            guard let name = Self.roomName(idOrName, &s, at: t) else { throw .roomNotFound(idOrName) }
            let id = s.management.room(name, at: t).id
            s.rooms[name] = nil
            s.configuration.rooms[name] = nil
            s.management.rooms[name] = nil
            s.visitors = s.visitors.filter { $0.value.room != name }
            return .object(["id": .string(id)])
        }
    }

    /// Refuses a room name or path another room (not `except`) has: the emulator serves every
    /// host on one site, so a path is unique across hosts (proposal).
    static func checkUnique(name: String, path: String, except: String?, _ s: State) throws(CloudflareV4Failure) {
        var errors: [CloudflareV4Error] = []
        if name != except, s.rooms[name] != nil {
            errors.append(CloudflareV4Error(.conflict, "name: a waiting room named \"\(name)\" exists", pointer: "/name"))
        }
        for (other, r) in s.rooms where other != except && other != name && (r.room.path ?? "/" + other) == path {
            errors.append(
                CloudflareV4Error(
                    .conflict, "path: waiting room \"\(other)\" covers \"\(path)\" already (host and path must be unique)", pointer: "/path"
                ))
        }
        if !errors.isEmpty { throw .badRequest(errors) }
    }

    // MARK: status

    /// `…/status` of room `idOrName`: the status document with `event_id` the event's id.
    func statusDocument(_ idOrName: String) throws(CloudflareV4Failure) -> JSONValue {
        let t = now()
        guard let name = state.withLockedValue({ s in Self.roomName(idOrName, &s, at: t) }),
            case .object(var envelope)? = status(room: name)
        else { throw .roomNotFound(idOrName) }
        if case .object(var result)? = envelope["result"], let event = result["event_id"]?.stringValue, !event.isEmpty {
            result["event_id"] = .string(state.withLockedValue { $0.management.event(event, room: name, at: t).id })
            envelope["result"] = .object(result)
        }
        return .object(envelope)
    }

    // MARK: events

    /// The name of the event `id` names in room `room`.
    static func eventName(_ id: String, room: String, _ s: inout State, at t: Date) -> String? {
        guard let r = s.rooms[room] else { return nil }
        return r.room.events.first { s.management.event($0.name, room: room, at: t).id == id }?.name
    }

    /// Every event of room `idOrName`, in start order.
    func listEvents(_ idOrName: String) throws(CloudflareV4Failure) -> [JSONValue] {
        let t = now()
        return try withState { s throws(CloudflareV4Failure) -> [JSONValue] in
            guard let room = Self.roomName(idOrName, &s, at: t), let r = s.rooms[room] else { throw .roomNotFound(idOrName) }
            return r.room.events.sorted { $0.eventStartTime < $1.eventStartTime }.map {
                CloudflareEventResource.json($0, record: s.management.event($0.name, room: room, at: t))
            }
        }
    }

    /// Event `eventID` of room `idOrName`: its v4 document, or with `details` the settings in
    /// force while it is active.
    func eventDocument(_ idOrName: String, _ eventID: String, details: Bool) throws(CloudflareV4Failure) -> JSONValue {
        let t = now()
        return try withState { s throws(CloudflareV4Failure) -> JSONValue in
            guard let room = Self.roomName(idOrName, &s, at: t), let r = s.rooms[room] else { throw .roomNotFound(idOrName) }
            guard let name = Self.eventName(eventID, room: room, &s, at: t), let event = r.room.events.first(where: { $0.name == name })
            else {
                throw .eventNotFound(eventID)
            }
            let record = s.management.event(name, room: room, at: t)
            return details
                ? CloudflareEventResource.details(event, record: record, room: r.room, roomRecord: s.management.room(room, at: t))
                : CloudflareEventResource.json(event, record: record)
        }
    }

    /// Creates (`eventID` nil), replaces or patches an event of room `idOrName`. Events may not
    /// overlap (Cloudflare: only one event is active at a time). Its v4 document.
    func writeEvent(_ idOrName: String, _ eventID: String?, _ body: JSONValue, mode: CloudflareRoomResource.Mode)
        throws(CloudflareV4Failure) -> JSONValue
    {
        let given = try CloudflareEventResource.check(body, mode: mode)
        let t = now()
        var document: [String: JSONValue] = [:]
        if mode == .patch, let eventID {
            guard case .object(let current) = try eventDocument(idOrName, eventID, details: false) else { throw .eventNotFound(eventID) }
            document = current
        }
        for (k, v) in given { document[k] = v }
        let (event, extras) = try CloudflareEventResource.settings(from: document, now: t)
        return try withState { s throws(CloudflareV4Failure) -> JSONValue in
            guard let room = Self.roomName(idOrName, &s, at: t), var r = s.rooms[room] else { throw .roomNotFound(idOrName) }
            var record: CloudflareManagementRegistry.EventRecord
            var events = r.room.events
            var replaced: String?
            if let eventID {
                guard let old = Self.eventName(eventID, room: room, &s, at: t) else { throw .eventNotFound(eventID) }
                record = s.management.event(old, room: room, at: t)
                record.modifiedOn = t
                events.removeAll { $0.name == old }
                replaced = old
            } else {
                record = CloudflareManagementRegistry.EventRecord(id: CloudflareManagementRegistry.newID(), createdOn: t, modifiedOn: t)
            }
            record.extras = extras
            var errors: [CloudflareV4Error] = []
            if events.contains(where: { $0.name == event.name }) {
                errors.append(CloudflareV4Error(.conflict, "name: the room has an event named \"\(event.name)\"", pointer: "/name"))
            }
            let begins = event.prequeueStartTime ?? event.eventStartTime
            if let other = events.first(where: {
                ($0.prequeueStartTime ?? $0.eventStartTime) < event.eventEndTime && begins < $0.eventEndTime
            }) {
                errors.append(
                    CloudflareV4Error(
                        .conflict, "event_start_time: the event overlaps event \"\(other.name)\" (events cannot overlap)",
                        pointer: "/event_start_time"))
            }
            if !errors.isEmpty { throw .badRequest(errors) }
            if let replaced { s.management.rooms[room]?.events[replaced] = nil }
            events.append(event)
            r.room.events = events
            s.rooms[room] = r
            s.configuration.rooms[room] = r.room
            s.management.rooms[room]?.events[event.name] = record
            return CloudflareEventResource.json(event, record: record)
        }
    }

    /// Deletes event `eventID` of room `idOrName` (visitors held in its pre-queue join the line);
    /// its id.
    func deleteEvent(_ idOrName: String, _ eventID: String) throws(CloudflareV4Failure) -> JSONValue {
        let t = now()
        return try withState { s throws(CloudflareV4Failure) -> JSONValue in
            guard let room = Self.roomName(idOrName, &s, at: t), var r = s.rooms[room] else { throw .roomNotFound(idOrName) }
            guard let name = Self.eventName(eventID, room: room, &s, at: t) else { throw .eventNotFound(eventID) }
            r.room.events.removeAll { $0.name == name }
            s.rooms[room] = r
            s.configuration.rooms[room] = r.room
            s.management.rooms[room]?.events[name] = nil
            return .object(["id": .string(eventID)])
        }
    }

    // MARK: page preview

    /// Keeps `html` for `…/preview`; the preview's id.
    func addPreview(_ html: String) -> String { state.withLockedValue { $0.management.addPreview(html) } }

    /// The custom page of preview `id`.
    func preview(_ id: String) -> String? { state.withLockedValue { $0.management.previews[id] } }
}
