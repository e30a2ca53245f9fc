import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// What a load run came to: outcomes, time to pass, and what the faults cost in keys.
public struct LoadSummary: Sendable {
    /// Virtual users started.
    public var users: Int
    /// The run's length, from the first user's start to the last outcome.
    public var wall: Duration
    /// What each user experienced, in the order they ended.
    package var visits: [Crowd.Visit]
    /// The client's background key returns.
    package var returns: PendingReturns.Statistics
    /// Background returns still running when the drain's bound passed.
    package var returnsLeft: Int
    /// Faults installed into the embedded emulator before the run.
    package var faultsInstalled: Int
    /// The emulator's own figures, when it served the run (``EmulatedVendor/loadFigures()``).
    package var emulator: EmulatorLoadFigures?
    /// The run's settings, by name, in order (for `--json` and the report).
    package var settings: [(String, String)] = []
    /// The room's configured admission rate, from the embedded emulator (admission accuracy).
    package var roomRate: LoadOperatorFigures.RoomRate = .unknown
    /// Order violations, the pre-start rank correlation and accuracy from the start (``LoadFairnessFigures``).
    package var fairness: LoadFairnessFigures?

    /// A run's figures: `visits` of `users` over `wall`, with the client's background key
    /// returns (`returns`, and `returnsLeft` still running when the drain ended).
    package init(
        users: Int, wall: Duration, visits: [Crowd.Visit], returns: PendingReturns.Statistics, returnsLeft: Int,
        faultsInstalled: Int = 0, emulator: EmulatorLoadFigures? = nil, settings: [(String, String)] = [],
        roomRate: LoadOperatorFigures.RoomRate = .unknown, fairness: LoadFairnessFigures? = nil
    ) {
        self.users = users
        self.wall = wall
        self.visits = visits
        self.returns = returns
        self.returnsLeft = returnsLeft
        self.faultsInstalled = faultsInstalled
        self.emulator = emulator
        self.settings = settings
        self.roomRate = roomRate
        self.fairness = fairness
    }

    /// Users per outcome name.
    public var outcomes: [String: Int] {
        var outcomes: [String: Int] = [:]
        for visit in visits { outcomes[visit.outcome, default: 0] += 1 }
        return outcomes
    }

    /// Users whose outcome was `failed`.
    public var failed: Int { outcomes["failed"] ?? 0 }

    /// Users who did not pass, by outcome and the vendor's code, most first, with the vendor's
    /// message for the first of them: why a run failed, not only that it did.
    package struct NotPassed: Sendable, Equatable {
        /// The outcome's name.
        package var outcome: String
        /// The vendor's code.
        package var code: Int
        /// Users with this outcome and code.
        package var users: Int
        /// The vendor's message to the first of them.
        package var message: String
    }

    /// Users who did not pass, grouped by outcome and code, most first.
    package var notPassed: [NotPassed] {
        var groups: [String: NotPassed] = [:]
        var order: [String] = []
        for visit in visits where visit.outcome != "passed" {
            let key = "\(visit.outcome) \(visit.code)"
            if groups[key] == nil {
                groups[key] = NotPassed(outcome: visit.outcome, code: visit.code, users: 0, message: visit.message ?? "")
                order.append(key)
            }
            groups[key]?.users += 1
        }
        // most users first; equal counts in the order first seen
        return order.enumerated().compactMap { index, key in groups[key].map { (index, $0) } }
            .sorted { ($1.1.users, $0.0) < ($0.1.users, $1.0) }.map(\.1)
    }

    /// Time to pass of the users who passed.
    package var histogram: LatencyHistogram {
        var histogram = LatencyHistogram()
        for visit in visits where visit.outcome == "passed" { histogram.add(visit.waited) }
        return histogram
    }

    /// The key figures, by name: the emulator's, with the client's background key returns where
    /// the vendor's passes hold keys (or when no emulator served the run).
    package var keys: [(String, Int)] {
        let returns: [(String, Int)] = [
            ("keysReturnedLate", self.returns.returnedLate), ("backgroundReturnsGivenUp", self.returns.gaveUp + returnsLeft),
            ("backgroundReturnsKeyGone", self.returns.alreadyGone)
        ]
        guard let emulator else { return returns }
        return emulator.holdsKeys ? emulator.keys + returns : emulator.keys
    }
}
