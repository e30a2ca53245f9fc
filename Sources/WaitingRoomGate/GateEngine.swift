/// A vendor's server-side check, behind one shape: the gate asks it about each request and
/// applies the ``GateDecision``. Implementations: `QueueItGate` (KnownUser) and
/// `CrowdHandlerGate` (full and hybrid). Must be safe to call from many requests at once.
public protocol GateEngine: Sendable {
    /// The vendor id (`queueit`, `crowdhandler`).
    var vendorID: String { get }

    /// Decides about one request. Never throws: a failure becomes a decision (the vendor's
    /// fail-open or fail-closed rule).
    func decide(_ request: GateRequest) async -> GateDecision

    /// The decision when it needs nothing that waits (no network, no lock held across a wait),
    /// computed on the caller's thread; nil when only ``decide(_:)`` can answer. An adapter that
    /// serves on an event loop (the reverse proxy) asks this first and so answers most requests
    /// without leaving the loop. Must equal what ``decide(_:)`` would return. Default: nil.
    func immediateDecision(_ request: GateRequest) -> GateDecision?

    /// The request header names (any case) this engine's decisions read beyond the ones every
    /// gate reads (`Cookie`, `User-Agent`, …): a proxy must not let a visitor have them dropped
    /// on the way to the app (a `Connection` header naming them). Default: none.
    var consultedHeaderNames: Set<String> { get }

    /// How many bytes of a request's body the engine reads to decide (Queue-it's
    /// `RequestBodyValidator`): an adapter reads at most this many before asking it, sets
    /// `GateRequest/body` and hands the whole body on to the app. 0 (default): decided on the
    /// head alone.
    var bodyBytesToDecide: Int { get }

    /// Told when the protected handler has answered a request this engine let through: its status
    /// and how long it took (CrowdHandler records it with `PUT /v1/responses`). Default: nothing.
    func handlerAnswered(_ request: GateRequest, decision: GateDecision, status: Int, elapsed: Duration) async
}

extension GateEngine {
    public func handlerAnswered(_ request: GateRequest, decision: GateDecision, status: Int, elapsed: Duration) async {}

    public func immediateDecision(_ request: GateRequest) -> GateDecision? { nil }

    public var consultedHeaderNames: Set<String> { [] }

    public var bodyBytesToDecide: Int { 0 }
}

extension GateEngine {
    /// What an adapter applies to one request: the refusal `limits` give (a 4xx, the engine never
    /// asked), or the engine's decision.
    package func decide(_ request: GateRequest, within limits: GateLimits) async -> GateDecision {
        if let refusal = limits.refusal(for: request) { return refusal }
        return await decide(request)
    }

    /// ``immediateDecision(_:)`` after `limits`: the refusal they give, the engine's decision when
    /// it needs no wait, or nil (then ask ``decide(_:within:)``).
    package func immediateDecision(_ request: GateRequest, within limits: GateLimits) -> GateDecision? {
        if let refusal = limits.refusal(for: request) { return refusal }
        return immediateDecision(request)
    }
}
