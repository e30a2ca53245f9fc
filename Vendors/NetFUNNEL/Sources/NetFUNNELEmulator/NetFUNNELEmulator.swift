import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NetFUNNEL
import ServiceLifecycle
import WaitingRoom
import WaitingRoomEmulatorKit

/// A local NetFUNNEL traffic server: `/ts.wseq` in both dialects, `nf-setting.json`, admin
/// endpoints under `/_emulator/netfunnel/`, and fault injection per opcode.
///
/// Time for the state machine (segment timeout, alive expiry, retention, `tps`) comes from the
/// injected clock, so tests can run it in virtual time; injected delays are real time.
///
/// Serve it inside a shared server with ``addRoutes(to:)``, or alone with ``start(host:port:)``.
public final class NetFUNNELEmulator: EmulatedVendor, Sendable {
    /// The clock the state machine reads.
    package let clock: any WaitingRoomClock
    /// Behind NIO's lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    let state: NIOLockedValueBox<NetFUNNELServerState>
    /// The faults (the emulator kit's queue; request kinds are the opcodes).
    package let faultQueue = EmulatorFaultQueue()
    let logger: Logger

    /// Creates an emulator with `configuration` (default ``NetFUNNELEmulatorConfiguration/demo``).
    public init(
        configuration: NetFUNNELEmulatorConfiguration = .demo, clock: any WaitingRoomClock = SystemClock(),
        logger: Logger = Logger(label: "waitingroom.emulator.netfunnel")
    ) {
        self.clock = clock
        self.state = NIOLockedValueBox(NetFUNNELServerState(configuration: configuration))
        self.logger = logger
    }

    // MARK: Swift admin API

    /// The counters, after sweeping expired tickets at the clock's current time.
    public func counters() -> NetFUNNELEmulatorCounters {
        let now = clock.now()
        return state.withLockedValue { state in
            state.sweep(now: now)
            return state.counters
        }
    }

    /// The current configuration.
    package var configuration: NetFUNNELEmulatorConfiguration { state.withLockedValue { $0.configuration } }

    /// Changes one segment live (created when missing).
    package func updateSegment(
        project: String, segment: String, _ change: (inout NetFUNNELEmulatorConfiguration.Segment) -> Void
    ) {
        state.withLockedValue { state in
            var settings = state.segment(project: project, segment: segment) ?? .init()
            change(&settings)
            state.setSegment(project: project, segment: segment, settings)
        }
    }

    /// Replaces the whole configuration.
    package func setConfiguration(_ configuration: NetFUNNELEmulatorConfiguration) {
        state.withLockedValue { $0.setConfiguration(configuration) }
    }

    /// Adds a fault (NetFUNNEL's older form; ``EmulatorFaultQueue/add(_:)`` takes the kit's).
    package func inject(_ fault: NetFUNNELFault) { faultQueue.add(fault.emulatorFault) }

    /// Removes every fault.
    package func clearFaults() { faultQueue.clear() }

    /// Forgets tickets, counters and faults.
    public func reset() {
        state.withLockedValue { $0.reset() }
        faultQueue.reset()
    }

    // MARK: EmulatedVendor

    package static var vendorID: String { NetFUNNELConfiguration.vendorID }
    package var faultVocabulary: EmulatorFaultVocabulary { NetFUNNELFault.vocabulary }
    /// Issue-and-enter, the waiting poll and the key return (5101, 5002, 5004).
    package var chaosKinds: [String] { Self.chaosOpcodes.map(String.init) }
    /// The opcodes chaos mode targets.
    package static let chaosOpcodes = [5101, 5002, 5004]
    public func stateJSON() -> JSONValue {
        let now = clock.now()
        return state.withLockedValue { $0.snapshot(now: now) }
    }

    /// Rooms are `{projectKey}/{segmentKey}` (also served as `segments/{project}/{segment}`).
    package var roomPathArity: Int { 2 }

    /// Changes a segment's settings (keys not given keep their values; an unknown segment is
    /// created); answers the segment's settings.
    package func updateRoom(_ path: [String], with patch: JSONValue) throws -> JSONValue {
        let (project, segment) = (path[0], path[1])
        let reader = try ConfigurationReader(patch, path: "segments.\(project).\(segment)", vendor: Self.vendorID)
        let now = clock.now()
        return try state.withLockedValue { state -> JSONValue in
            let base = state.segment(project: project, segment: segment) ?? .init()
            let settings = try NetFUNNELEmulatorConfiguration.Segment(reader: reader, base: base, now: now)
            state.setSegment(project: project, segment: segment, settings)
            return settings.json
        }
    }

