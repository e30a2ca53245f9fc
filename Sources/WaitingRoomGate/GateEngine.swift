/// A vendor's server-side check, behind one shape: the gate asks it about each request and
/// applies the ``GateDecision``. Implementations: ``QueueItGate`` (KnownUser) and
/// ``CrowdHandlerGate`` (full and hybrid). Must be safe to call from many requests at once.
public protocol GateEngine: Sendable {
    /// The vendor id (`queueit`, `crowdhandler`).
    var vendorID: String { get }

    /// Decides about one request. Never throws: a failure becomes a decision (the vendor's
    /// fail-open or fail-closed rule).
    func decide(_ request: GateRequest) async -> GateDecision

    /// Told when the protected handler has answered a request this engine let through: its status
    /// and how long it took (CrowdHandler records it with `PUT /v1/responses`). Default: nothing.
    func handlerAnswered(_ request: GateRequest, decision: GateDecision, status: Int, elapsed: Duration) async
}

extension GateEngine {
    public func handlerAnswered(_ request: GateRequest, decision: GateDecision, status: Int, elapsed: Duration) async {}
}

extension GateEngine {
    /// What an adapter applies to one request: the refusal `limits` give (a 4xx, the engine never
    /// asked), or the engine's decision.
    public func decide(_ request: GateRequest, within limits: GateLimits) async -> GateDecision {
        if let refusal = limits.refusal(for: request) { return refusal }
        return await decide(request)
    }
}
