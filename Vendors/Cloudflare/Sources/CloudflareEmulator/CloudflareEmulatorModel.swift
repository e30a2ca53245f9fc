import Cloudflare
import Foundation
import NIOConcurrencyHelpers
import WaitingRoom
import WaitingRoomEmulatorKit

/// The emulator's state: visitors by cookie, each room's line, pre-queue and active sessions,
/// faults and counters, behind one lock. Time is the injected clock's.
final class CloudflareEmulatorModel: Sendable {
    typealias Room = CloudflareEmulatorConfiguration.Room
    typealias Event = CloudflareEmulatorConfiguration.Event

    /// How long a waiting visitor's place is held after the last refresh (Cloudflare: 5 min).
    static let placeHeld: TimeInterval = 300
    /// The estimated wait over which the queue is full (Cloudflare: 24 h).
    static let fullAfterMinutes = 24 * 60

    struct Visitor {
        var room: String
        var lastSeen: Date
    }

    struct RoomState {
        var room: Room
        /// Waiting visitors, in line order (random queueing picks from anywhere).
        var line: [String] = []
        var inLine: Set<String> = []
        /// Admitted visitors and when their session ends.
        var active: [String: Date] = [:]
        /// When each active visitor was let in (sessions without renewal end a fixed time after).
        var acceptedAt: [String: Date] = [:]
        var preQueue: EmulatorPreQueue<String>
        var preQueueEvent: String?
        var credit: Double
        var lastRate: Date?
        var admittedTotal = 0
        var rng: EmulatorSeededGenerator
        /// Arrivals (visitors who took a place) and admissions, for `load`'s fairness figures.
        var log = EmulatorAdmissionLog<String>()

        init(room: Room, seed: UInt64) {
            self.room = room
            preQueue = EmulatorPreQueue(startsAt: nil, shuffle: false, seed: seed)
            credit = Double(room.newUsersPerMinute)
            rng = EmulatorSeededGenerator(seed: seed)
        }

        var waiting: Int { line.count + preQueue.heldCount }
    }

    /// The settings in force at a moment: the room's, overridden by an active event.
    struct Effective {
        var room: Room
        var event: Event?
        var prequeueing: Bool
    }

    struct State {
        var configuration: CloudflareEmulatorConfiguration
        var rooms: [String: RoomState]
        var visitors: [String: Visitor] = [:]
        var counters = CloudflareEmulatorCounters()
        var serial = 0

        init(_ configuration: CloudflareEmulatorConfiguration) {
            self.configuration = configuration
            var rooms: [String: RoomState] = [:]
            for (i, name) in configuration.rooms.keys.sorted().enumerated() {
                if let room = configuration.rooms[name] { rooms[name] = RoomState(room: room, seed: configuration.seed &+ UInt64(i)) }
            }
            self.rooms = rooms
        }
    }

    /// Behind NIO's lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    let state: NIOLockedValueBox<State>
    let now: @Sendable () -> Date
    /// The faults (the emulator kit's queue).
    let faults = EmulatorFaultQueue()

    init(configuration: CloudflareEmulatorConfiguration, now: @escaping @Sendable () -> Date) {
        state = NIOLockedValueBox(State(configuration))
        self.now = now
    }

    // MARK: settings in force

    static func effective(_ r: RoomState, at t: Date) -> Effective {
        var room = r.room
        for e in r.room.events where !e.suspended {
            if e.eventStartTime <= t, t < e.eventEndTime {
                if let m = e.queueingMethod { room.queueingMethod = m }
                if let n = e.newUsersPerMinute { room.newUsersPerMinute = n }
                if let n = e.totalActiveUsers { room.totalActiveUsers = n }
                if let n = e.sessionDuration { room.sessionDuration = n }
                if let b = e.disableSessionRenewal { room.disableSessionRenewal = b }
                return Effective(room: room, event: e, prequeueing: false)
            }
            if let pq = e.prequeueStartTime, pq <= t, t < e.eventStartTime {
                return Effective(room: room, event: e, prequeueing: true)
            }
        }
        return Effective(room: room, event: nil, prequeueing: false)
    }

