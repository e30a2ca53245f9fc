import Foundation
import NIOConcurrencyHelpers
import QueueIt
import WaitingRoom
import WaitingRoomEmulatorKit

/// Queue-it's older fault form, kept as an alias of the emulator kit's ``EmulatorFault`` (the
/// admin route and `--faults` files read both): `{"kind": "delay|drop|status|nonjson", "on":
/// "enqueue|queue|any", "count": 1, "status": 503, "delayMs": 0, "body": "…"}`; `nonjson` is
/// the kit's `garbage`. The kit's form is `{"action": …, "on": …, …}`.
package struct QueueItEmulatorFault: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        /// Wait `delayMs` before answering normally.
        case delay
        /// Close the connection in the middle of the answer.
        case drop
        /// Answer with `status` (default 503) and `body`.
        case status
        /// Answer 200 with a body that is neither JSON (enqueue) nor a followable queue page (queue):
        /// garbage, like a CDN error page served as 200.
        case nonjson
    }

    /// Which requests a fault applies to (JSON field `on`).
    package enum Target: String, Sendable, CaseIterable {
        /// The enqueue call (`POST …/enqueue`); the default, as before `on` existed.
        case enqueue
        /// The queue page and its status polls (`GET …/queueit/queue/{c}/{e}?q=…`).
        case queue
        /// Whichever request comes first (enqueue, queue page, or integration-config download).
        case any
        /// The integration-configuration downloads (`GET /status/integrationconfig[/secure]/{c}`).
        /// Listed after `any` so the older form's list of targets keeps its order.
        case integrationconfig

        /// Whether a fault with this target applies to a request of kind `request`.
        func matches(_ request: Target) -> Bool { self == .any || self == request }
    }

    package var kind: Kind
    /// How many matching requests it affects (default 1).
    package var count: Int
    package var status: Int
    package var delayMs: Int
    package var body: String?
    /// Which requests it applies to (default ``Target/enqueue``).
    package var on: Target

    package init(kind: Kind, count: Int = 1, status: Int = 503, delayMs: Int = 0, body: String? = nil, on: Target = .enqueue) {
        self.kind = kind
        self.count = count
        self.status = status
        self.delayMs = delayMs
        self.body = body
        self.on = on
    }
}

/// The emulator's counters (also in `GET /_emulator/queueit/state`).
package struct QueueItEmulatorCounters: Sendable, Hashable {
    /// Enqueue calls that reached the model (faulted calls are not counted).
    package var enqueueCount: Int
    /// Queue-page answers that carried a `queueittoken` (a visitor may get more than one when an
    /// answer was lost, e.g. after a delay past the client's timeout).
    package var passedCount: Int
    /// Distinct visitors (queue ids) that were given a `queueittoken` on the queue page.
    package var passedVisitors: Int
    /// Faults injected so far, all targets (`faultsInjected`).
    package var faultsInjected: Int
    /// Faults injected into enqueue calls.
    package var faultsInjectedOnEnqueue: Int
    /// Faults injected into queue-page requests.
    package var faultsInjectedOnQueue: Int
    /// Fault uses still pending (sum of the remaining counts).
    package var pendingFaults: Int
    /// Faults injected into integration-configuration downloads.
    package var faultsInjectedOnIntegrationConfig: Int = 0
}

/// The emulator's in-memory state: rooms, visitors in line, pending faults. Pure (no I/O); time
/// comes from the injected `now`.
final class QueueItEmulatorModel: Sendable {
    struct RoomRuntime: Sendable {
        var config: QueueItEmulatorConfiguration.Room
        var arrivals = 0
        var admitted: Double = 0
        var lastUpdate: Date
        /// Visitors held for the room's scheduled start (`QueueItEmulatorModel+Prequeue.swift`).
        var prequeue = EmulatorPreQueue<String>(startsAt: nil, shuffle: true, seed: 0)
        /// Queue ids by queue number (index = number − 1).
        var holders: [String] = []
        /// The numbers given to held visitors at the start, and the visitors ahead then.
        var releasedTickets: [String: (ticket: Int, ahead: Int)] = [:]
        /// Arrivals and admissions, for fairness figures.
        var log = EmulatorAdmissionLog<String>()

