import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit
import WaitingRoomEmulators
import WaitingRoomHTTP
import WaitingRoomLoad
import WaitingRoomVendors

/// `waitingroom load`: N concurrent virtual users through a room, with a latency histogram;
/// optionally with faults injected into the embedded emulator, and the keys they cost counted.
struct LoadCommand: CLICommand {
    static let about = CommandDescription(
        name: "load",
        abstract: "Drive N concurrent virtual users through a room (emulator or URL); prints a time-to-pass histogram.",
        discussion: """
            Each user enqueues, waits for the outcome, holds the pass for --hold seconds and returns it.
            Before exiting, load waits up to --drain-timeout seconds for key returns still running in
            the background (a return that failed its documented attempts).

            Faults (with --emulator): --chaos N installs N faults of each kind (dropped connection,
            HTTP 503, malformed reply, a --chaos-delay delay, 1.5 s by default) on every request kind of the vendor (NetFUNNEL:
            5101, 5002 and 5004; Queue-it: enqueue and queue page; CrowdHandler: POST and GET /v1/requests; Cloudflare: the protected page); --faults FILE installs the faults of a JSON file
            (an array of the emulator's fault objects, or {"netfunnel": [...], "queueit": [...], "crowdhandler": [...], "cloudflare": [...]}).
            The summary then counts, from the emulator: keysNeverReturned (keys the server had to
            time out, or still holds), keysAutoReturned, waitersDropped; and from the client:
            keysReturnedLate (returned in the background after their documented attempts failed),
            for Queue-it enqueued, passedVisitors and faults per request kind, for CrowdHandler
            sessionsCreated, sessionsChecked, promoted, refused, responsesRecorded, faultsInjected
            and faults per request kind,
            backgroundReturnsGivenUp (still failing when their time budget or --drain-timeout ran out)
            and backgroundReturnsKeyGone (the server had already timed the key out).

            Users who do not pass are counted by outcome and the vendor's code, with the vendor's
            message (the summary, and notPassed in --json).

            --report FILE writes a self-contained HTML report: settings, outcomes, the time-to-pass
            histogram and percentiles, users waiting and admissions per second over time, requests
            and replies per request kind, faults and keys never returned, and the operators' view:
            inflow and outflow per second, the expected wait users were shown against the wait they
            had (error p50/p90/p99), and admission accuracy per minute against the room's configured
            rate (n/a where the emulator configures none). --json prints the same figures.

            Scheduled sales: --arrivals burst (default: every user at once), uniform:SECONDS (evenly
            over SECONDS) or poisson:RATE (exponential gaps, RATE users/s from 0.001, drawn from --seed) says when
            users arrive; --start-at +SECONDS puts the sale's start that many seconds after the run
            starts. With --emulator the room gets that start and a pre-queue: users arriving before it
            are shuffled at the start (seeded by --seed), later ones join first come first served
            (Queue-it, CrowdHandler, Cloudflare as an event with prequeue_start_time and
            shuffle_at_event_start, and NetFUNNEL as a segment with startsAt, its schedule
            reservation, admitting in line order). Against another server --start-at only splits the users into pre- and
            post-start arrivals; schedule the start there yourself (an emulator's admin route, see the
            vendor's README). Each virtual user is its own visitor: none takes a pass another user
            stored (with --state, only their keys and session leases go there). The summary, --json
            and --report then give fairness figures: order violations among post-start arrivals (pairs
            admitted out of arrival order; goal 0), Spearman's rank correlation of the pre-start users'
            admission order with their arrival order (goal about 0) with its 95% confidence interval,
            and admission accuracy per minute from the start. With an embedded emulator they come from
            its record of who arrived and was admitted when; otherwise from the users' own times (arrival:
            the vendor's first answer to each user; admission: when the user saw its pass).

            --metrics-port PORT serves the SDK's metrics (Prometheus text) at
            http://127.0.0.1:PORT/metrics while the run lasts (0 picks a free port; the address goes to stderr).

            Examples:
              waitingroom load --vendor netfunnel --emulator --scope service_1 --room segKey_basic --users 50
              waitingroom load --vendor netfunnel --emulator --scope service_1 --room act_10 --users 200 --report report.html
              waitingroom load --vendor netfunnel --emulator --emulator-config Scripts/load/emulator-rooms.json \\
                               --scope service_1 --room segKey_load --users 300 \\
                               --set retryCount=3 --set networkTimeout=1000 --chaos 10
              waitingroom load --vendor netfunnel --emulator --faults Scripts/load/faults-netfunnel.json \\
                               --scope service_1 --room segKey_basic --users 20 --set retryCount=3
              waitingroom load --vendor netfunnel --set serverUrl=http://127.0.0.1:8080 --set clientId=emulator-0000 \\
                               --scope service_1 --room segKey_basic --users 200 --hold 0.05
              waitingroom load --vendor queueit --emulator --scope demo --room sale --users 2000 \\
                               --arrivals uniform:20 --start-at +10 --seed 7
            """
    )

