/// What a waiting user is shown after each 201, computed from the reply (docs/netfunnel-protocol.md §3.5).
package struct NetFUNNELWaitInfo: Sendable, Equatable {
    /// People ahead (`nwait`).
    package var aheadWait: Int
    /// People behind (`nnext`, 0 when absent).
    package var behindWait: Int
    /// Estimated seconds to entry (never increases while waiting, at least 1).
    package var etaSeconds: Int
    /// `etaSeconds` as zero-padded `HH:mm:ss`.
    package var waitTime: String
    /// 0–100 against the largest `nwait` seen.
    package var progressRate: Int
}

/// Turns successive 201 replies into ``NetFUNNELWaitInfo``: ETA = `nwait / tps` (decimal `tps`;
/// 0 ⇒ 1), rounded, at least 1 s, never larger than the previous ETA; progress =
/// `floor((total − nwait) × 100 / total)` where `total` is the largest `nwait` seen.
package struct NetFUNNELProgressTracker: Sendable, Equatable {
    private var total = 0
    private var lastETA: Int?

    package init() {}

    /// Forget the history (after a new key puts the user at the back).
    package mutating func reset() {
        total = 0
        lastETA = nil
    }

    /// Update with one reply's numbers.
    package mutating func update(nwait: Int?, nnext: Int?, tps: Double?) -> NetFUNNELWaitInfo {
        let ahead = max(0, nwait ?? 0)
        let behind = max(0, nnext ?? 0)
        var rate = tps ?? 0
        if !(rate > 0) || !rate.isFinite { rate = 1 }
        let raw = (Double(ahead) / rate).rounded()
        var eta = raw >= Double(NetFUNNELReply.numberCeiling) ? NetFUNNELReply.numberCeiling : max(1, Int(raw))
        if let lastETA, eta > lastETA { eta = lastETA }
        lastETA = eta
        if ahead > total { total = ahead }
        let progress = total <= 0 ? 0 : min(100, max(0, (total - ahead) * 100 / total))
        return NetFUNNELWaitInfo(
            aheadWait: ahead, behindWait: behind, etaSeconds: eta, waitTime: Self.format(seconds: eta),
            progressRate: progress)
    }

    /// Zero-padded `HH:mm:ss` (hours may exceed 99).
    package static func format(seconds: Int) -> String {
        let s = max(0, seconds)
        let h = s / 3600
        let m = (s % 3600) / 60
        let sec = s % 60
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(h)):\(two(m)):\(two(sec))"
    }
}
