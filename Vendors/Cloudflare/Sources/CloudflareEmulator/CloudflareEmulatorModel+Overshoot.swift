import Foundation
import WaitingRoomEmulatorKit

/// The global-propagation overshoot (issue 50 §2): Cloudflare counts admissions per data centre
/// and shares the counts across its network with a delay, so a room may let in more than
/// `new_users_per_minute` for a while ("Why did my traffic exceed the New Users Per Minute
/// threshold?", waiting-room troubleshooting FAQ). The emulator admits exactly at the rate unless
/// this fault is in force: then at `percent` % of it, for `seconds` from the request that took
/// the fault, after which the rate is the configured one again.
struct CloudflarePropagationOvershoot: Sendable, Hashable {
    /// Admissions as a percentage of `new_users_per_minute` (150: half as many again).
    var percent: Int
    /// When the overshoot began and ends.
    var from: Date
    var until: Date
}

extension CloudflareEmulatorModel {
    /// Starts an overshoot of `percent` % for `seconds` from now (a fault taken by a request).
    func startOvershoot(percent: Int, seconds: Int) {
        let t = now()
        state.withLockedValue { s in
            s.overshoot = CloudflarePropagationOvershoot(percent: percent, from: t, until: t.addingTimeInterval(TimeInterval(seconds)))
        }
    }

    /// The factor on every room's admission rate at `t`: the overshoot's while it lasts, else 1.
    static func overshootFactor(_ s: State, at t: Date) -> Double {
        guard let o = s.overshoot, o.from <= t, t < o.until else { return 1 }
        return Double(o.percent) / 100
    }

    /// The new-user allowance earned from `from` to `to` at `base` users a minute, the part of
    /// that span inside the overshoot's window at the overshoot's rate.
    static func overshootCredit(_ s: State, base: Double, from: Date, to: Date) -> Double {
        let seconds = max(0, to.timeIntervalSince(from))
        var credit = seconds * base / 60
        if let o = s.overshoot {
            let inside = max(0, min(to, o.until).timeIntervalSince(max(from, o.from)))
            credit += inside * base * (Double(o.percent) / 100 - 1) / 60
        }
        return credit
    }
}
