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
        /// The last request that counted (ignored ones do not), for the 5-minute hold.
        var lastSeen: Date
        /// The last counted attempt to leave the room (`lastUpdated`) and the reply it got; nil
        /// while admitted. A request sooner than the reply's `refreshIntervalSeconds` is ignored.
        var lastUpdated: Date?
        var lastReply: CloudflareWaitingRoomReply?
        /// When the visitor took its place in line: its FIFO group is that minute.
        var queuedAt: Date?
        /// Failed the Turnstile challenge in an `infinite_queue` room: never let in.
        var infiniteQueue = false
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
        /// The global-propagation overshoot fault in force (``CloudflarePropagationOvershoot``).
        var overshoot: CloudflarePropagationOvershoot?
        /// Ids and echoed fields of the management API (`/client/v4`); kept by `reset`.
        var management = CloudflareManagementRegistry()

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
        for e in r.room.events.sorted(by: { $0.eventStartTime < $1.eventStartTime }) where !e.suspended {
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
        // the overshoot fault lets more than new_users_per_minute in while it lasts
        let base = Double(e.room.newUsersPerMinute)
        let rate = base * overshootFactor(s, at: t)
        let last = r.lastRate ?? t
        r.lastRate = t
        r.credit = min(r.credit + overshootCredit(s, base: base, from: last, to: t), max(rate, 1))
        if !e.prequeueing, !e.room.queueAll, e.room.queueingMethod != .reject {
            // passthrough (after queue_all is lifted) lets the whole line in, no limit applying
            let passthrough = e.room.queueingMethod == .passthrough
            while !r.line.isEmpty, passthrough || (r.credit >= 1 && r.active.count < e.room.totalActiveUsers) {
                let index = e.room.queueingMethod == .random ? Int.random(in: 0..<r.line.count, using: &r.rng) : 0
                let id = r.line.remove(at: index)
                r.inLine.remove(id)
                // logged at the moment the rate reached this admission, between the two requests
                let due = rate > 0 && !passthrough ? t.addingTimeInterval(-(r.credit - 1) * 60 / rate) : t
                if !passthrough { r.credit -= 1 }
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

    /// A request to the protected site.
    func request(_ q: CloudflareEmulatorRequest) -> CloudflareEmulatorAnswer {
        let t = now()
        return state.withLockedValue { s in
            let a = answer(q, at: t, &s)
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

    /// The room a request goes to: the one whose path (any host) or additional route (its host)
    /// covers it, the longest path winning (Cloudflare: "the most specific path").
    static func room(for host: String?, path: String, _ s: State) -> String? {
        var best: (String, Int)?
        for (name, r) in s.rooms {
            let p = r.room.path ?? "/\(name)"
            var length = CloudflareEmulatorConfiguration.path(p, covers: path) ? p.count : -1
            for route in r.room.additionalRoutes where route.covers(host: host, path: path) { length = max(length, route.path.count) }
            if length >= 0, best.map({ length > $0.1 }) ?? true { best = (name, length) }
        }
        return best?.0
    }

    private func answer(_ q: CloudflareEmulatorRequest, at t: Date, _ s: inout State) -> CloudflareEmulatorAnswer {
        let path = q.path
        let json = q.accept == "application/json"
        guard let name = Self.room(for: q.host, path: path, s), s.rooms[name] != nil else {
            return Self.origin(path: path, room: nil, visitor: nil, json: json, headers: [], kind: "suspended")
        }
        Self.tick(name, &s, at: t)
        guard let r = s.rooms[name] else {
            return Self.origin(path: path, room: nil, visitor: nil, json: json, headers: [], kind: "suspended")
        }
        if r.room.suspended {
            // suspended: traffic goes to the origin and no cookie is created
            return Self.origin(path: path, room: name, visitor: nil, json: json, headers: [], kind: "suspended")
        }
        if r.room.rules.contains(where: { $0.matches(q) }) {
            // a bypass rule: the origin, as if no room covered the request (no cookie, not counted)
            return Self.origin(path: path, room: name, visitor: nil, json: json, headers: [], kind: "bypassed")
        }
        let e = Self.effective(r, at: t)
        let cookieName = r.room.cookieName
        var id = Self.cookie(named: cookieName, in: q.cookieHeader) ?? ""
        if s.visitors[id]?.room != name {
            id = newVisitor(name, at: t, &s)
            // Turnstile runs on the waiting page, not on JSON answers
            if r.room.turnstileMode != .off, !json, q.failsTurnstile {
                s.counters.turnstileFailed += 1
                if r.room.turnstileAction == .infiniteQueue { s.visitors[id]?.infiniteQueue = true }
            }
        }
        // a request sooner than refreshIntervalSeconds after the last counted one is ignored:
        // the same answer, lastUpdated unchanged, the visitor not moved on
        var visit = Visit(request: q, now: t, name: name, id: id, effective: e, roomState: r)
        if let v = s.visitors[id], let last = v.lastUpdated, let previous = v.lastReply,
            t.timeIntervalSince(last) < Double(previous.refreshIntervalSeconds ?? 0)
        {
            return Self.queuedAnswer(room: name, r.room, reply: previous, json: json, headers: [visit.cookie(maxAge: 300)], kind: "ignored")
        }
        s.visitors[id]?.lastSeen = t
        return visit.answer(&s)
    }

    /// A waiting answer: the `cfWaitingRoom` JSON (JSON mode on a room with
    /// `json_response_enabled`), else the waiting page, refreshing unless the reply rejects.
    static func queuedAnswer(
        room name: String, _ room: Room, reply: CloudflareWaitingRoomReply, json: Bool,
        headers: [(String, String)], kind: String
    ) -> CloudflareEmulatorAnswer {
        if json, room.jsonResponseEnabled {
            return CloudflareEmulatorAnswer(
                status: room.queueingStatusCode, contentType: "application/json", headers: headers,
                body: Array(reply.json.jsonText.utf8), kind: kind)
        }
        let rejected = reply.isRejectQueue && reply.refreshIntervalSeconds == 0
        let page = CloudflareWaitingPageHTML.page(room: name, reply: reply, rejected: rejected)
        return CloudflareEmulatorAnswer(
            status: room.queueingStatusCode, contentType: "text/html; charset=utf-8",
            headers: headers + (rejected ? [] : [("Refresh", String(reply.refreshIntervalSeconds ?? 20))]),
            body: Array(page.utf8), kind: json ? kind : "html")
    }

    /// The `cfWaitingRoom` reply for a waiting visitor, every one of the 23 documented members
    /// set: estimates when known (else 0 and `"unavailable"`), the queueing method and its flags,
    /// the event's countdowns while one is active (else 0 and `"unavailable"`).
    ///
    /// FIFO estimates go by group: a visitor's group is the minute it took its place (Cloudflare's
    /// cookie holds "a unique group ID, which corresponds to the minute your visitor entered");
    /// every visitor of a group is told the time for the line up to the end of its group at
    /// `new_users_per_minute` (visitors ahead ÷ users let in per minute).
    static func reply(
        for id: String, _ r: RoomState, _ e: Effective, visitors: [String: Visitor], at t: Date,
        rejected: Bool, full: Bool
    ) -> CloudflareWaitingRoomReply {
        let method = e.room.queueingMethod
        let rate = e.room.newUsersPerMinute
        let known = rate > 0 && !e.room.queueAll && !e.prequeueing && !rejected && method != .passthrough
        func minutes(_ n: Int) -> Int { rate > 0 ? (n + rate - 1) / rate : 0 }
        func words(_ m: Int) -> String { m == 1 ? "1 minute" : "\(m) minutes" }
        var reply = CloudflareWaitingRoomReply(
            waitTimeKnown: known, waitTime: 0, waitTime25Percentile: 0, waitTime50Percentile: 0, waitTime75Percentile: 0,
            waitTimeFormatted: "unavailable", queueIsFull: full, queueAll: e.room.queueAll,
            lastUpdated: CloudflareEmulatorConfiguration.Event.format(t),
            refreshIntervalSeconds: rejected ? 0 : r.room.refreshIntervalSeconds,
            queueingMethod: method.rawValue, isFIFOQueue: method == .fifo, isRandomQueue: method == .random,
            isPassthroughQueue: method == .passthrough, isRejectQueue: method == .reject, isEventActive: e.event != nil,
            isEventPrequeueing: e.prequeueing, timeUntilEventStart: 0, timeUntilEventStartFormatted: "unavailable",
            timeUntilEventEnd: 0, timeUntilEventEndFormatted: "unavailable", shuffleAtEventStart: e.event?.shuffleAtEventStart ?? false)
        if known {
            if method == .random {
                let n = r.line.count
                let p25 = minutes(max(1, n / 4))
                let p50 = minutes(max(1, n / 2))
                let p75 = minutes(max(1, n * 3 / 4))
                reply.waitTime25Percentile = p25
                reply.waitTime50Percentile = p50
                reply.waitTime75Percentile = p75
                reply.waitTime = p50
                reply.waitTimeFormatted = p25 == p75 ? words(p50) : "\(words(p25)) to \(words(p75))"
            } else {
                func group(_ visitor: String) -> Int {
                    Int(((visitors[visitor]?.queuedAt ?? r.preQueue.startsAt ?? t).timeIntervalSince1970 / 60).rounded(.down))
                }
                let mine = r.inLine.contains(id) ? group(id) : Int((t.timeIntervalSince1970 / 60).rounded(.down))
                var through = r.inLine.contains(id) ? 0 : 1
                for other in r.line where group(other) <= mine { through += 1 }
                let w = minutes(through)
                reply.waitTime = w
                reply.waitTimeFormatted = words(w)
            }
            // full: a newcomer's wait would pass 24 h
            if minutes(r.line.count + 1) > fullAfterMinutes { reply.queueIsFull = true }
        }
        if let event = e.event {
            func until(_ d: Date) -> Int { max(0, Int((d.timeIntervalSince(t) / 60).rounded(.up))) }
            if e.prequeueing {
                reply.timeUntilEventStart = until(event.eventStartTime)
                reply.timeUntilEventStartFormatted = words(until(event.eventStartTime))
            }
            reply.timeUntilEventEnd = until(event.eventEndTime)
            reply.timeUntilEventEndFormatted = words(until(event.eventEndTime))
        }
        return reply
    }

    /// The stand-in origin: JSON for a JSON request, a small page otherwise.
    static func origin(path: String, room: String?, visitor: String?, json: Bool, headers: [(String, String)], kind: String)
        -> CloudflareEmulatorAnswer
    {
        if json {
            var o: [String: JSONValue] = ["origin": .string("cloudflare-emulator"), "path": .string(path)]
            if let room { o["room"] = .string(room) }
            return CloudflareEmulatorAnswer(
                status: 200, contentType: "application/json", headers: headers,
                body: Array(JSONValue.object(o).jsonText.utf8), kind: kind)
        }
        return CloudflareEmulatorAnswer(
            status: 200, contentType: "text/html; charset=utf-8", headers: headers,
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
            if r.room.suspended {
                status = "suspended"
            } else if e.prequeueing {
                status = "event_prequeueing"
            } else if r.waiting > 0 || e.room.queueAll || e.room.queueingMethod == .reject {
                status = "queueing"
            } else {
                status = "not_queueing"
            }
            let rate = e.room.newUsersPerMinute
            let maxMinutes = rate > 0 ? (r.line.count + rate - 1) / rate : 0
            return .object([
                "success": .bool(true), "errors": .array([]), "messages": .array([]),
                "result": .object([
                    "status": .string(status), "event_id": .string(e.event?.name ?? ""),
                    "estimated_queued_users": .number(Double(r.waiting)), "estimated_total_active_users": .number(Double(r.active.count)),
                    "max_estimated_time_minutes": .number(Double(maxMinutes))
                ])
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
        state.withLockedValue { s in
            let management = s.management
            s = State(s.configuration)
            s.management = management
        }
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
                    "settings": r.room.json
                ])
            }
            return .object([
                "rooms": .object(rooms), "counters": s.counters.json, "visitors": .number(Double(s.visitors.count)),
                "faultsPending": .number(Double(faults.pending))
            ])
        }
    }
}
