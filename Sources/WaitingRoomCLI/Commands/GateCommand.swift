import CrowdHandler
import Foundation
import NIOCore
import NIOPosix
import WaitingRoom
import WaitingRoomEmulators
import CrowdHandlerGateEngine
import QueueItGateEngine
import WaitingRoomGate
import WaitingRoomGateProxy
import ServiceLifecycle
import UnixSignals

/// `waitingroom gate`: a reverse proxy that puts a vendor's server-side check (Queue-it's
/// KnownUser flow, CrowdHandler's gatekeeper) in front of any HTTP app, until SIGINT or SIGTERM.
struct GateCommand: CLICommand {
    static let about = CommandDescription(
        name: "gate",
        abstract: "A vendor's waiting-room gate in front of any HTTP app: as a reverse proxy, or answering nginx, Caddy, Traefik or Envoy (--authz).",
        discussion: """
            With --authz the gate forwards nothing: the proxy you run asks it about each request
            (nginx auth_request, Caddy forward_auth, Traefik ForwardAuth, Envoy ext_authz) on
            /.waitingroom/auth and sends browsers it answers 401 to /.waitingroom/start?rd=URL;
            deploy/nginx/waitingroom.conf.template and deploy/caddy/Caddyfile are ready to use
            (deploy/README.md). The subrequests of --trusted-proxy addresses are answered (default
            127.0.0.1 and ::1): 200 lets the request through (with the Set-Cookie the proxy adds),
            401 sends the visitor to the start route, 403 refuses. Queue-it pushes its
            configuration with PUT /.waitingroom/configuration (403 for a wrong hash).

            Without --authz, a reverse proxy:
            Every request goes through the vendor's gate first: a visitor without a valid session goes
            to the waiting room (302, never cached) or is refused (4xx), and never reaches the upstream;
            the rest are forwarded to --upstream (http://HOST:PORT, or unix:PATH for an app listening on a
            Unix-domain socket on this machine, which costs less than a loopback TCP hop) with their headers (minus hop-by-hop ones), plus
            X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host, bodies streamed both ways. The
            request target is decided on and forwarded in its canonical form (percent-escapes of
            unreserved characters decoded, dot segments and repeated slashes removed; an encoded / or
            backslash, a raw backslash or an encoded NUL gets 400); Connection cannot drop the framing,
            Host, Cookie or what a trigger reads; X-Forwarded-For, Forwarded and X-Real-IP come through
            only from a --trusted-proxy, X-Original-URL, X-Rewrite-URL and X-Original-URI never; a
            request with Upgrade is answered as a plain request and ends its connection. Without
            --emulator, give --public-url or --allowed-host: the Host a visitor sends must not choose
            the URL the triggers read. An
            upstream that refuses or does not answer in --timeout gives a 502 page; over
            --max-connections requests in flight get 503, and so does a client address past
            --max-connections-per-client open connections; a body slower than --body-timeout gets 408. Stops cleanly on Ctrl-C (SIGINT) or SIGTERM:
            requests in flight are finished first (within --timeout); a second one stops at once.

            --config FILE holds, for queueit: the integration configuration JSON as Queue-it's platform
            publishes it (https://{customer}.queue-it.net/status/integrationconfig/{customer});
            give --customer, and the secret key in the QUEUEIT_SECRET_KEY environment variable.
            For crowdhandler: the client settings (the JSON `check --vendor crowdhandler` reads:
            publicKey, privateKey, apiURL, waitURL, trustOnFail, safetyNetSlug, timeout in ms, ...).
            --emulator starts the embedded emulator and points the gate at it: Queue-it customer demo
            and its secret key (without --config: /static/ is let through, every other page queues in
            the room `sale`, 1 visitor/s); CrowdHandler with the demo public key (the emulator's rooms
            decide by path: /demo-open lets everyone in, /demo-queue queues, other paths pass).

            Examples:
              waitingroom gate --vendor queueit --emulator --upstream http://127.0.0.1:8080 --listen 127.0.0.1:8081
              waitingroom gate --vendor crowdhandler --emulator --mode hybrid --upstream http://127.0.0.1:8080 --listen 127.0.0.1:0
              waitingroom gate --vendor queueit --emulator --upstream http://127.0.0.1:8080 --listen 127.0.0.1:0 \\
                               --max-connections 64 --timeout 10 --connect-timeout 2
              waitingroom gate --vendor queueit --emulator --upstream unix:/run/app/http.sock --listen 127.0.0.1:8081

            With a Queue-it account (the secret key stays out of the command line):
              QUEUEIT_SECRET_KEY=<secret key> waitingroom gate --vendor queueit --customer <customer id> \\
                  --config <integrationconfig.json> --upstream http://127.0.0.1:8080 --public-url https://<your host>

            Behind nginx or Caddy, the configuration downloaded every 5 minutes, one ledger for a fleet:
              QUEUEIT_SECRET_KEY=<secret key> QUEUEIT_API_KEY=<API key> waitingroom gate --authz --vendor queueit \\
                  --customer <customer id> --config-url https://<customer id>.queue-it.net/status/integrationconfig/secure/<customer id> \\
                  --public-url https://<your host> --listen 127.0.0.1:9090 --state postgres://<user>@<host>:5432/<database>
              waitingroom gate --authz --vendor queueit --emulator --allowed-host 127.0.0.1:8080 --listen 127.0.0.1:9090
            """
    )

