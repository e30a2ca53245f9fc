import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import QueueIt
import ServiceLifecycle
import WaitingRoom
import WaitingRoomEmulatorKit

/// A local emulator of Queue-it's mobile enqueue API, queue page, and a KnownUser-protected demo API.
///
/// Routes (see `Vendors/QueueIt/README.md`):
/// - `POST [/{prefix}]/api/mobileapp/queue/{customerId}/{waitingRoomId}/enqueue`
/// - `GET  [/{prefix}]/queueit/queue/{customerId}/{waitingRoomId}?q={queueId}` — the queue page
/// - `GET  [/{prefix}]/queueit/queue/{customerId}/{waitingRoomId}/status?q={queueId}` — its status (JSON, polled by the page)
/// - `GET  [/{prefix}]/queueit/target/{customerId}/{waitingRoomId}` — the default `EventTargetUrl`
/// - `GET  /queueit/api/{customerId}/{waitingRoomId}/{name}` — protected demo API (KnownUser-style)
/// - `GET  /?c={customerId}&e={waitingRoomId}[&t={target}]…`, `/error/{code}/?…`, `/cancel/…` — the queue
///   landing a KnownUser connector redirects browsers to (`QueueItEmulator+Landing.swift`)
/// - `GET  /status/integrationconfig/secure/{customerId}` (`api-key` header) and `GET /status/integrationconfig/{customerId}`
///   — the customer's integration configuration, as KnownUser connectors download it (`QueueItEmulator+IntegrationConfig.swift`)
/// - admin under `/_emulator/queueit/`: `state`, `reset`, `faults`, `rooms/{c}/{e}`, `rooms/{c}/{e}/admit`, `tokens`,
///   `customers/{c}/integrationconfig` (`GET`, `PUT`), `customers/{c}/integrationconfig/version` (`POST`)
///
/// Absolute URLs are built from the request's `Host` header, so the emulator works on any port.
public final class QueueItEmulator: EmulatedVendor, Sendable {
    let model: QueueItEmulatorModel
    let logger: Logger

