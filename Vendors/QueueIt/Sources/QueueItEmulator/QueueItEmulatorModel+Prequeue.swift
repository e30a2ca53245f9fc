import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// A Queue-it room's scheduled start (issue 30 §2): visitors who enqueue before the room's
/// `startsAt` are held in a pre-queue (the kit's ``EmulatorPreQueue``) and get no queue number;
/// at the start they are given the next queue numbers in a seeded random order (or arrival order
/// without `shuffleAtStart`), and visitors arriving after the start get theirs as they come.
/// Queue-it: "those early-comers in the pre-queue are randomized, and from that point on anyone
/// else who joins the waiting room will be put at the back of the queue in a first-come,
/// first-served order" (support.queue-it.com, article 360020951680; README "Scheduled start").
///
/// The room admits strictly by queue number, so queue-number order is the admission order; each
/// admission is logged (``EmulatorAdmissionLog``) at the moment the room's rate reached the
/// visitor's number, for `waitingroom load`'s fairness figures.
extension QueueItEmulatorModel.RoomRuntime {
    /// A room as configured, at `now`.
    static func fresh(_ config: QueueItEmulatorConfiguration.Room, now: Date) -> Self {
        var room = Self(config: config, lastUpdate: now)
        room.applyPrequeueSettings(of: config)
        return room
    }

    /// Takes the configured start, shuffle and seed (held visitors stay held for the new start).
    mutating func applyPrequeueSettings(of config: QueueItEmulatorConfiguration.Room) {
        prequeue.startsAt = config.startsAt
        prequeue.shuffle = config.shuffleAtStart
        prequeue.seed = config.seed
    }

    /// Moves the room to `now`: the pre-queue is released once its start has passed (admissions
    /// before it counted up to the start, so the released visitors are admitted from the start
    /// at the room's rate), then the rate admits up to `now`.
    mutating func advanceWithPrequeue(to now: Date) {
        if !prequeue.hasReleased, let start = prequeue.startsAt, now >= start {
            advanceAdmissions(to: max(lastUpdate, start))
            for queueId in prequeue.release(now: now) {
                arrivals += 1
                holders.append(queueId)
                releasedTickets[queueId] = (ticket: arrivals, ahead: max(0, arrivals - admittedCount - 1))
            }
        } else if prequeue.startsAt == nil, prequeue.heldCount > 0 {
            // The start was cancelled: the held visitors join in the pre-queue's order now.
            for queueId in prequeue.release(now: now) {
                arrivals += 1
                holders.append(queueId)
                releasedTickets[queueId] = (ticket: arrivals, ahead: max(0, arrivals - admittedCount - 1))
            }
        }
        advanceAdmissions(to: now)
    }

    /// Admits at the room's rate from `lastUpdate` to `now` (never more than have arrived), and
    /// logs each visitor whose number the rate reached, at that moment.
    mutating func advanceAdmissions(to now: Date) {
        let dt = max(0, now.timeIntervalSince(lastUpdate))
        let before = admitted
        let after = min(Double(arrivals), admitted + dt * config.admitPerSecond)
        let start = lastUpdate
        admitted = after
        lastUpdate = max(lastUpdate, now)
        let rate = config.admitPerSecond
        logAdmissions(from: before, to: after) { ticket in
            rate > 0 ? min(now, start.addingTimeInterval((Double(ticket) - before) / rate)) : now
        }
    }

    /// Admits `count` more at once at `now` (the admin route).
    mutating func admitAtOnce(_ count: Int, now: Date) {
        advanceWithPrequeue(to: now)
        let before = admitted
        admitted = min(Double(arrivals), admitted + Double(max(0, count)))
        logAdmissions(from: before, to: admitted) { _ in now }
    }

    /// Logs the visitors whose numbers lie in (`before`, `after`] as admitted at `time(number)`.
    private mutating func logAdmissions(from before: Double, to after: Double, at time: (Int) -> Date) {
        let first = Int(before.rounded(.down)) + 1
        let last = Int(after.rounded(.down))
        guard first <= last else { return }
        for ticket in first...last where ticket <= holders.count {
            log.admitted(holders[ticket - 1], at: time(ticket))
        }
    }

    /// A visitor arriving at `now`: held for the start (true: it has no number yet) or given the
    /// next number.
    mutating func arrive(_ queueId: String, now: Date) -> Bool {
        if prequeue.hold(queueId, now: now) {
            log.arrived(queueId, at: now, prequeued: true)
            return true
        }
        log.arrived(queueId, at: now, prequeued: false)
        arrivals += 1
        holders.append(queueId)
        return false
    }

    /// The figures a held visitor's queue page shows: nobody has a place before the start; the
    /// wait is the time to the start.
    func prequeueFigures(customer: String, room: String, queueId: String, now: Date) -> QueueItQueuePageHTML.Figures {
        let seconds = prequeue.startsAt.map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) }
        let message = config.message.map { $0 + " " } ?? ""
        return QueueItQueuePageHTML.Figures(
            customer: customer, room: room, queueId: queueId, ahead: waiting, waiting: waiting + prequeue.heldCount, behind: 0,
            etaSeconds: seconds, progressPercent: 0,
            message: message + "The sale has not started: everyone here before it gets a random place in line at the start"
                + (seconds.map { " (in about \($0) s)." } ?? "."),
            refreshSeconds: config.refreshSeconds)
    }

    /// The room's arrivals and admissions so far.
    var admissionRecord: EmulatorAdmissionRecord {
        log.record(startsAt: prequeue.startsAt, shuffled: prequeue.shuffle)
    }
}