    var vendor = ""
    var upstream = ""
    var authz = false
    var state: String?
    var ledgerUnavailable = "open"
    var listen = "127.0.0.1:8081"
    var config: String?
    var emulator = false
    var customer: String?
    var mode = "full"
    var publicURL: String?
    var trustedProxies: [String] = []
    var allowedHosts: [String] = []
    var maxConnections = 512
    var maxPerClient = 64
    var bodyTimeout = 30
    var checkOptions = false
    var cookieSameSite: String?
    var timeout = 60
    var connectTimeout = 5
    var maxBodyBytes = GateLimits.standard.maxBodyBytes
    var threads: Int?
    var sessionMemo = 10_000
    var configURL: String?
    var configInterval = 300.0
    var metricsOptions = MetricsOptions()
    /// Seconds a visitor's connection may sit idle between requests before the gate closes it.
    static let idleSeconds = 75

    static var arguments: [CLIArgument<Self>] {
        CLIArgument.group(\.metricsOptions) + [
            .option("vendor", \.vendor, help: "queueit or crowdhandler.", isRequired: true, completion: .choices(["queueit", "crowdhandler"])),
            .option("upstream", \.upstream, help: "The app behind the gate: http://HOST:PORT, or unix:PATH (a Unix-domain socket). Not with --authz."),
            .flag("authz", \.authz, help: "Auth-subrequest mode: answer nginx auth_request, Caddy forward_auth, Traefik ForwardAuth or Envoy ext_authz on /.waitingroom/auth and browsers on /.waitingroom/start?rd=URL; the proxy forwards to the app (deploy/)."),
            .option("state", \.state, help: "Where single-use tokens are remembered, shared by every gate on it: an SQLite file PATH (one host) or postgres://USER@HOST:PORT/DB (a fleet); default: this process only.", completion: .files),
            .option("ledger-unavailable", \.ledgerUnavailable, help: "When --state cannot be reached: open (a token counts as unused; the connectors' behaviour) or closed (503).", completion: .choices(["open", "closed"])),
            .option("listen", \.listen, help: "Address to serve on, HOST:PORT (port 0 picks a free one)."),
            .option("config", \.config, help: "Queue-it integration configuration JSON, or CrowdHandler settings JSON (see above). Queue-it: SIGHUP reads it again.", completion: .files),
            .option("config-url", \.configURL, help: "Queue-it: download the integration configuration from this URL (https://{customer}.queue-it.net/status/integrationconfig/secure/{customer}; the API key in QUEUEIT_API_KEY) at start and every --config-interval, in the background; the last good one stays on any failure."),
            .option("config-interval", \.configInterval, help: "Seconds between --config-url downloads (Queue-it asks for 5 to 10 minutes)."),
            .flag("emulator", \.emulator, help: "Start the embedded emulator and point the gate at it."),
            .option("customer", \.customer, help: "Queue-it customer id (without --emulator)."),
            .option("mode", \.mode, help: "CrowdHandler: full (the API on every request) or hybrid (local signature check first)."),
            .option("public-url", \.publicURL, help: "scheme://host[:port] visitors reach the gate at (default: http:// and the Host header)."),
            .repeating("allowed-host", \.allowedHosts, help: "A Host (host or host:port) the gate answers for when --public-url is not given; others get 400 (repeatable)."),
            .repeating("trusted-proxy", \.trustedProxies, help: "A proxy's IP address whose X-Forwarded-* headers are believed (repeatable; no host names or CIDR ranges)."),
            .option("max-connections", \.maxConnections, help: "Requests in flight at once (more get 503); also the idle upstream connections kept per thread."),
            .option("max-connections-per-client", \.maxPerClient, help: "Connections one client address may hold open (more get 503; a --trusted-proxy is not bounded; 0: no bound)."),
            .option("timeout", \.timeout, help: "Seconds one upstream exchange may take, its body included."),
            .option("body-timeout", \.bodyTimeout, help: "Seconds a request body may take to arrive, from its head (slower gets 408)."),
            .option("cookie-samesite", \.cookieSameSite, help: "Queue-it: SameSite of the session cookie (Lax, Strict or None; default none, as the connectors). HttpOnly and Secure come from the integration.",
                    completion: .choices(["Lax", "Strict", "None"])),
            .flag("check-options", \.checkOptions, help: "Queue-it: gate OPTIONS requests too (by default CORS preflights pass unchecked, as the connectors' samples do)."),
            .option("connect-timeout", \.connectTimeout, help: "Seconds to connect to the upstream."),
            .option("threads", \.threads, help: "Event-loop threads that serve visitors and the upstream (default: one per core)."),
            .option("session-memo", \.sessionMemo, help: "Queue-it: valid session cookies whose decision is reused for the rest of their second, per integration (0: check every request)."),
            .option("max-body-bytes", \.maxBodyBytes, help: "Largest declared request body (Content-Length); larger gets 413. Chunked bodies stream unbounded."),
        ]
    }

