import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// A room's event pre-queue (issue 30 §2): from an event's `prequeue_start_time` new visitors are
/// held in the kit's ``EmulatorPreQueue``; at `event_start_time` they are released into the line,
/// shuffled when `shuffle_at_event_start` (seeded by the event's `seed`, else the document's
/// `seed` plus the start's Unix seconds), before anyone who arrives later, who joins first come
/// first served. Cloudflare: "Shuffle at Event Start … users in the pre-queue are randomly
/// admitted at event start time" (developers.cloudflare.com/waiting-room/additional-options/create-events/;
/// README "Events").
///
/// The pre-queue follows the event as it is changed: a new start keeps the visitors already held
/// (the same event moved), an event removed while visitors are held lets them into the line at
/// once in the pre-queue's order. Each arrival that takes a place and each admission is logged
/// (``EmulatorAdmissionLog``) for `waitingroom load`'s fairness figures.
extension CloudflareEmulatorModel {
    /// Points `r`'s pre-queue at the next event with one (the earliest start among those not
    /// suspended and not over at `t`).
    static func syncPreQueue(_ r: inout RoomState, documentSeed: UInt64, at t: Date) {
        let next = r.room.events.filter { !$0.suspended && $0.prequeueStartTime != nil && $0.eventEndTime > t }
            .min { $0.eventStartTime < $1.eventStartTime }
        func seed(of event: Event) -> UInt64 {
            event.seed ?? documentSeed &+ UInt64(truncatingIfNeeded: Int64(event.eventStartTime.timeIntervalSince1970))
        }
        if let next, r.preQueueEvent == next.name {
            // the same event, perhaps moved: held visitors stay held for the new start
            if r.preQueue.startsAt != next.eventStartTime { r.preQueue.startsAt = next.eventStartTime }
            if !r.preQueue.hasReleased {
                r.preQueue.shuffle = next.shuffleAtEventStart
                r.preQueue.seed = seed(of: next)
            }
            return
        }
        if r.preQueue.heldCount > 0 {
            // the held visitors' event is gone (removed, suspended, over): they join the line now
            r.preQueue.startsAt = nil
            r.preQueueEvent = nil
            return
        }
        guard let next else { return }
        r.preQueue = EmulatorPreQueue(startsAt: next.eventStartTime, shuffle: next.shuffleAtEventStart, seed: seed(of: next))
        r.preQueueEvent = next.name
    }

    /// The room `key` names: its room name, else the room whose path covers `/{room}`.
    func locate(_ key: RoomKey) -> String? {
        state.withLockedValue { s in
            if s.rooms[key.room] != nil { return key.room }
            return Self.room(for: key.room.hasPrefix("/") ? key.room : "/" + key.room, s)
        }
    }

    /// The arrivals and admissions of room `name` up to now (nil: no such room).
    func admissionRecord(room name: String) -> EmulatorAdmissionRecord? {
        let t = now()
        return state.withLockedValue { s -> EmulatorAdmissionRecord? in
            Self.tick(name, &s, at: t)
            guard let r = s.rooms[name] else { return nil }
            return r.log.record(startsAt: r.preQueue.startsAt, shuffled: r.preQueue.shuffle)
        }
    }
}
