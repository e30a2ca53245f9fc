import Foundation
import Logging
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomHTTP
import WaitingRoomLua
import WaitingRoomVendors

/// `waitingroom run FLOW.lua`: runs a flow and exits with its outcome.
struct RunCommand: CLICommand {
    static let about = CommandDescription(
        name: "run",
        abstract: "Run a Lua flow; live progress on a terminal, one line (or JSON object) per event otherwise.",
        discussion: """
            Examples:
              waitingroom run Scripts/flows/netfunnel-checkout.lua --emulator
              waitingroom run Scripts/flows/netfunnel-checkout.lua --emulator --set netfunnel.retryCount=3 --json
              waitingroom run my-flow.lua --config netfunnel.json --json

            --config gives the vendor configuration (a JSON object, or a document with a member named
            after the vendor); --set VENDOR.KEY=VALUE sets one option on top of it. Both fill in what the
            flow's own `config` leaves out. --emulator starts the embedded emulator (default rooms) and
            points the vendors at it: its addresses (NetFUNNEL's serverUrl, Queue-it's waitingRoomDomain,
            CrowdHandler's apiURL, waitURL and siteURL, Cloudflare's siteURL) replace the flow's own, so a
            flow written for the real service never reaches it (NetFUNNEL's settingUrl is dropped and
            derived; --config and --set still set them). Before exiting, run waits up to --drain-timeout seconds for key
            returns still running in the background.

            \(ExitStatus.helpTable) Bypassed counts as passed; aborted as closed.
            """
    )

    var flow = ""
    var config: String?
    var settings: [String] = []
    var emulatorConfig: String?
    var drainTimeout = 30.0
    var emulator = false
    var json = false
    var stateOptions = StateOptions()
    var metricsOptions = MetricsOptions()

    static var arguments: [CLIArgument<Self>] {
        CLIArgument.group(\.stateOptions) + CLIArgument.group(\.metricsOptions) + [
            .positional("flow", \.flow, help: "The flow file.", completion: .files),
            .option("config", \.config, help: "Vendor configuration file (JSON).", completion: .files),
            .repeating("set", \.settings, help: "A vendor setting VENDOR.KEY=VALUE (repeatable), over --config."),
            .option(
                "emulator-config", \.emulatorConfig, help: "Emulator configuration document (JSON) for --emulator.", completion: .files),
            .option("drain-timeout", \.drainTimeout, help: "Seconds to wait at the end for key returns still running in the background."),
            .flag("emulator", \.emulator, help: "Start the embedded emulator and point the vendors at it."),
            .flag("json", \.json, help: "One JSON object per event, then the result.")
        ]
    }

    func validate() throws(UsageError) {
        guard (0...600).contains(drainTimeout) else { throw UsageError("--drain-timeout must be 0…600 seconds") }
        try stateOptions.validate()
        try metricsOptions.validate()
    }

    func run() async throws {
        try await metricsOptions.serving(command: "run") { try await runFlow() }
    }

