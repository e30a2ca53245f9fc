import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// The Queue-it emulator's scheduled starts and admission records (issue 30 §2): rooms are
/// `{customerId}/{waitingRoomId}` (a key whose scope names no customer matches the room by name).
extension QueueItEmulator: EmulatorFairnessSource {
    package func admissionRecord(room: RoomKey) -> EmulatorAdmissionRecord? {
        let t = model.now()
        return model.state.withLockedValue { s -> EmulatorAdmissionRecord? in
            guard let (customer, id) = Self.locate(room, in: s) else { return nil }
            guard var r = s.rooms[customer]?[id] else { return nil }
            r.advance(to: t)
            s.rooms[customer]?[id] = r
            return r.admissionRecord
        }
    }

    package func scheduleStart(room: RoomKey, at startsAt: Date?, shuffle: Bool, seed: UInt64) throws {
        guard let (customer, id) = model.state.withLockedValue({ Self.locate(room, in: $0) }) else {
            throw EmulatorRoomError.unknownRoom(room.description)
        }
        let patch: [String: Any] = [
            "startsAt": startsAt.map { $0.timeIntervalSince1970 as Any } ?? NSNull(), "shuffleAtStart": shuffle, "seed": Double(seed)
        ]
        do {
            try model.update(customer: customer, room: id, patch: patch)
        } catch {
            throw WaitingRoomError.invalidConfiguration(field: error.field, error.message, vendor: Self.vendorID)
        }
    }

    /// The customer and room id `room` names.
    static func locate(_ room: RoomKey, in s: QueueItEmulatorModel.State) -> (String, String)? {
        if s.rooms[room.scope]?[room.room] != nil { return (room.scope, room.room) }
        return s.rooms.keys.sorted().lazy.compactMap { c in s.rooms[c]?[room.room] != nil ? (c, room.room) : nil }.first
    }
}
