import CrowdHandler
import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// A CrowdHandler room that opens before its queue activates (issue 30 §2): "The user can wait
/// in the Waiting Room, but will not receive a queue position before the queue activates. All
/// users who are already in the Waiting Room when the queue activates will be assigned a random
/// queue position. Users who join the queue after that will be behind those initial users, in the
/// order they joined the queue." (support.crowdhandler.com, article 80000061556 "Queue mechanics";
/// README "Scheduled start"). The activation time is the room's `queueActivatesOn`; early users
/// are held in the kit's ``EmulatorPreQueue`` and, at activation, placed in a seeded random order
/// (each let in at once while the room's `capacity` lasts, else into the line), before anyone who
/// arrives later. Each promotion is logged (``EmulatorAdmissionLog``) for fairness figures.
extension CrowdHandlerEmulatorModel.RoomState {
    /// A room as configured.
    static func fresh(_ room: CrowdHandlerEmulatorConfiguration.Room) -> Self {
        var state = Self(room: room)
        state.applyPrequeueSettings(of: room)
        return state
    }

    /// Takes the room's activation time, shuffle and seed (held users stay held for the new time).
    mutating func applyPrequeueSettings(of room: CrowdHandlerEmulatorConfiguration.Room) {
        prequeue.startsAt = room.queueActivatesAt
        prequeue.shuffle = room.shuffleAtActivation
        prequeue.seed = room.seed
    }

    /// The room's arrivals and promotions so far.
    var admissionRecord: EmulatorAdmissionRecord {
        log.record(startsAt: prequeue.startsAt, shuffled: prequeue.shuffle)
    }
}

extension CrowdHandlerEmulatorModel {
    /// A user arriving in `room` at `now`: held until the queue activates (true) or not; logged.
    static func arrive(_ token: String, room: inout RoomState, now: Date) -> Bool {
        let held = room.prequeue.hold(token, now: now)
        room.log.arrived(token, at: now, prequeued: held)
        return held
    }

    /// When `slug`'s queue has activated (or its activation was removed) with users held: places
    /// them in the pre-queue's order (shuffled), each let in at once while the room's capacity
    /// lasts, else at the back of the line; the rate counts from the activation.
    static func releasePrequeue(slug: String, _ s: inout State, now: Date) {
        guard var r = s.rooms[slug] else { return }
        let due = r.prequeue.startsAt.map { !r.prequeue.hasReleased && now >= $0 } ?? (r.prequeue.heldCount > 0)
        guard due else { return }
        let start = min(now, r.prequeue.startsAt ?? now)
        if r.line.isEmpty {
            r.credit = 0
            r.lastRate = start
        }
        let released = r.prequeue.release(now: now)
        s.rooms[slug] = r
        for token in released {
            guard var room = s.rooms[slug] else { return }
            if room.room.capacity == nil || room.admittedAtOnce < (room.room.capacity ?? 0) {
                room.admittedAtOnce += 1
                room.admittedTotal += 1
                s.rooms[slug] = room
                promote(token, slug: slug, &s, now: start)
            } else {
                room.line.append(token)
                s.rooms[slug] = room
            }
        }
    }

    /// The answer to a user held before `slug`'s queue activates: waiting, no position; the
    /// wait is the time to the activation (nil: the user is not held).
    static func prequeueAnswer(token: String, slug: String, _ s: State, now: Date) -> Answer? {
        guard let room = s.rooms[slug], room.prequeue.isHeld(token) else { return nil }
        let eta = room.prequeue.startsAt.map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) }
        return Answer(
            status: 200,
            json: CrowdHandlerResult(
                promoted: false, status: 0, token: token, slug: slug, position: nil, eta: eta,
                extra: ["prequeue": "1", "waiting": String(room.prequeue.heldCount)]
            ).json)
    }

    /// The arrivals and promotions of `slug` (nil: no such room).
    func admissionRecord(slug: String) -> EmulatorAdmissionRecord? {
        let at = now()
        return state.withLockedValue { s in
            Self.admitByRate(&s, now: at)
            return s.rooms[slug]?.admissionRecord
        }
    }
}