    var vendorOptions = VendorOptions()
    var room = RoomOptions()
    var stateOptions = StateOptions()
    var metricsOptions = MetricsOptions()
    var users = 50
    var hold = 0.1
    var emulatorConfig: String?
    var chaos = 0
    var chaosDelay = 1.5
    var faults: String?
    var drainTimeout = 30.0
    var json = false
    var report: String?
    var arrivals = LoadArrivals.burst
    var startAt: LoadSaleStart?
    var seed = 1

    static var arguments: [CLIArgument<Self>] {
        CLIArgument.group(\.vendorOptions) + CLIArgument.group(\.room) + CLIArgument.group(\.stateOptions)
            + CLIArgument.group(\.metricsOptions) + [
                .option("users", \.users, help: "Virtual users."),
                .option("hold", \.hold, help: "Seconds each user holds the pass."),
                .option(
                    "emulator-config", \.emulatorConfig, help: "Emulator configuration document (JSON) for --emulator.", completion: .files),
                .option("chaos", \.chaos, help: "With --emulator: N faults of each kind on every request kind of the vendor."),
                .option(
                    "chaos-delay", \.chaosDelay,
                    help: "Seconds of the delay faults --chaos installs (make it longer than the vendor's timeout)."),
                .option("faults", \.faults, help: "With --emulator: a JSON file of emulator faults to install.", completion: .files),
                .option(
                    "drain-timeout", \.drainTimeout, help: "Seconds to wait at the end for key returns still running in the background."),
                .flag("json", \.json, help: "Print the summary as JSON."),
                .option(
                    "report", \.report,
                    help: "Write a self-contained HTML report (charts, tables; no network needed to view it) to this file.",
                    completion: .files),
                .option(
                    "arrivals", \.arrivals,
                    help:
                        "When users arrive: burst (all at once), uniform:SECONDS (evenly over SECONDS) or poisson:RATE (RATE users/s on average).",
                    completion: .choices(["burst", "uniform:60", "poisson:50"])),
                .option(
                    "start-at", \.startAt,
                    help:
                        "+SECONDS: the sale starts SECONDS after the run; with --emulator the room gets that start and a shuffled pre-queue."
                ),
                .option("seed", \.seed, help: "Seed of the Poisson arrivals and of the embedded emulator's pre-queue shuffle.")
            ]
    }

