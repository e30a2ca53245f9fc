import Foundation
import Hummingbird
import QueueItGateEngine
import WaitingRoomGate
import WaitingRoomGateHummingbird
import WaitingRoomGateTestSupport
import WaitingRoomTesting
import WebDriver

#if Vapor
    import Vapor
    import WaitingRoomGateVapor
#endif

/// The one Queue-it configuration every front is attacked with: `/static/` is let through (an
/// Ignore action) and every other path queues in `sale`; first, a form at `/static/form` whose
/// body holds `queue-me` queues too (a `RequestBodyValidator`: every front reads bodies first). The attacker never holds a pass, so any
/// request that reaches the app outside `/static/` got past the gate.
enum AttackConfiguration {
    static let openPrefix = "/static/"
    static let customer = "demo"
    static let secret = "attack-secret-key-0123456789"
    static let host = "shop.example"
    static let json = """
        {"Description": "attacks", "CustomerId": "demo", "AccountId": "demo", "Version": 3, "PublishDate": "2026-11-27T10:00:00Z",
         "Integrations": [
           {"Name": "form", "ActionType": "Queue", "EventId": "sale", "QueueDomain": "queue.example", "CookieValidityMinute": 10,
            "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
              {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Equals", "ValueToCompare": "/static/form",
               "IsNegative": false, "IsIgnoreCase": false},
              {"ValidatorType": "RequestBodyValidator", "Operator": "Contains", "ValueToCompare": "queue-me",
               "IsNegative": false, "IsIgnoreCase": false}]}]},
           {"Name": "static", "ActionType": "Ignore", "EventId": "", "QueueDomain": "",
            "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
              {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/static/",
               "IsNegative": false, "IsIgnoreCase": false}]}]},
           {"Name": "all", "ActionType": "Queue", "EventId": "sale", "QueueDomain": "queue.example", "CookieValidityMinute": 10,
            "RedirectLogic": "AllowTParameter",
            "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
              {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/",
               "IsNegative": false, "IsIgnoreCase": false}]}]}
         ]}
        """

    static func engine() throws -> QueueItGate {
        try QueueItGate(customerId: customer, secretKey: secret, configuration: try QueueItIntegrationConfig(json: json))
    }
}

/// One way the gate stands in front of an app: the reverse proxy (`waitingroom gate`, the real
/// binary, in front of a Hummingbird app), the Hummingbird middleware, or the Vapor middleware.
/// The app records what reached it (``AppLog``).
enum GateFrontKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case proxy, hummingbird, vapor
    /// The auth mode behind Debian's nginx and Caddy, started with the files `deploy/` ships.
    case nginx, caddy
    var description: String { rawValue }

    /// The fronts this build has (Vapor's behind its trait).
    static var available: [GateFrontKind] {
        #if Vapor
            [.proxy, .hummingbird, .vapor]
        #else
            [.proxy, .hummingbird]
        #endif
    }

    /// The auth mode's fronts (nginx and Caddy: the proxy parses the visitor's bytes, the gate
    /// decides on what it is told).
    static let deployed: [GateFrontKind] = [.nginx, .caddy]
}

/// A running front: where to send bytes, and what reached the app.
struct GateFront: Sendable {
    let kind: GateFrontKind
    let port: Int
    let log: AppLog
    /// The gate's process (the proxy), for its memory.
    let process: SpawnedProcess?

    /// Runs `body` with `waitingroom gate --vendor crowdhandler --emulator` (full mode) in front of
    /// the recording app: the emulator's rooms decide by path (`/demo-queue` queues).
    static func withCrowdHandlerProxy(_ body: @Sendable (GateFront) async throws -> Void) async throws {
        let log = AppLog()
        try await RecordingApp.serve(log: log, middleware: nil) { upstreamPort in
            let process = try SpawnedProcess.spawn(
                ProxyProcess.binary,
                arguments: [
                    "gate", "--vendor", "crowdhandler", "--emulator", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--listen",
                    "127.0.0.1:0"
                ], directory: ProxyProcess.packageRoot, stdin: .discard, stdout: .pipe, stderr: .discard)
            do {
                let port = try await ProxyProcess.port(of: process)
                try await body(GateFront(kind: .proxy, port: port, log: log, process: process))
            } catch {
                ProxyProcess.stop(process)
                throw error
            }
            ProxyProcess.stop(process)
        }
    }

    /// Runs `body` with a fresh front of `kind`; everything is stopped however `body` ends.
    static func with(_ kind: GateFrontKind, _ body: @Sendable (GateFront) async throws -> Void) async throws {
        let log = AppLog()
        switch kind {
        case .proxy:
            try await RecordingApp.serve(log: log, middleware: nil) { upstreamPort in
                let process = try ProxyProcess.start(upstreamPort: upstreamPort)
                do {
                    let port = try await ProxyProcess.port(of: process)
                    try await body(GateFront(kind: kind, port: port, log: log, process: process))
                } catch {
                    ProxyProcess.stop(process)
                    throw error
                }
                ProxyProcess.stop(process)
            }
        case .hummingbird:
            let middleware = GateMiddleware<GateRequestContext>(
                engine: try AttackConfiguration.engine(), allowedHosts: [AttackConfiguration.host])
            try await RecordingApp.serve(log: log, middleware: middleware) { port in
                try await body(GateFront(kind: kind, port: port, log: log, process: nil))
            }
        case .vapor:
            #if Vapor
                try await VaporRecordingApp.serve(log: log) { port in
                    try await body(GateFront(kind: kind, port: port, log: log, process: nil))
                }
            #endif
        case .nginx, .caddy:
            let endpoint = GateAuthEndpoint(
                engine: try AttackConfiguration.engine(),
                origin: GateOrigin(trustedProxies: ["127.0.0.1"], allowedHosts: [AttackConfiguration.host]))
            try await RecordingApp.serve(log: log, middleware: nil) { appPort in
                try await GateServers.withAuth(endpoint) { gatePort in
                    try await DeployedProxy.with(kind == .nginx ? .nginx : .caddy, upstreamPort: appPort, gatePort: gatePort) { proxy in
                        try await body(GateFront(kind: kind, port: proxy.port, log: log, process: nil))
                    }
                }
            }
        }
    }

