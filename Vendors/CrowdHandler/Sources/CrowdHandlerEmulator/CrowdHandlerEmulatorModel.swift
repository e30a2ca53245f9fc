import CrowdHandler
import Foundation
import NIOConcurrencyHelpers
import WaitingRoom
import WaitingRoomEmulatorKit

/// What the emulator counted (the figures of `GET /_emulator/crowdhandler/state`).
package struct CrowdHandlerEmulatorCounters: Sendable, Hashable {
    /// `POST /v1/requests` answered (new sessions).
    package var sessionsCreated = 0
    /// `GET /v1/requests/{token}` answered.
    package var sessionsChecked = 0
    /// Users promoted (from the line or at once).
    package var promoted = 0
    /// Checks refused (blocked rooms, bad keys).
    package var refused = 0
    /// `PUT /v1/responses/{id}` recorded.
    package var responsesRecorded = 0
    /// Faults served, per kind.
    package var faults: [String: Int] = [:]
    /// Requests received per request kind (`requests.post`, `requests.get`, `responses`, `rooms`),
    /// the faulted ones included.
    package var requests: [String: Int] = [:]
    /// Faults served per request kind.
    package var faultsOn: [String: Int] = [:]
    /// `/v1/requests` answers per kind: `promoted`, `position` (in line), `HTTP 401`, `HTTP 403`, ….
    package var replies: [String: Int] = [:]

    package init() {}

    /// Faults served in all.
    package var faultsInjected: Int { faults.values.reduce(0, +) }

    var json: JSONValue {
        .object([
            "sessionsCreated": .number(Double(sessionsCreated)), "sessionsChecked": .number(Double(sessionsChecked)),
            "promoted": .number(Double(promoted)), "refused": .number(Double(refused)),
            "responsesRecorded": .number(Double(responsesRecorded)),
            "faults": .object(faults.mapValues { .number(Double($0)) }),
            "faultsInjected": .number(Double(faultsInjected)),
            "requests": .object(requests.mapValues { .number(Double($0)) }),
            "faultsOn": .object(faultsOn.mapValues { .number(Double($0)) }),
            "replies": .object(replies.mapValues { .number(Double($0)) })
        ])
    }
}

/// The emulator's state: sessions by token, a line per room, faults and counters, behind one lock.
final class CrowdHandlerEmulatorModel: Sendable {
    struct Session {
        var token: String
        var slug: String?
        var promoted: Bool
        var requested: String?
        var responseID: String?
        var firstPosition: Int?
    }

    struct RoomState {
        var room: CrowdHandlerEmulatorConfiguration.Room
        var line: [String] = []
        var admittedAtOnce = 0
        /// Users promoted in this room (at once or from the line) since the start or a reset.
        var admittedTotal = 0
        var credit: Double = 0
        var lastRate: Date?
        /// Users who arrived before the queue activates (`CrowdHandlerEmulatorModel+Prequeue.swift`).
        var prequeue = EmulatorPreQueue<String>(startsAt: nil, shuffle: true, seed: 0)
        /// Arrivals and promotions, for fairness figures.
        var log = EmulatorAdmissionLog<String>()
    }

    struct State {
        var configuration: CrowdHandlerEmulatorConfiguration
        var rooms: [String: RoomState]
        var sessions: [String: Session] = [:]
        var responses: [String: [String: JSONValue]] = [:]
        var counters = CrowdHandlerEmulatorCounters()
        var serial = 0

        init(_ configuration: CrowdHandlerEmulatorConfiguration) {
            self.configuration = configuration
            rooms = configuration.rooms.mapValues { RoomState.fresh($0) }
        }
    }

    /// An answer: HTTP status and JSON.
    struct Answer {
        var status: Int
        var json: JSONValue
    }

    /// Behind NIO's lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    let state: NIOLockedValueBox<State>
    let now: @Sendable () -> Date
    let signature: CrowdHandlerSignature
    /// The faults (the emulator kit's queue).
    let faults = EmulatorFaultQueue()

    init(configuration: CrowdHandlerEmulatorConfiguration, now: @escaping @Sendable () -> Date) {
        state = NIOLockedValueBox(State(configuration))
        self.now = now
        signature = CrowdHandlerSignature(privateKey: configuration.privateKey)
    }

    static func error(_ status: Int, _ message: String) -> Answer {
        Answer(status: status, json: .object(["result": .object(["status": .number(Double(status)), "error": .string(message)])]))
    }

    func keyAccepted(_ key: String?, _ s: State) -> Bool {
        guard let key, !key.isEmpty else { return false }
        return s.configuration.publicKeys.isEmpty || s.configuration.publicKeys.contains(key)
    }

    /// The room that guards `url` (pattern type `contains`; slugs in order).
    static func room(for url: String, _ s: State) -> String? {
        s.rooms.keys.sorted().first { slug in
            let pattern = s.rooms[slug]?.room.urlPattern ?? "/\(slug)"
            return !pattern.isEmpty && url.contains(pattern)
        }
    }

