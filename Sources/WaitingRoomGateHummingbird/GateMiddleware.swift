import Foundation
import HTTPTypes
import Hummingbird
import Logging
import WaitingRoomGate

/// Protects the routes behind it with a ``GateEngine`` (Queue-it's KnownUser flow, CrowdHandler's
/// gatekeeper): a thin adapter that turns the Hummingbird request into a ``GateRequest``, refuses
/// what breaks the ``GateLimits``, asks the engine and either answers for it (redirect to the
/// queue, the AJAX form, a refusal) or calls the next responder and adds the engine's headers
/// (the session cookie) to its response.
///
/// ```swift
/// let router = Router(context: GateRequestContext.self)
/// router.add(middleware: GateMiddleware(engine: queueItGate, publicBaseURL: "https://shop.example"))
/// router.get("/checkout") { _, _ in "the protected page" }
/// ```
public struct GateMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The vendor's check.
    package let engine: any GateEngine
    /// Bounds checked before the engine is asked.
    package let limits: GateLimits
    /// Where visitors reach this server and which proxies front it (shared with the Vapor adapter).
    package let origin: GateOrigin
    /// `scheme://host[:port]` as visitors reach this server; nil: `http://` and the request's
    /// `Host` (a request without one is refused with 400). Triggers match, and visitors come
    /// back to, URLs built on it.
    package var publicBaseURL: String? { origin.publicBaseURL }
    /// Peers (IP addresses) whose `X-Forwarded-For` names the visitor: the last address in it
    /// that is not itself a trusted proxy. Empty: the peer is the visitor.
    package var trustedProxies: Set<String> { origin.trustedProxies }
    let logger: Logger

    /// A middleware that asks `engine` about every request it sees, after `limits`.
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
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var gateRequest: GateRequest
        switch gateView(request, context: context) {
        case .success(let built): gateRequest = built
        case .failure(let refusal): return Self.response(refusal.response)
        }
        // An engine that reads the body (Queue-it's RequestBodyValidator) gets its first bytes;
        // the body is collected (at most the limits' bound, else 413) and handed on whole.
        var request = request
        let needed = engine.bodyBytesToDecide
        if needed > 0, request.headers[.contentLength].map({ $0 != "0" }) ?? request.headers.contains(.transferEncoding) {
            if let refusal = limits.refusal(for: gateRequest) { return Self.response(refusal.response ?? .refusal(400, refusal.reason)) }
            let buffer = try await request.collectBody(upTo: limits.maxBodyBytes)
            gateRequest.body = Array(buffer.readableBytesView.prefix(needed))
        }
        let decision = await engine.decide(gateRequest, within: limits)
        logger.debug(
            "gate decision",
            metadata: [
                "vendor": "\(engine.vendorID)", "verdict": "\(decision.verdict.rawValue)", "reason": "\(decision.reason)",
                "path": "\(request.uri.path)"
            ])
        let passHeaders: [GateHeader]
        switch GateAnswer(decision) {
        case .respond(let answer): return Self.response(answer)
        case .forward(let adding): passHeaders = adding
        }
        let started = ContinuousClock.now
        var response = try await next(request, context)
        for header in passHeaders {
            if let name = HTTPField.Name(header.name) { response.headers.append(HTTPField(name: name, value: header.value)) }
        }
        if decision.vendorResponseID != nil {
            let elapsed = ContinuousClock.now - started
            let status = response.status.code
            let engine = self.engine
            Task { await engine.handlerAnswered(gateRequest, decision: decision, status: status, elapsed: elapsed) }
        }
        return response
    }

    /// A request head the gate cannot check: its 400.
    struct HeadRefusal: Error {
        let response: GateResponse
    }

    /// The gate's view of a Hummingbird request, or the answer for one it cannot check as it is: a
    /// 308 to the canonical target (``GateTarget``), a 400 for a target with no canonical form,
    /// no Host (no URL can be built), one not allowed, or two (RFC 9112 §3.2: the codec made the first the authority and left
    /// the second among the fields, where the app could read a host the gate did not check).
    func gateView(_ request: Request, context: Context) -> Result<GateRequest, HeadRefusal> {
        let peer =
            (context as? any GateClientAddressContext)?.clientAddress
            ?? (context as? any RemoteAddressRequestContext)?.remoteAddress?.ipAddress
        var headers: [GateHeader] = []
        headers.reserveCapacity(request.headers.count)
        for field in request.headers {
            if field.name.canonicalName == "host" {
                return .failure(HeadRefusal(response: .refusal(400, "the request has more than one Host header")))
            }
            headers.append(GateHeader(field.name.rawName, field.value))
        }
        let raw = request.uri.description
        let built: GateRequest
        do {
            built = try origin.request(
                method: request.method.rawValue, target: raw, authority: request.head.authority,
                headers: headers, peer: peer)
        } catch {
            return .failure(HeadRefusal(response: error.response))
        }
        // The router has resolved the raw path already: a visitor whose path is not canonical is
        // sent to the canonical one, so the app only ever serves what the gate decided on.
        if let target = built.target, target != raw {
            return .failure(HeadRefusal(response: .canonicalRedirect(to: target)))
        }
        return .success(built)
    }

    /// The framework's answer for the gate's.
    static func response(_ answer: GateResponse) -> Response {
        var fields = HTTPFields()
        for header in answer.headers {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        let body = ByteBuffer(string: answer.body)
        return Response(status: HTTPResponse.Status(code: answer.status), headers: fields, body: ResponseBody(byteBuffer: body))
    }
}
