import Foundation
import Testing
import WaitingRoom
import WaitingRoomEmulatorKit
import WaitingRoomEmulators
import WaitingRoomLoad

/// Issue 28 §4: `load`'s operators' figures (inflow, outflow, expected vs actual wait, admission
/// accuracy): the pure functions (`load --json` and `--report` on the embedded emulator: LoadCommandTests).
@Suite("load operators' figures")
struct LoadOperatorFiguresTests {
    typealias Figures = LoadOperatorFigures

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    static func visit(_ outcome: String, start: Double, waited: Double, expected: (wait: Double, shownAt: Double)? = nil) -> Crowd.Visit {
        Crowd.Visit(
            outcome: outcome, code: 200, waited: .milliseconds(Int64(waited * 1000)), completed: true,
            started: .milliseconds(Int64(start * 1000)),
            expectation: expected.map { ExpectedWait(wait: $0.wait, shownAt: $0.shownAt) })
    }

    // MARK: pure figures

    @Test func flowCountsPerWholeSecondAndMeansOverTheRun() {
        let flow = Figures.flow(times: [0.1, 0.2, 1.5, 3.9], runSeconds: 4)
        #expect(flow == Figures.Flow(total: 4, perSecond: [2, 1, 0, 1], meanPerSecond: 1))
        let late = Figures.flow(times: [5.5], runSeconds: 2)
        #expect(late.perSecond == [0, 0, 0, 0, 0, 1], "the series reaches the last time even past the run's length")
        #expect(Figures.flow(times: [], runSeconds: 0) == Figures.Flow(total: 0, perSecond: [0], meanPerSecond: 0))
    }

    @Test func spreadIsNearestRankLikeTheHistogram() throws {
        let spread = try #require(Figures.spread((1...100).map(Double.init)))
        #expect(spread == Figures.Spread(p50: 50, p90: 90, p99: 99, mean: 50.5))
        #expect(Figures.spread([]) == nil)
        var histogram = LatencyHistogram()
        for ms in [30, 10, 20, 400, 50] { histogram.add(.milliseconds(ms)) }
        let same = try #require(Figures.spread(histogram.samples))
        #expect(same.p50 == histogram.percentile(50) && same.p90 == histogram.percentile(90) && same.p99 == histogram.percentile(99))
    }

    @Test func waitErrorIsActualMinusExpectedFromWhenItWasShown() throws {
        let visits = [
            Self.visit("passed", start: 0, waited: 10, expected: (wait: 8, shownAt: 1)),  // had 9, told 8: +1
            Self.visit("passed", start: 0, waited: 4, expected: (wait: 6, shownAt: 0)),  // had 4, told 6: −2
            Self.visit("blocked", start: 0, waited: 3, expected: (wait: 5, shownAt: 0)),  // shown, never passed
            Self.visit("passed", start: 2, waited: 1)  // passed without being shown one
        ]
        let figures = Figures(visits: visits, runSeconds: 10, rate: .unknown)
        #expect(figures.wait.usersWithExpectation == 3)
        #expect(figures.wait.compared == 2)
        let error = try #require(figures.wait.error)
        #expect(error.p50 == -2 && error.p99 == 1 && error.mean == -0.5)
        #expect(figures.wait.expected?.p99 == 8 && figures.wait.actual?.p99 == 9)
        #expect(figures.inflow.total == 4 && figures.inflow.perSecond.reduce(0, +) == 4)
        #expect(figures.outflow.total == 3 && figures.outflow.perSecond[3] == 1 && figures.outflow.perSecond[4] == 1)
        #expect(figures.admission.configuredPerMinute == nil && figures.admission.overall == nil)
        #expect(figures.admission.source.hasPrefix("n/a"))
    }

    @Test func admissionAccuracyIsAdmittedPerMinuteOverTheConfiguredRate() throws {
        let rate = Figures.RoomRate(perSecond: 2, source: "test")
        // 2 a second for 130 s: the 10 s remainder joins the second minute
        let even = (1...260).map { Double($0) * 0.5 }
        let accuracy = Figures.admissionAccuracy(admissions: even, rate: rate)
        #expect(accuracy.configuredPerMinute == 120)
        #expect(accuracy.minutes.map(\.minute) == [1, 2])
        #expect(accuracy.minutes.map(\.seconds) == [60, 70])
        #expect(accuracy.minutes.map(\.admitted) == [119, 141], "[0, 60) then [60, 130], the last admission included")
        #expect(accuracy.minutes.map(\.expected) == [120, 140])
        #expect(abs(try #require(accuracy.overall) - 1) < 1e-9)
        // half the rate in the first minute, then 20 s at the full rate
        let firstMinute: [Double] = (1...60).map { Double($0) }
        let twentySeconds: [Double] = (1...40).map { 60 + Double($0) * 0.5 }
        let second = Figures.admissionAccuracy(admissions: firstMinute + twentySeconds, rate: rate)
        let ratios: [Double] = [59.0 / 120, 41.0 / 40]
        #expect(second.minutes.map(\.accuracy) == ratios)
        // n/a: no rate, a zero rate, nobody admitted
        #expect(Figures.admissionAccuracy(admissions: even, rate: .unknown).overall == nil)
        #expect(Figures.admissionAccuracy(admissions: even, rate: .init(perSecond: 0, source: "n/a: closed")).minutes.isEmpty)
        let none = Figures.admissionAccuracy(admissions: [], rate: rate)
        #expect(none.overall == nil && none.configuredPerMinute == 120)
    }