    /// NetFUNNEL admits by the segment's limit (users inside), not on request: change `limit`.
    package func admit(_ path: [String], count: Int) throws -> Int {
        throw EmulatorRoomError.unsupported(
            "NetFUNNEL admits by the segment's limit: POST rooms/\(path.joined(separator: "/")) {\"limit\": N}")
    }

    // MARK: answering

    /// An answer before it becomes HTTP.
    package struct Answer: Sendable, Equatable {
        /// HTTP status.
        package var status: Int
        /// `Content-Type`.
        package var contentType: String
        /// Body text.
        package var body: String
        /// Close the connection instead of answering.
        package var drop: Bool
        /// Real-time delay before answering.
        package var delay: Duration?
    }

    /// Answers one `/ts.wseq` query string (faults applied). Usable without HTTP.
    package func answer(query: String, clientIP: String = "127.0.0.1", host: String = "127.0.0.1", port: Int = 80) -> Answer {
        let request = NetFUNNELIncomingRequest(
            parameters: Self.decodeQuery(query), clientIP: clientIP, host: host, port: port)
        return answer(request, fault: takeCountedFault(opcode: request.opcode))
    }

    /// The `/ts.wseq` request `head` carries (`query`: the text after `?`).
    static func incoming(_ head: HTTPTypes.HTTPRequest, query: some StringProtocol) -> NetFUNNELIncomingRequest {
        let (host, port) = hostAndPort(authority: head.authority)
        let clientIP =
            forwardedFor.flatMap { head.headerFields[$0] }?.split(separator: ",").first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "127.0.0.1"
        return NetFUNNELIncomingRequest(parameters: decodeQuery(String(query)), clientIP: clientIP, host: host, port: port)
    }

    /// The answer to a `GET /ts.wseq` request when it can be given right away, exactly as the
    /// route would give it: `nil` for any other request, and while a fault is pending for the
    /// request's opcode (the route applies it). The server sends it from its event loop.
    package func inlineAnswer(_ head: HTTPTypes.HTTPRequest, body: ByteBuffer?) -> EmulatorInlineReply? { inlineAnswer(head) }

    /// The same (a `GET` has no body).
    package func inlineAnswer(_ head: HTTPTypes.HTTPRequest) -> EmulatorInlineReply? {
        guard head.method == .get, let path = head.path, path.utf8.starts(with: Self.tsWseqPath) else { return nil }
        let rest = path.utf8.dropFirst(Self.tsWseqPath.count)
        guard let first = rest.first else { return nil }  // no query: left to the route
        guard first == UInt8(ascii: "?") else { return nil }
        let incoming = Self.incoming(head, query: Substring(rest.dropFirst()))
        guard !hasFault(opcode: incoming.opcode) else { return nil }
        let answer = answer(incoming, fault: nil)
        guard !answer.drop, answer.delay == nil else { return nil }
        return EmulatorInlineReply(status: answer.status, contentType: answer.contentType, body: Array(answer.body.utf8))
    }

    static let tsWseqPath = Array("/ts.wseq".utf8)

    /// Whether a fault waits for `opcode` (it is left in place).
    func hasFault(opcode: Int?) -> Bool {
        faultQueue.has(for: NetFUNNELFault.kind(opcode))
    }

    /// The next fault for `opcode`, counted as injected.
    func takeCountedFault(opcode: Int?) -> NetFUNNELFault? {
        let fault = takeFault(opcode: opcode)
        if let fault {
            // a delayed request is counted when handled (or abandoned), a lost reply's request
            // by the state machine that handles it
            let handledLater =
                switch fault.action {
                case .delay, .loseReply: true
                default: false
                }
            state.withLockedValue { $0.countFault(opcode: opcode, request: !handledLater) }
        }
        return fault
    }

