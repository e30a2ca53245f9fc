import Foundation
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomVendors

/// `waitingroom check`: one `tryPass`, for monitoring and cron.
struct CheckCommand: CLICommand {
    static let about = CommandDescription(
        name: "check",
        abstract: "Check a room once (tryPass, no waiting); the exit status tells the outcome.",
        discussion: """
            Examples:
              waitingroom check --vendor netfunnel --emulator --scope service_1 --room segKey_basic
              waitingroom check --vendor queueit --config queueit.json --scope demo --room sale --json
              waitingroom check --vendor crowdhandler --emulator --scope site --room demo-open
              waitingroom check --vendor cloudflare --emulator --scope site --room demo-queue
              waitingroom check --vendor netfunnel --set serverUrl=http://127.0.0.1:8080 --set clientId=demo \\
                                --scope service_1 --room segKey_basic

            The vendor configuration comes from --config (a JSON object, or a document with a
            "<vendor>" member), then --set KEY=VALUE pairs (numbers and true/false are typed), and
            with --emulator the embedded emulator's address.

            \(ExitStatus.helpTable)
            """
    )

    var vendorOptions = VendorOptions()
    var room = RoomOptions()
    var stateOptions = StateOptions()
    var json = false

    static var arguments: [CLIArgument<Self>] {
        CLIArgument.group(\.vendorOptions) + CLIArgument.group(\.room) + CLIArgument.group(\.stateOptions) + [
            .flag("json", \.json, help: "Print one JSON object.")
        ]
    }

    func validate() throws(UsageError) {
        try room.validate()
        try stateOptions.validate()
    }

    func run() async throws {
        let terminal = Terminal()
        let vendor = vendorOptions.vendor
        let (configuration, server) = try await vendorOptions.resolve()
        let status: ExitStatus
        var store: (any StateStore)?
        do {
            store = try await stateOptions.openStore()
            let provider = try VendorRegistry.standard.makeProvider(
                vendor: vendor, configuration: configuration, environment: stateOptions.environment(store: store))
            let result = try await provider.tryPass(room.entry())
            if let pass = result.pass, pass.requiresCompletion {
                _ = try? await provider.release(pass)  // a check never keeps a key
            }
            // a key whose return failed goes on in the background: give it a bounded time
            if await provider.drainPendingReturns(timeout: .seconds(10)) > 0 {
                terminal.error("waitingroom check: a key return is still failing; the server keeps that key until it times out")
            }
            var fields: [String: JSONValue] = [
                "disposition": .string(result.disposition.rawValue),
                "vendor": .string(result.status.vendor), "code": .number(Double(result.status.code)),
                "message": .string(result.status.message)
            ]
            if let p = result.progress { fields.merge(p.fields, uniquingKeysWith: { $1 }) }
            if let page = result.queuePage { fields["queue_url"] = .string(page.queueURL) }
            if let pass = result.pass { fields["pass"] = .object(pass.fields()) }
            status = ExitStatus(result.disposition)
            fields["exit_status"] = .number(Double(status.rawValue))
            if json {
                terminal.line(JSONValue.object(fields).jsonText)
            } else {
                terminal.line("\(result.disposition.rawValue) (\(result.status.vendor) \(result.status.code) \(result.status.message))")
            }
        } catch let error as WaitingRoomError {
            status = error.kind == .invalidConfiguration ? .usage : .error
            if json {
                terminal.line(JSONValue.object(["error": .object(error.fields), "exit_status": .number(Double(status.rawValue))]).jsonText)
            }
            terminal.error("waitingroom check: \(error)")
        }
        if let server { await server.stop() }
        try? await store?.close()
        throw status
    }
}

/// Room options shared by `check` and `load`.
struct RoomOptions: CLIArguments {
    var scope: String?
    var room: String?
    var control: ControlMode = .basic
    var userId: String?
    var enqueueToken: String?
    var enqueueKey: String?

    static var arguments: [CLIArgument<Self>] {
        [
            .option("scope", \.scope, help: "NetFUNNEL project key / Queue-it customer id / CrowdHandler or Cloudflare site URL or label."),
            .option(
                "room", \.room,
                help: "NetFUNNEL segment key / Queue-it waiting room id / CrowdHandler or Cloudflare URL or path under siteURL."),
            .option("control", \.control, help: "basic or section."),
            .option("user-id", \.userId, help: "User id sent to the vendor."),
            .option("enqueue-token", \.enqueueToken, help: "Queue-it enqueue token / CrowdHandler session token (ch-id)."),
            .option("enqueue-key", \.enqueueKey, help: "Queue-it enqueue key.")
        ]
    }

    func validate() throws(UsageError) {
        if enqueueToken != nil && enqueueKey != nil {
            throw UsageError("give --enqueue-token or --enqueue-key, not both")
        }
    }

    func entry() throws -> Entry {
        guard let scope, let room else {
            throw WaitingRoomError.invalidConfiguration(field: "room", "give --scope and --room (project/segment or customer/room)")
        }
        let credential: Credential? = enqueueToken.map { .enqueueToken($0) } ?? enqueueKey.map { .enqueueKey($0) }
        return Entry(room: RoomKey(scope: scope, room: room), control: control, credential: credential, userId: userId)
    }
}