    func validate() throws(UsageError) {
        try room.validate()
        try stateOptions.validate()
        try metricsOptions.validate()
        guard (1...100_000).contains(users) else { throw UsageError("--users must be 1…100000") }
        guard (0...600).contains(hold) else { throw UsageError("--hold must be 0…600 seconds") }
        guard (0...100_000).contains(chaos) else { throw UsageError("--chaos must be 0…100000") }
        guard (0.1...60).contains(chaosDelay) else { throw UsageError("--chaos-delay must be 0.1…60 seconds") }
        guard (0...600).contains(drainTimeout) else { throw UsageError("--drain-timeout must be 0…600 seconds") }
        guard seed >= 0 else { throw UsageError("--seed must be 0 or more") }
        if let report {
            // checked before the run, not after it (a whole load run was lost to a typo)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: report, isDirectory: &isDirectory), isDirectory.boolValue {
                throw UsageError("--report \(report) is a directory: give a file name")
            }
            let folder = (report as NSString).deletingLastPathComponent
            if !folder.isEmpty, !(FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) && isDirectory.boolValue) {
                throw UsageError("--report \(report): the folder \(folder) does not exist")
            }
        }
        if !vendorOptions.emulator {
            if chaos > 0 || faults != nil {
                throw UsageError("--chaos and --faults need --emulator (faults are injected into the embedded emulator)")
            }
            if emulatorConfig != nil { throw UsageError("--emulator-config needs --emulator") }
        }
    }

    /// The settings the report and `--json` show.
    func settings(server: EmulatorServer?) -> [(String, String)] {
        var out: [(String, String)] = [
            ("vendor", vendorOptions.vendor), ("room", "\(room.scope ?? "")/\(room.room ?? "")"), ("control", room.control.rawValue),
            ("users", String(users)), ("hold", "\(hold) s"),
            ("target", server.map { "embedded emulator \($0.baseURL)" } ?? "configured server")
        ]
        out.append(("arrivals", arrivals.commandLineDescription))
        if let startAt { out.append(("startAt", startAt.commandLineDescription + " s")) }
        out.append(("seed", String(seed)))
        if let emulatorConfig { out.append(("emulatorConfig", emulatorConfig)) }
        if chaos > 0 { out.append(("chaos", "\(chaos) per kind, delay \(chaosDelay) s")) }
        if let faults { out.append(("faults", faults)) }
        if let config = vendorOptions.config { out.append(("config", config)) }
        for setting in vendorOptions.settings { out.append(("set", setting)) }
        out.append(("drainTimeout", "\(drainTimeout) s"))
        return out
    }

    func run() async throws {
        try await metricsOptions.serving(command: "load") { try await runLoad() }
    }

    /// The command's work; ``run()`` serves `--metrics-port` around it.
    private func runLoad() async throws {
        let terminal = Terminal()
        let vendor = vendorOptions.vendor
        let configuration: JSONValue
        let server: EmulatorServer?
        let suite: EmulatorSuite?
        let provider: any WaitingRoomProvider
        let entry: Entry
        let store: (any StateStore)?
        let faultsInstalled: Int
        do { store = try await stateOptions.openStore() } catch {
            terminal.error("waitingroom load: \(error)")
            throw ExitStatus.usage
        }
        // Each virtual user is its own visitor: none takes a pass another stored; with --state
        // their keys and session leases are journaled there.
        let environment = stateOptions.environment(
            store: CrowdStore(inner: store ?? MemoryPassStore()), transport: AsyncHTTPTransport.shared)
        do {
            let wanted = try emulatorConfig.map { try EmulatorSuite(document: VendorConfigurationLoader.readJSON($0)) } ?? .demo()
            (configuration, server, suite) = try await vendorOptions.resolve(suite: wanted)
        } catch {
            terminal.error("waitingroom load: \(error)")
            throw ExitStatus.usage
        }
        do {
            provider = try VendorRegistry.standard.makeProvider(vendor: vendor, configuration: configuration, environment: environment)
            entry = try room.entry()
            faultsInstalled = try suite.map { try installFaults(in: $0, terminal: terminal) } ?? 0
        } catch {
            terminal.error("waitingroom load: \(error)")
            if let server { await server.stop() }
            throw ExitStatus.usage
        }
        let emulated = suite?.vendor(vendor)
        let plan = LoadPlan(
            room: entry.room, control: entry.control, users: users, hold: hold, arrivals: arrivals, saleStart: startAt,
            seed: UInt64(seed), drainTimeout: .milliseconds(Int64(drainTimeout * 1000)))
        var summary: LoadSummary
        do throws(LoadError) {
            // the scripted vendor has no emulator in the suite: --start-at cannot schedule there either
            if startAt != nil, suite != nil, emulated == nil { throw LoadError.noScheduledStart(vendor: vendor) }
            summary = try await LoadRun(plan).run(provider: provider, pendingReturns: environment.pendingReturns, emulator: emulated)
        } catch {
            switch error {
            case .noScheduledStart:
                terminal.error(
                    "waitingroom load: --start-at: the \(vendor) emulator has no scheduled start with a pre-queue (its README says why); drop --start-at, or use queueit, crowdhandler, cloudflare or netfunnel"
                )
            case .scheduleRefused(let refusal):
                terminal.error("waitingroom load: \(refusal)")
            }
            if let server { await server.stop() }
            throw ExitStatus.usage
        }
        summary.faultsInstalled = faultsInstalled
        summary.settings = settings(server: server)
        if let server { await server.stop() }
        try? await store?.close()
        if let report { try writeReport(summary, to: report, terminal: terminal) }
        if json {
            terminal.line(summary.json.jsonText)
        } else {
            for line in summary.text { terminal.line(line) }
        }
        throw summary.failed > 0 ? ExitStatus.error : ExitStatus.passed
    }

    /// Installs `--chaos` and the `--faults` file in the embedded emulators; how many faults.
    private func installFaults(in suite: EmulatorSuite, terminal: Terminal) throws -> Int {
        let vendor = vendorOptions.vendor
        var installed = try suite.installChaos(vendor: vendor, perKind: chaos, delay: .milliseconds(Int64(chaosDelay * 1000)))
        if let faults {
            let document = try VendorConfigurationLoader.readJSON(faults)
            installed += try suite.installFaults(document, vendor: vendor)
            // an object of sections that names only other vendors: installed, but this run never meets them
            if case .object(let sections) = document, sections[vendor] == nil {
                terminal.error(
                    "waitingroom load: warning: \(faults) has no faults for \(vendor) (only for \(sections.keys.sorted().joined(separator: ", "))); this run meets none of them"
                )
            }
        }
        return installed
    }

    /// Writes `--report`: the run as an HTML page at `report` (exits 64 when it cannot).
    private func writeReport(_ summary: LoadSummary, to report: String, terminal: Terminal) throws {
        do {
            try Data(LoadReportHTML.render(summary, generatedAt: Date()).utf8).write(to: URL(fileURLWithPath: report), options: .atomic)
        } catch {
            terminal.error("waitingroom load: cannot write the report \(report): \(error.localizedDescription)")
            throw ExitStatus.usage
        }
        if !json { terminal.line("report: \(report)") }
    }
}
