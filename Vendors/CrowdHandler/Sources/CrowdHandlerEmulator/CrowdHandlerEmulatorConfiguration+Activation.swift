import Foundation
import WaitingRoomEmulatorKit

extension CrowdHandlerEmulatorConfiguration {
    /// A `queueActivatesOn` as the emulator keeps it: milliseconds since 1970 as digits. Digits
    /// are kept as they are; an ISO 8601 date-time or `"+SECONDS"` (from `now`) becomes
    /// milliseconds; any other text is kept (a stamp that schedules nothing, as before).
    static func activationStamp(_ text: String?, now: Date) -> String? {
        guard let text else { return nil }
        if !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) { return text }
        guard let date = EmulatorScheduledStart.date(from: text, now: now) else { return text }
        return String(Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}

extension CrowdHandlerEmulatorConfiguration.Room {
    /// When the room's queue activates (``queueActivatesOn`` as milliseconds); nil when the
    /// stamp is not a time.
    package var queueActivatesAt: Date? {
        guard let ms = Double(queueActivatesOn), ms.isFinite else { return nil }
        return EmulatorScheduledStart.date(unixSeconds: ms / 1000)
    }
}
