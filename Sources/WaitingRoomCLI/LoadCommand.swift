import ArgumentParser
import Foundation
import WaitingRoom
import WaitingRoomVendors

/// `waitingroom load`: N concurrent virtual users through a room, with a latency histogram.
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Drive N concurrent virtual users through a room (emulator or URL); prints a time-to-pass histogram.",
        discussion: """
            Each user enqueues, waits for the outcome, holds the pass for --hold seconds and returns it.

            Examples:
              waitingroom load --vendor netfunnel --emulator --scope service_1 --room segKey_basic --users 50
              waitingroom load --vendor netfunnel --set serverUrl=http://127.0.0.1:8080 --set clientId=x \\
                               --scope service_1 --room segKey_basic --users 200 --hold 0.05
            """
    )

    @OptionGroup var vendorOptions: VendorOptions
    @OptionGroup var room: RoomOptions
    @Option(help: "Virtual users.") var users = 50
    @Option(help: "Seconds each user holds the pass.") var hold = 0.1
    @Flag(help: "Print the summary as JSON.") var json = false

    func validate() throws {
        guard (1...100_000).contains(users) else { throw ValidationError("--users must be 1…100000") }
        guard (0...600).contains(hold) else { throw ValidationError("--hold must be 0…600 seconds") }
    }

    func run() async throws {
        let terminal = Terminal()
        let vendor = vendorOptions.vendor
        let (configuration, server) = try await vendorOptions.resolve()
        let provider: any WaitingRoomProvider
        let entry: Entry
        do {
            provider = try VendorRegistry.standard.makeProvider(vendor: vendor, configuration: configuration)
            entry = try room.entry()
        } catch {
            terminal.error("waitingroom load: \(error)")
            if let server { await server.stop() }
            throw ExitStatus.usage.exitCode
        }
        let started = ContinuousClock.now
        let visits = await Crowd(provider: provider, room: entry.room, control: entry.control, hold: hold...hold)
            .run(count: users, stagger: .zero, prefix: "load")
        let wall = ContinuousClock.now - started
        if let server { await server.stop() }
        var histogram = LatencyHistogram()
        for visit in visits where visit.outcome == "passed" { histogram.add(visit.waited) }
        var outcomes: [String: Int] = [:]
        for visit in visits { outcomes[visit.outcome, default: 0] += 1 }
        if json {
            terminal.line(JSONValue.object([
                "users": .number(Double(users)), "wall_seconds": .number(wall.seconds),
                "outcomes": .object(outcomes.mapValues { .number(Double($0)) }),
                "p50": .number(histogram.percentile(50)), "p90": .number(histogram.percentile(90)),
                "p99": .number(histogram.percentile(99)),
            ]).jsonText)
        } else {
            terminal.line("users \(users) · wall \(LatencyHistogram.format(wall.seconds)) · " + outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " · "))
            terminal.line("time to pass:")
            for line in histogram.render() { terminal.line("  " + line) }
        }
        throw (outcomes["failed"] ?? 0) > 0 ? ExitStatus.error.exitCode : ExitStatus.passed.exitCode
    }
}
