import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// What an operator reads off a load run, in the words of Queue-it's statistics pages (shared by
/// `--json` and `--report`):
///
/// - **inflow**: users arriving (enqueued) per second over the run, and the mean;
/// - **outflow**: users admitted (passed) per second, and the mean;
/// - **expected vs actual wait**: the first wait the vendor showed each user (a progress event's
///   ETA) against how long that user then actually waited (from being shown it to passing), and
///   the distribution of the error, actual − expected;
/// - **admission accuracy**: users admitted per minute ÷ the room's configured rate (n/a when the
///   room has none, or no embedded emulator said what it is).
///
/// Computed from the users' own times (``Crowd/Visit``), so they hold for an emulator and a real
/// URL alike; only the configured rate comes from the emulator.
package struct LoadOperatorFigures: Sendable, Equatable {
    /// Users per second over the run.
    package struct Flow: Sendable, Equatable {
        /// Users in all.
        package var total: Int
        /// Users in each whole second of the run: [0 s, 1 s), [1 s, 2 s), …
        package var perSecond: [Int]
        /// `total` ÷ the run's length in seconds.
        package var meanPerSecond: Double

        /// A flow of `total` users, `perSecond` in each second, `meanPerSecond` on average.
        package init(total: Int, perSecond: [Int], meanPerSecond: Double) {
            self.total = total
            self.perSecond = perSecond
            self.meanPerSecond = meanPerSecond
        }
    }

    /// A distribution in seconds: nearest-rank percentiles (as ``LatencyHistogram``) and the mean.
    package struct Spread: Sendable, Equatable {
        /// The median.
        package var p50: Double
        /// The 90th percentile.
        package var p90: Double
        /// The 99th percentile.
        package var p99: Double
        /// The mean.
        package var mean: Double

        /// A spread of these percentiles and mean.
        package init(p50: Double, p90: Double, p99: Double, mean: Double) {
            self.p50 = p50
            self.p90 = p90
            self.p99 = p99
            self.mean = mean
        }
    }

    /// The waits the vendor showed against the waits users had.
    package struct WaitAccuracy: Sendable, Equatable {
        /// Users shown an expected wait (whatever their outcome).
        package var usersWithExpectation: Int
        /// Users shown one who then passed: the ones compared below.
        package var compared: Int
        /// The waits shown (nil: none compared).
        package var expected: Spread?
        /// The waits had, from being shown the expectation to passing.
        package var actual: Spread?
        /// actual − expected: positive when users waited longer than they were told.
        package var error: Spread?
    }

    /// The room's configured admission rate, or why there is none.
    package struct RoomRate: Sendable, Equatable {
        /// Admissions per second; nil: unknown (admission accuracy is n/a).
        package var perSecond: Double?
        /// Where the rate comes from, or why it is n/a.
        package var source: String

        /// A rate of `perSecond` admissions a second (nil: unknown), from `source`.
        package init(perSecond: Double?, source: String) {
            self.perSecond = perSecond
            self.source = source
        }

        /// No embedded emulator: nothing says what the room's rate is.
        package static let unknown = RoomRate(
            perSecond: nil, source: "n/a: no embedded emulator served the run, so the room's configured rate is unknown")
    }

    /// Admissions in one minute of the run against the configured rate.
    package struct MinuteAccuracy: Sendable, Equatable {
        /// 1 for the first minute.
        package var minute: Int
        /// The window's length: 60, or what remains of the run in the last one.
        package var seconds: Double
        /// Users admitted in the window.
        package var admitted: Int
        /// The configured rate over the window.
        package var expected: Double
        /// `admitted` ÷ `expected`.
        package var accuracy: Double
    }

    /// Admitted per minute ÷ the configured rate.
    package struct AdmissionAccuracy: Sendable, Equatable {
        /// The configured rate per minute; nil: n/a.
        package var configuredPerMinute: Double?
        /// Where the rate comes from, or why accuracy is n/a.
        package var source: String
        /// One entry per minute, from the start of the run to the last admission.
        package var minutes: [MinuteAccuracy]
        /// All admissions ÷ the rate over the same span; nil: n/a.
        package var overall: Double?
    }

    /// Users arriving per second.
    package var inflow: Flow
    /// Users admitted per second.
    package var outflow: Flow
    /// The waits users were shown against the waits they had.
    package var wait: WaitAccuracy
    /// Admissions per minute against the room's configured rate.
    package var admission: AdmissionAccuracy

    /// The figures of `visits`, over a run of `runSeconds`, against `rate`.
    package init(visits: [Crowd.Visit], runSeconds: Double, rate: RoomRate) {
        let span = max(runSeconds, visits.map(\.outcomeAt).max() ?? 0)
        let passed = visits.filter { $0.outcome == "passed" }
        inflow = Self.flow(times: visits.map(\.enqueuedAt), runSeconds: span)
        outflow = Self.flow(times: passed.map(\.outcomeAt), runSeconds: span)
        let compared = passed.compactMap { visit in
            visit.expectation.map { (expected: Double($0.wait), actual: visit.outcomeAt - Double($0.shownAt)) }
        }
        wait = Self.waitAccuracy(usersWithExpectation: visits.filter { $0.expectation != nil }.count, compared: compared)
        admission = Self.admissionAccuracy(admissions: passed.map(\.outcomeAt), rate: rate)
    }

    /// Counts `times` (seconds from the start) per whole second of a run of `runSeconds`.
    package static func flow(times: [Double], runSeconds: Double) -> Flow {
        let span = max(runSeconds, times.max() ?? 0)
        var perSecond = Array(repeating: 0, count: max(1, Int(span.rounded(.up))))
        for t in times { perSecond[min(perSecond.count - 1, max(0, Int(t)))] += 1 }
        return Flow(total: times.count, perSecond: perSecond, meanPerSecond: span > 0 ? Double(times.count) / span : 0)
    }

    /// The nearest-rank p50, p90, p99 and the mean of `values`; nil when there are none.
    package static func spread(_ values: [Double]) -> Spread? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func rank(_ p: Double) -> Double {
            sorted[min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))]
        }
        return Spread(p50: rank(50), p90: rank(90), p99: rank(99), mean: sorted.reduce(0, +) / Double(sorted.count))
    }

    /// Expected against actual waits (seconds), per passed user shown an expectation.
    package static func waitAccuracy(usersWithExpectation: Int, compared: [(expected: Double, actual: Double)]) -> WaitAccuracy {
        WaitAccuracy(
            usersWithExpectation: usersWithExpectation, compared: compared.count,
            expected: spread(compared.map(\.expected)), actual: spread(compared.map(\.actual)),
            error: spread(compared.map { $0.actual - $0.expected }))
    }

    /// A remainder of the last minute shorter than this joins the minute before it (a few
    /// seconds' window would make a noisy ratio).
    package static let shortestWindow = 15.0

    /// Admissions (seconds from the start) per minute ÷ `rate`, over the run up to the last
    /// admission; n/a when the rate is unknown or zero.
    package static func admissionAccuracy(admissions: [Double], rate: RoomRate) -> AdmissionAccuracy {
        guard let perSecond = rate.perSecond, perSecond > 0 else {
            return AdmissionAccuracy(configuredPerMinute: nil, source: rate.source, minutes: [], overall: nil)
        }
        let end = admissions.max() ?? 0
        guard end > 0 else {
            return AdmissionAccuracy(configuredPerMinute: perSecond * 60, source: rate.source, minutes: [], overall: nil)
        }
        var bounds: [(Double, Double)] = []
        var start = 0.0
        while start < end {
            let stop = min(start + 60, end)
            if stop - start < shortestWindow, let last = bounds.popLast() {
                bounds.append((last.0, stop))
            } else {
                bounds.append((start, stop))
            }
            start = stop
        }
        let minutes = bounds.enumerated().map { index, window in
            let isLast = index == bounds.count - 1
            let admitted = admissions.filter { $0 >= window.0 && ($0 < window.1 || (isLast && $0 <= window.1)) }.count
            let expected = perSecond * (window.1 - window.0)
            return MinuteAccuracy(
                minute: index + 1, seconds: window.1 - window.0, admitted: admitted, expected: expected,
                accuracy: Double(admitted) / expected)
        }
        return AdmissionAccuracy(
            configuredPerMinute: perSecond * 60, source: rate.source, minutes: minutes,
            overall: Double(admissions.count) / (perSecond * end))
    }

    /// The room's configured rate in an emulator's status (``roomRate(vendor:rooms:room:)``).
    package static func roomRate(in status: EmulatorStatus, room: RoomKey) -> RoomRate {
        roomRate(vendor: status.displayName, rooms: status.rooms.map(EmulatedRoom.init), room: room)
    }

    /// What ``roomRate(vendor:rooms:room:)`` reads of an emulator's room
    /// (``WaitingRoomEmulatorKit/EmulatorStatus/Room``).
    package struct EmulatedRoom: Sendable, Equatable {
        package var key: RoomKey
        package var state: String
        /// Admissions per second, measured or configured (see `rateNote`).
        package var rate: Double
        /// What `rate` is: `configured` in it when the room's configuration sets it.
        package var rateNote: String
        package var limit: Double?
        package var limitNote: String

        package init(key: RoomKey, state: String, rate: Double, rateNote: String, limit: Double? = nil, limitNote: String = "") {
            self.key = key
            self.state = state
            self.rate = rate
            self.rateNote = rateNote
            self.limit = limit
            self.limitNote = limitNote
        }

        package init(_ room: EmulatorStatus.Room) {
            self.init(
                key: room.key, state: room.state, rate: room.rate, rateNote: room.rateNote, limit: room.limit, limitNote: room.limitNote)
        }
    }

    /// The configured rate of `room` among a `vendor` emulator's `rooms` (matched by key, else by
    /// room name): its rate when the status says it is configured and the room is admitting; else
    /// n/a, saying why (NetFUNNEL limits users inside, and measures its rate).
    package static func roomRate(vendor: String, rooms: [EmulatedRoom], room: RoomKey) -> RoomRate {
        guard let found = rooms.first(where: { $0.key == room }) ?? rooms.first(where: { $0.key.room == room.room }) else {
            return RoomRate(perSecond: nil, source: "n/a: the emulator has no room \(room)")
        }
        guard found.rateNote.contains("configured") else {
            return RoomRate(
                perSecond: nil,
                source: "n/a: \(vendor) \(found.key) has no configured admission rate "
                    + "(its rate is \(found.rateNote)" + (found.limit == nil ? ")" : "; its limit is \(found.limitNote))"))
        }
        guard found.rate > 0 else {
            return RoomRate(perSecond: nil, source: "n/a: \(vendor) \(found.key) is not admitting at a rate (state \(found.state))")
        }
        return RoomRate(perSecond: found.rate, source: "\(vendor) emulator, room \(found.key): \(found.rateNote)")
    }
}
