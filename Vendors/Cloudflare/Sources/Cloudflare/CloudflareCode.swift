import WaitingRoom

/// Every status this package reports for Cloudflare Waiting Room, in one table. Cloudflare's
/// JSON mode has no result codes of its own: the HTTP statuses are kept as they came (a queued
/// answer's status, 200, 202 or 429, is the room's `queueing_status_code`; an origin's 4xx is kept
/// as the blocked event's code), and the small numbers are this package's (proposal) codes for
/// what the client concludes (see `Vendors/Cloudflare/README.md`).
public enum CloudflareCode: Int, Sendable, Hashable, CaseIterable {
    /// The request went through: the answer is the origin's own response (its HTTP status is in
    /// the pass's `details["httpStatus"]`).
    case origin = 200
    /// In the waiting room: the answer was a `cfWaitingRoom` JSON object (the HTTP status, the
    /// room's `queueing_status_code` 200, 202 or 429, is in the message).
    case queued = 202
    /// The request was refused with a 4xx other than 429 and no `cfWaitingRoom` body (the HTTP
    /// status itself is kept as the blocked event's code; 403 is what the emulator answers).
    case refused = 403
    /// 5xx, or 429 without a `cfWaitingRoom` body: retried, then a failure (the status is kept).
    case originError = 503
    /// A pass found in the `PassStore` (proposal): no request was made.
    case storedPass = 1
    /// An answer that claims to be a `cfWaitingRoom` reply but is not one (bad JSON, wrong types).
    case invalidReply = 2
    /// The room is suspended: the origin answered and no `__cfwaitingroom` cookie was set or held
    /// (Cloudflare sends suspended rooms' traffic to the origin without a cookie).
    case suspended = 3
    /// The room rejects everyone (`queueing_method` `reject`): a reply with `isRejectQueue` true
    /// (`queueingMethod` `reject`, `refreshIntervalSeconds` 0, as the API reference documents)
    /// while neither `queueAll` nor a pre-queue holds users. A blocked outcome.
    case rejected = 4
    /// `queueIsFull`: the room takes no new users now. A blocked outcome for a visitor not yet in
    /// line; a progress event's code while waiting on with `blockWhenQueueIsFull` false.
    case queueIsFull = 5
    /// No usable answer after every attempt of the retry policy (timeouts, dropped connections,
    /// 5xx, bad replies).
    case unreachable = 6
    /// The origin revoked the session (`Cf-Waiting-Room-Command: revoke` on its response); the
    /// next request queues again.
    case revoked = 7
    /// An event is pre-queueing (`isEventPrequeueing`): nobody is let in before its start. The
    /// code of the progress events while it lasts, whose `eta` is the time until the event starts
    /// (`timeUntilEventStart`) and `etaText` its wording (proposal: the code).
    case eventPrequeue = 8
    /// The session was restarted with a fresh cookie jar (a new visitor) (proposal).
    case sessionRestart = 9
    /// The room gave no usable answer and `failOpen` let the user through (proposal): a passed
    /// outcome whose pass keeps the error in `bypassedError` and holds no credential.
    case failedOpen = 10
    /// The user left the line (`cancel()`).
    case cancelled = 499

    /// A short description.
    public var message: String {
        switch self {
        case .origin: return "the origin answered: the request went through"
        case .queued: return "in the waiting room"
        case .refused: return "refused (HTTP 4xx)"
        case .originError: return "origin or edge error (HTTP 5xx or 429)"
        case .storedPass: return "a stored pass is still valid"
        case .invalidReply: return "not a cfWaitingRoom reply"
        case .suspended: return "the waiting room is suspended: traffic goes to the origin"
        case .rejected: return "the waiting room rejects every visitor (queueing method reject)"
        case .queueIsFull: return "the waiting room's queue is full (estimated wait over 24 h)"
        case .unreachable: return "no usable answer after every attempt"
        case .revoked: return "the origin revoked the session"
        case .eventPrequeue: return "an event is pre-queueing: nobody is let in before it starts"
        case .failedOpen: return "the waiting room could not be reached: let through (failOpen)"
        case .sessionRestart: return "session restarted"
        case .cancelled: return "closed by the user"
        }
    }
}

extension CloudflareCode: VendorCode {
    package static var vendorID: String { CloudflareConfiguration.vendorID }
}
