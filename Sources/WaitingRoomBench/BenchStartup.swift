import Foundation

/// `waitingroom bench startup`: how long `waitingroom --help` takes as a whole process, next to
/// `lua5.4 -e ''` (the Lua interpreter the flows run on, doing nothing), spawned in turn in the
/// same run; plus the executable's size. (No peak-memory figure: a child started with
/// `posix_spawn` reports the parent's resident set as its own floor.)
enum BenchStartup {
    /// Runs each command `rounds` times (after `warmup` runs of each), alternating.
    static func run(rounds: Int = 20, warmup: Int = 2) async -> [BenchFigure] {
        guard let me = ChildProcess.currentExecutable else {
            return [BenchFigure(name: "start-up: the running executable was not found", value: .nan, unit: "")]
        }
        let ours = ChildProcess(executable: me, arguments: ["--help"])
        let lua = ChildProcess(executable: "lua5.4", arguments: ["-e", ""])
        var oursRuns: [ChildProcess.Run] = []
        var luaRuns: [ChildProcess.Run] = []
        do {
            for round in 0..<(warmup + rounds) {
                let a = try await ours.run()
                let b = try await lua.run()
                guard a.status == 0 else { throw ChildProcess.Failure(description: "waitingroom --help exited with \(a.status)") }
                if round >= warmup {
                    oursRuns.append(a)
                    luaRuns.append(b)
                }
            }
        } catch {
            return [
                BenchFigure(name: "start-up benchmark failed: \(error) (lua5.4 comes from Debian's lua5.4 package)", value: .nan, unit: "")
            ]
        }
        let oursMedian = median(oursRuns.map { $0.wall.seconds * 1000 })
        let luaMedian = median(luaRuns.map { $0.wall.seconds * 1000 })
        let size = (try? FileManager.default.attributesOfItem(atPath: me)[.size] as? Int).flatMap { $0 } ?? 0
        return [
            BenchFigure(
                name: "start-up: waitingroom --help (median wall, spawn to exit)", value: oursMedian, unit: "ms",
                baseline: .init(name: "lua5.4 -e ''", value: luaMedian, unit: "ms"), goal: .ratio(atMost: 3),
                note: "\(rounds) runs of each, alternating"),
            BenchFigure(name: "size of the waitingroom executable", value: Double(size) / 1_048_576, unit: "MiB")
        ]
    }

    static func median<T: Comparable>(_ values: [T]) -> T {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
}