    @Test func theRoomRateComesFromTheEmulatorWhenItIsConfigured() {
        func room(_ name: String, rate: Double, note: String, limit: Double? = nil, state: String = "queue") -> Figures.EmulatedRoom {
            Figures.EmulatedRoom(
                key: RoomKey(scope: "s", room: name), state: state, rate: rate, rateNote: note, limit: limit,
                limitNote: "users inside")
        }
        let rooms = [
            room("queue", rate: 0.5, note: "admissions/s (configured 30/min)"),
            room("measured", rate: 3, note: "admissions/s over 10 s", limit: 10),
            room("open", rate: 0, note: "admissions/s (configured)", state: "safetynet")
        ]
        func rate(_ scope: String, _ name: String) -> Figures.RoomRate {
            Figures.roomRate(vendor: "Vendor", rooms: rooms, room: RoomKey(scope: scope, room: name))
        }
        #expect(rate("s", "queue").perSecond == 0.5)
        #expect(rate("other", "queue").perSecond == 0.5, "by room name")
        let measured = rate("s", "measured")
        #expect(measured.perSecond == nil && measured.source.hasPrefix("n/a") && measured.source.contains("users inside"))
        #expect(rate("s", "open").perSecond == nil)
        #expect(rate("s", "missing").source.hasPrefix("n/a"))
    }

    @Test func anExpectedWaitPacksIntoOneWordAndTheFirstOneStays() {
        let zero = ExpectedWait(wait: 0, shownAt: 0)
        #expect(zero.packed != 0, "a zero wait shown at zero is still something")
        #expect(ExpectedWait(packed: zero.packed) == zero)
        let some = ExpectedWait(wait: 25, shownAt: 3600.25)
        #expect(ExpectedWait(packed: some.packed) == some)
        #expect(ExpectedWait(packed: 0) == nil)
        #expect(ExpectedWait(wait: -1, shownAt: -2) == zero, "negative figures clamp to 0")
        let probe = ExpectedWaitProbe()
        #expect(probe.value == nil)
        probe.record(eta: .seconds(30), shownAt: .milliseconds(500))
        probe.record(eta: .seconds(5), shownAt: .seconds(9))
        #expect(probe.value == ExpectedWait(wait: 30, shownAt: 0.5))
    }

    @Test func theJSONAndTheReportSectionCarryTheFigures() throws {
        let visits = [
            Self.visit("passed", start: 0, waited: 2.5, expected: (wait: 2, shownAt: 0)),
            Self.visit("passed", start: 0, waited: 1.5)
        ]
        let figures = Figures(visits: visits, runSeconds: 3, rate: .init(perSecond: 1, source: "configured in a test"))
        let json = figures.json
        #expect(json["inflow"]?.objectValue?["total"] == .number(2))
        #expect(json["outflow"]?.objectValue?["perSecond"] == .array([.number(0), .number(1), .number(1)]))
        #expect(json["expectedWait"]?.objectValue?["error"]?.objectValue?["p50"] == .number(0.5))
        #expect(json["admissionAccuracy"]?.objectValue?["configuredPerMinute"] == .number(60))
        #expect(json["admissionAccuracy"]?.objectValue?["overall"] == .number(0.8), "2 admitted by 2.5 s at 1/s")
        let html = LoadReportOperators.section(figures)
        #expect(html.contains("Operators' view") && html.contains("id=\"op-minutes\"") && html.contains("+500 ms"))
        let none = LoadReportOperators.section(Figures(visits: [Self.visit("passed", start: 0, waited: 1)], runSeconds: 1, rate: .unknown))
        #expect(none.contains("n/a: no embedded emulator"), "accuracy says n/a and why")
        #expect(none.contains("n/a: no user who passed had been shown an expected wait"))
    }

    // MARK: load --json and --report

    /// Users who arrive after others passed, with a `--state` store, still queue each for
    /// themselves: the store journals keys and session leases, not passes they could share
    /// (once, 17 of 20 "passed" on a pass another user had stored, in under a millisecond).
}