    /// Lets users in from the head of each line by the room's rate.
    static func admitByRate(_ s: inout State, now: Date) {
        for slug in s.rooms.keys {
            releasePrequeue(slug: slug, &s, now: now)
            guard var r = s.rooms[slug] else { continue }
            defer { s.rooms[slug] = r }
            guard r.room.rate > 0 else {
                r.lastRate = now
                continue
            }
            let last = r.lastRate ?? now
            r.lastRate = now
            r.credit = min(r.credit + max(0, now.timeIntervalSince(last)) * r.room.rate / 60, Double(r.line.count) + 1)
            while r.credit >= 1, !r.line.isEmpty {
                // logged at the moment the rate reached this promotion (`r` is written back after the loop)
                let due = now.addingTimeInterval(-(r.credit - 1) * 60 / r.room.rate)
                r.credit -= 1
                r.admittedTotal += 1
                let token = r.line.removeFirst()
                r.log.admitted(token, at: max(last, due))
                promote(token, slug: slug, &s, now: now)
            }
        }
    }

    static func promote(_ token: String, slug: String, _ s: inout State, now: Date) {
        guard var session = s.sessions[token], s.rooms[slug] != nil else { return }
        session.promoted = true
        session.slug = slug
        session.requested = CrowdHandlerSignature.formatRequested(now)
        s.counters.promoted += 1
        s.rooms[slug]?.log.admitted(token, at: now)
        s.sessions[token] = session
    }

    func newToken(_ s: inout State) -> String {
        s.serial += 1
        let random = (0..<12).map { _ in "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789".randomElement() ?? "x" }
        return "tok" + String(s.serial) + String(random)
    }

    /// `POST /v1/requests` (token nil) or `GET /v1/requests/{token}`.
    func check(key: String?, token: String?, url: String?) -> Answer {
        let at = now()
        return state.withLockedValue { s in
            let a = answer(key: key, token: token, url: url, at: at, &s)
            s.counters.replies[Self.replyKind(a), default: 0] += 1
            return a
        }
    }

    /// How a `/v1/requests` answer is counted in ``CrowdHandlerEmulatorCounters/replies``.
    static func replyKind(_ a: Answer) -> String {
        guard a.status == 200 else { return "HTTP \(a.status)" }
        let promoted = a.json.objectValue?["result"]?.objectValue?["promoted"]
        return promoted == .number(1) || promoted == .bool(true) ? "promoted" : "position"
    }

    private func answer(key: String?, token: String?, url: String?, at: Date, _ s: inout State) -> Answer {
        guard keyAccepted(key, s) else {
            s.counters.refused += 1
            return Self.error(401, "invalid x-api-key")
        }
        guard let url, !url.isEmpty else { return Self.error(400, "url is required") }
        if token == nil { s.counters.sessionsCreated += 1 } else { s.counters.sessionsChecked += 1 }
        Self.admitByRate(&s, now: at)
        // Unknown tokens are replaced by a new session.
        var t = token ?? ""
        if s.sessions[t] == nil {
            t = newToken(&s)
            s.sessions[t] = Session(token: t, slug: nil, promoted: false)
        }
        guard let slug = Self.room(for: url, s), var room = s.rooms[slug] else {
            return Answer(status: 200, json: CrowdHandlerResult(promoted: true, status: 1, token: t, slug: nil).json)
        }
        if room.room.blocked {
            s.counters.refused += 1
            return Self.error(403, "room \(slug) refuses this request")
        }
        if room.room.closed {
            return Answer(status: 200, json: CrowdHandlerResult(promoted: true, status: 1, token: t, slug: nil).json)
        }
        var session = s.sessions[t] ?? Session(token: t, slug: nil, promoted: false)
        if session.slug != slug {
            // a new arrival in this room
            session.slug = slug
            session.promoted = false
            session.firstPosition = nil
            s.sessions[t] = session
            if Self.arrive(t, room: &room, now: at) {
                s.rooms[slug] = room  // before the queue activates: no position yet
            } else if room.room.capacity == nil || room.admittedAtOnce < (room.room.capacity ?? 0) {
                room.admittedAtOnce += 1
                room.admittedTotal += 1
                s.rooms[slug] = room
                Self.promote(t, slug: slug, &s, now: at)
            } else {
                room.line.append(t)
                s.rooms[slug] = room
            }
            session = s.sessions[t] ?? session
        }
        if session.promoted {
            s.serial += 1
            let responseID = "res\(s.serial)"
            session.responseID = responseID
            s.sessions[t] = session
            let requested = session.requested ?? CrowdHandlerSignature.formatRequested(at)
            let hash = signature.sign(slug: slug, queueActivatesOn: room.room.queueActivatesOn, token: t, requested: requested)
            return Answer(
                status: 200,
                json: CrowdHandlerResult(
                    promoted: true, status: 1, token: t, slug: slug, position: nil, responseID: responseID, hash: hash, requested: requested
                ).json)
        }
        if let early = Self.prequeueAnswer(token: t, slug: slug, s, now: at) { return early }
        let line = s.rooms[slug]?.line ?? []
        let position = (line.firstIndex(of: t) ?? line.count) + 1
        if session.firstPosition == nil { session.firstPosition = position }
        s.sessions[t] = session
        let rate = room.room.rate
        let eta = rate > 0 ? Int((Double(position) * 60 / rate).rounded(.up)) : nil
        return Answer(
            status: 200,
            json: CrowdHandlerResult(
                promoted: false, status: 0, token: t, slug: slug, position: position, eta: eta,
                extra: ["firstPosition": String(session.firstPosition ?? position), "behind": String(max(0, line.count - position))]
            ).json)
    }

