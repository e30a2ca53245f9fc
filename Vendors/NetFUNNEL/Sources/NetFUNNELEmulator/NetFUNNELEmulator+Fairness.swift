import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// The NetFUNNEL emulator's scheduled starts and admission records (issue 30 §2): a room is
/// `{projectKey}/{segmentKey}` (a key whose scope names no project matches the segment by name).
extension NetFUNNELEmulator: EmulatorFairnessSource {
    package func admissionRecord(room: RoomKey) -> EmulatorAdmissionRecord? {
        let now = clock.now()
        return state.withLockedValue { state -> EmulatorAdmissionRecord? in
            guard let (project, segment) = Self.locate(room, in: state.configuration) else { return nil }
            state.startScheduledSegments(now: now)
            return state.admissionRecord(project: project, segment: segment)
        }
    }

    /// Sets the segment's `startsAt` (nil: none), `shuffleAtStart` and `seed`.
    package func scheduleStart(room: RoomKey, at startsAt: Date?, shuffle: Bool, seed: UInt64) throws {
        guard let (project, segment) = Self.locate(room, in: configuration) else {
            throw EmulatorRoomError.unknownRoom(room.description)
        }
        _ = try updateRoom(
            [project, segment],
            with: .object([
                "startsAt": startsAt.map { .number($0.timeIntervalSince1970) } ?? .null,
                "shuffleAtStart": .bool(shuffle), "seed": .number(Double(seed % 9_000_000_000_000_000))
            ]))
    }

    /// The project and segment `room` names.
    static func locate(_ room: RoomKey, in configuration: NetFUNNELEmulatorConfiguration) -> (String, String)? {
        if configuration.projects[room.scope]?.segments[room.room] != nil { return (room.scope, room.room) }
        return configuration.projects.keys.sorted().lazy.compactMap { p in
            configuration.projects[p]?.segments[room.room] != nil ? (p, room.room) : nil
        }.first
    }
}
