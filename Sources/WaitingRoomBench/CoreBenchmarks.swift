import Foundation
import ScriptedVendor
import WaitingRoom

#if canImport(Glibc)
    import Glibc
#endif

/// Benchmarks of the core, rerun with `waitingroom bench core` (release build).
package enum CoreBenchmarks {
    /// One figure: a name, a value and its unit; optionally the baseline measured in the same
    /// run, the ratio value / baseline, the goal for that ratio, or why it was skipped.
    package struct Figure: Sendable, CustomStringConvertible {
        package var name: String
        package var value: Double
        package var unit: String
        /// The baseline's value, in ``unit``, measured in the same run.
        package var baseline: Double?
        /// `value / baseline`.
        package var ratio: Double?
        /// The goal, naming what it bounds: `"ratio >= 0.5"`, `"value >= 2000000"`.
        package var goal: String?
        /// Why the figure was not measured (a missing tool, with how to install it).
        package var skipped: String?
        package init(name: String, value: Double, unit: String, baseline: Double? = nil, goal: String? = nil, skipped: String? = nil) {
            self.name = name
            self.value = value
            self.unit = unit
            self.baseline = baseline
            self.ratio = baseline.flatMap { $0 > 0 ? value / $0 : nil }
            self.goal = goal
            self.skipped = skipped
        }
        /// Whether the figure meets its ``goal`` (nil without a goal, when skipped, or when the
        /// goal names a ratio and there is none). A goal is one or more `"value|ratio >=|<= N"`
        /// bounds joined by `", "`; a figure that is not a finite number meets none.
        package var met: Bool? {
            guard let goal, skipped == nil else { return nil }
            for bound in goal.split(separator: ",") {
                let words = bound.split(separator: " ")
                guard words.count == 3, let limit = Double(words[2]) else { return nil }
                let number: Double
                switch words[0] {
                case "value": number = value
                case "ratio":
                    guard let ratio else { return nil }
                    number = ratio
                default: return nil
                }
                guard number.isFinite else { return false }
                switch words[1] {
                case ">=": if number < limit { return false }
                case "<=": if number > limit { return false }
                default: return nil
                }
            }
            return true
        }

        package var description: String {
            if let skipped { return "\(name): skipped (\(skipped))" }
            var text = "\(name): \(String(format: value < 10 ? "%.3f" : "%.1f", value)) \(unit)"
            if let baseline { text += String(format: baseline < 10 ? "; baseline %.3f" : "; baseline %.1f", baseline) }
            if let ratio { text += String(format: "; ratio %.3f×", ratio) }
            if let goal { text += " (goal \(goal))" }
            return text
        }
    }

    /// Delivers `events` progress events through a session to three stream subscribers; the
    /// figure is nanoseconds per event (all three deliveries and the consumers' reads).
    package static func eventFanOut(events: Int = 200_000) async -> Figure {
        let room = RoomKey(scope: "bench", room: "fanout")
        let status = VendorStatus(vendor: "bench", code: 201, message: "waiting")
        let steps: [ScriptedProvider.Step] =
            [.sleep(.seconds(1))]
            + (0..<events).map { .emit(.progress(QueueProgress(ahead: $0, behind: 0), status)) }
            + [.finish(.blocked(VendorStatus(vendor: "bench", code: 301, message: "end")))]
        let clock = BenchGateClock()
        let provider = ScriptedProvider(steps: steps, environment: ProviderEnvironment(transport: NoNetworkTransport(), clock: clock))
        let session: WaitingSession
        do { session = try provider.enqueue(Entry(room: room)) } catch { return Figure(name: "event fan-out", value: .nan, unit: "error") }
        let streams = (0..<3).map { _ in session.events }
        _ = await clock.waitForSleepers(1)
        let started = ContinuousClock.now
        clock.advance(by: .seconds(1))
        await withTaskGroup(of: Int.self) { group in
            for stream in streams {
                group.addTask {
                    var n = 0
                    for await _ in stream { n += 1 }
                    return n
                }
            }
            for await _ in group {}
        }
        let elapsed = ContinuousClock.now - started
        return Figure(name: "deliver one event to 3 subscribers", value: elapsed.seconds * 1e9 / Double(events), unit: "ns/event")
    }

    /// Same path with no subscriber, as the baseline the fan-out is compared to.
    package static func eventBaseline(events: Int = 200_000) async -> Figure {
        let status = VendorStatus(vendor: "bench", code: 201, message: "waiting")
        let steps: [ScriptedProvider.Step] =
            (0..<events).map { .emit(.progress(QueueProgress(ahead: $0), status)) }
            + [.finish(.blocked(status))]
        let provider = ScriptedProvider(steps: steps)
        let started = ContinuousClock.now
        guard let session = try? provider.enqueue(Entry(room: RoomKey(scope: "bench", room: "base"))) else {
            return Figure(name: "baseline", value: .nan, unit: "error")
        }
        _ = await session.outcome()
        let elapsed = ContinuousClock.now - started
        return Figure(name: "emit one event, no subscriber (baseline)", value: elapsed.seconds * 1e9 / Double(events), unit: "ns/event")
    }

    /// Resident memory per idle session: makes `count` sessions that wait on a virtual clock.
    package static func idleSessionMemory(count: Int = 20_000) async -> Figure {
        let clock = BenchGateClock()
        let provider = ScriptedProvider(
            steps: [.sleep(.seconds(3600))], environment: ProviderEnvironment(transport: NoNetworkTransport(), clock: clock))
        let before = residentBytes()
        var sessions: [WaitingSession] = []
        sessions.reserveCapacity(count)
        for i in 0..<count {
            if let s = try? provider.enqueue(Entry(room: RoomKey(scope: "bench", room: "idle"), userId: "u\(i)")) { sessions.append(s) }
        }
        _ = await clock.waitForSleepers(count, timeout: .seconds(60))
        let after = residentBytes()
        let perSession = Double(after - before) / Double(max(1, sessions.count))
        for s in sessions { s.cancel() }
        return Figure(name: "memory of one idle WaitingSession (incl. its waiting task)", value: perSession, unit: "bytes")
    }

    /// The process's resident set size in bytes (Linux `/proc/self/statm`; 0 elsewhere).
    package static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
