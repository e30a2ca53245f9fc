import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// How fair a load run's admissions were, for scheduled sales (issue 30 §2): users who arrive
/// before the sale's start should be admitted in an order unrelated to how early they came (the
/// vendor shuffles its pre-queue), users who arrive after it first come first served.
///
/// - **order violations** among post-start arrivals: the pairs of users who both arrived after
///   the start and were both admitted, where the one that arrived first was admitted after the
///   other (an inversion; pairs tied in arrival or admission do not count). Goal 0. Counted in
///   O(n log n) by merge sort. Also counted: post-start users admitted ahead of a pre-start one
///   (goal 0: the shuffled pre-queue goes first).
/// - **rank correlation** of the pre-start arrivals' admission order with their arrival order:
///   Spearman's ρ (Pearson's r of the ranks, ties given their mean rank), goal ≈ 0, with a 95%
///   confidence interval from Fisher's z (atanh ρ ± 1.96/√(n − 3)), for n ≥ 4 admitted pre-start
///   users (fewer: n/a, said so).
/// - **admission accuracy** per minute from the start against the room's configured rate
///   (``LoadOperatorFigures/admissionAccuracy(admissions:rate:)``, counted from the start).
///
/// Source: with an embedded emulator that records its rooms (``EmulatorFairnessSource``), the
/// order in which the emulator received and admitted the users and the moments it admitted them
/// (exact: the vendor can only be first come first served by what it receives). Otherwise the
/// users' own times: when the vendor first answered each, and when it saw its pass — users
/// admitted within one poll interval of each other may then be seen out of order, so violations
/// are an upper bound.
package struct LoadFairnessFigures: Sendable, Equatable {
    /// One user, as the source saw it.
    package struct User: Sendable, Equatable {
        /// When (or in which order) it arrived: only the order matters.
        package var arrival: Double
        /// Whether it arrived before the start (held in the pre-queue).
        package var prequeued: Bool
        /// When (or in which place) it was admitted: only the order matters (nil: not admitted).
        package var admission: Double?
        /// When it was admitted, in seconds from the run's start (nil: not admitted).
        package var admittedAt: Double?

        /// A user who arrived at `arrival` (before the start when `prequeued`), admitted at `admission` (nil: not admitted).
        package init(arrival: Double, prequeued: Bool, admission: Double?, admittedAt: Double?) {
            self.arrival = arrival
            self.prequeued = prequeued
            self.admission = admission
            self.admittedAt = admittedAt
        }
    }

    /// Spearman's ρ with its 95% confidence interval.
    package struct RankCorrelation: Sendable, Equatable {
        /// Users compared.
        package var n: Int
        /// Spearman's ρ (nil: n/a, `note` says why).
        package var rho: Double?
        /// The 95% confidence interval (nil: n < 4, or no ρ).
        package var low: Double?
        /// The interval's upper end.
        package var high: Double?
        /// Why a figure is n/a, or empty.
        package var note: String
    }

    /// Where the figures come from.
    package var source: String
    /// The sale's start in seconds from the run's start (nil: no scheduled start).
    package var startAt: Double?
    /// Users recorded before and after the start, and how many of each were admitted.
    package var preStart: Int
    /// Users recorded after the start.
    package var postStart: Int
    /// Pre-start users admitted.
    package var preStartAdmitted: Int
    /// Post-start users admitted.
    package var postStartAdmitted: Int
    /// Pairs of admitted post-start users compared, and those admitted out of arrival order.
    package var postStartPairs: Int
    /// Pairs of post-start users admitted out of arrival order (goal 0).
    package var orderViolations: Int
    /// Pairs (pre-start user, post-start user) where the post-start one was admitted first.
    package var postStartAheadOfPreStart: Int
    /// Pre-start users' admission order against their arrival order.
    package var preStartRankCorrelation: RankCorrelation
    /// Admissions per minute from the start against the room's configured rate.
    package var accuracy: LoadOperatorFigures.AdmissionAccuracy

    /// The figures of `users`, for a sale starting `startAt` seconds into the run, against `rate`.
    package init(users: [User], startAt: Double?, rate: LoadOperatorFigures.RoomRate, source: String) {
        self.source = source
        self.startAt = startAt
        let pre = users.filter(\.prequeued)
        let post = users.filter { !$0.prequeued }
        preStart = pre.count
        postStart = post.count
        let preAdmitted = pre.compactMap { u in u.admission.map { (arrival: u.arrival, admission: $0) } }
        let postAdmitted = post.compactMap { u in u.admission.map { (arrival: u.arrival, admission: $0) } }
        preStartAdmitted = preAdmitted.count
        postStartAdmitted = postAdmitted.count
        postStartPairs = postAdmitted.count * max(0, postAdmitted.count - 1) / 2
        let byArrival = postAdmitted.sorted { ($0.arrival, $0.admission) < ($1.arrival, $1.admission) }
        orderViolations = Self.inversions(byArrival.map(\.admission))
        postStartAheadOfPreStart = Self.pairsAhead(postAdmitted.map(\.admission), of: preAdmitted.map(\.admission))
        preStartRankCorrelation = Self.rankCorrelation(preAdmitted.map(\.arrival), preAdmitted.map(\.admission))
        let from = startAt ?? 0
        accuracy = LoadOperatorFigures.admissionAccuracy(
            admissions: users.compactMap(\.admittedAt).map { max(0, $0 - from) }, rate: rate)
    }

    /// The users of an emulator's record, with times from `origin` (the run's start).
    package static func users(of record: EmulatorAdmissionRecord, origin: Date) -> [User] {
        record.entries.enumerated().map { index, entry in
            User(
                arrival: Double(index), prequeued: entry.prequeued, admission: entry.admission.map(Double.init),
                admittedAt: entry.admittedAt.map { $0.timeIntervalSince(origin) })
        }
    }

    /// The users as they saw themselves: arrived when the vendor first answered them
    /// (``Crowd/Visit/answeredAt``: users started at once reach the vendor in an order of their
    /// own, in a run measured 87 % of pairs the other way round from their start), before or after
    /// the start by when they started, admitted when they saw their pass.
    package static func users(of visits: [Crowd.Visit], startAt: Double?) -> [User] {
        visits.map { visit in
            let passed = visit.outcome == "passed"
            return User(
                arrival: visit.answeredAt, prequeued: startAt.map { visit.enqueuedAt < $0 } ?? false,
                admission: passed ? visit.outcomeAt : nil, admittedAt: passed ? visit.outcomeAt : nil)
        }
    }

    /// Pairs i < j with `values[i] > values[j]` (strictly; ties are no inversion): merge sort.
    package static func inversions(_ values: [Double]) -> Int {
        var a = values
        var buffer = values
        var count = 0
        var width = 1
        while width < a.count {
            var start = 0
            while start < a.count {
                let mid = min(start + width, a.count)
                let end = min(start + 2 * width, a.count)
                var i = start
                var j = mid
                var k = start
                while i < mid && j < end {
                    if a[i] <= a[j] {
                        buffer[k] = a[i]
                        i += 1
                    } else {
                        buffer[k] = a[j]
                        j += 1
                        count += mid - i
                    }
                    k += 1
                }
                while i < mid {
                    buffer[k] = a[i]
                    i += 1
                    k += 1
                }
                while j < end {
                    buffer[k] = a[j]
                    j += 1
                    k += 1
                }
                start = end
            }
            swap(&a, &buffer)
            width *= 2
        }
        return count
    }

    /// Pairs (x in `values`, y in `others`) with x < y: how often a value comes before one of
    /// `others`. O((n + m) log m).
    package static func pairsAhead(_ values: [Double], of others: [Double]) -> Int {
        let sorted = others.sorted()
        return values.reduce(0) { total, x in
            var low = 0
            var high = sorted.count  // first index with sorted[i] > x
            while low < high {
                let mid = (low + high) / 2
                if sorted[mid] <= x { low = mid + 1 } else { high = mid }
            }
            return total + (sorted.count - low)
        }
    }

    /// Ranks from 1, ties given their mean rank.
    package static func ranks(_ values: [Double]) -> [Double] {
        let order = values.indices.sorted { values[$0] < values[$1] }
        var ranks = Array(repeating: 0.0, count: values.count)
        var i = 0
        while i < order.count {
            var j = i
            while j + 1 < order.count && values[order[j + 1]] == values[order[i]] { j += 1 }
            let mean = Double(i + j) / 2 + 1
            for k in i...j { ranks[order[k]] = mean }
            i = j + 1
        }
        return ranks
    }

    /// The smallest sample with a confidence interval (Fisher's z needs n − 3 > 0).
    package static let smallestSample = 4

    /// Spearman's ρ of `x` and `y` with its 95% confidence interval (Fisher's z).
    package static func rankCorrelation(_ x: [Double], _ y: [Double]) -> RankCorrelation {
        let n = x.count
        guard n >= 2 else {
            return RankCorrelation(
                n: n, rho: nil, low: nil, high: nil,
                note: "n/a: \(n) pre-start user\(n == 1 ? "" : "s") admitted (a correlation needs 2, its interval \(smallestSample))")
        }
        let rx = ranks(x)
        let ry = ranks(y)
        let mx = rx.reduce(0, +) / Double(n)
        let my = ry.reduce(0, +) / Double(n)
        var sxy = 0.0
        var sxx = 0.0
        var syy = 0.0
        for i in 0..<n {
            sxy += (rx[i] - mx) * (ry[i] - my)
            sxx += (rx[i] - mx) * (rx[i] - mx)
            syy += (ry[i] - my) * (ry[i] - my)
        }
        guard sxx > 0, syy > 0 else {
            return RankCorrelation(n: n, rho: nil, low: nil, high: nil, note: "n/a: every pre-start user has the same arrival or admission")
        }
        let rho = max(-1, min(1, sxy / (sxx * syy).squareRoot()))
        guard n >= smallestSample else {
            return RankCorrelation(
                n: n, rho: rho, low: nil, high: nil,
                note: "no confidence interval: n = \(n) < \(smallestSample) (Fisher's z needs n − 3 > 0)")
        }
        let z = atanh(max(-0.999_999, min(0.999_999, rho)))
        let half = 1.959_964 / Double(n - 3).squareRoot()
        return RankCorrelation(n: n, rho: rho, low: tanh(z - half), high: tanh(z + half), note: "")
    }
}