    /// Answers `request` with `fault` applied (a delay is left to the caller, in ``Answer/delay``).
    func answer(_ request: NetFUNNELIncomingRequest, fault: NetFUNNELFault?) -> Answer {
        let host = request.host
        let port = request.port
        var delay: Duration?
        switch fault?.action {
        case .dropConnection?:
            return Answer(status: 200, contentType: "text/plain", body: "", drop: true, delay: nil)
        case .loseReply?:
            let now = clock.now()
            _ = state.withLockedValue { $0.handle(request, now: now) }
            return Answer(status: 200, contentType: "text/plain", body: "", drop: true, delay: nil)
        case .httpStatus(let status)?:
            let html = "<html><head><title>\(status) Error</title></head><body><h1>\(status)</h1>emulated server error</body></html>"
            return Answer(status: status, contentType: "text/html; charset=utf-8", body: html, drop: false, delay: nil)
        case .malformedBody?:
            return Answer(
                status: 200, contentType: "application/javascript; charset=utf-8",
                body: "NetFunnel.gControl.result='50", drop: false, delay: nil)
        case .forceCode(let code)?:
            var reply = NetFUNNELReply(
                code: code,
                parameters: [
                    .init("key", request.parameters["key"] ?? ""), .init("nwait", "0"), .init("nnext", "0"),
                    .init("tps", "0.000000"), .init("ttl", "1"), .init("ip", host), .init("port", String(port)),
                    .init("msg", "\"forced by the emulator\"")
                ])
            if request.wantsJavaScript {
                reply.envelope = .javascript(prefix: request.parameters["prefix"] ?? "")
                let opcode = request.opcode ?? 0
                reply.requestType = opcode == 5101 ? 5002 : opcode
            }
            return render(reply, javascript: request.wantsJavaScript, delay: nil)
        case .delay(let duration)?:
            delay = duration
        case nil:
            break
        }
        let now = clock.now()
        let opcode = request.opcode
        let javaScript = request.wantsJavaScript
        let reply = state.withLockedValue { $0.handle(request, opcode: opcode, javaScript: javaScript, now: now) }
        return render(reply, javascript: javaScript, delay: delay)
    }

    private func render(_ reply: NetFUNNELReply, javascript: Bool, delay: Duration?) -> Answer {
        Answer(
            status: 200,
            contentType: javascript ? "application/javascript; charset=utf-8" : "text/plain; charset=utf-8",
            body: reply.rendered(), drop: false, delay: delay)
    }

    private func takeFault(opcode: Int?) -> NetFUNNELFault? {
        faultQueue.take(for: NetFUNNELFault.kind(opcode)).flatMap { NetFUNNELFault($0, opcode: opcode) }
    }

    /// Lenient query decoding: `&`-separated, first `=` splits, `+` kept, percent-decoding when valid.
    /// Works on the query's bytes in place: the emulator's hot path.
    package static func decodeQuery(_ query: String) -> [String: String] {
        var query = query
        return query.withUTF8 { b in
            var parameters: [String: String] = [:]
            parameters.reserveCapacity(16)
            let n = b.count
            var start = 0
            while start < n {
                var end = start
                while end < n, b[end] != UInt8(ascii: "&") { end += 1 }
                if end > start {
                    var equals = start
                    while equals < end, b[equals] != UInt8(ascii: "=") { equals += 1 }
                    let name = decodeComponent(b, start..<equals)
                    parameters[name] = equals < end ? decodeComponent(b, (equals + 1)..<end) : ""
                }
                start = end + 1
            }
            return parameters
        }
    }

