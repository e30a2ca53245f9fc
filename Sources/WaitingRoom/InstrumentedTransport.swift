import NIOCore
import Tracing

/// The environment's transport when it has metrics or a tracer: each labelled request
/// (``HTTPRequest/label``) is measured and traced around the transport it wraps.
///
/// A client span `HTTP <method> <kind>`, child of the span current in the calling task (a
/// session's wait, or the app's own), with `http.request.method`, `waitingroom.vendor`,
/// `waitingroom.request.kind`, `waitingroom.attempt` and `http.response.status_code`; the span
/// is current while the wrapped transport runs and its context is injected into the request's
/// headers (as the tracer does it: W3C trace context for OpenTelemetry); the counters
/// `waitingroom_vendor_requests_total` and `waitingroom_vendor_retries_total`.
struct InstrumentedTransport: HTTPTransport {
    let base: any HTTPTransport
    let metrics: WaitingRoomMetrics?
    let tracer: (any Tracer)?

    var timerEventLoops: (any EventLoopGroup)? { base.timerEventLoops }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let label = request.label else { return try await base.send(request) }
        guard let tracer else {
            do {
                let response = try await base.send(request)
                metrics?.request(vendor: label.vendor, kind: label.kind, result: Self.result(of: response.status), attempt: label.attempt)
                return response
            } catch {
                metrics?.request(vendor: label.vendor, kind: label.kind, result: Self.result(of: error), attempt: label.attempt)
                throw error
            }
        }
        let span = tracer.startSpan(
            "HTTP \(request.method) \(label.kind)", context: InstrumentationContext.current ?? .topLevel, ofKind: .client)
        span.attributes["http.request.method"] = request.method
        span.attributes["waitingroom.vendor"] = label.vendor
        span.attributes["waitingroom.request.kind"] = label.kind
        span.attributes["waitingroom.attempt"] = label.attempt
        var traced = request
        tracer.inject(span.context, into: &traced.headers, using: HeaderInjector())
        defer { span.end() }
        do {
            let response = try await InstrumentationContext.$current.withValue(span.context) { try await base.send(traced) }
            span.attributes["http.response.status_code"] = response.status
            if response.status >= 500 { span.setStatus(SpanStatus(code: .error)) }
            metrics?.request(vendor: label.vendor, kind: label.kind, result: Self.result(of: response.status), attempt: label.attempt)
            return response
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            metrics?.request(vendor: label.vendor, kind: label.kind, result: Self.result(of: error), attempt: label.attempt)
            throw error
        }
    }

    /// `ok` (2xx, 3xx) or `http_4xx` / `http_5xx`.
    static func result(of status: Int) -> String {
        status < 400 ? "ok" : "http_\(status / 100)xx"
    }

    /// `timeout`, `network`, `cancelled` or `error`.
    static func result(of error: any Error) -> String {
        if error is CancellationError { return "cancelled" }
        guard let error = error as? WaitingRoomError else { return "error" }
        switch error.kind {
        case .networkTimeout: return "timeout"
        case .networkOffline: return "network"
        case .invalidResponse: return "malformed"
        default: return error.kind.rawValue
        }
    }
}

/// Puts trace context into an ``HTTPHeaderList``.
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaderList) {
        headers.set(key, value)
    }
}