    /// - Parameters:
    ///   - configuration: customers and rooms.
    ///   - now: the time source (inject a virtual clock's `now()` in tests).
    public init(
        configuration: QueueItEmulatorConfiguration = .demo,
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "waitingroom.queueit.emulator")
    ) {
        self.model = QueueItEmulatorModel(configuration: configuration, now: now)
        self.logger = logger
    }

    /// Adds every Queue-it route to `router`.
    package func addRoutes(to router: Router<BasicRequestContext>) {
        let enqueue: @Sendable (Request, BasicRequestContext) async throws -> Response = { [self] req, ctx in
            try await self.handleEnqueue(req, ctx, prefix: ctx.parameters.get("prefix"))
        }
        router.post("/api/mobileapp/queue/:customerId/:waitingRoomId/enqueue", use: enqueue)
        router.post("/:prefix/api/mobileapp/queue/:customerId/:waitingRoomId/enqueue", use: enqueue)
        let page: @Sendable (Request, BasicRequestContext) async throws -> Response = { [self] req, ctx in
            await self.handleQueuePage(req, ctx, prefix: ctx.parameters.get("prefix"))
        }
        router.get("/queueit/queue/:customerId/:waitingRoomId", use: page)
        router.get("/:prefix/queueit/queue/:customerId/:waitingRoomId", use: page)
        let status: @Sendable (Request, BasicRequestContext) async throws -> Response = { [self] req, ctx in
            await self.handleQueueStatus(req, ctx)
        }
        router.get("/queueit/queue/:customerId/:waitingRoomId/status", use: status)
        router.get("/:prefix/queueit/queue/:customerId/:waitingRoomId/status", use: status)
        let target: @Sendable (Request, BasicRequestContext) async throws -> Response = { req, ctx in
            let c = EmulatorHTTP.pathParameter(ctx.parameters, "customerId")
            let e = EmulatorHTTP.pathParameter(ctx.parameters, "waitingRoomId")
            let token = req.uri.queryParameters["queueittoken"].map(String.init)
            return Self.response(
                200, Array(QueueItQueuePageHTML.target(customer: c, room: e, token: token).utf8), type: "text/html; charset=utf-8")
        }
        router.get("/queueit/target/:customerId/:waitingRoomId", use: target)
        router.get("/:prefix/queueit/target/:customerId/:waitingRoomId", use: target)
        router.get("/queueit/api/:customerId/:waitingRoomId/:name") { [self] req, ctx in
            self.handleProtectedAPI(req, ctx)
        }
        // The queue landing a KnownUser connector redirects browsers to (`/?c=&e=&t=…`, `/error/…`, `/cancel/…`).
        addLandingRoutes(to: router)
        // The integration configuration KnownUser connectors download, and its admin routes.
        addIntegrationConfigRoutes(to: router)
        // Admin: the kit's state, reset and faults; Queue-it's rooms and tokens.
        addAdminRoutes(to: router)
        router.post("/_emulator/queueit/tokens") { [self] req, _ in
            try await self.handleMintToken(req)
        }
        router.post("/_emulator/queueit/enqueuetokens") { [self] req, _ in
            try await self.handleMintEnqueueToken(req)
        }
    }

    // MARK: handlers

    static func response(_ status: Int, _ body: [UInt8], type: String = "application/json", headers: [(String, String)] = []) -> Response {
        var fields: HTTPFields
        if type == "application/json" {
            fields = jsonFields  // every enqueue answer: built once
        } else {
            fields = HTTPFields()
            fields[.contentType] = type
        }
        for (k, v) in headers {
            if let name = HTTPField.Name(k) { fields.append(HTTPField(name: name, value: v)) }
        }
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    static let jsonFields: HTTPFields = [.contentType: "application/json"]

    static func response(_ a: QueueItEmulatorModel.Answer) -> Response {
        response(a.status, a.body, type: a.contentType, headers: a.headers)
    }

    /// `scheme://host[:port]` of a request (plain http: the emulator serves loopback).
    static func base(_ req: Request) -> String {
        let host = req.head.authority ?? "127.0.0.1"
        return "http://\(host)"
    }

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")

    static func clientIP(_ req: Request) -> String? { clientIP(req.headers) }

    static func clientIP(_ headers: HTTPFields) -> String? {
        guard let name = forwardedFor, let xff = headers[name] else { return nil }
        let first = xff.split(separator: ",").first.map { $0.trimmingCharacters(in: CharacterSet.whitespaces) } ?? ""
        return first.isEmpty ? nil : first
    }

    static func readJSON(_ req: Request) async throws -> [String: Any]? {
        let buf = try await EmulatorHTTP.body(req, upTo: 1 << 20)
        let bytes = Array(buf.readableBytesView)
        if bytes.isEmpty { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(bytes), options: [])) as? [String: Any]
    }

    func handleEnqueue(_ req: Request, _ ctx: BasicRequestContext, prefix: String?) async throws -> Response {
        let c = EmulatorHTTP.pathParameter(ctx.parameters, "customerId")
        let e = EmulatorHTTP.pathParameter(ctx.parameters, "waitingRoomId")
        let bytes: [UInt8]
        do { bytes = Array(try await EmulatorHTTP.body(req, upTo: QueueItEnqueueResponse.maxBodyBytes).readableBytesView) } catch {
            return Self.response(413, QueueItEmulatorModel.json(["error": "enqueue body too large"]))
        }
        if let fault = model.takeFault(for: .enqueue), let answer = await Self.apply(fault, on: .enqueue) {
            return answer
        }
        return Self.response(
            model.enqueue(customer: c, room: e, body: bytes, base: Self.base(req), prefix: prefix, clientIP: Self.clientIP(req)))
    }

    /// The answer to an enqueue call (`POST [/{prefix}]/api/mobileapp/queue/{c}/{e}/enqueue`) when
    /// it can be given right away, exactly as the route would give it: `nil` for any other request,
    /// for path segments that need decoding, and while a fault (or chaos) is pending for enqueue
    /// calls (the route applies it). The server sends it from its event loop.
    package func inlineAnswer(_ head: HTTPTypes.HTTPRequest, body: ByteBuffer?) -> EmulatorInlineReply? {
        guard head.method == .post, let path = head.path, !path.contains("%"), !path.contains("?") else { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        // "", [prefix,] "api", "mobileapp", "queue", c, e, "enqueue"
        let offset: Int
        switch segments.count {
        case 7: offset = 0
        case 8: offset = 1
        default: return nil
        }
        guard segments[0].isEmpty, segments[1 + offset] == "api", segments[2 + offset] == "mobileapp",
            segments[3 + offset] == "queue", segments[6 + offset] == "enqueue",
            !segments[4 + offset].isEmpty, !segments[5 + offset].isEmpty, offset == 0 || !segments[1].isEmpty
        else { return nil }
        guard !model.hasFault(for: .enqueue) else { return nil }
        let bytes = body.map { Array($0.readableBytesView) } ?? []
        let answer = model.enqueue(
            customer: String(segments[4 + offset]), room: String(segments[5 + offset]), body: bytes,
            base: "http://\(head.authority ?? "127.0.0.1")", prefix: offset == 1 ? String(segments[1]) : nil,
            clientIP: Self.clientIP(head.headerFields))
        return EmulatorInlineReply(
            status: answer.status, contentType: answer.contentType,
            headers: answer.headers.map { EmulatorInlineReply.Header(name: $0.0, value: $0.1) }, body: answer.body)
    }

    /// What an injected fault does to a request of kind `request`: the response to send instead,
    /// or nil to answer normally (after a `delay`). The queue page gets HTML, the API JSON.
    static func apply(_ fault: EmulatorFault, on request: QueueItEmulatorFault.Target) async -> Response? {
        let html = request == .queue
        return await EmulatorHTTP.apply(
            fault,
            errorPage: { status in
                html
                    ? ("<html><body>Injected fault \(status)</body></html>", "text/html; charset=utf-8")
                    : ("{\"error\":\"injected fault \(status)\"}", "application/json")
            },
            garbage: { ("<html><body>Service temporarily unavailable</body></html>", "text/html") })
    }

    func handleQueuePage(_ req: Request, _ ctx: BasicRequestContext, prefix: String?) async -> Response {
        if let fault = model.takeFault(for: .queue), let answer = await Self.apply(fault, on: .queue) {
            return answer
        }
        let c = EmulatorHTTP.pathParameter(ctx.parameters, "customerId")
        let e = EmulatorHTTP.pathParameter(ctx.parameters, "waitingRoomId")
        let q = req.uri.queryParameters["q"].map(String.init) ?? ""
        let selfURL = Self.base(req) + (req.uri.description.hasPrefix("/") ? req.uri.description : "/" + req.uri.description)
        return Self.response(model.queuePage(customer: c, room: e, queueId: q, selfURL: selfURL))
    }

    /// The queue page's status route (polled by its script); `queue` faults apply to it too.
    func handleQueueStatus(_ req: Request, _ ctx: BasicRequestContext) async -> Response {
        if let fault = model.takeFault(for: .queue), let answer = await Self.apply(fault, on: .enqueue) {
            return answer
        }
        let c = EmulatorHTTP.pathParameter(ctx.parameters, "customerId")
        let e = EmulatorHTTP.pathParameter(ctx.parameters, "waitingRoomId")
        let q = req.uri.queryParameters["q"].map(String.init) ?? ""
        return Self.response(model.queueStatus(customer: c, room: e, queueId: q))
    }

    func handleProtectedAPI(_ req: Request, _ ctx: BasicRequestContext) -> Response {
        let c = EmulatorHTTP.pathParameter(ctx.parameters, "customerId")
        let e = EmulatorHTTP.pathParameter(ctx.parameters, "waitingRoomId")
        let name = EmulatorHTTP.pathParameter(ctx.parameters, "name")
        guard let secret = model.secretKey(customer: c), let room = model.room(customer: c, room: e) else {
            return Self.response(404, QueueItEmulatorModel.json(["error": "unknown room \(c)/\(e)"]))
        }
        let base = Self.base(req) + (room.proxyPrefix.map { "/" + $0 } ?? "")
        let settings = QueueItKnownUserSettings(
            customerId: c, secretKey: secret, eventId: e, queueBaseURL: base,
            layoutName: room.layoutName)
        var headers: [(String, String)] = []
        for f in req.headers { headers.append((f.name.canonicalName, f.value)) }
        let url = Self.base(req) + req.uri.description
        let decision = QueueItRequestValidator(settings: settings).validate(
            url: url, headers: headers, clientIP: Self.clientIP(req), now: model.now())
        if decision.isPassed {
            let body = QueueItEmulatorModel.json([
                "ok": true, "resource": name, "queueId": decision.queueId ?? "",
                "redirectType": decision.redirectType ?? ""
            ])
            return Self.response(200, body, headers: decision.responseHeaders)
        }
        let body = QueueItEmulatorModel.json(["ok": false, "queue": true, "reason": decision.rejection?.rawValue ?? "queue"])
        return Self.response(decision.isAjax ? 200 : 302, body, headers: decision.responseHeaders)
    }

    func handleMintToken(_ req: Request) async throws -> Response {
        guard let obj = try await Self.readJSON(req),
            let c = obj["customerId"] as? String, let e = obj["waitingRoomId"] as? String,
            let secret = model.secretKey(customer: c)
        else {
            return Self.response(
                400, QueueItEmulatorModel.json(["error": "customerId and waitingRoomId of a configured customer are required"]))
        }
        let expiresIn = QueueItJSON.int(obj["expiresIn"]) ?? 600
        let rt = QueueItRedirectType(rawValue: (obj["redirectType"] as? String) ?? "queue")
        do {
            let token = try QueueItTokenMinter(secretKey: (obj["secretKey"] as? String) ?? secret).mint(
                eventId: (obj["eventId"] as? String) ?? e,
                queueId: (obj["queueId"] as? String) ?? QueueItEmulatorModel.queueId(number: 0, random: UInt64.random(in: 0...UInt64.max)),
                expiresAt: Int64(model.now().timeIntervalSince1970) + Int64(expiresIn), redirectType: rt,
                cookieValidityMinutes: QueueItJSON.int(obj["cookieValidityMinutes"]), clientIP: obj["clientIP"] as? String)
            return Self.response(200, QueueItEmulatorModel.json(["token": token]))
        } catch {
            return Self.response(400, QueueItEmulatorModel.json(["error": error.description]))
        }
    }

    /// `POST /_emulator/queueit/enqueuetokens` `{"customerId", ["waitingRoomId", "expiresIn" (s; omitted: no
    /// expiry), "key", "secretKey", "tokenIdentifier"]}` ⇒ `{"token": …}`: an enqueue token for tests.
    func handleMintEnqueueToken(_ req: Request) async throws -> Response {
        guard let obj = try await Self.readJSON(req), let c = obj["customerId"] as? String,
            let secret = model.secretKey(customer: c)
        else {
            return Self.response(400, QueueItEmulatorModel.json(["error": "customerId of a configured customer is required"]))
        }
        let token = mintEnqueueToken(
            customerId: c, waitingRoomId: obj["waitingRoomId"] as? String,
            expiresIn: QueueItJSON.int(obj["expiresIn"]).map { .seconds($0) },
            key: obj["key"] as? String, secretKey: (obj["secretKey"] as? String) ?? secret,
            tokenIdentifier: obj["tokenIdentifier"] as? String)
        return Self.response(200, QueueItEmulatorModel.json(["token": token ?? ""]))
    }

    // MARK: admin from Swift

    /// An enqueue token (``QueueItEnqueueTokenMinter``) signed with the customer's secret key (or
    /// `secretKey`), issued at the emulator's `now`; nil for an unknown customer.
    public func mintEnqueueToken(
        customerId: String, waitingRoomId: String?, expiresIn: Duration? = nil, key: String? = nil,
        secretKey: String? = nil, tokenIdentifier: String? = nil
    ) -> String? {
        guard let secret = secretKey ?? model.secretKey(customer: customerId) else { return nil }
        let now = model.now()
        return QueueItEnqueueTokenMinter(secretKey: secret).mint(
            customerId: customerId, eventId: waitingRoomId, issuedAt: now, expiresAt: expiresIn.map { now.addingTimeInterval($0.seconds) },
            tokenIdentifier: tokenIdentifier ?? UUID().uuidString.lowercased(), payload: key.map { QueueItEnqueueTokenPayload(key: $0) })
    }

    /// Answers one enqueue call without HTTP (faults not applied), as a server on `baseURL`
    /// would: the status and the body bytes. For benchmarks that need the reply's bytes.
    package func answerEnqueue(
        customerId: String, waitingRoomId: String, body: [UInt8], baseURL: String,
        clientIP: String? = nil
    ) -> (status: Int, body: [UInt8]) {
        let answer = model.enqueue(customer: customerId, room: waitingRoomId, body: body, base: baseURL, prefix: nil, clientIP: clientIP)
        return (answer.status, answer.body)
    }

    /// Queues a fault (Queue-it's older form; ``EmulatorFaultQueue/add(_:)`` takes the kit's).
    package func inject(_ fault: QueueItEmulatorFault) { model.faults.add(fault.emulatorFault) }
    /// Admits `count` visitors of a room now.
    @discardableResult package func admit(customerId: String, waitingRoomId: String, count: Int) -> Bool {
        model.admit(customer: customerId, room: waitingRoomId, count: count)
    }
    /// How many enqueue calls were served.
    package var enqueueCount: Int { model.state.withLockedValue { $0.enqueueCount } }

    /// The counters (the same figures as `GET /_emulator/queueit/state`).
    package var counters: QueueItEmulatorCounters { model.counters() }

    /// Faults injected so far, on every request kind (`faultsInjected` in the state JSON).
    package var faultsInjected: Int { counters.faultsInjected }

    /// Queue ids the queue page has handed a `queueittoken` (each admitted visitor whose turn
    /// answer was sent at least once).
    package var passedQueueIds: Set<String> { model.passedQueueIds() }

    // MARK: EmulatedVendor

    package static var vendorID: String { QueueItConfiguration.vendorID }
    package var faultQueue: EmulatorFaultQueue { model.faults }
    package var faultVocabulary: EmulatorFaultVocabulary { QueueItEmulatorFault.vocabulary }
    /// The enqueue call and the queue page (with its status polls): `load --chaos N` installs
    /// `8 × N` faults, served in rotation after the faults added one by one.
    package var chaosKinds: [String] { [QueueItEmulatorFault.Target.enqueue.rawValue, QueueItEmulatorFault.Target.queue.rawValue] }
    public func stateJSON() -> JSONValue {
        (try? JSONValue.parse(String(decoding: QueueItEmulatorModel.json(model.snapshot()), as: UTF8.self))) ?? .object([:])
    }
    /// Forgets visitors, counters and faults.
    public func reset() { model.reset() }

    /// Rooms are `{customerId}/{waitingRoomId}`.
    package var roomPathArity: Int { 2 }

    /// Changes a room (`state`, `admitPerSecond`, …; keys not given keep their values); answers
    /// the state document.
    package func updateRoom(_ path: [String], with patch: JSONValue) throws -> JSONValue {
        guard case .object = patch,
            let object = try? JSONSerialization.jsonObject(with: Data(patch.jsonText.utf8)) as? [String: Any]
        else {
            throw WaitingRoomError.invalidConfiguration(field: "body", "expected a room object", vendor: Self.vendorID)
        }
        do {
            try model.update(customer: path[0], room: path[1], patch: object)
        } catch {
            if error.message == "unknown room" { throw EmulatorRoomError.unknownRoom(path.joined(separator: "/")) }
            throw WaitingRoomError.invalidConfiguration(field: error.field, error.message, vendor: Self.vendorID)
        }
        return stateJSON()
    }

    /// Admits `count` visitors of the room now.
    package func admit(_ path: [String], count: Int) throws -> Int {
        guard model.admit(customer: path[0], room: path[1], count: count) else {
            throw EmulatorRoomError.unknownRoom(path.joined(separator: "/"))
        }
        return count
    }
}

