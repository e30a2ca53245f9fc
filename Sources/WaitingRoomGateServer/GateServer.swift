import CrowdHandlerGateEngine
import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import UnixSignals
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateProxy

/// What the running gate says: results on standard output, diagnostics on standard error.
package struct GateServerOutput: Sendable {
    /// Writes a line to standard output.
    package var line: @Sendable (String) -> Void
    /// Writes a line to standard error.
    package var error: @Sendable (String) -> Void

    package init(line: @escaping @Sendable (String) -> Void, error: @escaping @Sendable (String) -> Void) {
        self.line = line
        self.error = error
    }
}

/// Why ``GateServer/run()`` ended without serving to the end; what went wrong is already written
/// to the output's standard error.
package enum GateServerFailure: Error, Sendable {
    /// A bad option, file or address (`waitingroom` exits 64).
    case usage
    /// A vendor API, the state store or the server failed (`waitingroom` exits 4).
    case failure
}

/// `waitingroom gate` running: builds the vendor's engine from the ``GateServerSettings``
/// (Queue-it's configuration kept current by ``GateLiveConfiguration``), starts the embedded
/// emulator and the `--state` ledger when asked, and serves the reverse proxy
/// (`GateProxyServer`) or the auth-subrequest server (`GateAuthServer`) until SIGINT or SIGTERM.
package struct GateServer: Sendable {
    package let settings: GateServerSettings
    package let output: GateServerOutput
    /// A logger for a label (the CLI's level).
    package let makeLogger: @Sendable (String) -> Logger
    /// Opens the store `--state` names.
    package let openStore: @Sendable (String) async throws -> any StateStore

    package init(
        settings: GateServerSettings, output: GateServerOutput, makeLogger: @escaping @Sendable (String) -> Logger,
        openStore: @escaping @Sendable (String) async throws -> any StateStore
    ) {
        self.settings = settings
        self.output = output
        self.makeLogger = makeLogger
        self.openStore = openStore
    }

    /// Runs the gate until SIGINT or SIGTERM (a second one cuts the drain short).
    /// - Throws: ``GateServerFailure`` once its reason is written to standard error.
    package func run() async throws(GateServerFailure) {
        let settings = self.settings
        let output = self.output
        let address: GateListenAddress
        if let socket = GateListenAddress(unixSocket: settings.listen) {
            address = socket
        } else if let (host, port) = GateServerSettings.hostAndPort(settings.listen) {
            address = .tcp(host: host, port: port)
        } else {
            throw .usage
        }
        let backing = try await startBacking()
        // Without a public URL the URL the triggers read is built on the visitor's Host: only
        // hosts named with --allowed-host may be used then (the demo emulator excepted).
        if settings.publicURL == nil, settings.allowedHosts.isEmpty, backing.started == nil {
            output.error(
                "waitingroom gate: give --public-url (or --allowed-host for each host visitors use): without them the Host a visitor sends would decide which triggers match"
            )
            await backing.close()
            throw .usage
        }
        if let server = backing.started?.server {
            output.line("emulator: \(server.baseURL) (dashboard \(server.baseURL)/_emulator/)")
            // the emulator hands out passes to anyone who asks: loud, on stderr too
            output.error(
                "waitingroom gate: DEMO ONLY — the embedded emulator mints passes for anyone (POST \(server.baseURL)/_emulator/queueit/tokens); this gate protects nothing. Never expose it; see SECURITY.md."
            )
        }
        // Its own event-loop threads with --threads; NIO's shared group (one per core) otherwise.
        let ownGroup = settings.threads.map { MultiThreadedEventLoopGroup(numberOfThreads: $0) }
        let group: any EventLoopGroup = ownGroup ?? MultiThreadedEventLoopGroup.singleton
        let server: any Service
        do {
            server = try await bindServer(address, backing: backing, group: group)
        } catch {
            // a busy or impossible --listen is a bad value, as `emulate` and `--metrics-port` treat it
            output.error("waitingroom gate: cannot listen on \(settings.listen): \(error)")
            await backing.close()
            throw .usage
        }
        try await serve(server, backing: backing, ownGroup: ownGroup)
    }

    /// What the gate serves with: the embedded emulator and the `--state` store (each when
    /// asked), the vendor's engine, and Queue-it's live configuration.
    private struct Backing {
        var started: (suite: EmulatorSuite, server: EmulatorServer)?
        var store: (any StateStore)?
        var engine: any GateEngine
        var live: GateLiveConfiguration?

        /// Stops the emulator and closes the store.
        func close() async {
            await started?.server.stop()
            try? await store?.close()
        }
    }

    /// Starts the embedded emulator and opens the `--state` ledger when asked, and builds the
    /// vendor's engine.
    /// - Throws: ``GateServerFailure`` once its reason is written to standard error.
    private func startBacking() async throws(GateServerFailure) -> Backing {
        let settings = self.settings
        let output = self.output
        var started: (suite: EmulatorSuite, server: EmulatorServer)?
        var store: (any StateStore)?
        do {
            if settings.emulator {
                let suite = EmulatorSuite.demo()
                started = (suite, try await suite.start(logger: makeLogger("waitingroom.emulator")))
            }
            var ledger: GateCredentialLedger?
            if let state = settings.state {
                let opened = try await openStore(state)
                store = opened
                guard let shared = opened as? any SingleUseLedger else {
                    throw WaitingRoomError.invalidConfiguration(field: "--state", "this store cannot hold single-use tokens")
                }
                ledger = GateCredentialLedger(
                    shared, failsOpen: settings.ledgerUnavailable == "open",
                    logger: makeLogger("waitingroom.gate.ledger"))
            }
            if settings.vendor == "queueit" {
                let configuration = try await GateLiveConfiguration.start(
                    settings, emulator: started, ledger: ledger, output: output,
                    makeLogger: makeLogger)
                return Backing(started: started, store: store, engine: configuration.reloader.engineSwitch, live: configuration)
            }
            let engine = try await GateEngineFactory.crowdHandler(
                configFile: settings.config,
                mode: CrowdHandlerGate.Mode(rawValue: settings.mode) ?? .full, emulator: started)
            return Backing(started: started, store: store, engine: engine, live: nil)
        } catch let error as WaitingRoomError {
            output.error("waitingroom gate: \(error)")
            await started?.server.stop()
            try? await store?.close()
            // a bad option or file is usage (64); a vendor API that cannot be reached is not (4)
            throw error.kind == .invalidConfiguration ? .usage : .failure
        } catch {
            output.error("waitingroom gate: --state \(settings.state ?? ""): \(error)")
            await started?.server.stop()
            throw .failure
        }
    }

    /// Binds the auth-subrequest server (`--authz`, on TCP or a socket file) or the reverse proxy
    /// (TCP) on `address`, and says where it listens once bound.
    private func bindServer(_ address: GateListenAddress, backing: Backing, group: any EventLoopGroup) async throws -> any Service {
        let settings = self.settings
        let output = self.output
        let engine = backing.engine
        let logger = makeLogger("waitingroom.gate")
        // behind a proxy on this machine by default: its subrequests and X-Forwarded-For are believed
        var proxies = settings.authz && settings.trustedProxies.isEmpty ? ["127.0.0.1", "::1"] : settings.trustedProxies
        // on a socket file, the proxy is whoever may open it (its mode and folder decide)
        if case .unixSocket = address { proxies.append(GateListenAddress.unixSocketPeer) }
        let origin = GateOrigin(publicBaseURL: settings.publicURL, trustedProxies: Set(proxies), allowedHosts: Set(settings.allowedHosts))
        let limits = GateLimits(maxBodyBytes: settings.maxBodyBytes)
        let idle = TimeAmount.seconds(Int64(GateServerSettings.idleSeconds))
        let vendor = settings.vendor
        if settings.authz {
            let endpoint = GateAuthEndpoint(engine: engine, limits: limits, origin: origin, configurationPush: backing.live?.push)
            let routes =
                "for auth subrequests (\(endpoint.pathPrefix)/auth) and browsers (\(endpoint.pathPrefix)/start) (\(vendor)); Ctrl-C to stop."
            switch address {
            case .unixSocket(let path):
                return try await GateAuthServer.bind(unixSocket: path, endpoint: endpoint, group: group, idleTimeout: idle, logger: logger)
                { _ in
                    output.line("waitingroom gate: listening on unix:\(path) \(routes)")
                }
            case .tcp(let host, let port):
                return try await GateAuthServer.bind(
                    host: host, port: port, endpoint: endpoint, group: group, idleTimeout: idle, logger: logger
                ) {
                    bound in
                    output.line("waitingroom gate: listening on http://\(host):\(bound) \(routes)")
                }
            }
        }
        guard case .tcp(let host, let port) = address else { throw GateServerFailure.usage }
        guard let upstream = GateUpstreamAddress(parsing: settings.upstream) else { throw GateServerFailure.usage }
        let configuration = GateProxyConfiguration(
            upstream: upstream, engine: engine, limits: limits, origin: origin, maxConnections: settings.maxConnections,
            maxConnectionsPerClient: settings.maxPerClient, connectTimeout: .seconds(Int64(settings.connectTimeout)),
            exchangeTimeout: .seconds(Int64(settings.timeout)), idleTimeout: idle,
            bodyTimeout: .seconds(Int64(settings.bodyTimeout)), logger: logger)
        return try await GateProxyServer.bind(host: host, port: port, configuration: configuration, group: group) { bound in
            output.line(
                "waitingroom gate: listening on http://\(host):\(bound), forwarding to \(upstream.description) (\(vendor)); Ctrl-C to stop."
            )
        }
    }

    /// Serves `server` until SIGINT or SIGTERM, then stops the emulator, closes the store and
    /// shuts `ownGroup` down.
    /// - Throws: ``GateServerFailure`` once its reason is written to standard error.
    private func serve(_ server: any Service, backing: Backing, ownGroup: MultiThreadedEventLoopGroup?) async throws(GateServerFailure) {
        let output = self.output
        // SIGINT / SIGTERM: graceful shutdown (requests in flight finish, within the exchange
        // timeout); a second one stops at once, cutting them. Watched here rather than by the
        // service group, which cannot take the same signal for both.
        let services = ServiceGroup(
            configuration: .init(
                services: [.init(service: server)], gracefulShutdownSignals: [],
                logger: makeLogger("waitingroom.gate.server")))
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let running = Task { try await services.run() }
        let reloading = backing.live.map { live in Task { await live.run(output: output) } }
        let watcher = Task {
            var seen = 0
            for await _ in signals {
                seen += 1
                if seen == 1 {
                    output.line("waitingroom gate: stopping; requests in flight finish (a second Ctrl-C stops at once)")
                    await services.triggerGracefulShutdown()
                } else {
                    output.line("waitingroom gate: stopping at once; requests in flight are cut")
                    running.cancel()
                    return
                }
            }
        }
        var failure: (any Error)?
        do {
            try await running.value
        } catch is CancellationError {
            // the second signal: the drain was cut short, as asked
        } catch {
            failure = error
        }
        watcher.cancel()
        reloading?.cancel()
        await backing.close()
        try? await ownGroup?.shutdownGracefully()
        if let failure {
            output.error("waitingroom gate: \(failure)")
            throw .failure
        }
        output.line("gate stopped")
    }
}
