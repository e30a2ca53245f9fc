import Logging
import NIOCore
import NIOHTTP1
import WaitingRoomGate

/// One visitor connection to `waitingroom gate`: the last handler of an HTTP/1.1 server pipeline.
/// Requests are answered one at a time and in order: parts of a pipelined request wait in a
/// bounded queue until the answer before them has ended (NIO's pipelining helper would stop
/// reading during every answer, two `epoll_ctl` calls per request).
///
/// Each request takes a slot (``GateProxySlots``; 503 over the bound), is turned into a
/// ``GateRequest`` and put to the vendor's engine after the ``GateLimits``. The engine's answer
/// (the queue redirect, the AJAX form, a refusal) is sent from here and the request never reaches
/// the upstream. A request let through is forwarded on a pooled keep-alive connection of the same
/// event loop (``GateUpstreamPool``), headers kept minus hop-by-hop ones, `X-Forwarded-For`,
/// `-Proto` and `-Host` added, and the upstream's answer is streamed back with the engine's pass
/// headers (the session cookie) added. An upstream that refuses, resets or does not answer within
/// the exchange timeout before its answer's head gives a 502 page; after the head, the visitor's
/// connection is closed (the answer cannot be finished). A request without a body and with an
/// idempotent method whose reused connection turns out closed is sent once more on a new one.
///
/// Back-pressure both ways: the visitor's request is read only while the upstream connection
/// takes writes, and the upstream's answer only while the visitor's connection does.
///
/// Threading: every method runs on the channel's event loop. An engine that cannot decide at once
/// (``GateEngine/immediateDecision(_:)`` is nil, e.g. CrowdHandler's API check) is asked in a task,
/// and its decision comes back to the loop; reads are held meanwhile. One event-loop timer per
/// connection watches both timeouts (``scheduleWatch(short:)``).
final class GateProxyConnection: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Where the current request is.
    enum Phase {
        /// Between requests.
        case idle
        /// The gate answered itself (or the exchange ended) before the request's end: the rest of
        /// the request is read and dropped.
        case answered
        /// The engine reads the first bytes of the body before it decides (``GateEngine/bodyBytesToDecide``).
        case collecting
        /// The engine is deciding in a task.
        case deciding
        /// Waiting for an upstream connection.
        case connecting
        /// The upstream has the request; its answer streams back.
        case forwarding
        /// The gate answered before a long body's end and shut its side of the connection; what
        /// the visitor still sends is read and dropped until it closes (or a moment passes), so its
        /// stack does not reset the connection before it has read the answer.
        case lingering
        /// The visitor's connection is gone.
        case closed
    }

    let settings: GateProxySettings
    private var context: ChannelHandlerContext?
    private var phase = Phase.idle

    // The current request.
    private var head: HTTPRequestHead?
    private var keepAlive = true
    private var requestEnded = false
    private var requestHasBody = false
    private var requestChunked = false
    /// The request's declared `Content-Length` (0 when none).
    private var declaredLength = 0
    /// The most of a request's body the gate reads and drops after answering it itself, to keep
    /// the connection; a longer (or chunked) body ends the connection with the answer instead.
    static let drainedBodyBound = 65_536
    /// How long a connection shut after an early answer goes on dropping what the visitor sends.
    static let lingeringTimeout = TimeAmount.seconds(2)
    /// Request bytes (body and its framing) read before the upstream connection was ready.
    private var pendingParts: [ByteBuffer] = []
    private var holdsSlot = false
    private var decision: GateDecision?
    /// The headers the decision adds to the app's answer (``GateAnswer/forward(adding:)``).
    private var passHeaders: [GateHeader] = []
    /// Kept only when the engine wants to hear how the upstream answered.
    private var gateRequest: GateRequest?
    private var upstream: GateUpstreamConnection?
    private var upstreamReused = false
    private var retried = false
    /// Whether bytes of the answer's head have been written to the visitor (after that, a failed
    /// exchange can only end the connection, not become a 502).
    private var responseStarted = false
    /// Whether the upstream's answer head has been read (then the request is never sent again).
    private var answerHeadRead = false
    /// The answer's head, written with the first body bytes, the end, or at the end of the read
    /// it came in: a body that turns out malformed in the same read still gets the visitor a 502.
    private var heldHead: ByteBuffer?
    /// Bytes after a whole request could not be parsed (a pipelined request, or anything after a
    /// request that ends the connection): the requests before them are answered, then a 400 ends it.
    private var inputFailed = false
    /// How the forwarded answer's body is framed for the visitor.
    private var visitorFraming = GateVisitorFraming.asReceived
    private var forwardedAt = ContinuousClock.now
    /// When the exchange in hand times out (checked by the connection's watch, ``scheduleWatch(short:)``).
    private var exchangeDeadline: NIODeadline?
    /// When the body of the request in hand must have arrived (slow uploads), while it is being read.
    private var bodyDeadline: NIODeadline?
    /// The address this connection was counted under (``GateProxyClientBound``).
    private var countedPeer: String?
    /// While ``Phase/collecting``: the request, the body's first bytes so far, and how many are wanted.
    private var collectingRequest: GateRequest?
    private var collectedBody: [UInt8] = []
    private var collectBound = 0
    private var readWithheld = false
    /// Parts of pipelined requests read while an earlier answer was still going out.
    private var queued = CircularBuffer<HTTPServerRequestPart>()
    private var handlingQueued = false
    /// The most queued parts before reading stops.
    static let queuedPartsBound = 64
    /// The largest body part written in one buffer with its answer's head (copied after it)
    /// rather than as a second buffer.
    static let coalescedBodyBound = 16 * 1024

    /// Whether the visitor gets chunks the gate makes.
    private var isChunkedForVisitor: Bool {
        if case .chunked = visitorFraming { return true }
        return false
    }
    /// When the connection last started or finished a request (for the idle timeout).
    private var lastActivity = NIODeadline.now()
    private var watch: Scheduled<Void>?
    /// Whether the watch runs at the exchange timeout's pace (an exchange is in hand) rather than
    /// the idle timeout's.
    private var watchIsShort = false
    /// The peer's IP address, read once per connection.
    private lazy var peer: String? = context?.channel.remoteAddress?.ipAddress

    init(settings: GateProxySettings) { self.settings = settings }

    /// Whether the visitor's connection takes writes now (the upstream connection reads only then).
    var isWritable: Bool { context?.channel.isWritable ?? false }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        scheduleWatch(short: false)
    }

    func channelActive(context: ChannelHandlerContext) {
        // one address holds at most so many connections (a trusted proxy speaks for many)
        if let peer, !settings.origin.trustedProxies.contains(peer) {
            if settings.clients.admit(peer) {
                countedPeer = peer
            } else {
                phase = .closed
                var bytes = context.channel.allocator.buffer(capacity: 160)
                bytes.writeStaticString("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: text/plain\r\nContent-Length: 39\r\n\r\ntoo many connections from your address\n")
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { _ in channel.close(promise: nil) }
                return
            }
        }
        context.fireChannelActive()
    }

    /// How often a connection's watch looks at its timeouts: an eighth of the idle timeout, or
    /// while an exchange is in hand, of the shorter of the two, so either is kept within 12.5 %
    /// (a timer per request cost 2 % of the gate's time; an idle connection is looked at rarely).
    private func watchInterval(short: Bool) -> TimeAmount {
        let base = short ? min(settings.idleTimeout.nanoseconds, settings.exchangeTimeout.nanoseconds, settings.bodyTimeout.nanoseconds)
            : settings.idleTimeout.nanoseconds
        return .nanoseconds(max(base / 8, 1_000_000))
    }

    /// The connection's timeouts, looked at every ``watchInterval(short:)``: a connection that
    /// sits idle between requests for the idle timeout is closed (slow or abandoned clients), and
    /// an exchange past its deadline ends (a 502 before the answer's head, the connection closed
    /// after it).
    private func scheduleWatch(short: Bool) {
        guard let context else { return }
        watchIsShort = short
        watch = context.eventLoop.assumeIsolated().scheduleTask(in: watchInterval(short: short)) { [self] in
            guard phase != .closed, let context = self.context else { return }
            let now = NIODeadline.now()
            if let deadline = exchangeDeadline, now >= deadline {
                exchangeDeadline = nil
                exchangeTimedOut()
            }
            if let deadline = bodyDeadline, now >= deadline {
                bodyDeadline = nil
                if !requestEnded { bodyTimedOut() }
            }
            if phase == .idle, queued.isEmpty, now - lastActivity >= settings.idleTimeout {
                context.close(promise: nil)
            } else if phase != .closed {
                scheduleWatch(short: exchangeDeadline != nil || bodyDeadline != nil)
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        watch?.cancel()
        watch = nil
        self.context = nil
    }

    // MARK: the visitor's side

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard phase != .closed, phase != .lingering else { return }
        // HTTP/1.1 pipelining: a request that arrives while an earlier one is still being answered
        // waits, in order, until that answer has ended (reading goes on, up to a bound).
        if queued.isEmpty, acceptsPart {
            handle(part, context: context)
        } else {
            queued.append(part)
        }
    }

    /// Whether a part read now belongs to the request in hand (or starts one); false: it belongs
    /// to a request after one whose answer is still being sent.
    private var acceptsPart: Bool {
        switch phase {
        case .idle: return true
        case .closed, .lingering: return false
        case .answered, .collecting, .deciding, .connecting, .forwarding: return !requestEnded
        }
    }

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            begin(head, context: context)
        case .body(let buffer):
            if phase == .collecting, collectedBody.count < collectBound {
                collectedBody.append(contentsOf: buffer.readableBytesView.prefix(collectBound - collectedBody.count))
            }
            if requestChunked {
                guard buffer.readableBytes > 0 else { return }
                var framed = context.channel.allocator.buffer(capacity: buffer.readableBytes + 12)
                GateProxyWire.writeChunk(buffer, into: &framed)
                requestPart(framed)
            } else {
                requestPart(buffer)
            }
        case .end(let trailers):
            requestEnded = true
            bodyDeadline = nil
            if requestChunked {
                var last = context.channel.allocator.buffer(capacity: 5)
                GateProxyWire.writeLastChunk(trailers: trailers, into: &last)
                requestPart(last)
            } else {
                requestPart(nil)
            }
        }
        if phase == .collecting, requestEnded || collectedBody.count >= collectBound, var request = collectingRequest {
            collectingRequest = nil
            request.body = collectedBody
            collectedBody = []
            decide(request, context: context)
        }
    }

    /// Handles the queued (pipelined) parts that can go on now; reading resumes once few are left.
    private func handleQueued() {
        guard !handlingQueued, let context else { return }
        handlingQueued = true
        defer { handlingQueued = false }
        while !queued.isEmpty, acceptsPart, let part = queued.popFirst() {
            handle(part, context: context)
        }
        if queued.count < Self.queuedPartsBound { resumeReading() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if phase == .forwarding { upstream?.flush() }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let countedPeer {
            self.countedPeer = nil
            settings.clients.release(countedPeer)
        }
        phase = .closed
        cancelTimer()
        if let upstream {
            self.upstream = nil
            upstream.close()
        }
        pendingParts.removeAll()
        queued.removeAll()
        releaseSlot()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { upstream?.resumeReading() }
        context.fireChannelWritabilityChanged()
    }

    /// A request NIO cannot parse gets 400 (when no other answer is due first) and the
    /// connection is closed; any other error closes it. (NIO's `HTTPServerProtocolErrorHandler`
    /// does the same, but watches every write to do it.)
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        settings.logger.debug("visitor connection failed", metadata: ["error": "\(error)"])
        // more bytes after the failure (the decoder reports each read): still dropped
        if inputFailed, error is ByteToMessageDecoderError { return }
        let inHand = phase == .collecting || phase == .deciding || phase == .connecting || phase == .forwarding
        if error is HTTPParserError, (inHand && requestEnded) || !queued.isEmpty {
            // The bytes after whole requests: those requests are answered first, in order. A
            // queued request whose end never came is dropped (it cannot be answered).
            inputFailed = true
            while let last = queued.last {
                if case .end = last { break }
                queued.removeLast()
            }
            if !inHand { handleQueued() }
            return
        }
        if error is HTTPParserError, !requestEnded, inHand, !responseStarted, heldHead == nil {
            // A request whose body turned out malformed (a bad chunk size) before any answer to
            // it began: 400, and the connection ends; so does the upstream's, which got part of it.
            if let upstream {
                self.upstream = nil
                upstream.exchange = nil
                upstream.close()
            }
            cancelTimer()
            pendingParts.removeAll()
            releaseSlot()
            writeBadRequest(context: context)
        } else if error is HTTPParserError, phase == .idle || phase == .answered {
            writeBadRequest(context: context)
        }
        phase = .closed
        context.close(promise: nil)
    }

    /// The 400 for a request that cannot be parsed; the connection ends after it.
    private func writeBadRequest(context: ChannelHandlerContext) {
        var bytes = context.channel.allocator.buffer(capacity: 80)
        bytes.writeStaticString("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    /// Reads only while what is read can go on: not while the engine decides or a connection is
    /// being opened, and not while the upstream connection's buffer is full.
    func read(context: ChannelHandlerContext) {
        if queued.count >= Self.queuedPartsBound {
            readWithheld = true
            return
        }
        switch phase {
        case .deciding, .connecting:
            readWithheld = true
        case .forwarding:
            if let upstream, !upstream.isWritable { readWithheld = true } else { context.read() }
        case .idle, .answered, .lingering, .closed, .collecting:
            context.read()
        }
    }

    /// Reads again after ``read(context:)`` withheld one.
    private func resumeReading() {
        guard readWithheld, let context else { return }
        readWithheld = false
        context.read()
    }

    /// A new request: target, slot, limits, engine.
    private func begin(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard phase == .idle else { return }
        lastActivity = .now()
        var head = head
        self.head = head
        keepAlive = head.isKeepAlive
        requestEnded = false
        retried = false
        responseStarted = false
        answerHeadRead = false
        heldHead = nil
        decision = nil
        passHeaders = []
        gateRequest = nil
        requestChunked = head.headers[canonicalForm: "transfer-encoding"].contains { $0.lowercased() == "chunked" }
        declaredLength = head.headers.first(name: "content-length").flatMap { Int($0) } ?? 0
        requestHasBody = requestChunked || declaredLength > 0
        bodyDeadline = nil
        if requestHasBody {
            bodyDeadline = .now() + settings.bodyTimeout
            if !watchIsShort, settings.bodyTimeout < settings.idleTimeout {
                watch?.cancel()
                scheduleWatch(short: true)
            }
        }
        // The request target (RFC 9112 §3.2): a path goes as it is; an absolute URL is checked
        // and forwarded as its path, its authority the Host; `*` only for OPTIONS. Anything else
        // (CONNECT's `host:port`, `x/y`) and a second Host (counted below) are refused and end
        // the connection: the gate's triggers would not match what the app then serves.
        if !head.uri.hasPrefix("/") {
            if let (authority, path) = Self.absoluteForm(head.uri) {
                head.uri = path
                head.headers.replaceOrAdd(name: "host", value: authority)
                self.head = head
            } else if !(head.uri == "*" && head.method == .OPTIONS) {
                keepAlive = false
                answer(GateProxyErrorPage.badTarget())
                return
            }
        }
        guard settings.slots.take() else {
            answer(GateProxyErrorPage.busy(limit: settings.slots.limit))
            return
        }
        holdsSlot = true
        var headers: [GateHeader] = []
        headers.reserveCapacity(head.headers.count)
        var hosts = 0
        for (name, value) in head.headers {
            if name.utf8.count == 4, name.equalsIgnoringASCIICase("host") { hosts += 1 }
            headers.append(GateHeader(name, value))
        }
        guard hosts <= 1 else {
            releaseSlot()
            keepAlive = false
            answer(GateProxyErrorPage.twoHosts())
            return
        }
        let request: GateRequest
        do {
            request = try settings.origin.request(method: head.method.rawValue, target: head.uri, authority: head.headers.first(name: "host"),
                                                  headers: headers, peer: peer)
        } catch {
            releaseSlot()
            answer(error.response)
            return
        }
        // the app gets the target the decision was made on
        if let target = request.target, target != head.uri {
            head.uri = target
            self.head = head
        }
        // After a head that asks to switch protocols, NIO's parser reads no more of the
        // connection: the gate does not switch (RFC 9110 §7.8 lets a server ignore `Upgrade`), it
        // answers this request and ends the connection; what is sent meanwhile is bounded by the
        // decoder's buffer (GateProxyServer).
        if head.headers.contains(name: "upgrade") { keepAlive = false }
        // An engine that reads the body first (Queue-it's RequestBodyValidator) gets its first
        // bytes: they are read (and kept, to be sent on) before it is asked.
        let needed = settings.engine.bodyBytesToDecide
        if needed > 0, requestHasBody, settings.limits.refusal(for: request) == nil {
            collectBound = needed
            collectedBody = []
            collectingRequest = request
            phase = .collecting
            return
        }
        decide(request, context: context)
    }

    /// Asks the engine about `request` (at once when it can answer on the loop, else in a task).
    private func decide(_ request: GateRequest, context: ChannelHandlerContext) {
        if let decision = settings.engine.immediateDecision(request, within: settings.limits) {
            apply(decision, to: request)
            return
        }
        phase = .deciding
        let engine = settings.engine
        let limits = settings.limits
        context.eventLoop.makeFutureWithTask { await engine.decide(request, within: limits) }
            .assumeIsolated().whenSuccess { [self] decision in
                guard phase == .deciding else { return }
                apply(decision, to: request)
            }
    }

    /// `http://host[:port]/path?query` (or `https://`) as its authority and origin-form target
    /// (`/` when the URL has no path); nil for any other text.
    static func absoluteForm(_ target: String) -> (authority: String, path: String)? {
        let lowered = target.prefix(8).lowercased()
        let schemeLength = lowered.hasPrefix("http://") ? 7 : lowered.hasPrefix("https://") ? 8 : 0
        guard schemeLength > 0 else { return nil }
        let rest = target.dropFirst(schemeLength)
        let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<end]
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var path = String(rest[end...])
        if let hash = path.firstIndex(of: "#") { path = String(path[..<hash]) }
        if !path.hasPrefix("/") { path = "/" + path }
        return (String(authority), path)
    }

    /// Bytes of the request after its head (nil: its end, nothing to send): kept until the
    /// upstream connection is ready, sent on it, or dropped when the gate has answered already.
    private func requestPart(_ bytes: ByteBuffer?) {
        switch phase {
        case .collecting, .deciding, .connecting:
            if let bytes { pendingParts.append(bytes) }
        case .forwarding:
            if let bytes { upstream?.write(bytes) }
        case .answered:
            if requestEnded {
                phase = .idle
                handleQueued()
            }
        case .idle, .lingering, .closed:
            break
        }
    }

    /// The engine's answer sent, or the request forwarded.
    private func apply(_ decision: GateDecision, to request: GateRequest) {
        if settings.logsDecisions {
            settings.logger.debug("gate decision", metadata: [
                "vendor": "\(settings.engine.vendorID)", "verdict": "\(decision.verdict.rawValue)", "reason": "\(decision.reason)",
                "url": "\(request.url)",
            ])
        }
        guard case .forward(let passHeaders) = GateAnswer(decision) else {
            releaseSlot()
            if case .respond(let response) = GateAnswer(decision) { answer(response) }
            return
        }
        self.decision = decision
        self.passHeaders = passHeaders
        if decision.vendorResponseID != nil { gateRequest = request }
        phase = .connecting
        startTimer()
        connectUpstream(reuse: true)
    }

    // MARK: the gate's own answers

    /// Sends `response` (the engine's answer, a refusal, 502 or 503) as this request's answer.
    private func answer(_ response: GateResponse) {
        guard let context, let head else { return }
        pendingParts.removeAll()
        // A body the gate will not forward is read and dropped to keep the connection, unless it
        // is long (or of unknown length): then the connection ends with this answer.
        if !requestEnded, requestChunked || declaredLength > Self.drainedBodyBound { keepAlive = false }
        let body = response.body.utf8
        var bytes = context.channel.allocator.buffer(capacity: 256 + body.count)
        GateProxyWire.writeStatusLine(&bytes, version: head.version, status: response.status)
        for field in response.headers where GateProxyHeaders.isSafeFieldText(field.name) && GateProxyHeaders.isSafeFieldText(field.value) {
            if field.name.equalsIgnoringASCIICase("content-length") || field.name.equalsIgnoringASCIICase("connection") { continue }
            GateProxyWire.writeField(&bytes, field.name, field.value)
        }
        GateProxyWire.writeField(&bytes, "Content-Length", String(body.count))
        if let connection = connectionField(version: head.version) { GateProxyWire.writeField(&bytes, "Connection", connection) }
        bytes.writeStaticString("\r\n")
        // an answer to HEAD has no body (RFC 9110 §9.3.2); its Content-Length is the GET's
        if head.method != .HEAD { bytes.writeString(response.body) }
        context.write(wrapOutboundOut(bytes), promise: nil)
        endResponse()
    }

    /// The `Connection` value of the answer: `close` when the connection ends after it;
    /// `keep-alive` for an HTTP/1.0 visitor that keeps it; nil otherwise.
    private func connectionField(version: HTTPVersion) -> String? {
        if !keepAlive { return "close" }
        if version.major == 1, version.minor == 0 { return "keep-alive" }
        return nil
    }

    /// Ends the answer (its bytes are written); closes the connection after it when it is not kept alive.
    private func endResponse() {
        guard let context else { return }
        phase = requestEnded ? .idle : .answered
        lastActivity = .now()
        if keepAlive {
            context.flush()
            resumeReading()
            handleQueued()
            if inputFailed, phase == .idle, queued.isEmpty {
                // the bytes after the last whole request were not HTTP
                phase = .closed
                var bytes = context.channel.allocator.buffer(capacity: 80)
                bytes.writeStaticString("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { _ in channel.close(promise: nil) }
            }
        } else if phase == .answered {
            // The rest of a long body is not read: the answer goes out, this side of the
            // connection is shut, and the visitor's bytes are dropped until it closes, at most
            // `lingeringTimeout`. Closing at once could reset the connection before the visitor
            // has read the answer.
            queued.removeAll()
            phase = .lingering
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer())).whenComplete { _ in channel.close(mode: .output, promise: nil) }
            context.eventLoop.scheduleTask(in: Self.lingeringTimeout) { channel.close(promise: nil) }
        } else {
            // the connection ends with this answer: nothing read after it is handled
            queued.removeAll()
            phase = .closed
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer())).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    // MARK: the upstream's side

    /// Takes a pooled connection (when `reuse`) or opens one, then sends the request on it.
    private func connectUpstream(reuse: Bool) {
        guard let context, let pool = settings.pools.pool(on: context.eventLoop) else {
            fail(problem: "it could not be reached", error: nil)
            return
        }
        if reuse, let connection = pool.take() {
            upstreamReused = true
            attach(connection)
            return
        }
        upstreamReused = false
        pool.connect().assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let channel):
                guard let connection = try? pool.connection(of: channel) else {
                    channel.close(promise: nil)
                    if phase == .connecting { fail(problem: "it could not be reached", error: nil) }
                    return
                }
                if phase == .connecting { attach(connection) } else { pool.give(connection) }
            case .failure(let error):
                if phase == .connecting { fail(problem: Self.describe(error), error: error) }
            }
        }
    }

    /// Sends the request's head and the parts read so far on `connection`.
    private func attach(_ connection: GateUpstreamConnection) {
        guard let head else { return }
        upstream = connection
        connection.begin(self, requestIsHead: head.method == .HEAD, dechunk: head.version.major == 1 && head.version.minor == 0)
        phase = .forwarding
        forwardedAt = .now
        connection.write(outboundHead(head))
        for part in pendingParts { connection.write(part) }
        pendingParts.removeAll(keepingCapacity: true)
        connection.flush()
        if connection.isWritable { resumeReading() }
    }

    /// The request head the upstream gets: hop-by-hop fields and those `Connection` names dropped,
    /// `Host` the upstream's, `X-Forwarded-For` extended with the peer, `X-Forwarded-Proto` and
    /// `-Host` set (kept from a trusted proxy); written as HTTP/1.1 bytes.
    private func outboundHead(_ head: HTTPRequestHead) -> ByteBuffer {
        let peer = self.peer
        let trusted = peer.map { settings.origin.trustedProxies.contains($0) } ?? false
        // `Connection` may name fields to drop, never the framing, the host or what decides
        // (GateProxyHeaders.neverDropped; the gate writes the framing it parsed itself)
        let listed = head.headers.contains(name: "connection")
            ? GateProxyHeaders.connectionListed(head.headers["connection"]).subtracting(settings.keptFieldNames) : []
        // One pass, written straight into the bytes sent (fields parsed by NIO cannot hold CR, LF or NUL).
        var bytes = context?.channel.allocator.buffer(capacity: 512) ?? ByteBuffer()
        bytes.writeString(head.method.rawValue)
        bytes.writeStaticString(" ")
        bytes.writeString(head.uri)
        bytes.writeStaticString(" HTTP/1.1\r\n")
        var forwardedFor: String?
        var forwardedForCount = 0
        var hasProto = false
        var hasHost = false
        var visitorHost: String?
        for (name, value) in head.headers {
            if name.equalsIgnoringASCIICase("host") {
                if visitorHost == nil { visitorHost = value }
                continue
            }
            if GateProxyHeaders.isHopByHop(name) || (!listed.isEmpty && listed.contains(name.lowercased())) { continue }
            if GateProxyHeaders.isNeverForwarded(name) { continue }
            if !trusted, GateProxyHeaders.isClientAddressField(name) { continue }
            if name.utf8.count >= 15, name.utf8.first == UInt8(ascii: "x") || name.utf8.first == UInt8(ascii: "X") {
                if name.equalsIgnoringASCIICase("x-forwarded-for") {
                    forwardedForCount += 1
                    forwardedFor = forwardedForCount == 1 ? value : (forwardedFor ?? "") + "," + value
                    continue
                } else if name.equalsIgnoringASCIICase("x-forwarded-proto") {
                    guard trusted else { continue }
                    hasProto = true
                } else if name.equalsIgnoringASCIICase("x-forwarded-host") {
                    guard trusted else { continue }
                    hasHost = true
                }
            } else if name.utf8.count == 14, name.equalsIgnoringASCIICase("content-length") {
                // the framing is the gate's to write: the length NIO's parser framed the body by
                continue
            }
            GateProxyWire.writeField(&bytes, name, value)
        }
        GateProxyWire.writeField(&bytes, "Host", settings.upstreamHost)
        if requestChunked {
            // the visitor's codings as sent (`gzip, chunked` stays so: only the chunks are re-made)
            GateProxyWire.writeField(&bytes, "Transfer-Encoding", head.headers[canonicalForm: "transfer-encoding"].joined(separator: ", "))
        } else if declaredLength > 0 || [.POST, .PUT, .PATCH].contains(head.method) {
            GateProxyWire.writeField(&bytes, "Content-Length", String(declaredLength))
        }
        if let value = GateProxyHeaders.forwardedFor(incoming: forwardedFor, peer: peer) { GateProxyWire.writeField(&bytes, "X-Forwarded-For", value) }
        if !hasProto { GateProxyWire.writeField(&bytes, "X-Forwarded-Proto", "http") }
        if !hasHost, let visitorHost { GateProxyWire.writeField(&bytes, "X-Forwarded-Host", visitorHost) }
        bytes.writeStaticString("\r\n")
        return bytes
    }

    /// What the upstream's answer holds now (``GateResponseFramer``), sent on to the visitor.
    func upstreamEvent(_ event: GateResponseFramer.Event) {
        guard phase == .forwarding, let context, let head else { return }
        let isHTTP10 = head.version.major == 1 && head.version.minor == 0
        switch event {
        case .informational(let answer):
            // 100 Continue, 103 Early Hints: an HTTP/1.0 visitor does not expect them (RFC 9110 §15.2)
            guard !isHTTP10 else { return }
            let bytes = GateProxyWire.forwardedHead(answer, version: head.version, framing: .asReceived, extra: [], connection: nil,
                                                    allocator: context.channel.allocator)
            context.write(wrapOutboundOut(bytes), promise: nil)
        case .head(let answer):
            switch answer.framing {
            case .none, .length:
                visitorFraming = .asReceived
            case .chunked:
                // an HTTP/1.0 visitor cannot read chunks: their data, ended by closing
                visitorFraming = isHTTP10 ? .dechunked : .asReceived
            case .untilClose:
                // an HTTP/1.1 visitor's connection is kept: the gate makes the chunks
                visitorFraming = isHTTP10 ? .untilClose : .chunked(codings: answer.otherCodings)
            }
            if visitorFraming == .dechunked || visitorFraming == .untilClose { keepAlive = false }
            var passHeaders = self.passHeaders
            let isUnsafe = { (field: GateHeader) in !GateProxyHeaders.isSafeFieldText(field.name) || !GateProxyHeaders.isSafeFieldText(field.value) }
            // (removing copies the decision's array: only when there is something to remove)
            if passHeaders.contains(where: isUnsafe) { passHeaders.removeAll(where: isUnsafe) }
            reportHandlerAnswer(status: answer.status)
            answerHeadRead = true
            // room for a small body known to follow, so that it joins the head without a copy of the head
            var bodyRoom = 0
            if case .length(let length) = answer.framing, visitorFraming == .asReceived { bodyRoom = min(length, Self.coalescedBodyBound) }
            heldHead = GateProxyWire.forwardedHead(answer, version: head.version, framing: visitorFraming, extra: passHeaders,
                                                   connection: connectionField(version: head.version), bodyRoom: bodyRoom,
                                                   allocator: context.channel.allocator)
        case .body(var buffer):
            // a small body right after its head goes in the same buffer: one write, one system call
            if var held = heldHead, !isChunkedForVisitor,
               buffer.readableBytes <= Self.coalescedBodyBound {
                heldHead = nil
                responseStarted = true
                held.writeBuffer(&buffer)
                context.write(wrapOutboundOut(held), promise: nil)
                return
            }
            writeHeldHead()
            if isChunkedForVisitor {
                var framed = context.channel.allocator.buffer(capacity: buffer.readableBytes + 12)
                GateProxyWire.writeChunk(buffer, into: &framed)
                context.write(wrapOutboundOut(framed), promise: nil)
            } else {
                context.write(wrapOutboundOut(buffer), promise: nil)
            }
        case .end(let reusable):
            writeHeldHead()
            let connection = upstream
            upstream = nil
            cancelTimer()
            if let connection {
                connection.exchange = nil
                if reusable, requestEnded, let pool = settings.pools.pool(on: context.eventLoop) {
                    pool.give(connection)
                } else {
                    connection.close()
                }
            }
            if isChunkedForVisitor {
                var last = context.channel.allocator.buffer(capacity: 5)
                GateProxyWire.writeLastChunk(trailers: nil, into: &last)
                context.write(wrapOutboundOut(last), promise: nil)
            }
            releaseSlot()
            endResponse()
        }
    }

    func upstreamReadComplete() {
        guard phase == .forwarding else { return }
        writeHeldHead()
        context?.flush()
    }

    /// Writes the answer's head when it is still held (``heldHead``).
    private func writeHeldHead() {
        guard let bytes = heldHead, let context else { return }
        heldHead = nil
        responseStarted = true
        context.write(wrapOutboundOut(bytes), promise: nil)
    }

    func upstreamBecameWritable() { resumeReading() }

    /// The upstream connection closed or failed during the exchange: sent again once (a request
    /// without a body on a reused connection), a 502 before the answer's head, or, after it, the
    /// visitor's connection closed.
    func upstreamEnded(_ connection: GateUpstreamConnection, error: (any Error)?) {
        guard phase == .forwarding, connection === upstream else { return }
        upstream = nil
        connection.close()
        if !responseStarted {
            // sent again only when sending it twice does no harm: an idempotent method (RFC 9110
            // §9.2.2; a POST or PATCH the upstream may have acted on before closing is not), and
            // only for a connection that closed or failed, not one that answered in something not HTTP
            if upstreamReused, !answerHeadRead, !requestHasBody, !retried, !(error is GateResponseFramer.Malformed), let head,
               Self.isIdempotent(head.method) {
                retried = true
                phase = .connecting
                pendingParts = []
                connectUpstream(reuse: false)
                return
            }
            fail(problem: error.map(Self.describe) ?? "it closed the connection", error: error)
        } else {
            settings.logger.notice("upstream answer cut short", metadata: ["upstream": "\(settings.upstreamBase)", "error": "\(error.map { "\($0)" } ?? "closed")"])
            abandon()
        }
    }

    /// Whether `method` is idempotent (RFC 9110 §9.2.2): GET, HEAD, OPTIONS, TRACE, PUT, DELETE.
    static func isIdempotent(_ method: HTTPMethod) -> Bool {
        switch method {
        case .GET, .HEAD, .OPTIONS, .TRACE, .PUT, .DELETE: true
        default: false
        }
    }

    /// A 502 page for this request (the upstream could not be reached or did not answer).
    private func fail(problem: String, error: (any Error)?) {
        heldHead = nil
        if let upstream {
            self.upstream = nil
            upstream.close()
        }
        cancelTimer()
        releaseSlot()
        settings.logger.notice("upstream failed", metadata: [
            "upstream": "\(settings.upstreamBase)", "path": "\(head?.uri ?? "")", "error": "\(error.map { "\($0)" } ?? problem)",
        ])
        answer(GateProxyErrorPage.badGateway(upstream: settings.upstreamBase, problem: problem))
    }

    /// Drops the exchange and the visitor's connection (an answer that cannot be finished).
    private func abandon() {
        cancelTimer()
        if let upstream {
            self.upstream = nil
            upstream.close()
        }
        releaseSlot()
        phase = .closed
        context?.close(promise: nil)
    }

    // MARK: bookkeeping

    private func startTimer() {
        exchangeDeadline = .now() + settings.exchangeTimeout
        // a watch at the idle pace would look too late: at most once per watch period under load
        if !watchIsShort, settings.exchangeTimeout < settings.idleTimeout {
            watch?.cancel()
            scheduleWatch(short: true)
        }
    }

    /// The request's body did not arrive within the body timeout: 408 when no answer has begun
    /// (the upstream, which has part of it, is let go), else the connection ends.
    private func bodyTimedOut() {
        settings.logger.notice("request body too slow", metadata: ["path": "\(head?.uri ?? "")", "peer": "\(peer ?? "")"])
        keepAlive = false
        switch phase {
        case .answered:
            abandon()
        case .collecting, .deciding, .connecting, .forwarding:
            collectingRequest = nil
            collectedBody = []
            if responseStarted || heldHead != nil {
                abandon()
                return
            }
            if let upstream {
                self.upstream = nil
                upstream.exchange = nil
                upstream.close()
            }
            cancelTimer()
            releaseSlot()
            phase = .answered
            answer(GateProxyErrorPage.bodyTooSlow())
        case .idle, .lingering, .closed:
            break
        }
    }

    /// The exchange in hand took longer than the exchange timeout.
    private func exchangeTimedOut() {
        switch phase {
        case .connecting:
            fail(problem: "it did not answer in time", error: nil)
        case .forwarding:
            if responseStarted { abandon() } else { fail(problem: "it did not answer in time", error: nil) }
        case .idle, .answered, .collecting, .deciding, .lingering, .closed:
            break
        }
    }

    private func cancelTimer() {
        exchangeDeadline = nil
    }

    private func releaseSlot() {
        guard holdsSlot else { return }
        holdsSlot = false
        settings.slots.give()
    }

    /// Tells the engine how the upstream answered, when it asked to hear (CrowdHandler's response time).
    private func reportHandlerAnswer(status: Int) {
        guard let decision, decision.vendorResponseID != nil, let request = gateRequest else { return }
        let engine = settings.engine
        let elapsed = ContinuousClock.now - forwardedAt
        Task { await engine.handlerAnswered(request, decision: decision, status: status, elapsed: elapsed) }
    }

    /// A few words for the 502 page: refused, timed out or something else.
    static func describe(_ error: any Error) -> String {
        if let error = error as? ChannelError, case .connectTimeout = error { return "the connection timed out" }
        // it answered, but not in HTTP (a garbled status line, a head over NIO's bound)
        if error is HTTPParserError || error is GateResponseFramer.Malformed { return "its answer was not valid HTTP" }
        let text = "\(error)".lowercased()
        if text.contains("refused") { return "the connection was refused" }
        if text.contains("timeout") || text.contains("timed out") { return "it did not answer in time" }
        if text.contains("reset") || text.contains("eof") { return "it closed the connection" }
        return "it could not be reached"
    }
}
