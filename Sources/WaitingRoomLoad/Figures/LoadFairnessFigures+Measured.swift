import Foundation
import WaitingRoomEmulatorKit

extension LoadFairnessFigures {
    /// The run's fairness figures: from the embedded emulator's `record` when there is one (its
    /// own start, if the room has one), else from the users' own times split at `startAt`.
    package static func measured(
        visits: [Crowd.Visit], record: EmulatorAdmissionRecord?, origin: Date, startAt: Double?,
        rate: LoadOperatorFigures.RoomRate
    ) -> LoadFairnessFigures {
        if let record {
            let start = record.startsAt.map { $0.timeIntervalSince(origin) }.flatMap { $0 >= 0 ? $0 : nil } ?? startAt
            return LoadFairnessFigures(
                users: users(of: record, origin: origin), startAt: start, rate: rate,
                source: "the emulator's record of arrival and admission order" + (record.truncated ? ", truncated" : ""))
        }
        return LoadFairnessFigures(
            users: users(of: visits, startAt: startAt), startAt: startAt, rate: rate,
            source: "the users' own times: arrival when the vendor first answered, admission when the pass was seen")
    }
}
