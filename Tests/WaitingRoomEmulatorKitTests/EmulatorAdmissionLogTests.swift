import Foundation
import Testing
import WaitingRoomEmulatorKit

/// Issue 30 §2: the kit's admission log, what `load`'s fairness figures read; and the scheduled
/// start's JSON forms.
@Suite("EmulatorAdmissionLog and EmulatorScheduledStart")
struct EmulatorAdmissionLogTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func arrivalsInOrderAdmissionsNumberedOnceAndBounded() {
        var log = EmulatorAdmissionLog<String>(limit: 3)
        log.arrived("a", at: Self.t0, prequeued: true)
        log.arrived("b", at: Self.t0.addingTimeInterval(1), prequeued: false)
        log.arrived("a", at: Self.t0.addingTimeInterval(2), prequeued: false)  // kept its first arrival
        log.admitted("b", at: Self.t0.addingTimeInterval(3))
        log.admitted("a", at: Self.t0.addingTimeInterval(4))
        log.admitted("a", at: Self.t0.addingTimeInterval(5))  // kept its first admission
        log.admitted("ghost", at: Self.t0)  // never arrived: ignored
        log.arrived("c", at: Self.t0, prequeued: false)
        log.arrived("d", at: Self.t0, prequeued: false)  // past the limit
        let record = log.record(startsAt: Self.t0, shuffled: true)
        #expect(record.entries.map(\.prequeued) == [true, false, false])
        #expect(record.entries.map(\.admission) == [1, 0, nil])
        #expect(record.entries[0].admittedAt == Self.t0.addingTimeInterval(4))
        #expect(record.truncated && record.shuffled && record.startsAt == Self.t0)
    }

    @Test func scheduledStartForms() {
        let now = Self.t0
        #expect(EmulatorScheduledStart.date(from: "+30", now: now) == now.addingTimeInterval(30))
        #expect(EmulatorScheduledStart.date(from: "1800000000", now: now) == Self.t0)
        #expect(EmulatorScheduledStart.date(from: "2027-01-15T08:00:00Z", now: now) == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(EmulatorScheduledStart.date(from: "2027-01-15T08:00:00.500Z", now: now) == Date(timeIntervalSince1970: 1_800_000_000.5))
        for bad in ["", "+", "+x", "+-3", "soon", "2027-13-45"] {
            #expect(EmulatorScheduledStart.date(from: bad, now: now) == nil, "\(bad)")
        }
        let text = EmulatorScheduledStart.text(Self.t0)
        #expect(EmulatorScheduledStart.date(from: text, now: now) == Self.t0)
    }
}
