import Foundation
import WaitingRoom

/// An emulator whose rooms can have a scheduled start with a pre-queue (a sale: visitors who
/// arrive before the start are held and shuffled at it, later ones join first come first served)
/// and that records each room's arrivals and admissions. `waitingroom load --start-at` schedules
/// the start through it and its fairness figures read the record. Vendors without the feature
/// do not conform.
package protocol EmulatorFairnessSource: Sendable {
    /// The arrivals and admissions of `room` so far (matched by key, else by room name); nil: no
    /// such room.
    func admissionRecord(room: RoomKey) -> EmulatorAdmissionRecord?

    /// Schedules `room`'s start at `startsAt` (nil: none), with its pre-queue shuffled at the
    /// start (seeded with `seed`) when `shuffle` is on, else released in arrival order. Visitors
    /// already held stay held for the new start.
    /// - Throws: ``EmulatorRoomError/unknownRoom(_:)``.
    func scheduleStart(room: RoomKey, at startsAt: Date?, shuffle: Bool, seed: UInt64) throws
}
