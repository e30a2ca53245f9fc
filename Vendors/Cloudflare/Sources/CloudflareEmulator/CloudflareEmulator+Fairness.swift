import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// The Cloudflare emulator's scheduled starts and admission records (issue 30 §2): a room is its
/// name (`RoomKey.room`, else the room whose path covers `/{room}`; the scope is not used). A
/// scheduled start is a Cloudflare event in the room, named ``scheduledStartEvent``, with a
/// `prequeue_start_time` and `shuffle_at_event_start`, set through the same path as
/// `POST /_emulator/cloudflare/rooms/{name}` with `{"events": [...]}`.
extension CloudflareEmulator: EmulatorFairnessSource {
    /// The name of the event ``scheduleStart(room:at:shuffle:seed:)`` writes.
    package static let scheduledStartEvent = "scheduled-start"

    package func admissionRecord(room: RoomKey) -> EmulatorAdmissionRecord? {
        model.locate(room).flatMap { model.admissionRecord(room: $0) }
    }

    /// Replaces the room's ``scheduledStartEvent`` (its other events stay) with one starting at
    /// `startsAt`: pre-queue from a second before the earlier of now and the start (or the event's
    /// earlier pre-queue start, when it is moved), `shuffle_at_event_start` = `shuffle`, the
    /// shuffle seeded by `seed` (modulo 2³¹), over a day after the start, no overrides of the room's
    /// settings. `startsAt` nil removes it (held visitors join the line at once).
    package func scheduleStart(room: RoomKey, at startsAt: Date?, shuffle: Bool, seed: UInt64) throws {
        guard let name = model.locate(room), let current = model.room(named: name) else {
            throw EmulatorRoomError.unknownRoom(room.description)
        }
        var events = current.events.filter { $0.name != Self.scheduledStartEvent }
        if let startsAt {
            let previous = current.events.first { $0.name == Self.scheduledStartEvent }?.prequeueStartTime
            let prequeue = min(previous ?? model.now(), startsAt).addingTimeInterval(-1)
            events.append(
                CloudflareEmulatorConfiguration.Event(
                    name: Self.scheduledStartEvent, eventStartTime: startsAt, eventEndTime: startsAt.addingTimeInterval(86_400),
                    prequeueStartTime: prequeue, shuffleAtEventStart: shuffle, seed: seed % (1 << 31)))
        }
        _ = try updateRoom([name], with: .object(["events": .array(events.map(\.json))]))
    }
}
