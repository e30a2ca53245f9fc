import Foundation

/// An emulator room's log of arrivals and admissions, keyed by the vendor's own visitor id (a
/// Queue-it queue id, a CrowdHandler token): what ``EmulatorAdmissionRecord`` is made of. A value
/// type the emulator keeps in its room state behind its own lock; O(1) per event.
///
/// Bounded: after ``limit`` visitors it records no more (the record says `truncated`), so a
/// long-running emulator does not grow without end; a reset of the emulator starts a new log.
package struct EmulatorAdmissionLog<Member: Hashable & Sendable>: Sendable {
    /// The most visitors a log records by default.
    package static var defaultLimit: Int { 250_000 }

    /// The most visitors this log records.
    package let limit: Int
    private var entries: [EmulatorAdmissionRecord.Entry] = []
    private var index: [Member: Int] = [:]
    private var admissions = 0
    private var truncated = false

    /// An empty log that records up to `limit` visitors.
    package init(limit: Int = defaultLimit) {
        self.limit = max(0, limit)
    }

    /// Records `member`'s arrival at `date`, held for the start (`prequeued`) or not. A member
    /// already recorded keeps its first arrival.
    package mutating func arrived(_ member: Member, at date: Date, prequeued: Bool) {
        guard index[member] == nil else { return }
        guard entries.count < limit else {
            truncated = true
            return
        }
        index[member] = entries.count
        entries.append(EmulatorAdmissionRecord.Entry(arrivedAt: date, prequeued: prequeued))
    }

    /// Records `member`'s admission at `date`: it takes the next place in the admission order.
    /// A member admitted before keeps its first admission; one never seen arriving is ignored.
    package mutating func admitted(_ member: Member, at date: Date) {
        guard let i = index[member], entries[i].admission == nil else { return }
        entries[i].admittedAt = date
        entries[i].admission = admissions
        admissions += 1
    }

    /// Visitors recorded.
    package var count: Int { entries.count }

    /// The record, for a room whose start is `startsAt` (shuffled or not).
    package func record(startsAt: Date?, shuffled: Bool) -> EmulatorAdmissionRecord {
        EmulatorAdmissionRecord(entries: entries, startsAt: startsAt, shuffled: shuffled, truncated: truncated)
    }
}
