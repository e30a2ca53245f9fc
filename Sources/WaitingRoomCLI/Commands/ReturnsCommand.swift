import Foundation
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomVendors

/// `waitingroom returns`: finishes the key returns a dead process left in a state store.
struct ReturnsCommand: CLICommand {
    static let about = CommandDescription(
        name: "returns",
        abstract: "Return the keys a process that died left in its --state store (its journal of held keys).",
        discussion: """
            Examples:
              waitingroom returns --state wr-state.sqlite --vendor netfunnel --set serverUrl=http://127.0.0.1:8080 \\
                                  --set clientId=demo --set allowInsecureHTTP=true
              waitingroom returns --state postgres://postgres@127.0.0.1:5432/waitingroom --vendor netfunnel --config netfunnel.json --json
              waitingroom returns --state wr-state.sqlite --vendor netfunnel --list

            Every key a provider takes from a vendor's server is written to the store's journal
            before the app sees it, and cleared when it goes back. A process that dies (SIGKILL,
            a crash, a lost machine) stops renewing its lease on them; once the lease lapses
            (--lease of the dead process, 10 s by default) this command claims them, so no two
            processes return the same key, and returns them to the vendor's server with the
            vendor configuration given here (the same one the dead process used). It waits for
            leases still running for up to --wait seconds, and tries each key until --bound
            seconds pass. A key whose server-side timeout has passed is dropped with that reason.

            Exit status 0: nothing left; 4: keys not returned (they stay in the journal) or the
            journal could not be read once open; 64: bad usage, e.g. no store at the --state path (a
            file store must exist: a mistyped path is not taken for an empty journal), or a
            PostgreSQL URL that cannot be reached or logged into (as for every command's --state).
            """
    )

    var stateOptions = StateOptions()
    var vendorOptions = VendorOptions()
    var bound = 30.0
    var wait = 30.0
    var list = false
    var json = false

    static var arguments: [CLIArgument<Self>] {
        CLIArgument.group(\.stateOptions) + CLIArgument.group(\.vendorOptions) + [
            .option("bound", \.bound, help: "Seconds to keep trying the claimed keys (default 30)."),
            .option("wait", \.wait, help: "Seconds to wait for leases of other processes to lapse (default 30)."),
            .flag("list", \.list, help: "Only list the journal (no claim, no return)."),
            .flag("json", \.json, help: "Print one JSON object.")
        ]
    }

    func validate() throws(UsageError) {
        try stateOptions.validate()
        guard let state = stateOptions.state else { throw UsageError("returns needs --state (the store the dead process used)") }
        // A mistyped path would otherwise open a new, empty store and report nothing to return.
        if !StateOptions.isDatabaseURL(state), !FileManager.default.fileExists(atPath: state) {
            throw UsageError("returns: no state store at \(state) (give the file the dead process used)")
        }
        guard (0...3600).contains(bound), (0...3600).contains(wait) else { throw UsageError("--bound and --wait must be 0…3600 seconds") }
    }

    func run() async throws {
        let terminal = Terminal()
        let store: any StateStore
        do {
            guard let opened = try await stateOptions.openStore() else { throw ExitStatus.usage }
            store = opened
        } catch {
            terminal.error("waitingroom returns: \(error)")
            throw ExitStatus.usage
        }
        if list { try await listHeldKeys(store, terminal: terminal) }
        let (configuration, server): (JSONValue, EmulatorServer?)
        let provider: any WaitingRoomProvider
        let environment = stateOptions.environment(store: store, recoverOnStart: false)
        do {
            (configuration, server) = try await vendorOptions.resolve()
            provider = try VendorRegistry.standard.makeProvider(
                vendor: vendorOptions.vendor, configuration: configuration, environment: environment)
        } catch {
            terminal.error("waitingroom returns: \(error)")
            try? await store.close()
            throw ExitStatus.usage
        }
        var total = await recoverHeldKeys(provider, terminal: terminal)
        // Unknown (nil) when the journal cannot be read now: then the command does not say "nothing left".
        let left: Int?
        do { left = try await store.heldKeys().filter { $0.vendor == vendorOptions.vendor }.count } catch {
            left = nil
            total.problems.append("cannot read the journal after the returns: \(error)")
        }
        if let server { await server.stop() }
        try? await store.close()
        report(total, left: left, environment: environment, terminal: terminal)
        throw (left == 0 && total.problems.isEmpty) ? ExitStatus.passed : ExitStatus.error
    }