    /// The room whose path covers `path` (a path under the site, `/shop/cart`): the longest match.
    static func room(for path: String, _ s: State) -> String? {
        var best: (String, Int)?
        for (name, r) in s.rooms {
            let p = r.room.path ?? "/\(name)"
            let covers = p == "/" || path == p || path.hasPrefix(p.hasSuffix("/") ? p : p + "/")
            if covers, best.map({ p.count > $0.1 }) ?? true { best = (name, p.count) }
        }
        return best?.0
    }

    // MARK: time passing

    /// Brings a room up to `t`: the pre-queue of the next event, its release at the start (in
    /// admission order, shuffled with `shuffle_at_event_start`), expired sessions and lost
    /// places, then admissions from the line by `new_users_per_minute` within `total_active_users`.
    static func tick(_ name: String, _ s: inout State, at t: Date) {
        guard var r = s.rooms[name] else { return }
        syncPreQueue(&r, documentSeed: s.configuration.seed, at: t)
        let lineWasEmpty = r.line.isEmpty
        let released = r.preQueue.release(now: t)
        if !released.isEmpty, lineWasEmpty {
            // the new-user allowance counts from the start (proposal): the pre-queue is let in at
            // the rate, not a minute's worth at once
            r.credit = 0
            r.lastRate = min(t, r.preQueue.startsAt ?? t)
        }
        for id in released where !r.inLine.contains(id) {
            r.line.append(id)
            r.inLine.insert(id)
        }
        // sessions that ran out, places not refreshed for 5 minutes
        for (id, end) in r.active where end <= t {
            r.active[id] = nil
            r.acceptedAt[id] = nil
            s.counters.sessionsExpired += 1
        }
        if !r.line.isEmpty {
            let before = r.line.count
            r.line.removeAll { id in
                guard let v = s.visitors[id] else { return true }
                return t.timeIntervalSince(v.lastSeen) > placeHeld
            }
            if r.line.count != before {
                r.inLine = Set(r.line)
                s.counters.placesLost += before - r.line.count
            }
        }
        // admissions by rate
        let e = effective(r, at: t)
        let rate = Double(e.room.newUsersPerMinute)
        let last = r.lastRate ?? t
        r.lastRate = t
        r.credit = min(r.credit + max(0, t.timeIntervalSince(last)) * rate / 60, max(rate, 1))
        if !e.prequeueing, !e.room.queueAll, e.room.queueingMethod != .reject {
            while r.credit >= 1, !r.line.isEmpty, r.active.count < e.room.totalActiveUsers || e.room.queueingMethod == .passthrough {
                let index = e.room.queueingMethod == .random ? Int.random(in: 0..<r.line.count, using: &r.rng) : 0
                let id = r.line.remove(at: index)
                r.inLine.remove(id)
                // logged at the moment the rate reached this admission, between the two requests
                let due = rate > 0 ? t.addingTimeInterval(-(r.credit - 1) * 60 / rate) : t
                r.credit -= 1
                accept(id, &r, e.room, at: t, loggedAt: min(t, max(last, due)))
                s.counters.admitted += 1
            }
        }
        s.rooms[name] = r
    }

    /// Lets `id` in at `t` (its admission logged at `loggedAt`, default `t`).
    static func accept(_ id: String, _ r: inout RoomState, _ room: Room, at t: Date, loggedAt: Date? = nil) {
        r.active[id] = t.addingTimeInterval(TimeInterval(room.sessionDuration * 60))
        r.acceptedAt[id] = t
        r.admittedTotal += 1
        r.log.admitted(id, at: loggedAt ?? t)
    }

    // MARK: the protected site

    /// A request to the protected site at `path` (under the site prefix).
    func request(path: String, query: [String: String], accept: String?, cookieHeader: String?) -> CloudflareEmulatorAnswer {
        let t = now()
        return state.withLockedValue { s in
            let a = answer(path: path, query: query, accept: accept, cookieHeader: cookieHeader, at: t, &s)
            s.counters.replies[a.kind, default: 0] += 1
            return a
        }
    }

