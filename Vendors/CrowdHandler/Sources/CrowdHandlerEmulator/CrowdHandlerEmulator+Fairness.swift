import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// The CrowdHandler emulator's queue activations and admission records (issue 30 §2): a room is
/// its slug (`RoomKey.room`; the scope, `site` against the emulator, is not used).
extension CrowdHandlerEmulator: EmulatorFairnessSource {
    package func admissionRecord(room: RoomKey) -> EmulatorAdmissionRecord? {
        model.admissionRecord(slug: room.room)
    }

    /// Sets the room's `queueActivatesOn` to `startsAt` (nil: the epoch stamp of the demo rooms,
    /// long past), with its shuffle and seed.
    package func scheduleStart(room: RoomKey, at startsAt: Date?, shuffle: Bool, seed: UInt64) throws {
        let stamp = startsAt.map { String(Int64(($0.timeIntervalSince1970 * 1000).rounded())) } ?? "1700000000000"
        _ = try updateRoom(
            [room.room],
            with: .object([
                "queueActivatesOn": .string(stamp), "shuffleAtActivation": .bool(shuffle), "seed": .number(Double(seed % (1 << 31)))
            ]))
    }
}