    /// `--list`: the keys in the journal, then exits (passed; error when it cannot be read).
    private func listHeldKeys(_ store: any StateStore, terminal: Terminal) async throws -> Never {
        let held: [HeldKey]
        do { held = try await store.heldKeys() } catch {
            terminal.error("waitingroom returns: cannot read the journal: \(error)")
            try? await store.close()
            throw ExitStatus.error
        }
        let environment = stateOptions.environment(store: store)
        if json {
            terminal.line(
                JSONValue.array(
                    held.map { key in
                        .object([
                            "id": .string(environment.redact(key.id)), "vendor": .string(key.vendor),
                            "room": .string(key.room.description),
                            "owner": .string(key.owner), "lease_until": .number(key.leaseUntil.timeIntervalSince1970)
                        ])
                    }
                ).jsonText)
        } else {
            terminal.line("\(held.count) key(s) in the journal")
            for key in held {
                terminal.line(
                    "  \(key.vendor) \(key.room) \(environment.redact(key.key)) owner \(key.owner) lease until \(key.leaseUntil)")
            }
        }
        try? await store.close()
        throw ExitStatus.passed
    }

    /// Returns the held keys, again while keys are held by live owners whose lease lapses
    /// within `--wait` (and nothing went wrong); the reports added up.
    private func recoverHeldKeys(_ provider: any WaitingRoomProvider, terminal: Terminal) async -> KeyRecoveryReport {
        var total = KeyRecoveryReport()
        let deadline = ContinuousClock.now + .milliseconds(Int64(wait * 1000))
        while true {
            let report = await provider.recoverHeldKeys(bound: .milliseconds(Int64(bound * 1000)))
            total.claimed += report.claimed
            total.lines += report.lines
            total.problems += report.problems
            total.heldByLiveOwners = report.heldByLiveOwners
            total.nextLeaseLapse = report.nextLeaseLapse
            guard report.heldByLiveOwners > 0, ContinuousClock.now < deadline, report.problems.isEmpty else { break }
            let untilLapse = max(0.1, (report.nextLeaseLapse?.timeIntervalSinceNow ?? 1) + 0.1)
            if !json {
                terminal.line(
                    "waiting \(String(format: "%.1f", untilLapse)) s for \(report.heldByLiveOwners) key(s) whose owner's lease still runs")
            }
            try? await Task.sleep(for: .milliseconds(Int64(min(untilLapse, 5) * 1000)))
        }
        return total
    }

    /// Writes what the returns did (`left`: keys of the vendor left in the journal, nil: unknown).
    private func report(_ total: KeyRecoveryReport, left: Int?, environment: ProviderEnvironment, terminal: Terminal) {
        let returned = total.count(.returnedLate)
        let gone = total.count(.alreadyGone)
        let gaveUp = total.count(.gaveUp)
        if json {
            terminal.line(
                JSONValue.object([
                    "claimed": .number(Double(total.claimed)), "returned_late": .number(Double(returned)),
                    "already_gone": .number(Double(gone)), "gave_up": .number(Double(gaveUp)),
                    "held_by_live_owners": .number(Double(total.heldByLiveOwners)),
                    "left_in_journal": left.map { .number(Double($0)) } ?? .null,
                    "problems": .array(total.problems.map { .string($0) }),
                    "keys": .array(
                        total.lines.map { line in
                            .object([
                                "id": .string(environment.redact(line.id)), "room": .string(line.room.description),
                                "result": .string(line.result.rawValue), "code": line.code.map { .number(Double($0)) } ?? .null,
                                "message": .string(line.message)
                            ])
                        })
                ]).jsonText)
        } else {
            for line in total.lines where line.result == .gaveUp {
                terminal.line("gave up \(environment.redact(line.id)): \(line.message)")
            }
            for problem in total.problems { terminal.error("waitingroom returns: \(problem)") }
            terminal.line(
                "claimed \(total.claimed) · returned late \(returned) · already gone \(gone) · gave up \(gaveUp) · still held by live owners \(total.heldByLiveOwners) · left in the journal \(left.map(String.init) ?? "unknown")"
            )
        }
    }
}
