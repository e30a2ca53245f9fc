import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

extension NetFUNNELEmulatorConfiguration.Segment {
    /// Reads a segment's scheduled start (`startsAt`: an ISO 8601 date-time, Unix seconds or
    /// `"+SECONDS"` from `now`, `null` for none; `shuffleAtStart`; `seed`), keys not given keep
    /// their values.
    mutating func readSchedule(_ reader: ConfigurationReader, now: Date) throws {
        switch reader.object["startsAt"] {
        case nil:
            break
        case .null?:
            startsAt = nil
        case .string(let text)?:
            guard let date = EmulatorScheduledStart.date(from: text, now: now) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: reader.fieldName("startsAt"), "'\(text)' is not \(EmulatorScheduledStart.expected)", vendor: "netfunnel")
            }
            startsAt = date
        case .number(let seconds)?:
            guard let date = EmulatorScheduledStart.date(unixSeconds: seconds) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: reader.fieldName("startsAt"), "must be \(EmulatorScheduledStart.expected)", vendor: "netfunnel")
            }
            startsAt = date
        default:
            throw WaitingRoomError.invalidConfiguration(
                field: reader.fieldName("startsAt"), "must be \(EmulatorScheduledStart.expected)", vendor: "netfunnel")
        }
        if let shuffle = try reader.bool("shuffleAtStart") { shuffleAtStart = shuffle }
        if let value = try reader.double("seed", range: 0...9.0e15) {
            guard value == value.rounded() else {
                throw WaitingRoomError.invalidConfiguration(field: reader.fieldName("seed"), "must be an integer ≥ 0", vendor: "netfunnel")
            }
            seed = UInt64(value)
        }
    }

    /// The scheduled start as the segment's JSON keys (`startsAt` written back as ISO 8601).
    var scheduleJSON: [String: JSONValue] {
        var object: [String: JSONValue] = ["shuffleAtStart": .bool(shuffleAtStart), "seed": .number(Double(seed))]
        if let startsAt { object["startsAt"] = .string(EmulatorScheduledStart.text(startsAt)) }
        return object
    }
}