    /// It serves HTTP: its tasks run on NIO's event loops.
    var servesOnEventLoops: Bool { true }

    func validate() throws(UsageError) {
        guard ["queueit", "crowdhandler"].contains(vendor) else { throw UsageError("--vendor must be queueit or crowdhandler") }
        guard CrowdHandlerGate.Mode(rawValue: mode) != nil else { throw UsageError("--mode must be full or hybrid") }
        if authz {
            guard upstream.isEmpty else { throw UsageError("--authz answers a proxy's subrequests; the proxy forwards to the app: leave out --upstream") }
        } else if upstream.isEmpty {
            throw UsageError("--upstream is required (or --authz, behind nginx, Caddy, Traefik or Envoy)")
        }
        try metricsOptions.validate()
        if configURL != nil || configInterval != 300 {
            guard vendor == "queueit" else { throw UsageError("--config-url and --config-interval are for --vendor queueit") }
        }
        if let configURL, !(configURL.hasPrefix("https://") || configURL.hasPrefix("http://")) {
            throw UsageError("--config-url must be an http(s) URL, got '\(configURL)'")
        }
        guard (1...86_400).contains(configInterval) else { throw UsageError("--config-interval must be 1…86400 seconds") }
        guard ["open", "closed"].contains(ledgerUnavailable) else { throw UsageError("--ledger-unavailable must be open or closed") }
        if let state, state.isEmpty || state.lowercased().hasSuffix(".json") {
            throw UsageError("--state for the gate must be an SQLite file or postgres://USER@HOST:PORT/DB")
        }
        guard authz || GateUpstreamAddress(parsing: upstream) != nil else {
            throw UsageError("--upstream must be http://HOST:PORT (plain HTTP) or unix:PATH (a socket path of at most \(GateUpstreamAddress.maxSocketPathBytes) bytes), got '\(upstream)'")
        }
        guard Self.hostAndPort(listen) != nil else { throw UsageError("--listen must be HOST:PORT (port 0…65535), got '\(listen)'") }
        guard (1...100_000).contains(maxConnections) else { throw UsageError("--max-connections must be 1…100000") }
        guard (1...86_400).contains(timeout) else { throw UsageError("--timeout must be 1…86400 seconds") }
        if let cookieSameSite, !["Lax", "Strict", "None"].contains(cookieSameSite) {
            throw UsageError("--cookie-samesite must be Lax, Strict or None, got '\(cookieSameSite)'")
        }
        guard (1...86_400).contains(bodyTimeout) else { throw UsageError("--body-timeout must be 1…86400 seconds") }
        guard (0...100_000).contains(maxPerClient) else { throw UsageError("--max-connections-per-client must be 0…100000") }
        guard (1...600).contains(connectTimeout) else { throw UsageError("--connect-timeout must be 1…600 seconds") }
        guard maxBodyBytes >= 0 else { throw UsageError("--max-body-bytes must be 0 or more") }
        if let threads, !(1...256).contains(threads) { throw UsageError("--threads must be 1…256") }
        guard (0...1_000_000).contains(sessionMemo) else { throw UsageError("--session-memo must be 0…1000000") }
        for host in allowedHosts where !GateOrigin.isAuthority(host) {
            throw UsageError("--allowed-host must be host or host:port, got '\(host)'")
        }
        for proxy in trustedProxies where GateOrigin.canonicalIPAddress(proxy) == nil {
            throw UsageError("--trusted-proxy must be an IP address (one proxy; no host names or CIDR ranges), got '\(proxy)'")
        }
        if let publicURL, !(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://")) {
            throw UsageError("--public-url must start with http:// or https://")
        }
        // scheme://host[:port] and nothing else: `http://` alone, a path or a query would make
        // every trigger see another URL than visitors use
        if let publicURL, let separator = publicURL.range(of: "://") {
            var authority = publicURL[separator.upperBound...]
            while authority.hasSuffix("/") { authority.removeLast() }
            guard GateOrigin.isAuthority(String(authority)) else {
                throw UsageError("--public-url must be scheme://host[:port], got \(publicURL)")
            }
        }
    }