    /// Sends `text` (a whole exchange, pipelined requests included) and returns the answer text:
    /// what came until the connection closed, `quiet` seconds passed without a byte once
    /// something came, or `readTimeout` seconds passed with nothing (a loaded machine in a full
    /// parallel run can take seconds to answer).
    func send(_ text: String, readTimeout: Double = 15, quiet: Double = 0.5) async throws -> String {
        try await RawHTTP.exchange(port: port, Array(text.utf8), readTimeout: readTimeout, quietAfterFirstByte: quiet)
    }
}

/// The app: a Hummingbird server on 127.0.0.1 port 0 whose every route records the request and
/// answers `app {path}`; POST bodies are read and dropped. With `middleware`, the gate's
/// Hummingbird middleware stands in front of the routes.
enum RecordingApp {
    static func serve(log: AppLog, middleware: GateMiddleware<GateRequestContext>?, _ body: @Sendable (Int) async throws -> Void)
        async throws
    {
        let router = Router(context: GateRequestContext.self)
        if let middleware { router.add(middleware: middleware) }
        let record: @Sendable (Request) async throws -> Void = { request in
            var headers: [(String, String)] = []
            for field in request.headers { headers.append((field.name.canonicalName, field.value)) }
            if let authority = request.head.authority { headers.append(("host", authority)) }
            var bodyBytes = 0
            for try await part in request.body { bodyBytes += part.readableBytes }
            log.record(request.method.rawValue, request.uri.description, headers: headers, bodyBytes: bodyBytes)
        }
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .options, .patch, .head] {
            router.on("**", method: method) { request, _ -> String in
                try await record(request)
                return "app \(request.uri.path)"
            }
        }
        try await LoopbackApp.serve(router, body)
    }
}

#if Vapor
    /// The app on Vapor, behind `VaporGateMiddleware`: every path and method recorded.
    enum VaporRecordingApp {
        static func serve(log: AppLog, _ body: @Sendable (Int) async throws -> Void) async throws {
            let app = try await Vapor.Application.make(.testing)
            app.logger.logLevel = .critical
            do {
                let gated = app.grouped(
                    VaporGateMiddleware(engine: try AttackConfiguration.engine(), allowedHosts: [AttackConfiguration.host]))
                for method in [Vapor.HTTPMethod.GET, .POST, .PUT, .DELETE, .OPTIONS, .PATCH] {
                    gated.on(method, "**", body: .collect(maxSize: "1mb")) { request -> String in
                        log.record(
                            request.method.rawValue, request.url.string, headers: request.headers.map { ($0.name.lowercased(), $0.value) },
                            bodyBytes: request.body.data?.readableBytes ?? 0)
                        return "app \(request.url.path)"
                    }
                }
                try await app.server.start(address: .hostname("127.0.0.1", port: 0))
                guard let port = app.http.server.shared.localAddress?.port else { throw GateTestError("the Vapor server has no port") }
                try await body(port)
            } catch {
                await app.server.shutdown()
                try await app.asyncShutdown()
                throw error
            }
            await app.server.shutdown()
            try await app.asyncShutdown()
        }
    }
#endif

/// `waitingroom gate` as an operator runs it, with the attack configuration.
enum ProxyProcess {
    /// The `waitingroom` executable next to the test bundle (or the package's debug build).
    static var binary: String { GateProcess.binary }

    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// The per-address connection bound the proxy is started with (the attacks need more than
    /// the fuzz's 16 at once; the slow-upload test fills it).
    static let maxPerClient = 24

    static func start(upstreamPort: Int) throws -> SpawnedProcess {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gate-attack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let config = folder.appendingPathComponent("integrationconfig.json")
        try Data(AttackConfiguration.json.utf8).write(to: config)
        var environment = ProcessInfo.processInfo.environment
        environment["QUEUEIT_SECRET_KEY"] = AttackConfiguration.secret
        return try SpawnedProcess.spawn(
            binary,
            arguments: [
                "gate", "--vendor", "queueit", "--customer", AttackConfiguration.customer, "--config", config.path,
                "--upstream", "http://127.0.0.1:\(upstreamPort)", "--listen", "127.0.0.1:0", "--allowed-host", AttackConfiguration.host,
                "--max-connections", "64", "--max-connections-per-client", "\(maxPerClient)", "--body-timeout", "2"
            ], environment: environment, directory: packageRoot, stdin: .discard, stdout: .pipe, stderr: .discard)
    }

    /// The port the gate printed it listens on.
    static func port(of process: SpawnedProcess) async throws -> Int {
        let (port, text) = await GateProcess.listeningPort(of: process, within: .seconds(30))
        guard let port else {
            throw GateTestError("the gate printed no address: \(text)")
        }
        return port
    }

    static func stop(_ process: SpawnedProcess) {
        process.terminate()
        _ = process.waitForExit()
        if let out = process.stdout { close(out) }
    }

    /// The process's resident set in bytes (`VmRSS`), or nil once it is gone.
    static func residentBytes(_ process: SpawnedProcess) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kib * 1024
    }
}
