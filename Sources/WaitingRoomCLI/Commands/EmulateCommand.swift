import Foundation
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomVendors

/// `waitingroom emulate`: serves every vendor's emulator until SIGINT or SIGTERM.
struct EmulateCommand: CLICommand {
    static let about = CommandDescription(
        name: "emulate",
        abstract: "Serve every vendor's emulator (NetFUNNEL, Queue-it, CrowdHandler, Cloudflare) from one process.",
        discussion: """
            Without --config it serves the default rooms (NetFUNNEL project service_1: a queueing basic
            segment, a section segment, a blocked segment, and act_8 / act_10 as real deployments name
            them; Queue-it customer demo: a queueing room, a
            safetynet room, a disabled room; CrowdHandler rooms demo-open, demo-queue, demo-blocked,
            demo-closed under /v1/ with any x-api-key; Cloudflare rooms demo-open, demo-queue, demo-reject,
            demo-suspended, demo-random under /cf/, JSON mode with Accept: application/json) and prints the
            Queue-it secret key. Samples: Vendors/NetFUNNEL/Fixtures/emulator.json,
            Vendors/QueueIt/Fixtures/emulator.json, Vendors/CrowdHandler/Fixtures/emulator.json,
            Vendors/Cloudflare/Fixtures/emulator.json.
            Open http://HOST:PORT/_emulator/ for the dashboard: every room of every vendor live (waiting,
            admitted, rate, keys never returned, faults), charts of the last 5 minutes, and buttons that
            change a room's limit, open/block it and add or clear faults. Each room links its live
            waiting page (NetFUNNEL: /_emulator/netfunnel/waiting-room.html?sid=…&aid=…).
            GET http://HOST:PORT/metrics serves the same figures in the Prometheus text format
            (waitingroom_emulator_*: users waiting and inside, admitted, admission rate, keys never
            returned, faults, requests and replies per kind; labels vendor, scope, room).
            Stops cleanly on Ctrl-C (SIGINT) or SIGTERM.

            Examples:
              waitingroom emulate
              waitingroom emulate --port 8080 --config Vendors/QueueIt/Fixtures/emulator.json
            """
    )

    var config: String?
    var host = "127.0.0.1"
    var port = 8080
    var json = false

    static var arguments: [CLIArgument<Self>] {
        [
            .option(
                "config", \.config,
                help: "Emulator configuration document (JSON: {\"netfunnel\": …, \"queueit\": …, \"crowdhandler\": …}).", completion: .files
            ),
            .option("host", \.host, help: "Address to bind (loopback by default)."),
            .option("port", \.port, help: "Port (0 picks a free one)."),
            .flag("json", \.json, help: "Print the addresses as one JSON object.")
        ]
    }

    /// It serves HTTP: its tasks run on NIO's event loops.
    var servesOnEventLoops: Bool { true }

    func validate() throws(UsageError) {
        guard (0...65535).contains(port) else { throw UsageError("--port must be 0…65535") }
    }

    func run() async throws {
        let terminal = Terminal()
        // Stop cleanly on SIGINT / SIGTERM, also when one arrives while starting up.
        let stopRequested = StopSignal()
        stopRequested.trapInterrupts()
        defer { stopRequested.release() }
        let suite: EmulatorSuite
        let server: EmulatorServer
        do {
            suite = try config.map { try EmulatorSuite(document: VendorConfigurationLoader.readJSON($0)) } ?? .demo()
            server = try await suite.start(host: host, port: port, logger: CLILogging.logger(label: "waitingroom.emulator"))
        } catch let error as WaitingRoomError {
            terminal.error("waitingroom emulate: \(error)")
            throw ExitStatus.usage
        }
        if json {
            terminal.line(JSONValue.object(suite.describe(server: server)).jsonText)
        } else {
            terminal.line(suite.summary(server: server))
            terminal.line("Ctrl-C to stop.")
        }
        await stopRequested.wait()
        await server.stop()
        if !json { terminal.line("emulator stopped") }
    }
}
