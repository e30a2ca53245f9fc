import Foundation

/// What an emulator saw of one room's visitors, for fairness figures (`waitingroom load`): when
/// each arrived (in the order the emulator received them), whether it arrived before a scheduled
/// start and was held in the pre-queue (``EmulatorPreQueue``), and when and in which place it was
/// admitted. Times are the emulator's injected clock.
public struct EmulatorAdmissionRecord: Sendable, Equatable {
    /// One visitor.
    public struct Entry: Sendable, Equatable {
        /// When the emulator received the visitor's first request.
        public var arrivedAt: Date
        /// Whether it arrived before the scheduled start and was held for it.
        public var prequeued: Bool
        /// When the emulator admitted it (nil: not admitted yet).
        public var admittedAt: Date?
        /// Its place in the room's admission order, from 0 (nil: not admitted yet).
        public var admission: Int?

        public init(arrivedAt: Date, prequeued: Bool, admittedAt: Date? = nil, admission: Int? = nil) {
            self.arrivedAt = arrivedAt
            self.prequeued = prequeued
            self.admittedAt = admittedAt
            self.admission = admission
        }
    }

    /// The visitors in the order the emulator received them.
    public var entries: [Entry]
    /// The room's scheduled start (nil: none).
    public var startsAt: Date?
    /// Whether the pre-queue is shuffled at the start.
    public var shuffled: Bool
    /// Whether visitors arrived after the record was full (``EmulatorAdmissionLog/limit``) and
    /// are missing from it.
    public var truncated: Bool

    public init(entries: [Entry], startsAt: Date?, shuffled: Bool, truncated: Bool = false) {
        self.entries = entries
        self.startsAt = startsAt
        self.shuffled = shuffled
        self.truncated = truncated
    }
}
