#if Vapor
    import Logging
    import Vapor
    import WaitingRoomGate

    /// Protects the routes behind it with a ``GateEngine`` (Queue-it's KnownUser flow, CrowdHandler's
    /// gatekeeper), the way `GateMiddleware` does for Hummingbird and through the same engine: a thin
    /// Vapor `AsyncMiddleware` that turns the request head into a ``GateRequest`` (``GateOrigin``: the
    /// same URL and client address as the Hummingbird middleware builds), refuses what breaks the
    /// ``GateLimits``, asks the engine and either answers for it (the redirect to the queue with
    /// no-cache headers, Queue-it's AJAX `x-queueit-redirect` form, a 4xx refusal) or calls the next
    /// responder and adds the engine's headers (the session cookie) to its response.
    ///
    /// ```swift
    /// app.grouped(VaporGateMiddleware(engine: queueItGate, publicBaseURL: "https://shop.example"))
    ///     .get("checkout") { _ in "the protected page" }
    /// ```
    ///
    /// The client address is the connection's peer (`Request.remoteAddress`), or, when that peer is
    /// one of `trustedProxies`, the nearest untrusted address in `X-Forwarded-For`; Vapor's own
    /// `peerAddress` (which believes any `X-Forwarded-For`) is not used. The one known difference from
    /// the Hummingbird middleware: Vapor keeps no raw request target, only `Request.url` as Foundation's
    /// `URLComponents` parsed it, so a target Foundation re-encodes reaches the engine re-encoded, and
    /// one it cannot parse is refused with 400.
    public struct VaporGateMiddleware: AsyncMiddleware {
        /// The vendor's check.
        public let engine: any GateEngine
        /// Bounds checked before the engine is asked.
        public let limits: GateLimits
        /// Where visitors reach this server and which proxies front it.
        public let origin: GateOrigin
        let logger: Logger

        /// A middleware that asks `engine` about every request it sees, after `limits`.
        /// `publicBaseURL` is `scheme://host[:port]` as visitors reach this server (nil: `http://` and
        /// the request's `Host`; a request without one is refused with 400); `trustedProxies` are the
        /// peers whose `X-Forwarded-For` names the visitor.
        public init(
            engine: any GateEngine, limits: GateLimits = .standard, publicBaseURL: String? = nil,
            trustedProxies: Set<String> = [], allowedHosts: Set<String> = [],
            logger: Logger = Logger(label: "waitingroom.gate")
        ) {
            self.engine = engine
            self.limits = limits
            self.origin = GateOrigin(publicBaseURL: publicBaseURL, trustedProxies: trustedProxies, allowedHosts: allowedHosts)
            self.logger = logger
        }

        /// Applies the gate's decision: its answer, or the next responder's with the pass headers.
        public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
            var gateRequest: GateRequest
            switch VaporGateHead(request, origin: origin) {
            case .request(let built): gateRequest = built
            case .refusal(let answer): return Response(gate: answer)
            }
            // An engine that reads the body (Queue-it's RequestBodyValidator) gets its first bytes;
            // the body is collected (at most the limits' bound) and stays on the request for the app.
            let needed = engine.bodyBytesToDecide
            if needed > 0,
                request.headers.first(name: .contentLength).map({ $0 != "0" }) ?? request.headers.contains(name: .transferEncoding)
            {
                if let refusal = limits.refusal(for: gateRequest) {
                    return Response(gate: refusal.response ?? .refusal(400, refusal.reason))
                }
                let buffer = try await request.body.collect(max: limits.maxBodyBytes).get()
                gateRequest.body = buffer.map { Array($0.readableBytesView.prefix(needed)) } ?? []
            }
            let decision = await engine.decide(gateRequest, within: limits)
            logger.debug(
                "gate decision",
                metadata: [
                    "vendor": "\(engine.vendorID)", "verdict": "\(decision.verdict.rawValue)", "reason": "\(decision.reason)",
                    "path": "\(request.url.path)"
                ])
            let passHeaders: [GateHeader]
            switch GateAnswer(decision) {
            case .respond(let answer): return Response(gate: answer)
            case .forward(let adding): passHeaders = adding
            }
            let started = ContinuousClock.now
            let response = try await next.respond(to: request)
            for header in passHeaders { response.headers.add(name: header.name, value: header.value) }
            if decision.vendorResponseID != nil {
                let elapsed = ContinuousClock.now - started
                let status = Int(response.status.code)
                let engine = self.engine
                Task { await engine.handlerAnswered(gateRequest, decision: decision, status: status, elapsed: elapsed) }
            }
            return response
        }
    }
#endif
