import Foundation

/// What an emulator saw of one room's visitors, for fairness figures (`waitingroom load`): when
/// each arrived (in the order the emulator received them), whether it arrived before a scheduled
/// start and was held in the pre-queue (``EmulatorPreQueue``), and when and in which place it was
/// admitted. Times are the emulator's injected clock.
package struct EmulatorAdmissionRecord: Sendable, Equatable {
    /// One visitor.
    package struct Entry: Sendable, Equatable {
        /// When the emulator received the visitor's first request.
        package var arrivedAt: Date
        /// Whether it arrived before the scheduled start and was held for it.
        package var prequeued: Bool
        /// When the emulator admitted it (nil: not admitted yet).
        package var admittedAt: Date?
        /// Its place in the room's admission order, from 0 (nil: not admitted yet).
        package var admission: Int?

        package init(arrivedAt: Date, prequeued: Bool, admittedAt: Date? = nil, admission: Int? = nil) {
            self.arrivedAt = arrivedAt
            self.prequeued = prequeued
            self.admittedAt = admittedAt
            self.admission = admission
        }
    }

    /// The visitors in the order the emulator received them.
    package var entries: [Entry]
    /// The room's scheduled start (nil: none).
    package var startsAt: Date?
    /// Whether the pre-queue is shuffled at the start.
    package var shuffled: Bool
    /// Whether visitors arrived after the record was full (``EmulatorAdmissionLog/limit``) and
    /// are missing from it.
    package var truncated: Bool

    package init(entries: [Entry], startsAt: Date?, shuffled: Bool, truncated: Bool = false) {
        self.entries = entries
        self.startsAt = startsAt
        self.shuffled = shuffled
        self.truncated = truncated
    }
}
