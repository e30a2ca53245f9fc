import WaitingRoom

/// Every status this package reports for CrowdHandler, in one table. HTTP statuses are kept as
/// they came; the small numbers are the API's own `result.status` values where the public SDKs
/// name them, and this package's (proposal) codes where they do not (see the vendor README).
public enum CrowdHandlerCode: Int, Sendable, Hashable, CaseIterable {
    /// The API answered; `promoted` says the rest.
    case ok = 200
    /// The user was refused: the API answered 4xx (not 429). The HTTP status itself is kept in
    /// the event; 403 is what the emulator's blocked rooms answer.
    case rejected = 403
    /// The API answered 429 (rate limited): a failure, handled by `trustOnFail`.
    case rateLimited = 429
    /// The API answered 5xx: a failure, handled by `trustOnFail` (the HTTP status is kept).
    case serverError = 503
    /// No usable answer (timeout, dropped connection, not the API's JSON), the check failed: the
    /// status a failed check reports, as the PHP SDK's stand-in answer does (`status: 2`).
    case checkFailed = 2
    /// `result.status` 6: the API throttled the check (JavaScript SDK); handled by `trustOnFail`.
    case throttled = 6
    /// A pass found in the `PassStore` (proposal): no API call was made.
    case storedPass = 1
    /// A pass accepted by local (hybrid) signature validation, no API call (proposal).
    case signatureValid = 7
    /// The user is sent to the safety-net room after a failed check (`trustOnFail` false).
    case safetyNet = 8
    /// The session was restarted (a new `POST /v1/requests`) (proposal).
    case sessionRestart = 9
    /// The user left the line (`cancel()`).
    case cancelled = 499

    /// A short description.
    public var message: String {
        switch self {
        case .ok: return "ok"
        case .rejected: return "rejected by the API (4xx)"
        case .rateLimited: return "rate limited by the API (429)"
        case .serverError: return "API server error (5xx)"
        case .checkFailed: return "the API check failed"
        case .throttled: return "API throttle response (status 6)"
        case .storedPass: return "a stored pass is still valid"
        case .signatureValid: return "signature valid for the room's timeout"
        case .safetyNet: return "sent to the safety-net room"
        case .sessionRestart: return "session restarted"
        case .cancelled: return "closed by the user"
        }
    }
}

extension CrowdHandlerCode: VendorCode {
    package static var vendorID: String { CrowdHandlerConfiguration.vendorID }
}
