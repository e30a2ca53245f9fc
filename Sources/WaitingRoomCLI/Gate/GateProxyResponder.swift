import AsyncHTTPClient
import Hummingbird
import Logging
import NIOCore
import WaitingRoomGate
import WaitingRoomGateHummingbird

/// `waitingroom gate`'s request handling: every request takes a slot (``GateProxySlots``), goes
/// through the vendor's gate (``GateMiddleware``: the queue redirect, the AJAX answer or a refusal
/// is sent from here and never reaches the upstream), then is forwarded to the upstream with
/// AsyncHTTPClient. Bodies stream both ways (nothing is buffered beyond NIO's back-pressure);
/// headers are kept minus hop-by-hop fields, and `X-Forwarded-For`, `-Proto` and `-Host` are
/// added. An upstream that refuses, times out or resets before its answer's head gives a 502 page.
struct GateProxyResponder: HTTPResponder {
    typealias Context = GateRequestContext

    /// The upstream's `scheme://host:port`, without a trailing slash.
    let upstream: String
    let gate: GateMiddleware<GateRequestContext>
    let client: HTTPClient
    let slots: GateProxySlots
    /// The longest one exchange with the upstream may take, its body included.
    let timeout: TimeAmount
    /// Peers whose `X-Forwarded-Proto` and `X-Forwarded-Host` are kept (the gate's `--trusted-proxy`).
    let trustedProxies: Set<String>
    let logger: Logger

    func respond(to request: Request, context: GateRequestContext) async throws -> Response {
        guard let slot = slots.take() else { return GateProxyErrorPage.busy(limit: slots.limit) }
        return try await gate.handle(request, context: context) { request, context in
            await forward(request, peer: context.clientAddress, slot: slot)
        }
    }

    /// Sends `request` to the upstream and streams its answer back; a 502 page when it fails
    /// before the answer's head.
    func forward(_ request: Request, peer: String?, slot: GateProxySlots.Slot) async -> Response {
        var outbound = HTTPClientRequest(url: upstream + request.uri.description)
        outbound.method = .init(rawValue: request.method.rawValue)
        let listed = GateProxyHeaders.connectionListed(request.headers[values: .connection])
        var incomingForwardedFor: [String] = []
        let trusted = peer.map { trustedProxies.contains($0) } ?? false
        for field in request.headers {
            let name = field.name.canonicalName
            guard GateProxyHeaders.isForwarded(name, connectionListed: listed), name != "host", name != "content-length" else { continue }
            if name == "x-forwarded-for" { incomingForwardedFor.append(field.value); continue }
            if !trusted, name == "x-forwarded-proto" || name == "x-forwarded-host" { continue }
            outbound.headers.add(name: field.name.rawName, value: field.value)
        }
        if let forwardedFor = GateProxyHeaders.forwardedFor(incoming: incomingForwardedFor, peer: peer) {
            outbound.headers.add(name: "X-Forwarded-For", value: forwardedFor)
        }
        if !outbound.headers.contains(name: "X-Forwarded-Proto") { outbound.headers.add(name: "X-Forwarded-Proto", value: "http") }
        if !outbound.headers.contains(name: "X-Forwarded-Host"), let host = request.head.authority {
            outbound.headers.add(name: "X-Forwarded-Host", value: host)
        }
        // A body only when the request declares one: a length, or chunked transfer coding.
        let declared = request.headers[.contentLength].flatMap { Int64($0) }
        if let declared, declared > 0 {
            outbound.body = .stream(request.body, length: .known(declared))
        } else if declared == nil, request.headers[values: .transferEncoding].contains(where: { $0.lowercased().contains("chunked") }) {
            outbound.body = .stream(request.body, length: .unknown)
        }
        let answer: HTTPClientResponse
        do {
            answer = try await client.execute(outbound, timeout: timeout, logger: logger)
        } catch {
            logger.notice("upstream failed", metadata: ["upstream": "\(upstream)", "path": "\(request.uri.path)", "error": "\(error)"])
            return GateProxyErrorPage.badGateway(upstream: upstream, problem: Self.describe(error))
        }
        var headers = HTTPFields()
        let answerListed = GateProxyHeaders.connectionListed(answer.headers["Connection"])
        for (name, value) in answer.headers where GateProxyHeaders.isForwarded(name, connectionListed: answerListed) {
            if let fieldName = HTTPFields.Element.Name(name) { headers.append(HTTPFields.Element(name: fieldName, value: value)) }
        }
        let body = answer.body
        let upstream = self.upstream
        let logger = self.logger
        return Response(status: HTTPResponse.Status(code: Int(answer.status.code)), headers: headers, body: ResponseBody { writer in
            // The slot is held until the upstream's body has been sent on (or the response dropped).
            defer { withExtendedLifetime(slot) {} }
            do {
                for try await chunk in body { try await writer.write(chunk) }
            } catch {
                logger.notice("upstream body failed", metadata: ["upstream": "\(upstream)", "error": "\(error)"])
                throw error
            }
            try await writer.finish(nil)
        })
    }

    /// A few words for the 502 page: refused, timed out or something else.
    static func describe(_ error: any Error) -> String {
        if let e = error as? HTTPClientError {
            if e == .connectTimeout { return "the connection timed out" }
            if e == .deadlineExceeded || e == .readTimeout { return "it did not answer in time" }
            if e == .remoteConnectionClosed { return "it closed the connection" }
        }
        let text = "\(error)".lowercased()
        if text.contains("refused") { return "the connection was refused" }
        if text.contains("timeout") || text.contains("timed out") { return "it did not answer in time" }
        return "it could not be reached"
    }
}
