import Foundation
import NetFUNNEL
import WaitingRoom
import WaitingRoomEmulatorKit

/// A segment with a scheduled start (issue 30 §2): NetFUNNEL 4's "Waiting Room Schedule
/// Reservation", where "pre-waiting visitors are given random queue positions when the event
/// opens" (reference §7.6 [P13]; README "Scheduled start"). The wire form is not public, so
/// (proposal) before the segment's `startsAt` every 5101 and 5002 is answered 201 (keep polling)
/// and the ticket is held in the kit's ``EmulatorPreQueue``; at the start the held tickets are
/// placed in line in the pre-queue's (seeded, shuffled) order, ahead of later arrivals, who join
/// in order. (proposal) Such a segment admits in line order: whenever a place is free under its
/// `limit`, the front of the line is let in at once and learns it at its next 5002, so the
/// positions drawn at the start are kept (admitting whoever polls first within the free places
/// would reorder users by their poll phase). Each arrival and admission is logged
/// (``EmulatorAdmissionLog``) for fairness figures.
extension NetFUNNELServerState {
    /// A segment's pre-queue, its line places and its admission log.
    struct ScheduleRuntime: Sendable {
        /// The tickets held for the start.
        var prequeue = EmulatorPreQueue<Int>(startsAt: nil, shuffle: true, seed: 0)
        /// Arrivals (5101s) and admissions, by ticket id.
        var log = EmulatorAdmissionLog<Int>()
        /// Released tickets whose place in the line is not their id: ticket id → place.
        var rankOf: [Int: Int] = [:]
        /// The same, place → ticket id.
        var idOf: [Int: Int] = [:]

        /// Forgets the place of a ticket that left.
        mutating func forget(_ ticketID: Int) {
            guard let rank = rankOf.removeValue(forKey: ticketID) else { return }
            if idOf[rank] == ticketID { idOf[rank] = nil }
        }
    }

    /// Notes which segments have a scheduled start (a segment that had one keeps admitting in
    /// line order).
    mutating func noteSchedules() {
        for (project, settings) in configuration.projects {
            for (segment, s) in settings.segments where s.startsAt != nil {
                scheduledSegments.insert(SegmentID(project: project, segment: segment))
            }
        }
    }

    /// For every scheduled segment: takes its settings into its pre-queue, releases the
    /// pre-queue when the start has come, and lets the front of the line in while places are free.
    mutating func startScheduledSegments(now: Date) {
        for id in scheduledSegments {
            guard let settings = segment(project: id.project, segment: id.segment) else { continue }
            sync(id, settings)
            release(id, now: now)
            grantInOrder(id, limit: settings.limit, now: now)
        }
    }

    /// The segment's pre-queue takes its `startsAt`, `shuffleAtStart` and `seed`.
    private mutating func sync(_ id: SegmentID, _ settings: NetFUNNELEmulatorConfiguration.Segment) {
        guard scheduledSegments.contains(id) else { return }
        runtimes[id, default: SegmentRuntime()].schedule.prequeue.startsAt = settings.startsAt
        runtimes[id, default: SegmentRuntime()].schedule.prequeue.shuffle = settings.shuffleAtStart
        runtimes[id, default: SegmentRuntime()].schedule.prequeue.seed = settings.seed
    }

    /// A 5101 for a new ticket at `now`: held for the start (true) or not; logged either way.
    mutating func arrive(_ ticketID: Int, segment id: SegmentID, settings: NetFUNNELEmulatorConfiguration.Segment, now: Date) -> Bool {
        sync(id, settings)
        let held = runtimes[id, default: SegmentRuntime()].schedule.prequeue.hold(ticketID, now: now)
        runtimes[id, default: SegmentRuntime()].schedule.log.arrived(ticketID, at: now, prequeued: held)
        if held { updateGauges() }
        return held
    }

