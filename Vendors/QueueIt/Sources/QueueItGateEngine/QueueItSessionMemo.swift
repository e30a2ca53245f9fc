import NIOConcurrencyHelpers
import QueueIt
import WaitingRoomGate

/// The decisions a ``QueueItGate`` integration gave valid session cookies during the current
/// second, so that the next request with the same cookie, from the same address, in the same
/// second, is answered without checking and signing the cookie again (two HMAC-SHA256 and the
/// cookie's text).
///
/// Why a second is exact: KnownUser works in whole epoch seconds. A cookie is valid at second `s`
/// when its issue time plus its validity is not before `s`, and the cookie it is extended with
/// carries `s` as its issue time and `s` + 1 day as its `Expires`. So within one second, the same
/// cookie, address and AJAX form always give the same decision, and a browser keeps sending the
/// same cookie for the whole second (the extended cookie it gets back is the same text). A page's
/// burst of requests (the page, then its scripts, styles and images) is checked once.
///
/// What is kept: only passes (a refused or tampered cookie is never remembered, so garbage cannot
/// fill it), keyed on the cookie's whole text, the client IP and the AJAX form, for the second
/// they were made in; the next second starts empty. At most ``capacity`` decisions per second;
/// past it, decisions are made as if there were no memo.
///
/// Threading: shared by every thread that asks the gate; one lock around a dictionary. The lock is
/// NIO's (a pthread mutex), not `Synchronization.Mutex`, so ThreadSanitizer sees it (it cannot see
/// `Mutex` on Linux); per request it costs nothing measurable (README, "Sanitizers").
final class QueueItSessionMemo: Sendable {
    /// What a decision depends on besides the integration and the second.
    struct Key: Hashable, Sendable {
        let cookie: String
        let clientIP: String?
        let isAjax: Bool
    }

    private struct State {
        var second: Int64 = .min
        var decisions: [Key: QueueItKnownUserDecision] = [:]
    }

    private let state = NIOLockedValueBox(State())
    /// The most decisions kept for one second.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The decision made for `key` earlier in `second`, or nil.
    func decision(for key: Key, second: Int64) -> QueueItKnownUserDecision? {
        guard capacity > 0 else { return nil }
        return state.withLockedValue { s in s.second == second ? s.decisions[key] : nil }
    }

    /// Keeps `decision` (a pass) for `key` until `second` ends. A later second drops what was kept.
    func remember(_ decision: QueueItKnownUserDecision, for key: Key, second: Int64) {
        guard capacity > 0, decision.isPassed else { return }
        state.withLockedValue { s in
            if s.second != second {
                guard second > s.second else { return }  // a late caller from a past second
                s.second = second
                s.decisions.removeAll(keepingCapacity: true)
            }
            if s.decisions.count < capacity { s.decisions[key] = decision }
        }
    }

    /// How many decisions are kept now (tests).
    var count: Int { state.withLockedValue { $0.decisions.count } }
}