    static func cookie(named name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let kv = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if kv.count == 2, kv[0] == name { return kv[1] }
        }
        return nil
    }

    func newVisitor(_ room: String, at t: Date, _ s: inout State) -> String {
        s.serial += 1
        let random = (0..<16).map { _ in "abcdefghijkmnpqrstuvwxyz23456789".randomElement() ?? "x" }
        let id = "v\(s.serial)." + String(random)
        s.visitors[id] = Visitor(room: room, lastSeen: t)
        s.counters.visitorsCreated += 1
        return id
    }

    private func answer(path: String, query: [String: String], accept: String?, cookieHeader: String?, at t: Date,
                        _ s: inout State) -> CloudflareEmulatorAnswer {
        let json = accept == "application/json"
        guard let name = Self.room(for: path, s), s.rooms[name] != nil else {
            return Self.origin(path: path, room: nil, visitor: nil, json: json, headers: [], kind: "suspended")
        }
        Self.tick(name, &s, at: t)
        guard var r = s.rooms[name] else { return Self.origin(path: path, room: nil, visitor: nil, json: json, headers: [], kind: "suspended") }
        let e = Self.effective(r, at: t)
        if r.room.suspended {
            // suspended: traffic goes to the origin and no cookie is created
            return Self.origin(path: path, room: name, visitor: nil, json: json, headers: [], kind: "suspended")
        }
        let cookieName = r.room.cookieName
        var id = Self.cookie(named: cookieName, in: cookieHeader) ?? ""
        if s.visitors[id]?.room != name { id = newVisitor(name, at: t, &s) }
        s.visitors[id]?.lastSeen = t
        let sessionSeconds = e.room.sessionDuration * 60

        func cookie(maxAge: Int) -> (String, String) {
            ("Set-Cookie", "\(cookieName)=\(id); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Lax")
        }
        func admitted() -> CloudflareEmulatorAnswer {
            if query["revoke"] == "1", r.room.enabledOriginCommands.contains("revoke") {
                r.active[id] = nil
                r.acceptedAt[id] = nil
                s.rooms[name] = r
                s.counters.revoked += 1
                return Self.origin(path: path, room: name, visitor: id, json: json,
                                   headers: [cookie(maxAge: 300), ("Cf-Waiting-Room-Command", "revoke")], kind: "origin")
            }
            if !e.room.disableSessionRenewal { r.active[id] = t.addingTimeInterval(TimeInterval(sessionSeconds)) }
            s.rooms[name] = r
            let left = Int(max(0, (r.active[id] ?? t).timeIntervalSince(t)).rounded(.up))
            return Self.origin(path: path, room: name, visitor: id, json: json, headers: [cookie(maxAge: left)], kind: "origin")
        }
        func queued(rejected: Bool = false, full: Bool = false) -> CloudflareEmulatorAnswer {
            s.rooms[name] = r
            let reply = Self.reply(for: id, r, e, at: t, rejected: rejected, full: full)
            let kind = rejected ? "rejected" : full ? "queueIsFull" : "queued"
            let headers = [cookie(maxAge: 300)]
            if json, r.room.jsonResponseEnabled {
                return CloudflareEmulatorAnswer(status: r.room.queueingStatusCode, contentType: "application/json", headers: headers,
                                                body: Array(reply.json.jsonText.utf8), kind: kind)
            }
            let page = CloudflareWaitingPageHTML.page(room: name, reply: reply, rejected: rejected)
            return CloudflareEmulatorAnswer(status: r.room.queueingStatusCode, contentType: "text/html; charset=utf-8",
                                            headers: headers + (rejected ? [] : [("Refresh", String(reply.refreshIntervalSeconds ?? 20))]),
                                            body: Array(page.utf8), kind: json ? kind : "html")
        }

        if r.active[id] != nil { return admitted() }
        if r.inLine.contains(id) || r.preQueue.isHeld(id) { return queued() }
        // a new arrival (or one whose session ran out)
        if e.room.queueingMethod == .passthrough {
            r.log.arrived(id, at: t, prequeued: false)
            Self.accept(id, &r, e.room, at: t)
            s.counters.admitted += 1
            return admitted()
        }
        if e.prequeueing {
            if r.preQueue.hold(id, now: t) {
                r.log.arrived(id, at: t, prequeued: true)
                return queued()
            }
            // an event whose pre-queue is not the room's current one: nobody is let in, so the line
            r.log.arrived(id, at: t, prequeued: false)
            r.line.append(id)
            r.inLine.insert(id)
            return queued()
        }
        if e.room.queueAll {
            r.log.arrived(id, at: t, prequeued: false)
            r.line.append(id)
            r.inLine.insert(id)
            return queued()
        }
        if e.room.queueingMethod == .reject { return queued(rejected: true) }
        let rate = e.room.newUsersPerMinute
        if rate > 0, (r.line.count + 1 + rate - 1) / rate > Self.fullAfterMinutes { return queued(full: true) }
        r.log.arrived(id, at: t, prequeued: false)
        if r.line.isEmpty, r.credit >= 1, r.active.count < e.room.totalActiveUsers {
            r.credit -= 1
            Self.accept(id, &r, e.room, at: t)
            s.counters.admitted += 1
            return admitted()
        }
        r.line.append(id)
        r.inLine.insert(id)
        return queued()
    }

    /// The `cfWaitingRoom` reply for a waiting visitor.
    static func reply(for id: String, _ r: RoomState, _ e: Effective, at t: Date, rejected: Bool, full: Bool) -> CloudflareWaitingRoomReply {
        let rate = e.room.newUsersPerMinute
        let known = rate > 0 && !e.room.queueAll && !e.prequeueing && !rejected
        let position = (r.line.firstIndex(of: id) ?? r.line.count) + 1
        func minutes(_ n: Int) -> Int { rate > 0 ? (n + rate - 1) / rate : 0 }
        var reply = CloudflareWaitingRoomReply(
            waitTimeKnown: known, queueIsFull: full, queueAll: e.room.queueAll, lastUpdated: CloudflareEmulatorConfiguration.Event.format(t),
            refreshIntervalSeconds: rejected ? 0 : r.room.refreshIntervalSeconds)
        if known {
            if e.room.queueingMethod == .random {
                let n = r.line.count
                reply.waitTime25Percentile = minutes(max(1, n / 4))
                reply.waitTime50Percentile = minutes(max(1, n / 2))
                reply.waitTime75Percentile = minutes(max(1, n * 3 / 4))
                reply.waitTime = reply.waitTime50Percentile
            } else {
                reply.waitTime = minutes(position)
            }
            let w = reply.waitTime ?? 0
            reply.waitTimeFormatted = w == 1 ? "1 minute" : "\(w) minutes"
            // full: a newcomer's wait would pass 24 h
            if minutes(r.line.count + 1) > fullAfterMinutes { reply.queueIsFull = true }
        } else {
            reply.waitTimeFormatted = "unavailable"
        }
        return reply
    }

    /// The stand-in origin: JSON for a JSON request, a small page otherwise.
    static func origin(path: String, room: String?, visitor: String?, json: Bool, headers: [(String, String)], kind: String) -> CloudflareEmulatorAnswer {
        if json {
            var o: [String: JSONValue] = ["origin": .string("cloudflare-emulator"), "path": .string(path)]
            if let room { o["room"] = .string(room) }
            return CloudflareEmulatorAnswer(status: 200, contentType: "application/json", headers: headers,
                                            body: Array(JSONValue.object(o).jsonText.utf8), kind: kind)
        }
        return CloudflareEmulatorAnswer(status: 200, contentType: "text/html; charset=utf-8", headers: headers,
                                        body: Array(CloudflareWaitingPageHTML.origin(path: path, room: room).utf8), kind: kind)
    }

    // MARK: the status route and admin

    /// `GET …/waiting_rooms/{name}/status` in the API's shape (nil: no such room).
    func status(room name: String) -> JSONValue? {
        let t = now()
        return state.withLockedValue { s -> JSONValue? in
            Self.tick(name, &s, at: t)
            guard let r = s.rooms[name] else { return nil }
            let e = Self.effective(r, at: t)
            let status: String
            if r.room.suspended { status = "suspended" }
            else if e.prequeueing { status = "event_prequeueing" }
            else if r.waiting > 0 || e.room.queueAll || e.room.queueingMethod == .reject { status = "queueing" }
            else { status = "not_queueing" }
            let rate = e.room.newUsersPerMinute
            let maxMinutes = rate > 0 ? (r.line.count + rate - 1) / rate : 0
            return .object([
                "success": .bool(true), "errors": .array([]), "messages": .array([]),
                "result": .object([
                    "status": .string(status), "event_id": .string(e.event?.name ?? ""),
                    "estimated_queued_users": .number(Double(r.waiting)), "estimated_total_active_users": .number(Double(r.active.count)),
                    "max_estimated_time_minutes": .number(Double(maxMinutes)),
                ]),
            ])
        }
    }

    /// Counts a request of kind `target` and takes the next fault for it from the kit's queue.
    func takeFault(for target: String) -> EmulatorFault? {
        let fault = faults.take(for: target)
        state.withLockedValue { s in
            s.counters.requests[target, default: 0] += 1
            if let fault {
                s.counters.faults[fault.action.name, default: 0] += 1
                s.counters.faultsOn[target, default: 0] += 1
            }
        }
        return fault
    }

    func reset() {
        faults.reset()
        state.withLockedValue { s in s = State(s.configuration) }
    }

    /// Lets `count` visitors in from the head of the room's line (the pre-queue too, in its
    /// order), whatever the limits; nil for an unknown room.
    @discardableResult
    func admit(room name: String, count: Int) -> Int? {
        let t = now()
        return state.withLockedValue { s -> Int? in
            Self.tick(name, &s, at: t)
            guard var r = s.rooms[name] else { return nil }
            let e = Self.effective(r, at: t)
            let n = min(max(0, count), r.line.count)
            for id in r.line.prefix(n) {
                r.inLine.remove(id)
                Self.accept(id, &r, e.room, at: t)
            }
            r.line.removeFirst(n)
            s.rooms[name] = r
            s.counters.admitted += n
            return n
        }
    }

    /// A room's settings now (nil: no such room).
    func room(named name: String) -> Room? { state.withLockedValue { $0.rooms[name]?.room } }

    /// Replaces a room's settings (admin); false for an unknown room.
    @discardableResult
    func update(room name: String, _ room: Room) -> Bool {
        state.withLockedValue { s in
            guard s.rooms[name] != nil else { return false }
            s.rooms[name]?.room = room
            s.configuration.rooms[name] = room
            return true
        }
    }

    var counters: CloudflareEmulatorCounters { state.withLockedValue { $0.counters } }

    /// Visitors waiting per room (line and pre-queue).
    func waiting() -> [String: Int] { state.withLockedValue { $0.rooms.mapValues(\.waiting) } }

    /// Active sessions per room.
    func active() -> [String: Int] { state.withLockedValue { $0.rooms.mapValues { $0.active.count } } }

    func snapshot() -> JSONValue {
        let t = now()
        return state.withLockedValue { s in
            var rooms: [String: JSONValue] = [:]
            for name in s.rooms.keys.sorted() {
                Self.tick(name, &s, at: t)
                guard let r = s.rooms[name] else { continue }
                let e = Self.effective(r, at: t)
                rooms[name] = .object([
                    "waiting": .number(Double(r.waiting)), "prequeued": .number(Double(r.preQueue.heldCount)),
                    "active": .number(Double(r.active.count)), "admitted": .number(Double(r.admittedTotal)),
                    "event": e.event.map { .string($0.name) } ?? .null, "prequeueing": .bool(e.prequeueing),
                    "settings": r.room.json,
                ])
            }
            return .object(["rooms": .object(rooms), "counters": s.counters.json, "visitors": .number(Double(s.visitors.count)),
                            "faultsPending": .number(Double(faults.pending))])
        }
    }
}
