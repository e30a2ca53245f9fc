import Foundation
import QueueIt
import WaitingRoomEmulatorKit

extension QueueItEmulatorConfiguration {
    /// Reads a room's scheduled start (`startsAt`, `shuffleAtStart`, `seed`) from its JSON object.
    static func readPrequeue(_ r: [String: Any], into room: inout Room, path: String, now: Date) throws(QueueItEmulatorConfigurationError) {
        typealias E = QueueItEmulatorConfigurationError
        switch r["startsAt"] {
        case nil, is NSNull:
            room.startsAt = nil
        case let text as String:
            guard let date = EmulatorScheduledStart.date(from: text, now: now) else {
                throw E(field: "\(path).startsAt", message: "'\(text)' is not \(EmulatorScheduledStart.expected)")
            }
            room.startsAt = date
        case let value:
            guard let seconds = QueueItJSON.number(value), let date = EmulatorScheduledStart.date(unixSeconds: seconds) else {
                throw E(field: "\(path).startsAt", message: "must be \(EmulatorScheduledStart.expected)")
            }
            room.startsAt = date
        }
        if let v = r["shuffleAtStart"] {
            guard let b = QueueItJSON.bool(v) else { throw E(field: "\(path).shuffleAtStart", message: "must be true or false") }
            room.shuffleAtStart = b
        }
        if let v = r["seed"] {
            guard let n = QueueItJSON.number(v), n.isFinite, n >= 0, n == n.rounded(), n < 9.0e15 else {
                throw E(field: "\(path).seed", message: "must be an integer ≥ 0")
            }
            room.seed = UInt64(n)
        }
    }

    /// A room's scheduled start as its JSON keys (what an admin patch merges with).
    static func prequeueJSON(_ room: Room) -> [String: Any] {
        var o: [String: Any] = ["shuffleAtStart": room.shuffleAtStart, "seed": Double(room.seed)]
        if let startsAt = room.startsAt { o["startsAt"] = startsAt.timeIntervalSince1970 }
        return o
    }
}
