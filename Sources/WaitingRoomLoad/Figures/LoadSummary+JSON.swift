import Foundation
import WaitingRoom

/// `waitingroom load --json`.
extension LoadSummary {
    /// The summary as `waitingroom load --json` prints it: outcomes, percentiles, keys, the
    /// figures (``figures``) and fairness.
    public var json: JSONValue {
        let histogram = self.histogram
        var object: [String: JSONValue] = [
            "users": .number(Double(users)), "wall_seconds": .number(wall.seconds),
            "outcomes": .object(outcomes.mapValues { .number(Double($0)) }),
            "notPassed": .array(
                notPassed.map {
                    .object([
                        "outcome": .string($0.outcome), "code": .number(Double($0.code)), "users": .number(Double($0.users)),
                        "message": .string($0.message)
                    ])
                }),
            "p50": .number(histogram.percentile(50)), "p90": .number(histogram.percentile(90)),
            "p99": .number(histogram.percentile(99)),
            "faultsInstalled": .number(Double(faultsInstalled))
        ]
        // The process's own peak resident set (client, emulator and driver together), for
        // `bench memory`; absent where /proc is not there.
        if let peak = Self.peakResidentBytes() { object["peakResidentBytes"] = .number(Double(peak)) }
        for (name, value) in keys { object[name] = .number(Double(value)) }
        for (name, value) in figures { object[name] = value }
        if let fairness { object["fairness"] = fairness.json }
        return .object(object)
    }

    /// `VmHWM` of /proc/self/status: this process's peak resident set since it started (exec
    /// resets it, unlike `ru_maxrss`, which keeps the spawning parent's as a floor).
    package static func peakResidentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.dropFirst("VmHWM:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}
