import Foundation
import Testing
import WaitingRoom
import WaitingRoomLoad

/// Issue 30 §2: `load`'s fairness figures (order violations, the pre-start rank correlation and
/// its interval, accuracy from the start) and arrival patterns, as pure functions.
@Suite("load fairness figures")
struct LoadFairnessFiguresTests {
    typealias Figures = LoadFairnessFigures

    /// Inversions by brute force, O(n²), to check the merge sort against.
    static func bruteInversions(_ v: [Double]) -> Int {
        var n = 0
        for i in v.indices { for j in v.indices where i < j && v[i] > v[j] { n += 1 } }
        return n
    }

    @Test func inversionsMatchBruteForceAndIgnoreTies() {
        #expect(Figures.inversions([]) == 0 && Figures.inversions([1]) == 0)
        #expect(Figures.inversions([1, 2, 3, 4]) == 0)
        #expect(Figures.inversions([4, 3, 2, 1]) == 6)
        #expect(Figures.inversions([2, 2, 1]) == 2, "ties are no inversion, each 2 is ahead of the 1")
        var generator = SystemRandomNumberGenerator()
        for n in [2, 3, 7, 64, 257] {
            let values = (0..<n).map { _ in Double(Int.random(in: 0..<20, using: &generator)) }
            #expect(Figures.inversions(values) == Self.bruteInversions(values), "\(values)")
        }
    }

    @Test func orderViolationsCountPostStartPairsAdmittedOutOfArrivalOrder() {
        // post-start: arrivals 10, 11, 12, 13 admitted 0, 2, 1, 3: one pair (11, 12) out of order
        let post: [Figures.User] = [(10, 0), (11, 2), (12, 1), (13, 3)].map {
            Figures.User(arrival: $0.0, prequeued: false, admission: $0.1 + 100, admittedAt: $0.1 + 100)
        }
        // pre-start: admitted 0…3, one post-start user (admission 100) is not ahead of them
        let pre = (0..<4).map { Figures.User(arrival: Double($0), prequeued: true, admission: Double(3 - $0), admittedAt: 1) }
        let f = Figures(
            users: pre + post + [Figures.User(arrival: 20, prequeued: false, admission: nil, admittedAt: nil)],
            startAt: 1, rate: .unknown, source: "test")
        #expect(f.preStart == 4 && f.postStart == 5 && f.preStartAdmitted == 4 && f.postStartAdmitted == 4)
        #expect(f.orderViolations == 1 && f.postStartPairs == 6)
        #expect(f.postStartAheadOfPreStart == 0)
        #expect(f.preStartRankCorrelation.rho == -1, "admitted in reverse arrival order")
        // a post-start user admitted ahead of two pre-start ones
        let early = Figures(
            users: pre + [Figures.User(arrival: 9, prequeued: false, admission: 1.5, admittedAt: 1)],
            startAt: 1, rate: .unknown, source: "test")
        #expect(early.postStartAheadOfPreStart == 2)
    }

