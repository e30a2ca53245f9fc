import WaitingRoom

/// What the emulator counted (the figures of `GET /_emulator/cloudflare/state`).
package struct CloudflareEmulatorCounters: Sendable, Hashable {
    /// Visitors seen for the first time (a request without a valid cookie).
    package var visitorsCreated = 0
    /// Visitors let through to the origin (at once, from the line, or by the admin).
    package var admitted = 0
    /// Sessions revoked by the origin (`Cf-Waiting-Room-Command: revoke`).
    package var revoked = 0
    /// Active sessions that ran out (`session_duration` without a request, or without renewal).
    package var sessionsExpired = 0
    /// Waiting visitors dropped after 5 minutes without a refresh.
    package var placesLost = 0
    /// New visitors that failed the Turnstile challenge (the emulator's knob), whatever the action.
    package var turnstileFailed = 0
    /// Faults served, per action.
    package var faults: [String: Int] = [:]
    /// Requests received per request kind (`page`, `status`), the faulted ones included.
    package var requests: [String: Int] = [:]
    /// Faults served per request kind.
    package var faultsOn: [String: Int] = [:]
    /// Answers to protected requests per kind: `origin`, `queued`, `rejected`, `queueIsFull`,
    /// `suspended` (origin without a cookie), `bypassed` (a bypass rule matched), `ignored` (a
    /// request sooner than `refreshIntervalSeconds`), `infiniteQueue` (failed Turnstile), `html`
    /// (a waiting page for a non-JSON request).
    package var replies: [String: Int] = [:]

    package init() {}

    /// Faults served in all.
    package var faultsInjected: Int { faults.values.reduce(0, +) }

    var json: JSONValue {
        func object(_ d: [String: Int]) -> JSONValue { .object(d.mapValues { .number(Double($0)) }) }
        return .object([
            "visitorsCreated": .number(Double(visitorsCreated)), "admitted": .number(Double(admitted)),
            "revoked": .number(Double(revoked)), "sessionsExpired": .number(Double(sessionsExpired)),
            "placesLost": .number(Double(placesLost)), "turnstileFailed": .number(Double(turnstileFailed)), "faults": object(faults),
            "faultsInjected": .number(Double(faultsInjected)),
            "requests": object(requests), "faultsOn": object(faultsOn), "replies": object(replies)
        ])
    }
}