    /// The command's work; ``run()`` serves `--metrics-port` around it.
    private func runFlow() async throws {
        let terminal = Terminal()
        let printer = EventPrinter(json: json, terminal: terminal)
        let defaults = VendorDefaults()
        var server: EmulatorServer?
        var store: (any StateStore)?
        do {
            store = try await stateOptions.openStore()
            if emulator {
                let suite = try emulatorConfig.map { try EmulatorSuite(document: VendorConfigurationLoader.readJSON($0)) } ?? .demo()
                let started = try await suite.start()
                server = started
                // the emulator's addresses win over the flow's own: a flow written for the real
                // service must not reach it when run against the emulator
                defaults.set(EmulatorSuite.clientDefaults(for: started), pinning: EmulatorSuite.clientAddressKeys)
            }
            let registry = VendorRegistry.standard
            var configured: Set<String> = []
            if let config { configured.formUnion(defaults.overlay(try VendorConfigurationLoader.readJSON(config), naming: registry)) }
            if !settings.isEmpty {
                configured.formUnion(
                    defaults.overlay(try VendorConfigurationLoader.vendorSettings(settings, vendors: registry.vendorIDs), naming: registry))
            }
            // A bad setting is a usage error naming the field, found before the flow runs (the
            // flow's own `config` fills in the rest).
            try defaults.check(configured, in: registry)
        } catch {
            terminal.error("waitingroom run: \(error)")
            if let server { await server.stop() }
            throw ExitStatus.usage
        }
        let environment = stateOptions.environment(store: store)
        let status = await FlowRunner(
            path: flow, registry: VendorRegistry.standard.withDefaults(defaults), printer: printer, terminal: terminal,
            drainTimeout: .milliseconds(Int64(drainTimeout * 1000)),
            options: { $0.environment = environment }
        ).run()
        if let server { await server.stop() }
        try? await store?.close()
        throw status
    }
}

/// Runs one flow file with a printer attached; shared by `run` and `demo`.
struct FlowRunner {
    let path: String
    let registry: VendorRegistry
    let printer: EventPrinter
    let terminal: Terminal
    /// How long to wait at the end for key returns still running in the background.
    var drainTimeout: Duration = .seconds(30)
    var options: (inout FlowOptions) -> Void = { _ in }

    func run() async -> ExitStatus {
        let printer = self.printer
        let terminal = self.terminal
        var options = FlowOptions(
            logger: CLILogging.logger(label: "waitingroom.lua"),
            printHandler: { terminal.error($0) },
            registry: registry,
            eventObserver: { _, event in printer.print(event) }
        )
        self.options(&options)
        let runtime: FlowRuntime
        do {
            runtime = try FlowRuntime(path: path, options: options)
        } catch {
            terminal.error("waitingroom run: \(error)")
            printer.printResult(["outcome": .string("error"), "error": .string(error.description), "exit_status": .number(5)])
            return .scriptError
        }
        let actions = Task {
            for await action in runtime.actions {
                printer.printAction(action)
            }
        }
        let result = await runtime.run()
        await runtime.finishActions()
        _ = await actions.value
        // Keys whose return failed its documented attempts are still being returned: give them a
        // bounded time before the process exits.
        let left = await options.environment.pendingReturns.drain(timeout: drainTimeout)
        if left > 0 {
            terminal.error(
                "waitingroom: \(left) key return(s) still failing after the drain timeout; the server keeps those keys until they time out")
        }
        for error in result.handlerErrors { terminal.error(error.description) }
        // A handler that failed ends with 5 (script error), whatever the outcome: the outcome is
        // still printed, and the failures counted (`handler_errors`).
        let status = result.handlerErrors.isEmpty ? ExitStatus(result.outcome) : .scriptError
        if case .flowError(let error) = result.outcome { terminal.error(error.description) }
        var fields = result.fields
        fields["exit_status"] = .number(Double(status.rawValue))
        printer.printResult(fields)
        return status
    }
}

extension ExitStatus {
    /// The status for a flow's result.
    init(_ outcome: FlowOutcome) {
        switch outcome {
        case .vendor(let vendorOutcome): self.init(vendorOutcome)
        case .bypassed: self = .passed
        case .aborted: self = .closed
        case .flowError: self = .scriptError
        }
    }
}

extension EventPrinter {
    /// Prints something a flow handed back with `wr.emit`.
    func printAction(_ action: FlowAction) {
        switch mode {
        case .json:
            terminal.line(JSONValue.object(["event": .string("action"), "name": .string(action.name), "payload": action.payload]).jsonText)
        case .plain, .live:
            if mode == .live { terminal.out("\r\u{1B}[2K") }
            terminal.line((label.isEmpty ? "" : "[\(label)] ") + "action \(action.name) \(action.payload.jsonText)")
        }
    }
}
