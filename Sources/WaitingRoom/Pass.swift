import Foundation

/// Proof of admission: a key (NetFUNNEL) or a token (Queue-it), kept until it expires.
public struct Pass: Hashable, Sendable, Codable {
    /// Whether the credential is a key that must be returned or a token that is presented.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A key taken from the server that must be given back (``WaitingSession/complete()``).
        case key
        /// A signed token presented to the protected site or API.
        case token
    }

    /// The vendor id that issued the pass.
    public var vendor: String
    /// The room the pass is for.
    public var room: RoomKey
    /// The key or token itself. Redacted in logs unless secrets are revealed.
    public var credential: String
    /// Key or token.
    package var kind: Kind
    /// When the pass was received.
    package var issuedAt: Date
    /// When the pass stops being valid, if the vendor says.
    public var expiresAt: Date?
    /// True when the pass holds a slot that must be returned with `complete()`.
    package var requiresCompletion: Bool
    /// Where the user goes after passing (Queue-it `EventTargetUrl`), if any.
    public var targetURL: String?
    /// The vendor's redirect type or pass reason (Queue-it `rt_`), if any.
    package var redirectType: String?
    /// Set when the pass was granted because of a failure and a bypass policy (NetFUNNEL `errorBypass`).
    package var bypassedError: WaitingRoomError?
    /// Vendor details kept verbatim (for example node affinity for a NetFUNNEL key).
    package var details: [String: String]

    /// Creates a pass.
    public init(
        vendor: String,
        room: RoomKey,
        credential: String,
        kind: Kind,
        issuedAt: Date,
        expiresAt: Date? = nil,
        requiresCompletion: Bool = false,
        targetURL: String? = nil,
        redirectType: String? = nil,
        bypassedError: WaitingRoomError? = nil,
        details: [String: String] = [:]
    ) {
        self.vendor = vendor
        self.room = room
        self.credential = credential
        self.kind = kind
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.requiresCompletion = requiresCompletion
        self.targetURL = targetURL
        self.redirectType = redirectType
        self.bypassedError = bypassedError
        self.details = details
    }

    /// True when `date` is at or past ``expiresAt``. A pass without an expiry never expires by time.
    package func isExpired(at date: Date) -> Bool {
        guard let expiresAt else { return false }
        return date >= expiresAt
    }
}
