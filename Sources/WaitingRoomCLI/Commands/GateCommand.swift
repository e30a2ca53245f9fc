import WaitingRoomGateServer

/// `waitingroom gate`: a reverse proxy that puts a vendor's server-side check (Queue-it's
/// KnownUser flow, CrowdHandler's gatekeeper) in front of any HTTP app, until SIGINT or SIGTERM.
struct GateCommand: CLICommand {
    static let about = CommandDescription(
        name: "gate",
        abstract:
            "A vendor's waiting-room gate in front of any HTTP app: as a reverse proxy, or answering nginx, Caddy, Traefik or Envoy (--authz).",
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

    var settings = GateServerSettings()
    var metricsOptions = MetricsOptions()

    static var arguments: [CLIArgument<Self>] {
        CLIArgument.group(\.metricsOptions) + [
            .option(
                "vendor", \.settings.vendor, help: "queueit or crowdhandler.", isRequired: true,
                completion: .choices(["queueit", "crowdhandler"])),
            .option(
                "upstream", \.settings.upstream,
                help: "The app behind the gate: http://HOST:PORT, or unix:PATH (a Unix-domain socket). Not with --authz."),
            .flag(
                "authz", \.settings.authz,
                help:
                    "Auth-subrequest mode: answer nginx auth_request, Caddy forward_auth, Traefik ForwardAuth or Envoy ext_authz on /.waitingroom/auth and browsers on /.waitingroom/start?rd=URL; the proxy forwards to the app (deploy/)."
            ),
            .option(
                "state", \.settings.state,
                help:
                    "Where single-use tokens are remembered, shared by every gate on it: an SQLite file PATH (one host) or postgres://USER@HOST:PORT/DB (a fleet); default: this process only.",
                completion: .files),
            .option(
                "ledger-unavailable", \.settings.ledgerUnavailable,
                help: "When --state cannot be reached: open (a token counts as unused; the connectors' behaviour) or closed (503).",
                completion: .choices(["open", "closed"])),
            .option(
                "listen", \.settings.listen,
                help:
                    "Address to serve on, HOST:PORT (port 0 picks a free one); with --authz also unix:PATH, a socket file the proxy on this machine opens (nginx: WAITINGROOM_GATE=unix:PATH)."
            ),
            .option(
                "config", \.settings.config,
                help:
                    "Queue-it integration configuration JSON, or CrowdHandler settings JSON (see above). Queue-it: SIGHUP reads it again.",
                completion: .files),
            .option(
                "config-url", \.settings.configURL,
                help:
                    "Queue-it: download the integration configuration from this URL (https://{customer}.queue-it.net/status/integrationconfig/secure/{customer}; the API key in QUEUEIT_API_KEY) at start and every --config-interval, in the background; the last good one stays on any failure."
            ),
            .option(
                "config-interval", \.settings.configInterval,
                help: "Seconds between --config-url downloads (Queue-it asks for 5 to 10 minutes)."),
            .flag("emulator", \.settings.emulator, help: "Start the embedded emulator and point the gate at it."),
            .option("customer", \.settings.customer, help: "Queue-it customer id (without --emulator)."),
            .option(
                "mode", \.settings.mode, help: "CrowdHandler: full (the API on every request) or hybrid (local signature check first)."),
            .option(
                "public-url", \.settings.publicURL,
                help: "scheme://host[:port] visitors reach the gate at (default: http:// and the Host header)."),
            .repeating(
                "allowed-host", \.settings.allowedHosts,
                help: "A Host (host or host:port) the gate answers for when --public-url is not given; others get 400 (repeatable)."),
            .repeating(
                "trusted-proxy", \.settings.trustedProxies,
                help: "A proxy's IP address whose X-Forwarded-* headers are believed (repeatable; no host names or CIDR ranges)."),
            .option(
                "max-connections", \.settings.maxConnections,
                help: "Requests in flight at once (more get 503); also the idle upstream connections kept per thread."),
            .option(
                "max-connections-per-client", \.settings.maxPerClient,
                help: "Connections one client address may hold open (more get 503; a --trusted-proxy is not bounded; 0: no bound)."),
            .option("timeout", \.settings.timeout, help: "Seconds one upstream exchange may take, its body included."),
            .option(
                "body-timeout", \.settings.bodyTimeout, help: "Seconds a request body may take to arrive, from its head (slower gets 408)."),
            .option(
                "cookie-samesite", \.settings.cookieSameSite,
                help:
                    "Queue-it: SameSite of the session cookie (Lax, Strict or None; default none, as the connectors). HttpOnly and Secure come from the integration.",
                completion: .choices(["Lax", "Strict", "None"])),
            .flag(
                "check-options", \.settings.checkOptions,
                help: "Queue-it: gate OPTIONS requests too (by default CORS preflights pass unchecked, as the connectors' samples do)."),
            .option("connect-timeout", \.settings.connectTimeout, help: "Seconds to connect to the upstream."),
            .option(
                "threads", \.settings.threads, help: "Event-loop threads that serve visitors and the upstream (default: one per core)."),
            .option(
                "session-memo", \.settings.sessionMemo,
                help:
                    "Queue-it: valid session cookies whose decision is reused for the rest of their second, per integration (0: check every request)."
            ),
            .option(
                "max-body-bytes", \.settings.maxBodyBytes,
                help: "Largest declared request body (Content-Length); larger gets 413. Chunked bodies stream unbounded.")
        ]
    }

    /// It serves HTTP: its tasks run on NIO's event loops.
    var servesOnEventLoops: Bool { true }

    func validate() throws(UsageError) {
        do throws(GateSettingsError) { try settings.validateRequired() } catch { throw UsageError(error.message) }
        try metricsOptions.validate()
        do throws(GateSettingsError) { try settings.validate() } catch { throw UsageError(error.message) }
    }

    func run() async throws {
        try await metricsOptions.serving(command: "gate") {
            let terminal = Terminal()
            let gate = GateServer(
                settings: settings, output: GateServerOutput(line: terminal.line, error: terminal.error),
                makeLogger: CLILogging.logger(label:), openStore: { try await StateOptions.open($0) })
            do { try await gate.run() } catch GateServerFailure.usage { throw ExitStatus.usage } catch { throw ExitStatus.error }
        }
    }
}
