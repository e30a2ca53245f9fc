import Foundation
import WaitingRoom
import WaitingRoomTesting

/// The benchmark suites `waitingroom bench` runs.
enum BenchSuites {
    static let names = ["core"]

    static func run(_ name: String) async -> [CoreBenchmarks.Figure] {
        switch name {
        case "core":
            let baseline = await CoreBenchmarks.eventBaseline()
            let fanOut = await CoreBenchmarks.eventFanOut()
            let ratio = CoreBenchmarks.Figure(name: "fan-out to 3 / baseline", value: fanOut.value / baseline.value, unit: "×")
            return [baseline, fanOut, ratio, await CoreBenchmarks.idleSessionMemory()]
        default:
            return []
        }
    }
}