        mutating func advance(to now: Date) { advanceWithPrequeue(to: now) }
        var admittedCount: Int { Int(admitted.rounded(.down)) }
        var waiting: Int { max(0, arrivals - admittedCount) }
    }

    struct Visitor: Sendable {
        var customerId: String
        var roomId: String
        var ticket: Int
        var clientIP: String?
        var targetURL: String
        /// Visitors ahead when this one arrived (the start of its progress bar).
        var aheadAtArrival = 0
        /// Whether the queue page has handed this visitor a `queueittoken`.
        var tokenIssued = false
    }

    struct State: Sendable {
        var configuration: QueueItEmulatorConfiguration
        var rooms: [String: [String: RoomRuntime]] = [:]
        var visitors: [String: Visitor] = [:]
        var enqueueCount = 0
        var passedCount = 0
        var passedVisitors = 0
        var faultsInjectedOnEnqueue = 0
        var faultsInjectedOnQueue = 0
        var faultsInjectedOnIntegrationConfig = 0
        /// Integration-configuration downloads per customer and result (`QueueItEmulator+IntegrationConfig.swift`).
        var integrationConfigDownloads: [String: [IntegrationConfigResult: Int]] = [:]
        var nextQueueNumber: UInt64 = 0

        var counters: QueueItEmulatorCounters {
            QueueItEmulatorCounters(
                enqueueCount: enqueueCount, passedCount: passedCount, passedVisitors: passedVisitors,
                faultsInjected: faultsInjectedOnEnqueue + faultsInjectedOnQueue + faultsInjectedOnIntegrationConfig,
                faultsInjectedOnEnqueue: faultsInjectedOnEnqueue, faultsInjectedOnQueue: faultsInjectedOnQueue,
                pendingFaults: 0, faultsInjectedOnIntegrationConfig: faultsInjectedOnIntegrationConfig)
        }

        init(configuration: QueueItEmulatorConfiguration, now: Date) {
            var configuration = configuration
            // a customer without an integration configuration gets the default one, published now
            for (cid, c) in configuration.customers where c.integrationConfig == nil {
                configuration.customers[cid]?.integrationConfig =
                    QueueItEmulatorConfiguration.defaultIntegrationConfig(customer: cid, publishDate: now)
            }
            self.configuration = configuration
            for (cid, c) in configuration.customers {
                var rs: [String: RoomRuntime] = [:]
                for (rid, r) in c.rooms { rs[rid] = RoomRuntime.fresh(r, now: now) }
                rooms[cid] = rs
            }
        }
    }

    /// Behind NIO's lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    let state: NIOLockedValueBox<State>
    /// The faults (the emulator kit's queue).
    let faults = EmulatorFaultQueue()
    let now: @Sendable () -> Date

    init(configuration: QueueItEmulatorConfiguration, now: @escaping @Sendable () -> Date) {
        self.now = now
        self.state = NIOLockedValueBox(State(configuration: configuration, now: now()))
    }

    /// An HTTP-ish answer of the model.
    struct Answer: Sendable {
        var status: Int
        var body: [UInt8]
        var contentType = "application/json"
        var headers: [(String, String)] = []
    }

    func secretKey(customer: String) -> String? {
        state.withLockedValue { $0.configuration.customers[customer]?.secretKey }
    }

    func room(customer: String, room: String) -> QueueItEmulatorConfiguration.Room? {
        state.withLockedValue { $0.rooms[customer]?[room]?.config }
    }

    /// Whether a fault (or a chaos fault) waits for requests of kind `request` (nothing is taken).
    func hasFault(for request: QueueItEmulatorFault.Target) -> Bool { faults.has(for: request.rawValue) }

