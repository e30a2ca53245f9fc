import Foundation
import WaitingRoomEmulatorKit

/// When `waitingroom load`'s users arrive (`--arrivals`): all at once (`burst`, the default),
/// evenly over a span (`uniform:SECONDS`), or as a Poisson process (`poisson:RATE`: exponential
/// gaps between arrivals, RATE users a second on average (0.001 to 1,000,000), drawn from `--seed`).
public enum LoadArrivals: Sendable, Equatable, CustomStringConvertible {
    /// Every user at the start.
    case burst
    /// User i (from 0) of n at i × SECONDS ÷ n.
    case uniform(seconds: Double)
    /// Exponential gaps with mean 1 ÷ RATE seconds, the first after one gap.
    case poisson(perSecond: Double)

    /// The arrivals `word` spells (`burst`, `uniform:SECONDS`, `poisson:RATE`), or nil.
    public init?(spelling word: String) {
        if word == "burst" {
            self = .burst
            return
        }
        let parts = word.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let value = Double(parts[1]), value.isFinite else { return nil }
        switch parts[0] {
        case "uniform" where (0...86_400).contains(value): self = .uniform(seconds: value)
        // at least one user in about 17 minutes: a smaller rate put arrivals past what a Duration holds
        case "poisson" where (0.001...1_000_000).contains(value): self = .poisson(perSecond: value)
        default: return nil
        }
    }

    /// The spelling ``init(spelling:)`` reads.
    public var description: String {
        switch self {
        case .burst: "burst"
        case .uniform(let seconds): "uniform:\(LoadOperatorFigures.number(seconds))"
        case .poisson(let rate): "poisson:\(LoadOperatorFigures.number(rate))"
        }
    }

    /// Each of `count` users' arrival, in seconds from the start, in order (Poisson gaps drawn
    /// with a generator seeded by `seed`).
    package func offsets(count: Int, seed: UInt64) -> [Double] {
        switch self {
        case .burst:
            return Array(repeating: 0, count: count)
        case .uniform(let seconds):
            return (0..<count).map { Double($0) * seconds / Double(max(1, count)) }
        case .poisson(let rate):
            var generator = EmulatorSeededGenerator(seed: seed)
            var t = 0.0
            return (0..<count).map { _ in
                t += -log1p(-Double.random(in: 0..<1, using: &generator)) / rate
                return t
            }
        }
    }
}