/// A running emulator bound to 127.0.0.1 (tests, `WR_BENCH_SERVE`).
public final class QueueItEmulatorServer: Sendable {
    /// `http://127.0.0.1:{port}`.
    public let baseURL: String
    /// The bound port.
    public let port: Int
    /// The emulator behind it.
    package let emulator: QueueItEmulator
    let task: Task<Void, any Error>
    let group: ServiceGroup

    init(baseURL: String, port: Int, emulator: QueueItEmulator, task: Task<Void, any Error>, group: ServiceGroup) {
        self.baseURL = baseURL
        self.port = port
        self.emulator = emulator
        self.task = task
        self.group = group
    }

    /// Starts `emulator` on 127.0.0.1, port 0 (or `port`), and returns once it accepts connections.
    public static func start(_ emulator: QueueItEmulator = QueueItEmulator(), port: Int = 0) async throws -> QueueItEmulatorServer {
        let router = Router()
        emulator.addRoutes(to: router)
        // The combined emulator serves its own `/metrics` (every vendor); this server serves the Queue-it figures.
        router.get("/metrics") { _, _ -> Response in
            EmulatorHTTP.text(emulator.metricsText(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        let (stream, cont) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "waitingroom.queueit.emulator.server")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                cont.yield(channel.localAddress?.port ?? 0)
                cont.finish()
            }, logger: logger)
        // Run through a service group so that shutdown is graceful: cancelling the application's
        // task outright could deinit a response writer of an open connection without finishing it,
        // which NIO treats as a programming error and traps on.
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            defer { cont.finish() }
            try await group.run()
        }
        var bound = 0
        for await p in stream { bound = p }
        guard bound > 0 else {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            throw QueueItEmulatorConfigurationError(field: "port", message: "the emulator could not bind 127.0.0.1:\(port)")
        }
        return QueueItEmulatorServer(baseURL: "http://127.0.0.1:\(bound)", port: bound, emulator: emulator, task: task, group: group)
    }

    /// `127.0.0.1:{port}`: what a client configures as `waitingRoomDomain`.
    package var waitingRoomDomain: String { "127.0.0.1:\(port)" }

    /// Stops the server gracefully (open requests finish) and waits for it to finish.
    public func shutdown() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