    /// Takes the next fault for a request of kind `request` (`enqueue` or `queue`) and counts it:
    /// faults added one by one first, then the chaos rotation (the kit's queue).
    func takeFault(for request: QueueItEmulatorFault.Target) -> EmulatorFault? {
        guard let fault = faults.take(for: request.rawValue) else { return nil }
        state.withLockedValue { s in
            switch request {
            case .queue: s.faultsInjectedOnQueue += 1
            case .integrationconfig: s.faultsInjectedOnIntegrationConfig += 1
            case .enqueue, .any: s.faultsInjectedOnEnqueue += 1
            }
        }
        return fault
    }

    /// The counters, with the faults still pending.
    func counters() -> QueueItEmulatorCounters {
        var c = state.withLockedValue { $0.counters }
        c.pendingFaults = faults.pending
        return c
    }

    /// Queue ids the queue page has handed a `queueittoken`.
    func passedQueueIds() -> Set<String> {
        state.withLockedValue { s in Set(s.visitors.compactMap { $0.value.tokenIssued ? $0.key : nil }) }
    }

    func reset() {
        let t = now()
        faults.reset()
        state.withLockedValue { s in s = State(configuration: s.configuration, now: t) }
    }

    static func json(_ obj: [String: Any]) -> [UInt8] {
        (try? JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys, .withoutEscapingSlashes])).map { Array($0) }
            ?? Array("{}".utf8)
    }

    /// `text` percent-encoded for a path segment or a query value (RFC 3986 unreserved kept).
    static func urlComponent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func error(_ status: Int, _ message: String) -> Answer {
        Answer(status: status, body: json(["error": message]))
    }

    func newQueueId(_ s: inout State) -> String {
        s.nextQueueNumber += 1
        return Self.queueId(number: s.nextQueueNumber, random: UInt64.random(in: 0...UInt64.max))
    }

    /// `String(format: "%08llx-%04llx-%012llx", number, random >> 48, random & 0xffff_ffff_ffff)`,
    /// written on bytes.
    static func queueId(number: UInt64, random r: UInt64) -> String {
        var digits = 8
        while digits < 16, number >> UInt64(4 * digits) != 0 { digits += 1 }
        let length = digits + 1 + 4 + 1 + 12
        return String(unsafeUninitializedCapacity: length) { out in
            let alphabet: StaticString = "0123456789abcdef"
            let hex = alphabet.utf8Start
            func put(_ value: UInt64, _ width: Int, at start: Int) {
                for i in 0..<width { out[start + i] = hex[Int((value >> UInt64(4 * (width - 1 - i))) & 0xF)] }
            }
            put(number, digits, at: 0)
            out[digits] = UInt8(ascii: "-")
            put((r >> 48) & 0xffff, 4, at: digits + 1)
            out[digits + 5] = UInt8(ascii: "-")
            put(r & 0xffff_ffff_ffff, 12, at: digits + 6)
            return length
        }
    }

    /// The enqueue call (`POST …/api/mobileapp/queue/{c}/{e}/enqueue`).
    /// - Parameters:
    ///   - base: `scheme://host[:port]` of this request.
    ///   - prefix: the path prefix the call came in under (queue URLs keep it).
    ///   - target: where the visitor goes on its turn instead of the room's `EventTargetUrl` (the
    ///     queue landing page's `t`, ``QueueItEmulator/handleLanding(_:)``).
    func enqueue(
        customer: String, room roomId: String, body bytes: [UInt8], base: String, prefix: String?, clientIP: String?,
        target targetOverride: String? = nil
    ) -> Answer {
        let body: QueueItEnqueueBody
        do { body = try QueueItEnqueueBody.decode(bytes) } catch {
            return Self.error(400, "invalid enqueue body: \(error.field): \(error.message)")
        }
        let t = now()
        // Only the state change happens under the lock; the token and the JSON are made after it.
        let decision = state.withLockedValue { s in
            decideEnqueue(
                customer: customer, room: roomId, body: body, base: base, prefix: prefix, clientIP: clientIP, target: targetOverride,
                at: t, &s)
        }
        return enqueueAnswer(decision, room: roomId, at: t)
    }

    /// What an enqueue call comes to, decided under the state's lock: an answer made already (an
    /// error), a token to mint (a room that does not queue), or a place in the line.
    enum EnqueueDecision {
        case answer(Answer)
        case mint(
            secret: String, qid: String, redirectType: QueueItRedirectType, target: String, validity: Int, cookieMinutes: Int?,
            ip: String?)
        case queue(qid: String, queueURL: String, target: String)
    }

    /// The state change of an enqueue call (the parameters as `enqueue`'s, the body decoded).
    private func decideEnqueue(
        customer: String, room roomId: String, body: QueueItEnqueueBody, base: String, prefix: String?, clientIP: String?,
        target targetOverride: String?, at t: Date, _ s: inout State
    ) -> EnqueueDecision {
        s.enqueueCount += 1
        guard let customerConfig = s.configuration.customers[customer] else {
            return .answer(Self.error(404, "unknown customer '\(customer)'"))
        }
        guard var room = s.rooms[customer]?[roomId] else {
            return .answer(Self.error(404, "unknown waiting room '\(roomId)' for customer '\(customer)'"))
        }
        let cfg = room.config
        if let refusal = Self.enqueueCredentialRefusal(
            body, customer: customer, secretKey: customerConfig.secretKey, room: roomId, cfg, at: t)
        {
            return .answer(refusal)
        }
        let pre = prefix.map { "/" + $0 } ?? ""
        // the ids came percent-decoded from the path: encoded again where they go into a URL
        let c = Self.urlComponent(customer)
        let e = Self.urlComponent(roomId)
        let target = targetOverride ?? cfg.targetUrl ?? "\(base)\(pre)/queueit/target/\(c)/\(e)"
        let qid = newQueueId(&s)
        let ip = cfg.bindTokenToIP ? clientIP : nil
        if cfg.state != .queue {
            return .mint(
                secret: customerConfig.secretKey, qid: qid, redirectType: QueueItRedirectType(rawValue: cfg.state.rawValue),
                target: target, validity: cfg.tokenValiditySeconds, cookieMinutes: cfg.cookieValidityMinutes, ip: ip)
        }
        room.advance(to: t)
        if let cap = cfg.capacity, room.waiting + room.prequeue.heldCount >= cap {
            s.rooms[customer]?[roomId] = room
            return .answer(Self.error(503, "waiting room '\(roomId)' is full (\(cap) waiting)"))
        }
        let held = room.arrive(qid, now: t)  // before the room's start: held, no number yet (ticket 0)
        s.visitors[qid] = Visitor(
            customerId: customer, roomId: roomId, ticket: held ? 0 : room.arrivals, clientIP: ip, targetURL: target,
            aheadAtArrival: held ? 0 : max(0, room.arrivals - room.admittedCount - 1))
        s.rooms[customer]?[roomId] = room
        return .queue(qid: qid, queueURL: "\(base)\(pre)/queueit/queue/\(c)/\(e)?c=\(c)&e=\(e)&q=\(qid)", target: target)
    }

    /// The refusal of a room that requires an enqueue token or key when the call has neither a
    /// valid one, or nil. An enqueue token must be one the customer's secret key signed, for
    /// this customer and room (or any room), not expired (QueueItEnqueueTokenValidator).
    private static func enqueueCredentialRefusal(
        _ body: QueueItEnqueueBody, customer: String, secretKey: String, room roomId: String, _ cfg: QueueItEmulatorConfiguration.Room,
        at t: Date
    ) -> Answer? {
        guard cfg.enqueueTokenRequired || cfg.enqueueKeyRequired else { return nil }
        var tokenOK = false
        var tokenError: QueueItEnqueueTokenError?
        if cfg.enqueueTokenRequired, let token = body.enqueueToken, !token.isEmpty {
            do throws(QueueItEnqueueTokenError) {
                try QueueItEnqueueTokenValidator(secretKey: secretKey, customerId: customer, eventId: roomId)
                    .validate(token, now: t)
                tokenOK = true
            } catch { tokenError = error }
        }
        let key = body.enqueueKey ?? ""
        let keyOK = cfg.enqueueKeyRequired && !key.isEmpty && (cfg.enqueueKeys.isEmpty || cfg.enqueueKeys.contains(key))
        if !tokenOK && !keyOK {
            let what =
                cfg.enqueueTokenRequired && cfg.enqueueKeyRequired ? "token or key" : cfg.enqueueTokenRequired ? "token" : "key"
            return (Self.error(403, "waiting room '\(roomId)' requires a valid enqueue \(what)" + (tokenError.map { ": \($0)" } ?? "")))
        }
        return nil
    }

    /// The enqueue call's answer for `decision`: the token minted after the lock, the JSON made.
    private func enqueueAnswer(_ decision: EnqueueDecision, room roomId: String, at t: Date) -> Answer {
        switch decision {
        case .answer(let answer):
            return answer
        case .mint(let secret, let qid, let rt, let target, let validity, let cookieMinutes, let ip):
            let token = try? QueueItTokenMinter(secretKey: secret).mint(
                eventId: roomId, queueId: qid, expiresAt: Int64(t.timeIntervalSince1970) + Int64(validity),
                redirectType: rt, cookieValidityMinutes: cookieMinutes, clientIP: ip)
            // Legacy SDKs (iOS ≤3.0.14, Android ≤2.0.36) read "QueueId present, QueueUrl absent" as
            // safety net and "both absent" as disabled (docs/queueit-protocol.md §2.3): only safetynet carries a QueueId.
            return Answer(
                status: 200,
                body: QueueItEnqueueResponse(
                    queueId: rt == .safetynet ? qid : nil, queueUrl: nil,
                    eventTargetUrl: target, queueitToken: token
                ).encoded())
        case .queue(let qid, let queueURL, let target):
            return Answer(
                status: 200,
                body: QueueItEnqueueResponse(
                    queueId: qid, queueUrl: queueURL, eventTargetUrl: target,
                    queueitToken: nil, queueUrlTTLInMinutes: 0
                ).encoded())
        }
    }

    /// Where a visitor stands, for the queue page and its status route.
    enum VisitorStanding: Sendable {
        /// No such visitor in this room.
        case unknown
        /// The visitor's turn: the target URL with a fresh `queueittoken`.
        case passed(location: String)
        /// Still waiting.
        case waiting(QueueItQueuePageHTML.Figures)
        /// The token could not be minted.
        case failed(String)
    }

    /// Where `queueId` stands now. On the visitor's turn a `queueittoken` is minted and counted
    /// (``QueueItEmulatorCounters/passedCount``), whichever of the page or its status route asked.
    func standing(customer: String, room roomId: String, queueId: String) -> VisitorStanding {
        let t = now()
        return state.withLockedValue { s -> VisitorStanding in
            guard var v = s.visitors[queueId], v.customerId == customer, v.roomId == roomId,
                let secret = s.configuration.customers[customer]?.secretKey, var room = s.rooms[customer]?[roomId]
            else {
                return .unknown
            }
            room.advance(to: t)
            s.rooms[customer]?[roomId] = room
            if v.ticket == 0 {
                // held for the start: its number is drawn at the start
                guard let released = room.releasedTickets[queueId] else {
                    return .waiting(room.prequeueFigures(customer: customer, room: roomId, queueId: queueId, now: t))
                }
                v.ticket = released.ticket
                v.aheadAtArrival = released.ahead
                s.visitors[queueId] = v
            }
            let ahead = v.ticket - room.admittedCount - 1
            if ahead < 0 || room.config.state != .queue {
                let rt: QueueItRedirectType =
                    room.config.state == .queue ? .queue : QueueItRedirectType(rawValue: room.config.state.rawValue)
                guard
                    let token = try? QueueItTokenMinter(secretKey: secret).mint(
                        eventId: roomId, queueId: queueId,
                        expiresAt: Int64(t.timeIntervalSince1970) + Int64(room.config.tokenValiditySeconds),
                        redirectType: rt, cookieValidityMinutes: room.config.cookieValidityMinutes, clientIP: v.clientIP)
                else {
                    return .failed("cannot mint a token for '\(roomId)'")
                }
                s.passedCount += 1
                if !v.tokenIssued {
                    s.visitors[queueId]?.tokenIssued = true
                    s.passedVisitors += 1
                }
                let sep = v.targetURL.contains("?") ? "&" : "?"
                return .passed(location: "\(v.targetURL)\(sep)queueittoken=\(token)")
            }
            let rate = room.config.admitPerSecond
            let eta: Int? = rate > 0 ? Int((Double(ahead + 1) / rate).rounded(.up)) : nil
            let start = max(v.aheadAtArrival, ahead) + 1
            let progress = Int((100 * Double(start - (ahead + 1)) / Double(start)).rounded(.down))
            return .waiting(
                QueueItQueuePageHTML.Figures(
                    customer: customer, room: roomId, queueId: queueId, ahead: ahead, waiting: room.waiting,
                    behind: max(0, room.waiting - ahead - 1), etaSeconds: eta, progressPercent: min(100, max(0, progress)),
                    message: room.config.message ?? "", refreshSeconds: room.config.refreshSeconds))
        }
    }

    /// The queue page: HTML with the position, or a 302 to `EventTargetUrl?queueittoken=…` when it is the visitor's turn.
    func queuePage(customer: String, room roomId: String, queueId: String, selfURL: String) -> Answer {
        switch standing(customer: customer, room: roomId, queueId: queueId) {
        case .unknown:
            return Answer(
                status: 404, body: Array(QueueItQueuePageHTML.unknown(queueId: queueId).utf8), contentType: "text/html; charset=utf-8")
        case .failed(let message):
            return Self.error(500, message)
        case .passed(let location):
            return Answer(status: 302, body: [], contentType: "text/plain", headers: [("Location", location)])
        case .waiting(let figures):
            let html = QueueItQueuePageHTML.render(figures, selfURL: selfURL)
            return Answer(
                status: 200, body: Array(html.utf8), contentType: "text/html; charset=utf-8",
                headers: [("Cache-Control", "no-store")])
        }
    }

    /// The queue page's status route (`GET …/queueit/queue/{c}/{e}/status?q=…`), polled by the
    /// page's script: the figures as JSON, or `{"passed": true, "redirectUrl": …}` on the visitor's
    /// turn (the page then goes there).
    func queueStatus(customer: String, room roomId: String, queueId: String) -> Answer {
        let headers = [("Cache-Control", "no-store")]
        switch standing(customer: customer, room: roomId, queueId: queueId) {
        case .unknown:
            return Answer(status: 404, body: Self.json(["error": "unknown queue id", "passed": false]), headers: headers)
        case .failed(let message):
            return Self.error(500, message)
        case .passed(let location):
            return Answer(status: 200, body: Self.json(["passed": true, "redirectUrl": location]), headers: headers)
        case .waiting(let f):
            var o: [String: Any] = [
                "passed": false, "ahead": f.ahead, "waiting": f.waiting, "behind": f.behind,
                "progress": f.progressPercent, "message": f.message, "pollSeconds": f.refreshSeconds
            ]
            if let eta = f.etaSeconds { o["etaSeconds"] = eta }
            return Answer(status: 200, body: Self.json(o), headers: headers)
        }
    }

    /// Admits `count` more visitors of a room at once.
    func admit(customer: String, room roomId: String, count: Int) -> Bool {
        let t = now()
        return state.withLockedValue { s in
            guard var r = s.rooms[customer]?[roomId] else { return false }
            r.admitAtOnce(count, now: t)
            s.rooms[customer]?[roomId] = r
            return true
        }
    }

    /// Changes a room's settings (missing keys keep their value).
    func update(customer: String, room roomId: String, patch: [String: Any]) throws(QueueItEmulatorConfigurationError) {
        let t = now()
        let current: QueueItEmulatorConfiguration.Room? = state.withLockedValue { $0.rooms[customer]?[roomId]?.config }
        guard let current else { throw QueueItEmulatorConfigurationError(field: "\(customer).\(roomId)", message: "unknown room") }
        var merged: [String: Any] = [
            "state": current.state.rawValue, "admitPerSecond": current.admitPerSecond,
            "enqueueTokenRequired": current.enqueueTokenRequired, "enqueueKeyRequired": current.enqueueKeyRequired,
            "enqueueKeys": current.enqueueKeys, "tokenValiditySeconds": current.tokenValiditySeconds,
            "refreshSeconds": current.refreshSeconds, "bindTokenToIP": current.bindTokenToIP
        ]
        if let c = current.capacity { merged["capacity"] = c }
        if let c = current.cookieValidityMinutes { merged["cookieValidityMinutes"] = c }
        if let c = current.targetUrl { merged["targetUrl"] = c }
        if let c = current.layoutName { merged["layoutName"] = c }
        if let c = current.proxyPrefix { merged["proxyPrefix"] = c }
        if let c = current.message { merged["message"] = c }
        merged.merge(QueueItEmulatorConfiguration.prequeueJSON(current)) { _, new in new }
        for (k, v) in patch {
            if v is NSNull { merged.removeValue(forKey: k) } else { merged[k] = v }
        }
        let room = try QueueItEmulatorConfiguration.room(merged, path: "\(customer).\(roomId)", id: roomId, now: t)
        state.withLockedValue { s in
            guard var r = s.rooms[customer]?[roomId] else { return }
            r.advance(to: t)
            r.config = room
            r.applyPrequeueSettings(of: room)
            s.rooms[customer]?[roomId] = r
            s.configuration.customers[customer]?.rooms[roomId] = room
        }
    }

    func snapshot() -> [String: Any] {
        let t = now()
        return state.withLockedValue { s -> [String: Any] in
            var customers: [String: Any] = [:]
            for (cid, rooms) in s.rooms {
                var rs: [String: Any] = [:]
                for (rid, var r) in rooms {
                    r.advance(to: t)
                    s.rooms[cid]?[rid] = r
                    var o: [String: Any] = [
                        "state": r.config.state.rawValue, "admitPerSecond": r.config.admitPerSecond,
                        "arrivals": r.arrivals, "admitted": r.admittedCount, "waiting": r.waiting
                    ]
                    if let c = r.config.capacity { o["capacity"] = c }
                    if let start = r.prequeue.startsAt {
                        o["startsAt"] = EmulatorScheduledStart.text(start)
                        o["prequeued"] = r.prequeue.heldCount
                        o["shuffleAtStart"] = r.prequeue.shuffle
                    }
                    rs[rid] = o
                }
                customers[cid] = ["rooms": rs]
            }
            var c = s.counters
            c.pendingFaults = faults.pending
            return [
                "customers": customers, "enqueueCount": c.enqueueCount, "passedCount": c.passedCount,
                "passedVisitors": c.passedVisitors, "pendingFaults": c.pendingFaults, "faultsInjected": c.faultsInjected,
                "faultsInjectedOn": [
                    "enqueue": c.faultsInjectedOnEnqueue, "queue": c.faultsInjectedOnQueue,
                    "integrationconfig": c.faultsInjectedOnIntegrationConfig
                ],
                "integrationConfig": integrationConfigSnapshot(s)
            ]
        }
    }
}
