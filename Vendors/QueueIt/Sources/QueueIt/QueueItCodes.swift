/// The one table of Queue-it status codes we report (`VendorStatus.code`, `WaitingRoomError.vendorCode`).
///
/// Codes `-100`, `3` and `10` are the vendor SDK's own (docs/queueit-protocol.md §3.3). An HTTP 4xx answer to
/// enqueue is reported with the HTTP status itself as the code and the body as the message (iOS
/// behaviour, docs/queueit-protocol.md §3.1); that is all the public record says about 4xx. The cases for
/// 400, 401, 403, 404 and 429 only name common statuses: what Queue-it's server means by each is
/// not public, and the meanings given below are (proposal) this project's emulator's. Codes below
/// `-100` are ours (the vendor SDK has no equivalent). See ``origin`` and `Vendors/QueueIt/README.md`.
public enum QueueItErrorCode: Int, Sendable, CaseIterable, Hashable {
    /// Where a code comes from.
    public enum Origin: String, Sendable, Hashable {
        /// A code of the vendor's SDK (`3`, `10`, `-100`).
        case vendorSDK
        /// An HTTP status reported as the code (200, 4xx), as iOS does; the vendor publishes no
        /// meaning per 4xx status, so any meaning given is a proposal.
        case httpStatus
        /// This project's own code (below -100).
        case ours
    }

    /// Enqueue answered 200 with a JSON object: the call succeeded (the HTTP status, as iOS reports it).
    case ok = 200
    /// Retries exhausted (1, 2, 4, 8 s): "Error! Queue is unavailable." (iOS provider code 3).
    case queueUnavailable = 3
    /// Another enqueue of the same provider is still running (iOS `RequestAlreadyInProgress`).
    case requestAlreadyInProgress = 10
    /// The device is offline; reported at once, without retry (iOS `NetworkUnavailable`).
    case networkUnavailable = -100
    /// HTTP 400 from enqueue: rejected, not retried. (proposal) The emulator: a bad enqueue body.
    case badRequest = 400
    /// HTTP 401 from enqueue: rejected, not retried. (proposal) The emulator never sends it.
    case unauthorized = 401
    /// HTTP 403 from enqueue: rejected, not retried. (proposal) The emulator: a missing or invalid
    /// enqueue token or key.
    case forbidden = 403
    /// HTTP 404 from enqueue: rejected, not retried. (proposal) The emulator: an unknown customer
    /// or waiting room.
    case notFound = 404
    /// HTTP 429 from enqueue: rejected, not retried (the vendor treats every 4xx alike).
    case tooManyRequests = 429
    /// Ours: the configuration is invalid (a field is missing or malformed); nothing was sent.
    case invalidConfiguration = -200
    /// Ours: a protected API answered with an `x-queueit-redirect` header we cannot use
    /// (not a URL, or no `c`/`e` parameters), or kept redirecting after a valid token.
    case invalidRedirect = -201
    /// Ours: the queue page could not be followed (HTTP-follow driver: too many hops, a
    /// blocked URL, a 4xx/5xx page, or a network failure while polling).
    case queuePageFailed = -202
    /// Ours: the visitor closed the queue page (`queueit://close`).
    case viewClosed = -203
    /// Ours: the queue page asked for a new session (`queueit://restartSession`).
    case sessionRestart = -204
    /// Ours: a pass was taken from the pass store without contacting the server.
    case storedPass = -205
    /// Ours: the HTTP-follow driver waited its `maxWait` without reaching the target (a page it
    /// cannot follow, such as a real, script-driven Queue-it queue page).
    case queuePageTimeout = -206
    /// Ours: a queue page handed to the host got no navigation report within
    /// `hostReportTimeoutSeconds` (the host shows no pages: choose `follow` or `browser`).
    case hostDidNotReport = -207

    /// Where this code comes from (vendor SDK, HTTP status, ours).
    public var origin: Origin {
        switch self {
        case .queueUnavailable, .requestAlreadyInProgress, .networkUnavailable: return .vendorSDK
        case .ok, .badRequest, .unauthorized, .forbidden, .notFound, .tooManyRequests: return .httpStatus
        default: return .ours
        }
    }

    /// The vendor status code to report for an HTTP status: the status itself (iOS reports 4xx
    /// answers with the HTTP status as the code).
    package static func code(forHTTPStatus status: Int) -> Int { status }

    /// Whether an HTTP status is a 4xx client error (terminal, not retried; docs/queueit-protocol.md §3.1).
    package static func isClientError(_ status: Int) -> Bool { (400...499).contains(status) }

    /// The vendor's (or our) message for this code.
    public var message: String {
        switch self {
        case .ok: return "OK"
        case .queueUnavailable: return "Error! Queue is unavailable."
        case .requestAlreadyInProgress: return "Enqueue request is already in progress"
        case .networkUnavailable: return "Network connection is unavailable"
        case .badRequest: return "Bad request"
        case .unauthorized: return "Unauthorized"
        case .forbidden: return "Forbidden"
        case .notFound: return "Not found"
        case .tooManyRequests: return "Too many requests"
        case .invalidConfiguration: return "Invalid configuration"
        case .invalidRedirect: return "Invalid x-queueit-redirect from the protected API"
        case .queuePageFailed: return "The queue page could not be followed"
        case .viewClosed: return "The queue view was closed"
        case .sessionRestart: return "Session restart requested by the queue page"
        case .storedPass: return "Pass taken from the pass store"
        case .queuePageTimeout: return "The queue page did not lead to the target in time"
        case .hostDidNotReport: return "The host reported no navigation of the queue page"
        }
    }
}

/// Why a `queueittoken` or a `QueueITAccepted` cookie was rejected: the KnownUser connector's
/// error codes (docs/queueit-protocol.md §7.2–7.3), raw value = the code used in the `/error/{code}/` redirect.
package enum QueueItValidationError: String, Error, Sendable, CaseIterable, Hashable {
    /// The HMAC-SHA256 hash does not match (tampered token or wrong secret key). Checked first.
    case hash
    /// The token's `e_` (or the cookie's `EventId`) is not the configured waiting room. Checked second.
    case eventId = "eventid"
    /// The token expired (`ts_` < now) or the cookie's validity ran out. Checked third.
    case timestamp
    /// The token's `hip_` (or cookie's `Hip`) is not the HMAC of the client's IP. Checked last.
    case ip
    /// The cookie could not be read at all (KnownUser's `connector/sessionstate`).
    case sessionState = "connector/sessionstate"
}