    /// `PUT /v1/responses/{id}`.
    func recordResponse(key: String?, id: String, body: JSONValue?) -> Answer {
        state.withLockedValue { s in
            guard keyAccepted(key, s) else {
                s.counters.refused += 1
                return Self.error(401, "invalid x-api-key")
            }
            guard s.sessions.values.contains(where: { $0.responseID == id }) || s.responses[id] != nil else {
                return Self.error(404, "unknown responseID")
            }
            s.responses[id] = body?.objectValue ?? [:]
            s.counters.responsesRecorded += 1
            return Answer(status: 200, json: .object(["result": .object(["status": .number(1), "responseID": .string(id)])]))
        }
    }

    /// `GET /v1/rooms`.
    func rooms(key: String?, base: String) -> Answer {
        state.withLockedValue { s in
            guard keyAccepted(key, s) else { return Self.error(401, "invalid x-api-key") }
            let list: [JSONValue] = s.rooms.keys.sorted().compactMap { slug in
                guard let r = s.rooms[slug]?.room else { return nil }
                // (proposal) no `domain`: the emulator's rooms guard whatever site a test puts in
                // front of them (CrowdHandler's feed names the protected site's `https://host`)
                return CrowdHandlerRoom(
                    slug: slug, domain: nil, urlPattern: r.urlPattern ?? "/\(slug)", patternType: "contains",
                    queueActivatesOn: r.queueActivatesOn, timeout: r.timeout
                ).json
            }
            return Answer(status: 200, json: .object(["result": .array(list)]))
        }
    }

    // MARK: admin

    /// Counts a request of kind `target` and takes the next fault for it from the kit's queue.
    func takeFault(for target: CrowdHandlerEmulatorFault.Target) -> EmulatorFault? {
        let fault = faults.take(for: target.rawValue)
        state.withLockedValue { s in
            s.counters.requests[target.rawValue, default: 0] += 1
            if let fault {
                s.counters.faults[fault.action.name, default: 0] += 1
                s.counters.faultsOn[target.rawValue, default: 0] += 1
            }
        }
        return fault
    }

    func reset() {
        faults.reset()
        state.withLockedValue { s in s = State(s.configuration) }
    }

    /// Lets `count` users in from the head of `slug`'s line; how many were let in, nil for an
    /// unknown room.
    @discardableResult
    func admit(slug: String, count: Int) -> Int? {
        let at = now()
        return state.withLockedValue { s in
            guard var r = s.rooms[slug] else { return nil }
            let n = min(max(0, count), r.line.count)
            let tokens = Array(r.line.prefix(n))
            r.line.removeFirst(n)
            r.admittedTotal += n
            s.rooms[slug] = r
            for t in tokens { Self.promote(t, slug: slug, &s, now: at) }
            return n
        }
    }

    /// A room's settings now (nil: no such room).
    func room(slug: String) -> CrowdHandlerEmulatorConfiguration.Room? { state.withLockedValue { $0.rooms[slug]?.room } }

    /// Replaces a room's settings (admin); false for an unknown room.
    @discardableResult
    func update(slug: String, _ room: CrowdHandlerEmulatorConfiguration.Room) -> Bool {
        state.withLockedValue { s in
            guard s.rooms[slug] != nil else { return false }
            s.rooms[slug]?.room = room
            s.rooms[slug]?.applyPrequeueSettings(of: room)
            s.configuration.rooms[slug] = room
            return true
        }
    }

    var counters: CrowdHandlerEmulatorCounters { state.withLockedValue { $0.counters } }

    /// Users in line per room.
    func waiting() -> [String: Int] { state.withLockedValue { $0.rooms.mapValues { $0.line.count } } }

    func snapshot() -> JSONValue {
        let at = now()
        return state.withLockedValue { s in
            Self.admitByRate(&s, now: at)
            var rooms: [String: JSONValue] = [:]
            for (slug, r) in s.rooms {
                rooms[slug] = .object([
                    "waiting": .number(Double(r.line.count)), "admitted": .number(Double(r.admittedTotal)), "rate": .number(r.room.rate),
                    "capacity": r.room.capacity.map { .number(Double($0)) } ?? .null,
                    "blocked": .bool(r.room.blocked), "closed": .bool(r.room.closed), "timeout": .number(Double(r.room.timeout)),
                    "urlPattern": .string(r.room.urlPattern ?? "/\(slug)")
                ])
            }
            return .object([
                "rooms": .object(rooms), "counters": s.counters.json, "sessions": .number(Double(s.sessions.count)),
                "faultsPending": .number(Double(faults.pending)), "privateKey": .string(s.configuration.privateKey)
            ])
        }
    }
}
