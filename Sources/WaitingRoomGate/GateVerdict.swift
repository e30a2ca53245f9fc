/// What a gate decided about a request, in the vendors' terms (KnownUser action types, plus the
/// gate's own refusal).
public enum GateVerdict: String, Sendable, Hashable, CaseIterable {
    /// The visitor may go on: a valid cookie, token or promotion (or no trigger matched).
    case pass
    /// The visitor must wait: sent to the waiting room (or, for an invalid token, to the vendor's
    /// error page, which queues them again).
    case queue
    /// Queue-it's Cancel action: the session cookie is dropped and the visitor sent to the cancel page.
    case cancel
    /// Queue-it's Ignore action: the request goes on untouched (no cookie is read or written).
    case ignore
    /// The gate refused the request itself (4xx): oversize, malformed, replayed.
    case refuse
}