    func run() async throws {
        try await metricsOptions.serving(command: "gate") { try await serve() }
    }

    /// Runs the gate until SIGINT or SIGTERM.
    func serve() async throws {
        let terminal = Terminal()
        guard let (host, port) = Self.hostAndPort(listen) else { throw ExitStatus.usage }
        let address = GateUpstreamAddress(parsing: upstream)
        var started: (suite: EmulatorSuite, server: EmulatorServer)?
        var store: (any StateStore)?
        let engine: any GateEngine
        var live: LiveConfiguration?
        do {
            if emulator {
                let suite = EmulatorSuite.demo()
                started = (suite, try await suite.start(logger: CLILogging.logger(label: "waitingroom.emulator")))
            }
            var ledger: GateCredentialLedger?
            if let state {
                let opened = try await StateOptions.open(state)
                store = opened
                guard let shared = opened as? any SingleUseLedger else {
                    throw WaitingRoomError.invalidConfiguration(field: "--state", "this store cannot hold single-use tokens")
                }
                ledger = GateCredentialLedger(shared, failsOpen: ledgerUnavailable == "open",
                                              logger: CLILogging.logger(label: "waitingroom.gate.ledger"))
            }
            if vendor == "queueit" {
                let configuration = try await LiveConfiguration.start(self, emulator: started, ledger: ledger, terminal: terminal)
                live = configuration
                engine = configuration.reloader.engineSwitch
            } else {
                engine = try await makeEngine(emulator: started, ledger: ledger)
            }
        } catch let error as WaitingRoomError {
            terminal.error("waitingroom gate: \(error)")
            await started?.server.stop()
            try? await store?.close()
            // a bad option or file is usage (64); a vendor API that cannot be reached is not (4)
            throw error.kind == .invalidConfiguration ? ExitStatus.usage : ExitStatus.error
        } catch {
            terminal.error("waitingroom gate: --state \(state ?? ""): \(error)")
            await started?.server.stop()
            throw ExitStatus.error
        }
        // Without a public URL the URL the triggers read is built on the visitor's Host: only
        // hosts named with --allowed-host may be used then (the demo emulator excepted).
        if publicURL == nil, allowedHosts.isEmpty, started == nil {
            terminal.error("waitingroom gate: give --public-url (or --allowed-host for each host visitors use): without them the Host a visitor sends would decide which triggers match")
            await started?.server.stop()
            try? await store?.close()
            throw ExitStatus.usage
        }
        if let server = started?.server {
            terminal.line("emulator: \(server.baseURL) (dashboard \(server.baseURL)/_emulator/)")
            // the emulator hands out passes to anyone who asks: loud, on stderr too
            terminal.error("waitingroom gate: DEMO ONLY — the embedded emulator mints passes for anyone (POST \(server.baseURL)/_emulator/queueit/tokens); this gate protects nothing. Never expose it; see SECURITY.md.")
        }

        let logger = CLILogging.logger(label: "waitingroom.gate")
        // Its own event-loop threads with --threads; NIO's shared group (one per core) otherwise.
        let ownGroup = threads.map { MultiThreadedEventLoopGroup(numberOfThreads: $0) }
        let group: any EventLoopGroup = ownGroup ?? MultiThreadedEventLoopGroup.singleton
        // behind a proxy on this machine by default: its subrequests and X-Forwarded-For are believed
        let proxies = authz && trustedProxies.isEmpty ? ["127.0.0.1", "::1"] : trustedProxies
        let origin = GateOrigin(publicBaseURL: publicURL, trustedProxies: Set(proxies), allowedHosts: Set(allowedHosts))
        let limits = GateLimits(maxBodyBytes: maxBodyBytes)
        let server: any Service
        do {
            let vendor = self.vendor
            if authz {
                let endpoint = GateAuthEndpoint(engine: engine, limits: limits, origin: origin, configurationPush: live?.push)
                server = try await GateAuthServer.bind(host: host, port: port, endpoint: endpoint, group: group,
                                                       idleTimeout: .seconds(Int64(Self.idleSeconds)), logger: logger) { bound in
                    terminal.line("waitingroom gate: listening on http://\(host):\(bound) for auth subrequests (\(endpoint.pathPrefix)/auth) and browsers (\(endpoint.pathPrefix)/start) (\(vendor)); Ctrl-C to stop.")
                }
            } else if let address {
                let configuration = GateProxyConfiguration(
                    upstream: address, engine: engine, limits: limits, origin: origin, maxConnections: maxConnections,
                    maxConnectionsPerClient: maxPerClient, connectTimeout: .seconds(Int64(connectTimeout)),
                    exchangeTimeout: .seconds(Int64(timeout)), idleTimeout: .seconds(Int64(Self.idleSeconds)),
                    bodyTimeout: .seconds(Int64(bodyTimeout)), logger: logger)
                server = try await GateProxyServer.bind(host: host, port: port, configuration: configuration, group: group) { bound in
                    terminal.line("waitingroom gate: listening on http://\(host):\(bound), forwarding to \(address.description) (\(vendor)); Ctrl-C to stop.")
                }
            } else {
                throw ExitStatus.usage
            }
        } catch {
            // a busy or impossible --listen is a bad value, as `emulate` and `--metrics-port` treat it
            terminal.error("waitingroom gate: cannot listen on \(listen): \(error)")
            await started?.server.stop()
            try? await store?.close()
            throw ExitStatus.usage
        }
        // SIGINT / SIGTERM: graceful shutdown (requests in flight finish, within the exchange
        // timeout); a second one stops at once, cutting them. Watched here rather than by the
        // service group, which cannot take the same signal for both.
        let services = ServiceGroup(configuration: .init(services: [.init(service: server)], gracefulShutdownSignals: [],
                                                         logger: CLILogging.logger(label: "waitingroom.gate.server")))
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let running = Task { try await services.run() }
        let reloading = live.map { live in Task { await live.run(terminal: terminal) } }
        let watcher = Task {
            var seen = 0
            for await _ in signals {
                seen += 1
                if seen == 1 {
                    terminal.line("waitingroom gate: stopping; requests in flight finish (a second Ctrl-C stops at once)")
                    await services.triggerGracefulShutdown()
                } else {
                    terminal.line("waitingroom gate: stopping at once; requests in flight are cut")
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
        await started?.server.stop()
        try? await store?.close()
        try? await ownGroup?.shutdownGracefully()
        if let failure {
            terminal.error("waitingroom gate: \(failure)")
            throw ExitStatus.error
        }
        terminal.line("gate stopped")
    }

    /// The engine the options name.
    func makeEngine(emulator: (suite: EmulatorSuite, server: EmulatorServer)?, ledger: GateCredentialLedger?) async throws -> any GateEngine {
        switch vendor {
        case "queueit":
            return try GateEngineFactory.queueIt(configFile: config, customer: customer,
                                                 secretKey: ProcessInfo.processInfo.environment["QUEUEIT_SECRET_KEY"],
                                                 sessionMemo: sessionMemo, checksOptions: checkOptions, cookieSameSite: cookieSameSite,
                                                 ledger: ledger, emulator: emulator)
        default:
            return try await GateEngineFactory.crowdHandler(configFile: config, mode: CrowdHandlerGate.Mode(rawValue: mode) ?? .full,
                                                            emulator: emulator)
        }
    }

    /// `HOST:PORT` split (`[::1]:8081` too), or nil.
    static func hostAndPort(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }
}
