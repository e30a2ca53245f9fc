import Foundation
import NetFUNNEL
import WaitingRoom

/// The server state machine of docs/netfunnel-protocol.md §10.2, pure: time is passed in, no I/O.
package struct NetFUNNELServerState: Sendable {
    package internal(set) var configuration: NetFUNNELEmulatorConfiguration
    package internal(set) var counters = NetFUNNELEmulatorCounters()

    struct SegmentID: Hashable, Sendable {
        var project: String
        var segment: String
    }

    enum Phase: Sendable, Equatable {
        case waiting
        case admitted(since: Date)
    }

    struct Ticket: Sendable {
        var id: Int
        /// The newest key handed out for this ticket.
        var key: String
        /// The key the client presented when ``key`` was handed out: still honoured in strict
        /// mode, because the reply that carried ``key`` may have been lost.
        var graceKey: String?
        /// The 5101 key (never forgotten: clients that keep it work in the lenient mode).
        var firstKey: String
        /// Fingerprints (``KeyPrint``) of the newest ``keysPerTicket`` − 1 keys handed out
        /// after the 5101 key, oldest first. Fingerprints, not strings: a waiting user costs the
        /// emulator 8 bytes per remembered key instead of a string and a table entry (~90 bytes).
        var recent: [UInt64]
        var segment: SegmentID
        var phase: Phase
        var lastSeen: Date
        var checkEnterCount: Int

        /// Whether `key` is one this ticket remembers (see ``keysPerTicket``).
        func remembers(_ key: String) -> Bool {
            key == self.key || key == graceKey || key == firstKey || recent.contains(KeyPrint.of(key))
        }
    }

    struct SegmentRuntime: Sendable {
        var queue: [Int] = []
        var admitted: Set<Int> = []
        var admissions: [Date] = []
        /// Tickets admitted since the start (or reset): only grows.
        var admittedTotal = 0
        var recentRequests: [String: [Date]] = [:]
        var blockedUntil: [String: Date] = [:]
        /// The scheduled start's pre-queue, its line places and the admission log
        /// (NetFUNNELServerState+Prequeue.swift).
        var schedule = ScheduleRuntime()

        /// The place in ``queue`` of `ticketID`: its id, unless the pre-queue's release gave it another.
        func rank(of ticketID: Int) -> Int { schedule.rankOf[ticketID] ?? ticketID }

        /// Where the ticket of place `ticketID` (its ``rank(of:)``) stands in ``queue`` (or would):
        /// tickets join at the back in the order they are issued and leave from anywhere, so the
        /// queue stays sorted and a place is found by bisection, not by a scan of everyone ahead.
        func position(of ticketID: Int) -> Int {
            var low = 0
            var high = queue.count
            while low < high {
                let middle = (low + high) / 2
                if queue[middle] < ticketID { low = middle + 1 } else { high = middle }
            }
            return low
        }

        /// Takes the ticket of place `ticketID` (its ``rank(of:)``) out of the line; false when it was not in it.
        @discardableResult
        mutating func leaveQueue(_ ticketID: Int) -> Bool {
            let index = position(of: ticketID)
            guard index < queue.count, queue[index] == ticketID else { return false }
            queue.remove(at: index)
            return true
        }
    }

    /// Keys remembered per ticket: the 5101 key and the newest others (older ones: 505).
    static let keysPerTicket = 16

    /// A key's fingerprint and the ticket it names. Keys are made by ``makeKey(_:short:)``: the
    /// first 16 hex digits are the ticket id, so a presented key finds its ticket without a
    /// table from every key handed out.
    enum KeyPrint {
        /// FNV-1a of the key's bytes.
        static func of(_ key: String) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in key.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return hash
        }

        /// The ticket id in the key's first 16 hex digits (nil for a key of another shape).
        static func ticketID(of key: String) -> Int? {
            var id: UInt64 = 0
            var count = 0
            for byte in key.utf8 {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                id = id << 4 | UInt64(digit)
                count += 1
                if count == 16 { break }
            }
            guard count == 16, id <= UInt64(Int.max) else { return nil }
            return Int(id)
        }
    }

    /// How a key a request presents relates to its ticket.
    enum KeyMatch: Sendable, Equatable {
        /// The newest key or the grace key.
        case current
        /// An older key of the ticket.
        case superseded
    }

    var tickets: [Int: Ticket] = [:]
    /// Segments that have (or had) a scheduled start: they release their pre-queue at it and
    /// admit in line order (NetFUNNELServerState+Prequeue.swift).
    var scheduledSegments: Set<SegmentID> = []
    /// Fingerprints of keys whose ticket completed (5004), the newest ``completedKeysKept``.
    var completedKeys: Set<UInt64> = []
    var completedOrder: [UInt64] = []
    /// Where the oldest of ``completedOrder`` is (a ring once full).
    var completedHead = 0
    /// Completed keys remembered (their 5004s answer 502 instead of 505).
    static let completedKeysKept = 50_000
    var runtimes: [SegmentID: SegmentRuntime] = [:]
    var nextTicket = 1
    var keySalt: UInt64
    var lastSweep: Date?
    /// The last `tps` text and what it was made of (formatting is slow; the value rarely changes).
    var tpsMemo: (recent: Int, window: Double, text: String)?
    /// The last waiting-room page address, encoded.
    var encodedPageMemo = NetFUNNELEncodedPageMemo()

    package init(configuration: NetFUNNELEmulatorConfiguration, seed: UInt64 = 0x4E46_5F45_4D55) {
        self.configuration = configuration
        self.keySalt = seed
        noteSchedules()
    }

    // MARK: request handling

    /// Sweeps expired tickets, then answers `request`.
    package mutating func handle(_ request: NetFUNNELIncomingRequest, now: Date) -> NetFUNNELReply {
        handle(request, opcode: request.opcode, javaScript: request.wantsJavaScript, now: now)
    }

    /// ``handle(_:now:)`` with the request's opcode and dialect already read.
    mutating func handle(_ request: NetFUNNELIncomingRequest, opcode: Int?, javaScript: Bool, now: Date) -> NetFUNNELReply {
        // sweeping is O(tickets): do it at most every 100 ms of (possibly virtual) time
        if let lastSweep, abs(now.timeIntervalSince(lastSweep)) < 0.1 {} else { sweep(now: now) }
        if !scheduledSegments.isEmpty { startScheduledSegments(now: now) }
        counters.requests[opcode.map(String.init) ?? "other", default: 0] += 1
        var reply: NetFUNNELReply
        let op = opcode.flatMap(NetFUNNELOpcode.init(rawValue:))
        let keyed = op == .checkEnter || op == .aliveNotice || op == .complete
        switch op {
        case _ where keyed && !isNamedNode(request):
            // Node affinity: a key belongs to the node named in `ip`/`port`; the front door
            // refuses it as the live service does.
            reply = error(.wrongServer, "Wrong Server ID")
        case .issueAndEnter: reply = issue(request, now: now)
        case .checkEnter: reply = checkEnter(request, now: now)
        case .aliveNotice: reply = alive(request, now: now)
        case .complete: reply = complete(request, now: now)
        default: reply = error(.noService, "unsupported opcode \(request.parameters["opcode"] ?? "(none)")")
        }
        counters.replies[String(reply.code), default: 0] += 1
        let typed = opcode == NetFUNNELOpcode.issueAndEnter.rawValue ? NetFUNNELOpcode.checkEnter.rawValue : opcode
        if javaScript {
            let prefix = request.parameters["prefix"] ?? "NetFunnel.gRtype=\(opcode ?? 0);"
            reply.envelope = .javascript(prefix: prefix)
            reply.requestType = typed ?? 0
        } else {
            reply.envelope = .native
            reply.requestType = nil
        }
        return reply
    }

    /// Drops waiting tickets past retention and returns taken keys past their timeout.
    package mutating func sweep(now: Date) {
        lastSweep = now
        var expired: [(Int, Bool)] = []  // (ticket, wasAdmitted)
        for ticket in tickets.values {
            guard let settings = segment(project: ticket.segment.project, segment: ticket.segment.segment) else { continue }
            switch ticket.phase {
            case .waiting:
                if now.timeIntervalSince(ticket.lastSeen) > settings.retentionSeconds { expired.append((ticket.id, false)) }
            case .admitted(let since):
                if settings.control == .section {
                    if now.timeIntervalSince(ticket.lastSeen) > settings.timeoutSeconds
                        || now.timeIntervalSince(since) > settings.aliveExpirySeconds
                    {
                        expired.append((ticket.id, true))
                    }
                } else if now.timeIntervalSince(since) > settings.timeoutSeconds {
                    expired.append((ticket.id, true))
                }
            }
        }
        for (id, admitted) in expired {
            remove(id)
            if admitted {
                counters.keysAutoReturned += 1
            } else {
                counters.waitersDropped += 1
            }
        }
        updateGauges()
    }

    private mutating func issue(_ request: NetFUNNELIncomingRequest, now: Date) -> NetFUNNELReply {
        let project = request.parameters["sid"] ?? ""
        let segmentKey = request.parameters["aid"] ?? ""
        guard let projectSettings = configuration.projects[project] else {
            return error(.noService, "unknown project \(project)")
        }
        guard let settings = projectSettings.segments[segmentKey] else {
            return error(.noAction, "unknown segment \(segmentKey)")
        }
        let id = SegmentID(project: project, segment: segmentKey)
        if let refused = screen(request, settings: settings, segment: id, now: now) { return refused }
        if !settings.active { return flow(.bypass, key: "", settings: settings, request: request, now: now, segment: id) }
        if settings.entryStatus == .block { return flow(.block, key: "", settings: settings, request: request, now: now, segment: id) }

        let ticketID = nextTicket
        nextTicket += 1
        let key = makeKey(ticketID)
        tickets[ticketID] = Ticket(
            id: ticketID, key: key, graceKey: nil, firstKey: key, recent: [], segment: id, phase: .waiting, lastSeen: now,
            checkEnterCount: 0)
        counters.keysIssued += 1
        if arrive(ticketID, segment: id, settings: settings, now: now) {
            return heldAnswer(ticketID, settings: settings, request: request, now: now)
        }
        // in place: a copy of the runtime would copy the whole line to append one ticket
        runtimes[id, default: SegmentRuntime()].queue.append(ticketID)
        grantInOrder(id, limit: settings.limit, now: now)
        return advance(ticketID, settings: settings, request: request, now: now)
    }

    private mutating func checkEnter(_ request: NetFUNNELIncomingRequest, now: Date) -> NetFUNNELReply {
        let found: (Int, NetFUNNELEmulatorConfiguration.Segment)
        switch lookup(request) {
        case .found(let id, let settings, _): found = (id, settings)
        case .superseded: return supersededKey()
        case .none: return unknownKey(request)
        }
        let (ticketID, settings) = found
        guard let presented = tickets[ticketID] else { return unknownKey(request) }
        if let refused = screen(request, settings: settings, segment: presented.segment, now: now) { return refused }
        // Every 5002 reply for a live ticket carries a fresh (shorter) key that replaces the
        // presented one (observed on a live native-dialect deployment).
        rotateKey(ticketID, presented: request.parameters["key"] ?? "")
        guard let ticket = tickets[ticketID] else { return unknownKey(request) }
        if case .admitted = ticket.phase {
            tickets[ticketID]?.lastSeen = now
            return flow(.success, key: ticket.key, settings: settings, request: request, now: now, segment: ticket.segment)
        }
        if !settings.active || settings.entryStatus == .block {
            remove(ticketID)
            counters.waitersLeft += 1
            updateGauges()
            let code: NetFUNNELStatusCode = settings.active ? .block : .bypass
            return flow(code, key: "", settings: settings, request: request, now: now, segment: ticket.segment)
        }
        return advance(ticketID, settings: settings, request: request, now: now)
    }

    /// Hands `ticketID` a fresh key; the presented key becomes the grace key.
    private mutating func rotateKey(_ ticketID: Int, presented: String) {
        // changed in place (a copy of the ticket would copy its fingerprints on append)
        guard let index = tickets.index(forKey: ticketID) else { return }
        let fresh = makeKey(ticketID, short: true)
        Self.rotate(&tickets.values[index], fresh: fresh, presented: presented)
    }

    private static func rotate(_ ticket: inout Ticket, fresh: String, presented: String) {
        ticket.graceKey = presented.isEmpty ? ticket.key : presented
        ticket.key = fresh
        ticket.recent.append(KeyPrint.of(fresh))
        if ticket.recent.count > Self.keysPerTicket - 1 { ticket.recent.removeFirst() }
    }

    /// Admits the ticket when it is within the free slots at the front of the line, else 201.
    private mutating func advance(
        _ ticketID: Int, settings: NetFUNNELEmulatorConfiguration.Segment,
        request: NetFUNNELIncomingRequest, now: Date
    ) -> NetFUNNELReply {
        guard var ticket = tickets[ticketID], let runtime = runtimes[ticket.segment] else { return error(.noKey, "no key") }
        if case .admitted = ticket.phase {  // let in by the scheduled segment's in-order admission
            tickets[ticketID]?.lastSeen = now
            return flow(.success, key: ticket.key, settings: settings, request: request, now: now, segment: ticket.segment)
        }
        if runtime.schedule.prequeue.isHeld(ticketID) { return heldAnswer(ticketID, settings: settings, request: request, now: now) }
        ticket.lastSeen = now
        ticket.checkEnterCount += 1
        // The runtime is changed in place (a copy would copy the line and the admitted set).
        let (position, count, admitted) = Self.place(
            ticketID, limit: settings.limit, now: now, in: &runtimes[ticket.segment, default: SegmentRuntime()])
        if admitted {
            ticket.phase = .admitted(since: now)
            tickets[ticketID] = ticket
            counters.keysTaken += 1
            updateGauges()
            return flow(.success, key: ticket.key, settings: settings, request: request, now: now, segment: ticket.segment)
        }
        tickets[ticketID] = ticket
        updateGauges()
        let span = settings.ttlMax - settings.ttlMin
        let ttl = settings.ttlMin + (count <= 1 ? 0 : Int((Double(span) * Double(position) / Double(count - 1)).rounded()))
        var reply = flow(.continue, key: ticket.key, settings: settings, request: request, now: now, segment: ticket.segment)
        // `nwait` counts the user's own place too: the head of the line reads 1, never 0, until
        // it is admitted (several third-party clients take `nwait=0` for "admitted").
        reply.set("nwait", String(position + 1))
        reply.set("nnext", String(count - position - 1))
        reply.set("ttl", String(ttl))
        reply.set("chk_enter_cnt", String(ticket.checkEnterCount))
        return reply
    }

    /// The ticket's place in line and the line's length; admits it (out of the line, into the
    /// admitted set) when it stands within the free slots at the front.
    private static func place(_ ticketID: Int, limit: Int, now: Date, in runtime: inout SegmentRuntime) -> (
        position: Int, count: Int, admitted: Bool
    ) {
        let position = runtime.position(of: runtime.rank(of: ticketID))
        let free = max(0, limit - runtime.admitted.count)
        guard position < free else { return (position, runtime.queue.count, false) }
        runtime.leaveQueue(runtime.rank(of: ticketID))
        runtime.admitted.insert(ticketID)
        runtime.admissions.append(now)
        runtime.admittedTotal += 1
        runtime.schedule.log.admitted(ticketID, at: now)
        return (position, runtime.queue.count, true)
    }

    private mutating func alive(_ request: NetFUNNELIncomingRequest, now: Date) -> NetFUNNELReply {
        let found: (Int, NetFUNNELEmulatorConfiguration.Segment)
        switch lookup(request) {
        case .found(let id, let settings, _): found = (id, settings)
        case .superseded: return supersededKey()
        case .none: return unknownKey(request)
        }
        let (ticketID, settings) = found
        guard let ticket = tickets[ticketID] else { return unknownKey(request) }
        if let refused = screen(request, settings: settings, segment: ticket.segment, now: now) { return refused }
        guard case .admitted = ticket.phase else { return error(.noKey, "key is not inside a section") }
        tickets[ticketID]?.lastSeen = now
        var reply = flow(.continue, key: ticket.key, settings: settings, request: request, now: now, segment: ticket.segment)
        reply.set("ttl", String(settings.aliveCycleSeconds))
        return reply
    }

    private mutating func complete(_ request: NetFUNNELIncomingRequest, now: Date) -> NetFUNNELReply {
        let found: (Int, NetFUNNELEmulatorConfiguration.Segment)
        switch lookup(request) {
        case .found(let id, let settings, _): found = (id, settings)
        case .superseded: return supersededKey()
        case .none: return unknownKey(request)
        }
        let (ticketID, settings) = found
        guard let ticket = tickets[ticketID] else { return unknownKey(request) }
        remove(ticketID)
        if case .admitted = ticket.phase {
            counters.keysReturned += 1
            grantInOrder(ticket.segment, limit: settings.limit, now: now)
        } else {
            counters.waitersLeft += 1
        }
        markCompleted(KeyPrint.of(ticket.firstKey))
        for print in ticket.recent { markCompleted(print) }
        if let grace = ticket.graceKey { markCompleted(KeyPrint.of(grace)) }
        updateGauges()
        var reply = flow(.success, key: "", settings: settings, request: request, now: now, segment: ticket.segment)
        reply.set("chk_enter_cnt", "0")
        return reply
    }

    // MARK: helpers

    enum Lookup {
        case found(Int, NetFUNNELEmulatorConfiguration.Segment, KeyMatch)
        /// Strict mode: an older key of a live ticket.
        case superseded
    }

    /// The ticket of the presented key. In strict mode only the newest key and the grace key
    /// count; an older key of a live ticket is ``Lookup/superseded``.
    private func lookup(_ request: NetFUNNELIncomingRequest) -> Lookup? {
        guard let key = request.parameters["key"], !key.isEmpty, let id = KeyPrint.ticketID(of: key), let ticket = tickets[id],
            ticket.remembers(key),
            let settings = segment(project: ticket.segment.project, segment: ticket.segment.segment)
        else { return nil }
        let match: KeyMatch = key == ticket.key || key == ticket.graceKey ? .current : .superseded
        if match == .superseded, configuration.strictKeys { return .superseded }
        return .found(id, settings, match)
    }

    /// Strict mode's answer to a superseded key: 507 (invalid key). The ticket keeps its slot
    /// until the client uses its newest key or the segment timeout returns it.
    /// True unless node affinity is on and the request went to a host other than the named node.
    private func isNamedNode(_ request: NetFUNNELIncomingRequest) -> Bool {
        guard configuration.nodeAffinity, let node = configuration.advertisedHost else { return true }
        func bare(_ host: String) -> String {
            host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        }
        return bare(node) == bare(request.host)
    }

    private func supersededKey() -> NetFUNNELReply {
        error(.invalidKey, "Invalid Key (superseded by a newer key)")
    }

    private func unknownKey(_ request: NetFUNNELIncomingRequest) -> NetFUNNELReply {
        let key = request.parameters["key"] ?? ""
        if !key.isEmpty, completedKeys.contains(KeyPrint.of(key)) { return error(.alreadyCompleted, "key already completed") }
        return error(.noKey, key.isEmpty ? "no key given" : "key does not exist")
    }

    /// White list (303), black list (302) and Repeated Request Block (302).
    private mutating func screen(
        _ request: NetFUNNELIncomingRequest, settings: NetFUNNELEmulatorConfiguration.Segment,
        segment: SegmentID, now: Date
    ) -> NetFUNNELReply? {
        let user = request.parameters["user_data"] ?? ""
        func listed(_ list: [String]) -> Bool {
            !list.isEmpty && ((!user.isEmpty && list.contains(user)) || (!request.clientIP.isEmpty && list.contains(request.clientIP)))
        }
        if listed(settings.whitelist) {
            return flow(.express, key: "", settings: settings, request: request, now: now, segment: segment)
        }
        if listed(settings.blacklist) {
            return flow(.macroBlock, key: "", settings: settings, request: request, now: now, segment: segment)
        }
        guard let rule = settings.repeatBlock else { return nil }
        let who = user.isEmpty ? request.clientIP : user
        var runtime = runtimes[segment] ?? SegmentRuntime()
        defer { runtimes[segment] = runtime }
        if let until = runtime.blockedUntil[who], until > now {
            return flow(.macroBlock, key: "", settings: settings, request: request, now: now, segment: segment)
        }
        var recent = (runtime.recentRequests[who] ?? []).filter { now.timeIntervalSince($0) < 1 }
        recent.append(now)
        runtime.recentRequests[who] = recent
        if recent.count > rule.limitPerSecond {
            runtime.blockedUntil[who] = now.addingTimeInterval(rule.blockSeconds)
            runtime.recentRequests[who] = []
            return flow(.macroBlock, key: "", settings: settings, request: request, now: now, segment: segment)
        }
        return nil
    }

    mutating func flow(
        _ code: NetFUNNELStatusCode, key: String, settings: NetFUNNELEmulatorConfiguration.Segment,
        request: NetFUNNELIncomingRequest, now: Date, segment: SegmentID
    ) -> NetFUNNELReply {
        let host = NetFUNNELReply.nodeHost(configuration.advertisedHost ?? request.host)
        let port = configuration.advertisedPort ?? request.port
        let encodedPage: String
        if let page = settings.vwrPageURL {
            encodedPage = encodedPageMemo.encoded(page)
        } else {
            encodedPage = encodedPageMemo.encoded(host: request.host, port: request.port)
        }
        return NetFUNNELReply(
            code: code.rawValue,
            parameters: [
                .init("key", key), .init("nwait", "0"), .init("nnext", "0"),
                .init("tps", tpsText(segment, settings, now: now)), .init("ttl", "0"),
                .init("ip", host), .init("port", String(port)),
                .init("vwr_html", encodedPage), .init("vwr_type", ""),
                .init("live_message", NetFUNNELReply.encodeValue(settings.liveMessage)),
                .init("chk_enter_cnt", code == .success ? "1" : "0"), .init("sticky", "nf4")
            ])
    }

    private func error(_ code: NetFUNNELStatusCode, _ message: String) -> NetFUNNELReply {
        NetFUNNELReply(code: code.rawValue, parameters: [.init("msg", NetFUNNELReply.quotedMessage(message))])
    }

    static func tpsText(_ runtime: SegmentRuntime, _ settings: NetFUNNELEmulatorConfiguration.Segment, now: Date) -> String {
        let window = settings.tpsWindowSeconds
        return String(format: "%.6f", Double(recentAdmissions(runtime, window: window, now: now)) / window)
    }

    static func recentAdmissions(_ runtime: SegmentRuntime, window: Double, now: Date) -> Int {
        runtime.admissions.reversed().prefix { now.timeIntervalSince($0) <= window }.count
    }

    /// ``tpsText(_:_:now:)`` for a reply, the text formatted once per (admissions, window).
    private mutating func tpsText(_ segment: SegmentID, _ settings: NetFUNNELEmulatorConfiguration.Segment, now: Date) -> String {
        let window = settings.tpsWindowSeconds
        let recent = runtimes[segment].map { Self.recentAdmissions($0, window: window, now: now) } ?? 0
        if let memo = tpsMemo, memo.recent == recent, memo.window == window { return memo.text }
        let text = String(format: "%.6f", Double(recent) / window)
        tpsMemo = (recent, window, text)
        return text
    }

    private mutating func remove(_ ticketID: Int) {
        guard let ticket = tickets.removeValue(forKey: ticketID) else { return }
        if runtimes[ticket.segment] != nil {
            Self.leave(ticketID, runtime: &runtimes[ticket.segment, default: SegmentRuntime()])
        }
    }

    /// Takes a ticket out of its segment's line and admitted set, in place.
    private static func leave(_ ticketID: Int, runtime: inout SegmentRuntime) {
        runtime.leaveQueue(runtime.rank(of: ticketID))
        runtime.schedule.forget(ticketID)
        runtime.admitted.remove(ticketID)
        // keep the admission log short
        if runtime.admissions.count > 10_000 { runtime.admissions.removeFirst(runtime.admissions.count - 10_000) }
    }

    private mutating func markCompleted(_ print: UInt64) {
        guard completedKeys.insert(print).inserted else { return }
        if completedOrder.count < Self.completedKeysKept {
            completedOrder.append(print)
            return
        }
        // full: the oldest goes (a ring, so dropping one is not a shift of fifty thousand)
        completedKeys.remove(completedOrder[completedHead])
        completedOrder[completedHead] = print
        completedHead = (completedHead + 1) % completedOrder.count
    }

    mutating func updateGauges() {
        var waiting = 0
        var held = 0
        for runtime in runtimes.values {
            waiting += runtime.queue.count
            held += runtime.admitted.count
        }
        counters.waiting = waiting
        counters.keysHeld = held
    }

    /// An uppercase hex key, unique per ticket and generation: 60 digits from 5101, 36 (shorter,
    /// as observed live) from 5002.
    private mutating func makeKey(_ ticketID: Int, short: Bool = false) -> String {
        keySalt = keySalt &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let salt = keySalt
        // id (16 hex digits) + salt (16) + [salt reversed (16)] + tail, written in place
        let tail: StaticString = short ? "4E46" : "4E4634454D55"
        let length = 32 + (short ? 0 : 16) + tail.utf8CodeUnitCount
        return String(unsafeUninitializedCapacity: length) { out in
            let digits: StaticString = "0123456789ABCDEF"
            let hex = digits.utf8Start
            let id = UInt64(bitPattern: Int64(ticketID))
            for i in 0..<16 {
                out[i] = hex[Int((id >> UInt64(60 - 4 * i)) & 0xF)]
                out[16 + i] = hex[Int((salt >> UInt64(60 - 4 * i)) & 0xF)]
            }
            var at = 32
            if !short {
                for i in 0..<16 { out[32 + i] = out[31 - i] }
                at = 48
            }
            let t = tail.utf8Start
            for i in 0..<tail.utf8CodeUnitCount { out[at + i] = t[i] }
            return length
        }
    }
}

extension NetFUNNELReply {
    /// Sets (replaces the last occurrence of) a parameter, or appends it.
    mutating func set(_ name: String, _ value: String) {
        if let index = parameters.lastIndex(where: { $0.name == name }) {
            parameters[index].value = value
        } else {
            parameters.append(.init(name, value))
        }
    }
}