    /// One query component, the bytes `range` of `b` (valid UTF-8, cut at ASCII bytes): `%XX`
    /// decoded (the raw text is kept when a `%` is not followed by two hex digits; decoded bytes
    /// that are not UTF-8 are repaired with U+FFFD), then spaces and tabs trimmed at both ends.
    static func decodeComponent(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        @inline(__always) func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        let raw = UnsafeBufferPointer(rebasing: b[range])
        var text: String?
        if raw.contains(UInt8(ascii: "%")) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(raw.count)
            var index = 0
            var valid = true
            while index < raw.count {
                let byte = raw[index]
                if byte == UInt8(ascii: "%") {
                    guard index + 2 < raw.count, let high = hex(raw[index + 1]), let low = hex(raw[index + 2]) else {
                        valid = false
                        break
                    }
                    bytes.append(high << 4 | low)
                    index += 3
                } else {
                    bytes.append(byte)
                    index += 1
                }
            }
            if valid { text = String(decoding: bytes, as: UTF8.self) }
        }
        guard var text else {
            // no escapes: ASCII ends other than space and tab need no trimming
            if let first = raw.first, let last = raw.last, first > 0x20, first < 0x80, last > 0x20, last < 0x80 {
                return String(decoding: raw, as: UTF8.self)
            }
            return trimmed(String(decoding: raw, as: UTF8.self))
        }
        text = trimmed(text)
        return text
    }

    /// `text` without spaces, tabs and other space separators at both ends.
    static func trimmed(_ text: String) -> String {
        func isBlank(_ scalar: Unicode.Scalar) -> Bool {
            scalar == " " || scalar == "\t" || (scalar.value > 0x7f && scalar.properties.generalCategory == .spaceSeparator)
        }
        if let first = text.unicodeScalars.first, let last = text.unicodeScalars.last, isBlank(first) || isBlank(last) {
            let scalars = text.unicodeScalars
            guard let start = scalars.firstIndex(where: { !isBlank($0) }), let end = scalars.lastIndex(where: { !isBlank($0) }) else {
                return ""
            }
            return String(scalars[start...end])
        }
        return text
    }

    /// The proposed `nf-setting.json` (docs/netfunnel-protocol.md §10.3).
    package func settingsDocument(baseURL: String) -> JSONValue {
        let configuration = self.configuration
        var projects: [JSONValue] = []
        for projectKey in configuration.projects.keys.sorted() {
            let project = configuration.projects[projectKey] ?? .init(segments: [:])
            var segments: [JSONValue] = []
            for segmentKey in project.segments.keys.sorted() {
                guard let s = project.segments[segmentKey] else { continue }
                segments.append(
                    .object([
                        "segmentKey": .string(segmentKey), "controlType": .string(s.control.rawValue),
                        "active": .bool(s.active), "entryStatus": .string(s.entryStatus.rawValue),
                        "limitedInflow": .number(Double(s.limit)), "timeoutSec": .number(s.timeoutSeconds),
                        "aliveCycleSec": .number(Double(s.aliveCycleSeconds)), "aliveExpirySec": .number(s.aliveExpirySeconds),
                        "ttlRange": .array([.number(Double(s.ttlMin)), .number(Double(s.ttlMax))]), "triggerRules": .array([])
                    ]))
            }
            projects.append(.object(["projectKey": .string(projectKey), "segments": .array(segments)]))
        }
        return .object([
            "clientId": .string(configuration.clientId), "serverUrl": .string(baseURL),
            "vwrPageUrl": .string(baseURL + "/_emulator/netfunnel/waiting-room.html"),
            "errorUrl": .string(baseURL + "/_emulator/netfunnel/error.html"),
            "networkTimeout": .number(3000), "retryCount": .number(0), "maxTtl": .number(30),
            "projects": .array(projects)
        ])
    }

    // MARK: HTTP

    struct DroppedConnection: Error {}

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")

    /// Adds `/ts.wseq`, `/nf-setting.json`, `/{clientId}.netfunnel/nf-setting.json` and the admin
    /// routes under `/_emulator/netfunnel/` to `router`.
    package func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/ts.wseq") { request, _ -> Response in try await self.serveWaitingRequest(request) }
        router.get("/nf-setting.json") { request, _ -> Response in
            Self.json(self.settingsDocument(baseURL: Self.baseURL(request)))
        }
        // The parameter is named like the Queue-it emulator's path prefix: one router serves both.
        router.get("/:prefix/nf-setting.json") { request, context -> Response in
            // Only the tenant's own document: `/{clientId}.netfunnel/nf-setting.json`.
            guard context.parameters.get("prefix") == self.configuration.clientId + ".netfunnel" else {
                return Self.text("no settings for this client id", status: 404, contentType: "text/plain; charset=utf-8")
            }
            return Self.json(self.settingsDocument(baseURL: Self.baseURL(request)))
        }
        router.get("/_emulator/netfunnel/error.html") { _, _ -> Response in
            Self.text(NetFUNNELWaitingRoomHTML.errorPage, status: 200, contentType: "text/html; charset=utf-8")
        }
        router.get("/_emulator/netfunnel/counters") { _, _ -> Response in
            let data = (try? JSONEncoder().encode(self.counters())) ?? Data("{}".utf8)
            return Self.text(String(decoding: data, as: UTF8.self), status: 200, contentType: "application/json")
        }
        addSegmentRoutes(to: router)
        // The kit's state, reset and faults.
        addAdminRoutes(to: router)
        addPageRoutes(to: router)
    }

    /// `/ts.wseq`: the request answered by the server's state, after a delay fault's wait (a
    /// connection the client closed meanwhile is counted as abandoned and never answered), or a
    /// connection dropped mid-body.
    private func serveWaitingRequest(_ request: Request) async throws -> Response {
        let incoming = Self.incoming(request.head, query: request.uri.query ?? "")
        let fault = self.takeCountedFault(opcode: incoming.opcode)
        let answer: Answer
        if case .delay(let delay)? = fault?.action {
            // A slow hop in front of the server: the request reaches the server after `delay`,
            // unless the client gave up (closed the connection) first; then it never does, and
            // no key is issued that nobody would return.
            do {
                try await request.body.consumeWithCancellationOnInboundClose { _ in try await Task.sleep(for: delay) }
            } catch {
                self.state.withLockedValue { $0.countAbandoned(opcode: incoming.opcode) }
                throw error
            }
            answer = self.answer(incoming, fault: nil)
        } else {
            answer = self.answer(incoming, fault: fault)
        }
        if answer.drop {
            return Response(
                status: .ok, headers: [.contentLength: "4096"],
                body: ResponseBody(contentLength: 4096) { _ in
                    throw DroppedConnection()
                })
        }
        return Self.text(answer.body, status: answer.status, contentType: answer.contentType)
    }

    /// `/_emulator/netfunnel/segments/:project/:segment`: a segment's settings, read and changed.
    private func addSegmentRoutes(to router: Router<BasicRequestContext>) {
        router.get("/_emulator/netfunnel/segments/:project/:segment") { _, context -> Response in
            let project = context.parameters.get("project") ?? ""
            let segment = context.parameters.get("segment") ?? ""
            guard let settings = self.state.withLockedValue({ $0.segment(project: project, segment: segment) }) else {
                return Self.text("{\"error\":\"unknown segment \(project)/\(segment)\"}", status: 404, contentType: "application/json")
            }
            return Self.json(settings.json)
        }
        let changeSegment: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, context in
            let project = context.parameters.get("project") ?? ""
            let segment = context.parameters.get("segment") ?? ""
            do {
                let body = try await Self.jsonBody(request)
                let path = "segments.\(project).\(segment)"
                let reader = try ConfigurationReader(body, path: path, vendor: "netfunnel")
                let now = self.clock.now()
                let updated = try self.state.withLockedValue { state -> NetFUNNELEmulatorConfiguration.Segment in
                    let base = state.segment(project: project, segment: segment) ?? .init()
                    let settings = try NetFUNNELEmulatorConfiguration.Segment(reader: reader, base: base, now: now)
                    state.setSegment(project: project, segment: segment, settings)
                    return settings
                }
                return Self.json(updated.json)
            } catch {
                return Self.errorResponse(error)
            }
        }
        router.put("/_emulator/netfunnel/segments/:project/:segment", use: changeSegment)
        router.post("/_emulator/netfunnel/segments/:project/:segment", use: changeSegment)
    }

    /// The waiting room page and the target page the emulated agent's flows end on.
    private func addPageRoutes(to router: Router<BasicRequestContext>) {
        router.get("/_emulator/netfunnel/waiting-room.html") { request, _ -> Response in
            let query = Self.decodeQuery(request.uri.query ?? "")
            let project = query["sid"] ?? ""
            let segment = query["aid"] ?? ""
            let message = self.state.withLockedValue { $0.segment(project: project, segment: segment)?.liveMessage } ?? ""
            let html = NetFUNNELWaitingRoomHTML.render(project: project, segment: segment, target: query["target"], liveMessage: message)
            return Self.text(html, status: 200, contentType: "text/html; charset=utf-8")
        }
        router.get("/_emulator/netfunnel/target.html") { request, _ -> Response in
            let query = Self.decodeQuery(request.uri.query ?? "")
            let html = NetFUNNELWaitingRoomHTML.target(
                project: query["sid"] ?? "", segment: query["aid"] ?? "", result: query["netfunnel"] ?? "")
            return Self.text(html, status: 200, contentType: "text/html; charset=utf-8")
        }
    }

    static func hostAndPort(_ request: Request) -> (String, Int) {
        hostAndPort(authority: request.head.authority)
    }

    static func hostAndPort(authority: String?) -> (String, Int) {
        let authority = authority ?? "127.0.0.1:80"
        if authority.hasPrefix("[") {  // IPv6 literal
            let end = authority.firstIndex(of: "]") ?? authority.endIndex
            let host = String(authority[authority.index(after: authority.startIndex)..<end])
            let rest = authority[end...].dropFirst().dropFirst()
            return (host, Int(rest) ?? 80)
        }
        // as `split(separator: ":", maxSplits: 1)`: a leading ":" is skipped, an empty authority reads 127.0.0.1
        let trimmed = authority.hasPrefix(":") ? String(authority.drop { $0 == ":" }) : authority
        guard !trimmed.isEmpty else { return ("127.0.0.1", 80) }
        guard let colon = trimmed.firstIndex(of: ":") else { return (trimmed, 80) }
        let rest = trimmed[trimmed.index(after: colon)...]
        return (String(trimmed[..<colon]), rest.isEmpty ? 80 : Int(rest) ?? 80)
    }

    static func baseURL(_ request: Request) -> String {
        let (host, port) = hostAndPort(request)
        return "http://\(host):\(port)"
    }

    static func jsonBody(_ request: Request) async throws -> JSONValue {
        var request = request
        let buffer = try await request.collectBody(upTo: 1 << 20)
        let bytes = buffer.getBytes(at: buffer.readerIndex, length: buffer.readableBytes) ?? []
        if bytes.isEmpty { return .object([:]) }
        return try JSONValue.parse(Data(bytes))
    }

    static func text(_ text: String, status: Int, contentType: String) -> Response {
        var buffer = ByteBufferAllocator().buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        let headers: HTTPFields =
            switch contentType {
            case javaScriptType: javaScriptHeaders  // every `/ts.wseq` reply: built once
            case plainType: plainHeaders
            default: [.contentType: contentType]
            }
        return Response(status: HTTPResponse.Status(code: status), headers: headers, body: ResponseBody(byteBuffer: buffer))
    }

    static let javaScriptType = "application/javascript; charset=utf-8"
    static let plainType = "text/plain; charset=utf-8"
    static let javaScriptHeaders: HTTPFields = [.contentType: javaScriptType]
    static let plainHeaders: HTTPFields = [.contentType: plainType]

    static func json(_ value: JSONValue) -> Response {
        text(value.jsonText, status: 200, contentType: "application/json")
    }

    static func errorResponse(_ error: any Error) -> Response {
        let message = (error as? WaitingRoomError)?.message ?? "\(error)"
        let field = (error as? WaitingRoomError)?.field
        var object: [String: JSONValue] = ["error": .string(message)]
        if let field { object["field"] = .string(field) }
        return text(JSONValue.object(object).jsonText, status: 400, contentType: "application/json")
    }

    // MARK: standalone server

    /// Serves this emulator alone on `host:port` (port 0 = any free port) until shut down.
    public func start(host: String = "127.0.0.1", port: Int = 0) async throws -> NetFUNNELRunningServer {
        let router = Router()
        addRoutes(to: router)
        let (ports, continuation) = AsyncStream<Result<Int, any Error>>.makeStream()
        var serverLogger = logger
        serverLogger.logLevel = .critical
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                continuation.yield(.success(channel.localAddress?.port ?? port))
            },
            logger: serverLogger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: serverLogger))
        let task = Task {
            do {
                try await group.run()
                continuation.yield(.failure(CancellationError()))
            } catch {
                continuation.yield(.failure(error))
            }
            continuation.finish()
        }
        var bound: Int?
        for await result in ports {
            bound = try result.get()
            break
        }
        guard let bound else { throw CancellationError() }
        return NetFUNNELRunningServer(host: host, port: bound, group: group, task: task)
    }
}

/// A standalone emulator server started by ``NetFUNNELEmulator/start(host:port:)``.
public final class NetFUNNELRunningServer: Sendable {
    /// The bound host.
    package let host: String
    /// The bound port.
    public let port: Int
    let group: ServiceGroup
    let task: Task<Void, Never>

    init(host: String, port: Int, group: ServiceGroup, task: Task<Void, Never>) {
        self.host = host
        self.port = port
        self.group = group
        self.task = task
    }

    /// `http://host:port`.
    public var baseURL: String { "http://\(host):\(port)" }

    /// Stops the server and waits until it is down.
    public func shutdown() async {
        await group.triggerGracefulShutdown()
        await task.value
    }
}
