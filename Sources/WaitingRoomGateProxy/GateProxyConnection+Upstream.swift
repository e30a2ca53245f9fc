import Logging
import NIOCore
import NIOHTTP1
import WaitingRoomGate

/// The upstream's side of ``GateProxyConnection``: a pooled keep-alive connection taken (or a
/// new one opened), the request's head rewritten for the upstream and sent with the body read
/// so far, the upstream's answer relayed as ``GateUpstreamConnection`` reads it
/// (``GateResponseFramer`` events: the head rewritten for the visitor, the body passed on as it
/// came, or chunked or dechunked for the visitor's version), and an exchange that fails: sent
/// once more, a 502 page before the answer's head, the visitor's connection closed after it.
///
/// Threading: runs on the visitor channel's event loop, which is also the upstream
/// connection's (the pool is per event loop), so the two handlers call each other directly.
extension GateProxyConnection {
    /// Takes a pooled connection (when `reuse`) or opens one, then sends the request on it.
    func connectUpstream(reuse: Bool) {
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
        let listed =
            head.headers.contains(name: "connection")
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
        if let value = GateProxyHeaders.forwardedFor(incoming: forwardedFor, peer: peer) {
            GateProxyWire.writeField(&bytes, "X-Forwarded-For", value)
        }
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
            let bytes = GateProxyWire.forwardedHead(
                answer, version: head.version, framing: .asReceived, extra: [], connection: nil,
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
            let isUnsafe = { (field: GateHeader) in
                !GateProxyHeaders.isSafeFieldText(field.name) || !GateProxyHeaders.isSafeFieldText(field.value)
            }
            // (removing copies the decision's array: only when there is something to remove)
            if passHeaders.contains(where: isUnsafe) { passHeaders.removeAll(where: isUnsafe) }
            reportHandlerAnswer(status: answer.status)
            answerHeadRead = true
            // room for a small body known to follow, so that it joins the head without a copy of the head
            var bodyRoom = 0
            if case .length(let length) = answer.framing, visitorFraming == .asReceived { bodyRoom = min(length, Self.coalescedBodyBound) }
            heldHead = GateProxyWire.forwardedHead(
                answer, version: head.version, framing: visitorFraming, extra: passHeaders,
                connection: connectionField(version: head.version), bodyRoom: bodyRoom,
                allocator: context.channel.allocator)
        case .body(var buffer):
            // a small body right after its head goes in the same buffer: one write, one system call
            if var held = heldHead, !isChunkedForVisitor,
                buffer.readableBytes <= Self.coalescedBodyBound
            {
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
                Self.isIdempotent(head.method)
            {
                retried = true
                phase = .connecting
                pendingParts = []
                connectUpstream(reuse: false)
                return
            }
            fail(problem: error.map(Self.describe) ?? "it closed the connection", error: error)
        } else {
            settings.logger.notice(
                "upstream answer cut short",
                metadata: ["upstream": "\(settings.upstreamBase)", "error": "\(error.map { "\($0)" } ?? "closed")"])
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
    func fail(problem: String, error: (any Error)?) {
        heldHead = nil
        if let upstream {
            self.upstream = nil
            upstream.close()
        }
        cancelTimer()
        releaseSlot()
        settings.logger.notice(
            "upstream failed",
            metadata: [
                "upstream": "\(settings.upstreamBase)", "path": "\(head?.uri ?? "")", "error": "\(error.map { "\($0)" } ?? problem)"
            ])
        answer(GateProxyErrorPage.badGateway(upstream: settings.upstreamBase, problem: problem))
    }

    /// Drops the exchange and the visitor's connection (an answer that cannot be finished).
    func abandon() {
        cancelTimer()
        if let upstream {
            self.upstream = nil
            upstream.close()
        }
        releaseSlot()
        phase = .closed
        context?.close(promise: nil)
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