    /// At (or after) the start: the held tickets still alive join the back of the line in the
    /// pre-queue's order. They were all issued while the segment held its arrivals, so their ids
    /// lie between those already in line and those issued later: each takes one of those ids as
    /// its place, in the drawn order, and the line stays sorted.
    private mutating func release(_ id: SegmentID, now: Date) {
        guard let runtime = runtimes[id], runtime.schedule.prequeue.heldCount > 0 || runtime.schedule.prequeue.startsAt != nil else {
            return
        }
        let order = runtimes[id, default: SegmentRuntime()].schedule.prequeue.release(now: now).filter { tickets[$0] != nil }
        guard !order.isEmpty else { return }
        let places = order.sorted()
        var r = runtimes.removeValue(forKey: id) ?? SegmentRuntime()  // in place: no copy of the line
        for (ticketID, place) in zip(order, places) where ticketID != place {
            r.schedule.rankOf[ticketID] = place
            r.schedule.idOf[place] = ticketID
        }
        let sorted = r.queue.last.map { $0 < places[0] } ?? true
        r.queue.append(contentsOf: places)
        if !sorted { r.queue.sort() }
        runtimes[id] = r
        updateGauges()
    }

    /// A scheduled segment's admission: while fewer than `limit` users are inside, the front of
    /// the line is let in (its next 5002 answers 200).
    mutating func grantInOrder(_ id: SegmentID, limit: Int, now: Date) {
        guard scheduledSegments.contains(id), let runtime = runtimes[id], !runtime.queue.isEmpty, runtime.admitted.count < limit else {
            return
        }
        var r = runtimes.removeValue(forKey: id) ?? SegmentRuntime()  // in place: no copy of the line
        var letIn = 0
        while r.admitted.count < limit, !r.queue.isEmpty {
            let place = r.queue.removeFirst()
            let ticketID = r.schedule.idOf[place] ?? place
            guard tickets[ticketID] != nil else { continue }
            tickets[ticketID]?.phase = .admitted(since: now)
            r.admitted.insert(ticketID)
            r.admissions.append(now)
            r.admittedTotal += 1
            r.schedule.log.admitted(ticketID, at: now)
            letIn += 1
        }
        runtimes[id] = r
        counters.keysTaken += letIn
        updateGauges()
    }

    /// The answer to a held ticket: 201 (keep polling) with its key, the users held as `nwait`
    /// and, as `ttl`, the time to the start within the segment's `ttlMin`…`ttlMax`.
    mutating func heldAnswer(
        _ ticketID: Int, settings: NetFUNNELEmulatorConfiguration.Segment,
        request: NetFUNNELIncomingRequest, now: Date
    ) -> NetFUNNELReply {
        guard let ticket = tickets[ticketID] else { return NetFUNNELReply(code: NetFUNNELStatusCode.noKey.rawValue, parameters: []) }
        tickets[ticketID]?.lastSeen = now
        tickets[ticketID]?.checkEnterCount += 1
        let prequeue = runtimes[ticket.segment]?.schedule.prequeue
        let untilStart = prequeue?.startsAt.map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) } ?? settings.ttlMin
        var reply = flow(.continue, key: ticket.key, settings: settings, request: request, now: now, segment: ticket.segment)
        reply.set("nwait", String(prequeue?.heldCount ?? 0))
        reply.set("nnext", "0")
        reply.set("ttl", String(min(settings.ttlMax, max(settings.ttlMin, untilStart))))
        reply.set("chk_enter_cnt", String((tickets[ticketID]?.checkEnterCount ?? 0)))
        return reply
    }

    /// The arrivals and admissions of `segment` of `project` so far (nil: no such segment).
    func admissionRecord(project: String, segment: String) -> EmulatorAdmissionRecord? {
        guard let settings = self.segment(project: project, segment: segment) else { return nil }
        let runtime = runtimes[SegmentID(project: project, segment: segment)] ?? SegmentRuntime()
        return runtime.schedule.log.record(
            startsAt: settings.startsAt ?? runtime.schedule.prequeue.startsAt, shuffled: settings.shuffleAtStart)
    }
}
