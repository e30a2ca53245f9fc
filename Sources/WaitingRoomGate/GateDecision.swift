/// A gate's decision about one request: whether it reaches the protected handler, and what the
/// visitor gets otherwise. Free of any web framework (``GateRequest`` in, this out), so the
/// Hummingbird middleware, a Vapor adapter and the reverse proxy apply it the same way.
public struct GateDecision: Sendable, Hashable {
    /// What was decided, in the vendors' terms.
    public var verdict: GateVerdict
    /// The answer to send instead of calling the protected handler; nil: call it.
    public var response: GateResponse?
    /// Headers to add to the protected handler's response when it is called (`Set-Cookie` of a
    /// new or extended session cookie).
    public var passHeaders: [GateHeader]
    /// Why, in a few words a log or a test can read (`token: hash`, `cookie valid`, `oversize headers`).
    public var reason: String
    /// The vendor's session id when one is known (Queue-it's queue id, CrowdHandler's token).
    package var sessionID: String?
    /// The vendor's id for reporting how the handler answered (CrowdHandler's `responseID`).
    package var vendorResponseID: String?

    package init(
        verdict: GateVerdict, response: GateResponse? = nil, passHeaders: [GateHeader] = [], reason: String, sessionID: String? = nil
    ) {
        self.verdict = verdict
        self.response = response
        self.passHeaders = passHeaders
        self.reason = reason
        self.sessionID = sessionID
    }

    /// Adds a `Set-Cookie` with `value` to what the visitor gets: the gate's answer, or the
    /// handler's (the pass headers).
    package mutating func addCookie(_ value: String) {
        let header = GateHeader("Set-Cookie", value)
        if response != nil { response?.headers.insert(header, at: 0) } else { passHeaders.append(header) }
    }

    /// Whether the request goes on to the protected handler.
    package var reachesHandler: Bool { response == nil }

    /// Lets the request through, adding `headers` to the handler's response.
    package static func pass(_ reason: String, headers: [GateHeader] = [], sessionID: String? = nil) -> GateDecision {
        GateDecision(verdict: .pass, passHeaders: headers, reason: reason, sessionID: sessionID)
    }

    /// Answers with a 4xx and never calls the handler.
    package static func refuse(_ status: Int, _ reason: String) -> GateDecision {
        GateDecision(verdict: .refuse, response: .refusal(status, reason), reason: reason)
    }
}
