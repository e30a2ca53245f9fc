import Logging
import NIOCore
import NIOHTTP1
import WaitingRoomGate

/// A new request's way to a decision, for ``GateProxyConnection``: its target checked (an
/// absolute URL made origin-form), a slot taken, the ``GateLimits`` and the vendor's engine
/// asked (after the first bytes of the body when the engine reads them), and the decision
/// applied: the engine's answer sent from here, or the request forwarded
/// (GateProxyConnection+Upstream.swift).
///
/// Threading: runs on the visitor channel's event loop; an engine that cannot decide at once is
/// asked in a task, and its decision is applied back on that loop (nothing here touches the
/// connection's state from the task).
extension GateProxyConnection {
    /// A new request: target, slot, limits, engine.
    func begin(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard phase == .idle else { return }
        var head = head
        resetForRequest(head)
        guard acceptTarget(&head) else { return }
        guard settings.slots.take() else {
            answer(GateProxyErrorPage.busy(limit: settings.slots.limit))
            return
        }
        holdsSlot = true
        guard let headers = gateHeaders(of: head) else {
            releaseSlot()
            keepAlive = false
            answer(GateProxyErrorPage.twoHosts())
            return
        }
        let request: GateRequest
        do {
            request = try settings.origin.request(
                method: head.method.rawValue, target: head.uri, authority: head.headers.first(name: "host"),
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

    /// Forgets the last request's state and takes in `head`'s: keep-alive, body framing, and the
    /// body's deadline (the watch made short when that deadline comes before the idle one).
    private func resetForRequest(_ head: HTTPRequestHead) {
        lastActivity = .now()
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
    }

    /// The request target (RFC 9112 §3.2): a path goes as it is; an absolute URL is checked
    /// and forwarded as its path, its authority the Host; `*` only for OPTIONS. Anything else
    /// (CONNECT's `host:port`, `x/y`) is refused and ends the connection (false: answered): the
    /// gate's triggers would not match what the app then serves.
    private func acceptTarget(_ head: inout HTTPRequestHead) -> Bool {
        guard !head.uri.hasPrefix("/") else { return true }
        if let (authority, path) = Self.absoluteForm(head.uri) {
            head.uri = path
            head.headers.replaceOrAdd(name: "host", value: authority)
            self.head = head
        } else if !(head.uri == "*" && head.method == .OPTIONS) {
            keepAlive = false
            answer(GateProxyErrorPage.badTarget())
            return false
        }
        return true
    }

    /// `head`'s fields for the engine; nil for a second Host, which is refused and ends the
    /// connection as a bad target does.
    private func gateHeaders(of head: HTTPRequestHead) -> [GateHeader]? {
        var headers: [GateHeader] = []
        headers.reserveCapacity(head.headers.count)
        var hosts = 0
        for (name, value) in head.headers {
            if name.utf8.count == 4, name.equalsIgnoringASCIICase("host") { hosts += 1 }
            headers.append(GateHeader(name, value))
        }
        return hosts <= 1 ? headers : nil
    }

    /// Asks the engine about `request` (at once when it can answer on the loop, else in a task).
    func decide(_ request: GateRequest, context: ChannelHandlerContext) {
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

    /// The engine's answer sent, or the request forwarded.
    private func apply(_ decision: GateDecision, to request: GateRequest) {
        if settings.logsDecisions {
            settings.logger.debug(
                "gate decision",
                metadata: [
                    "vendor": "\(settings.engine.vendorID)", "verdict": "\(decision.verdict.rawValue)", "reason": "\(decision.reason)",
                    "url": "\(request.url)"
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
}