    /// Without an emulator's record, a user arrives when the vendor first answers it: users
    /// started together reach the vendor in an order of their own (in a burst against an
    /// emulator in another process, 87 % of pairs the other way round from their start).
    @Test func usersOwnTimesOrderArrivalsByTheVendorsFirstAnswer() {
        // 5 users started at the same moment; the vendor answered them in reverse and admitted them in that order
        let visits = (0..<5).map { index in
            Crowd.Visit(
                outcome: "passed", code: 200, waited: .seconds(10 + index), completed: true, started: .milliseconds(index),
                answered: .milliseconds(500 - 100 * index))
        }
        let admittedInAnswerOrder = visits.enumerated().map { index, visit in
            var reordered = visit
            reordered.waited = .seconds(20 - index)
            return reordered
        }
        let users = Figures.users(of: admittedInAnswerOrder, startAt: nil)
        #expect(users.map(\.arrival) == [0.5, 0.4, 0.3, 0.2, 0.1])
        let figures = Figures(users: users, startAt: nil, rate: .unknown, source: "test")
        #expect(figures.orderViolations == 0 && figures.postStartPairs == 10, "admitted in the order the vendor answered")
        // admitted in start order, against the answer order: every pair out of order
        #expect(Figures(users: Figures.users(of: visits, startAt: nil), startAt: nil, rate: .unknown, source: "test").orderViolations == 10)
        // a user whose first answer was its outcome (passed at once) arrived then
        let atOnce = Crowd.Visit(outcome: "passed", code: 200, waited: .milliseconds(30), completed: true, started: .seconds(2))
        #expect(abs(Figures.users(of: [atOnce], startAt: nil)[0].arrival - 2.03) < 1e-9)
        // before or after the start goes by when the user started
        #expect(
            Figures.users(of: [visits[0]], startAt: 0.2)[0].prequeued, "started at 0 s, first answered at 0.5 s: before a start at 0.2 s")
    }

    @Test func spearmanWithTiesAndFisherInterval() throws {
        let same = Figures.rankCorrelation([1, 2, 3, 4, 5], [10, 20, 30, 40, 50])
        #expect(same.rho == 1 && same.n == 5)
        // ties get mean ranks: x ranks 1.5 1.5 3 4, y ranks 1 2 3 4 → ρ = 0.9487
        let tied = try #require(Figures.rankCorrelation([1, 1, 2, 3], [1, 2, 3, 4]).rho)
        #expect(abs(tied - 0.948_683) < 1e-5)
        // ρ 0 (Σd² = n(n²−1)/6): the interval is ±tanh(1.96/√(n − 3))
        let zero = Figures.rankCorrelation([1, 2, 3, 4, 5], [2, 5, 3, 1, 4])
        #expect(abs(try #require(zero.rho)) < 1e-12)
        #expect(abs(try #require(zero.high) - tanh(1.959_964 / sqrt(2))) < 1e-9)
        #expect(abs(try #require(zero.low) + tanh(1.959_964 / sqrt(2))) < 1e-9)
        // near 1: the interval is asymmetric around ρ and inside (−1, 1]
        var y = (0..<103).map(Double.init)
        y.swapAt(0, 1)
        let high = Figures.rankCorrelation((0..<103).map(Double.init), y)
        let rho = try #require(high.rho)
        #expect(try #require(high.low) < rho && rho <= (try #require(high.high)) && (try #require(high.high)) <= 1)
        // too few
        let three = Figures.rankCorrelation([1, 2, 3], [3, 1, 2])
        #expect(three.rho != nil && three.low == nil && three.note.contains("n = 3 < 4"))
        #expect(Figures.rankCorrelation([1], [1]).rho == nil)
        #expect(Figures.rankCorrelation([1, 1, 1], [1, 2, 3]).note.hasPrefix("n/a"))
    }

    @Test func accuracyCountsFromTheStart() throws {
        // 2 a second from a start at 30 s, for 60 s
        let users = (1...120).map {
            Figures.User(arrival: Double($0), prequeued: false, admission: Double($0), admittedAt: 30 + Double($0) * 0.5)
        }
        let f = Figures(users: users, startAt: 30, rate: .init(perSecond: 2, source: "test"), source: "test")
        #expect(f.accuracy.minutes.count == 1)
        #expect(abs(try #require(f.accuracy.overall) - 1) < 1e-9)
        let text = f.text.joined(separator: "\n")
        #expect(text.contains("sale start +30.0 s") && text.contains("order violations among post-start arrivals: 0 of 7140 pairs"))
        #expect(text.contains("1.00 overall against 120/min"))
        let json = try #require(f.json.objectValue)
        #expect(json["startAtSeconds"] == .number(30))
        #expect(json["postStart"]?.objectValue?["orderViolations"] == .number(0))
    }

    @Test func arrivalPatterns() throws {
        #expect(LoadArrivals(spelling: "burst") == .burst)
        #expect(LoadArrivals(spelling: "uniform:10") == .uniform(seconds: 10))
        #expect(LoadArrivals(spelling: "poisson:2.5") == .poisson(perSecond: 2.5))
        for bad in ["", "uniform", "uniform:-1", "poisson:0", "poisson:x", "steady:3", "poisson:1e-20", "poisson:0.0009", "poisson:nan"] {
            #expect(LoadArrivals(spelling: bad) == nil, "\(bad)")
        }
        #expect(LoadArrivals.burst.offsets(count: 3, seed: 1) == [0, 0, 0])
        #expect(LoadArrivals.uniform(seconds: 10).offsets(count: 4, seed: 1) == [0, 2.5, 5, 7.5])
        let poisson = LoadArrivals.poisson(perSecond: 50).offsets(count: 20_000, seed: 7)
        #expect(poisson == LoadArrivals.poisson(perSecond: 50).offsets(count: 20_000, seed: 7), "seeded")
        #expect(poisson != LoadArrivals.poisson(perSecond: 50).offsets(count: 20_000, seed: 8))
        #expect(zip(poisson, poisson.dropFirst()).allSatisfy { $0 <= $1 })
        let last = try #require(poisson.last)
        let rate = Double(poisson.count) / last
        #expect(abs(rate - 50) < 2, "mean rate \(rate)/s")
        #expect(LoadSaleStart(spelling: "+30")?.seconds == 30 && LoadSaleStart(spelling: "5")?.seconds == 5)
        #expect(LoadSaleStart(spelling: "+x") == nil && LoadSaleStart(spelling: "-3") == nil)
    }
}
