import Synchronization
import Tracing

/// One session's metrics and trace: created only when the environment has a metrics backend or
/// a tracer (``ProviderEnvironment/metrics``, ``ProviderEnvironment/tracer``), so a session
/// without either pays one nil reference.
///
/// The trace is a span per session, `waitingroom.session` (enqueue → the final state), started
/// in the context current where the session was made (the app's own trace), with a child span
/// `waitingroom.wait` (one per wait: the first, and one per restart) and `waitingroom.complete`
/// (the key return); each vendor request is a child of the span current in its task
/// (``ProviderEnvironment/send(_:vendor:kind:attempt:)``). Attributes: `waitingroom.vendor`,
/// `waitingroom.scope`, `waitingroom.room`, `waitingroom.outcome`, `waitingroom.code`.
///
/// Threading: any thread; the spans in flight are behind one lock.
final class SessionInstrumentation: Sendable {
    let metrics: WaitingRoomMetrics?
    let counters: VendorCounters?
    let tracer: (any Tracer)?
    let vendor: String
    let room: RoomKey
    let started = ContinuousClock.now

    private struct Spans {
        var session: (any Span)?
        var wait: (any Span)?
        var ended = false
    }
    private let spans = Mutex(Spans())

    init?(environment: ProviderEnvironment, vendor: String, room: RoomKey) {
        guard environment.metrics != nil || environment.tracer != nil else { return nil }
        self.metrics = environment.metrics
        self.counters = environment.metrics?.counters(vendor: vendor)
        self.tracer = environment.tracer
        self.vendor = vendor
        self.room = room
        if let tracer {
            let span = tracer.startSpan("waitingroom.session", context: InstrumentationContext.current ?? .topLevel, ofKind: .internal)
            span.attributes["waitingroom.vendor"] = vendor
            span.attributes["waitingroom.scope"] = room.scope
            span.attributes["waitingroom.room"] = room.room
            spans.withLock { $0.session = span }
        }
    }

    /// The session span's context (for the spans of its wait and its key return).
    var sessionContext: InstrumentationContext? { spans.withLock { $0.session?.context } }

    /// Starts the span of one wait; its context is current while the wait runs.
    func startWait() -> InstrumentationContext? {
        guard let tracer, let parent = sessionContext else { return nil }
        let span = tracer.startSpan("waitingroom.wait", context: parent, ofKind: .internal)
        let previous = spans.withLock { spans -> (any Span)? in
            defer { spans.wait = span }
            return spans.wait
        }
        previous?.end()
        return span.context
    }

    /// Runs `body` (a key return) in a `waitingroom.complete` span under the session's.
    func traceCompletion(_ body: () async -> VendorStatus) async -> VendorStatus {
        guard let tracer, let parent = sessionContext else { return await body() }
        let span = tracer.startSpan("waitingroom.complete", context: parent, ofKind: .internal)
        let status = await InstrumentationContext.$current.withValue(span.context) { await body() }
        span.attributes["waitingroom.code"] = status.code
        span.end()
        return status
    }

    /// A delivered event: metrics, and the spans' attributes and ends.
    func observe(_ event: WaitingRoomEvent) {
        let name = event.name
        if let counters {
            // The emit path (progress above all) touches one counter and nothing else.
            counters.count(name)
            if name != .progress, let metrics {
                metrics.record(event, counters: counters, room: room, waited: name == .passed ? ContinuousClock.now - started : nil)
            }
        }
        guard tracer != nil, name != .progress else { return }
        switch event {
        case .passed, .blocked, .closed, .disabled, .failed:
            let status = event.status
            let wait = spans.withLock { spans -> (any Span)? in
                spans.session?.attributes["waitingroom.outcome"] = event.name.rawValue
                spans.session?.attributes["waitingroom.code"] = status.code
                spans.session?.addEvent(SpanEvent(name: "outcome", attributes: ["waitingroom.outcome": .string(event.name.rawValue)]))
                defer { spans.wait = nil }
                return spans.wait
            }
            if let wait {
                wait.attributes["waitingroom.outcome"] = event.name.rawValue
                wait.attributes["waitingroom.code"] = status.code
                if case .failed(let error) = event { wait.setStatus(SpanStatus(code: .error, message: error.message)) }
                wait.end()
            }
        case .sessionRestarted, .keyReturnedLate:
            spans.withLock { $0.session?.addEvent(SpanEvent(name: event.name.rawValue)) }
        default:
            break
        }
    }

    /// The session reached its final state: its span ends (once).
    func finish() {
        let ending = spans.withLock { spans -> [any Span] in
            guard !spans.ended else { return [] }
            spans.ended = true
            defer {
                spans.session = nil
                spans.wait = nil
            }
            return [spans.wait, spans.session].compactMap { $0 }
        }
        for span in ending { span.end() }
    }
}
