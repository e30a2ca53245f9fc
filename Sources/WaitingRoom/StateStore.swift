import Foundation

/// What must outlive the process: passes, the journal of keys taken from a vendor's server
/// (``HeldKey``) and the leases of sessions in flight (``SessionLeaseID``).
///
/// One protocol for every store, so a provider never knows which one it has:
/// `MemoryPassStore` (one process), `FilePassStore` (one JSON file), and in their own
/// modules the SQLite store (embedded, crash-safe: the default when durability is asked for)
/// and the PostgreSQL store (several instances of an app sharing one database).
///
/// Promises every store keeps (checked for each by the store conformance suite):
/// - the ``PassStore`` promises (never an expired pass; one pass per vendor and room);
/// - a held key recorded with ``recordHeldKey(_:)`` is listed by ``heldKeys()`` until
///   ``removeHeldKey(id:)``, across restarts for a durable store;
/// - ``claimHeldKeys(vendor:owner:now:leaseUntil:limit:)`` hands each key whose owner's lease has
///   lapsed to exactly one claimer, also when several claim at once (no double return);
/// - ``acquireSession(_:owner:now:until:)`` grants a session's lease to one owner at a time; a
///   lease whose owner stopped renewing it can be taken over once it lapses;
/// - a damaged store is reported, moved aside, and what can still be read from it is kept.
public protocol StateStore: PassStore {
    /// True when several processes (instances) share what is stored: sessions then take a
    /// lease, so one user is enqueued once across them.
    var isShared: Bool { get }
    /// True when what is stored survives the process (file, SQLite, PostgreSQL): only then do
    /// providers journal the keys they take (the memory store would lose the journal with
    /// the process anyway, so it costs nothing there).
    var isDurable: Bool { get }

    /// Records (or replaces, by ``HeldKey/id``) a key taken from a vendor's server. Called
    /// before the key is handed to the app, so a process that dies still has it on record.
    func recordHeldKey(_ key: HeldKey) async throws
    /// Forgets a key that was returned (or that the server no longer knows).
    func removeHeldKey(id: String) async throws
    /// Every recorded key, oldest first.
    func heldKeys() async throws -> [HeldKey]
    /// Takes over up to `limit` keys of `vendor` (nil: any vendor) whose lease lapsed at or
    /// before `now` (their owner died or stopped; a key whose lease runs is never claimed, even
    /// by its owner): each is given to `owner` until `leaseUntil` in one atomic step, so two
    /// claimers never get the same key.
    func claimHeldKeys(vendor: String?, owner: String, now: Date, leaseUntil: Date, limit: Int) async throws -> [HeldKey]
    /// Extends every lease `owner` holds (held keys and sessions) to `until`: its heartbeat.
    func renewLeases(owner: String, until: Date) async throws

    /// Asks for the lease of one user's session in one room.
    func acquireSession(_ id: SessionLeaseID, owner: String, now: Date, until: Date) async throws -> SessionClaim
    /// Ends `owner`'s lease of a session: with the pass it ended with (kept for the other
    /// instances until the pass expires, or `keepUntil` when it has no expiry), or without one
    /// (the lease is dropped, so another instance may enqueue the user).
    func finishSession(_ id: SessionLeaseID, owner: String, pass: Pass?, keepUntil: Date) async throws

    /// Closes connections and files (a store is not used after this).
    func close() async throws
}

extension StateStore {
    /// Default: nothing to close.
    public func close() async throws {}
}

/// A key taken from a vendor's server that must be given back: what the journal keeps.
///
/// Everything needed to return the key without the session that took it (the vendor's
/// return recipe is in ``details``), so another process can return it after a crash.
public struct HeldKey: Hashable, Sendable, Codable {
    /// Unique per key: `vendor:key` (a vendor's keys are unique on its server).
    public var id: String
    /// The vendor id that issued the key.
    public var vendor: String
    /// The room the key is for.
    public var room: RoomKey
    /// The key itself. Redacted in logs unless secrets are revealed.
    public var key: String
    /// The vendor's return recipe (for example NetFUNNEL's node and control mode).
    public var details: [String: String]
    /// When the key was taken.
    public var takenAt: Date
    /// When the server times the key out on its own, if known: past it, a return is moot.
    public var expiresAt: Date?
    /// The process (instance) that holds the key and will return it.
    public var owner: String
    /// Until when ``owner``'s claim stands without a renewal; after it, any instance may take
    /// the key over.
    public var leaseUntil: Date

    /// Creates a journal entry; ``id`` is `vendor:key`.
    public init(
        vendor: String, room: RoomKey, key: String, details: [String: String] = [:], takenAt: Date,
        expiresAt: Date? = nil, owner: String, leaseUntil: Date
    ) {
        self.id = "\(vendor):\(key)"
        self.vendor = vendor
        self.room = room
        self.key = key
        self.details = details
        self.takenAt = takenAt
        self.expiresAt = expiresAt
        self.owner = owner
        self.leaseUntil = leaseUntil
    }
}

/// One user's session in one room, as leased across instances.
public struct SessionLeaseID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The vendor id.
    public var vendor: String
    /// The room.
    public var room: RoomKey
    /// The user's id (``Entry/userId``).
    public var user: String

    /// Creates a lease id.
    public init(vendor: String, room: RoomKey, user: String) {
        self.vendor = vendor
        self.room = room
        self.user = user
    }

    /// `vendor/scope/room/user`, the key stores file it under.
    public var description: String { "\(vendor)/\(room.scope)/\(room.room)/\(user)" }
}

/// What asking for a session's lease came to.
public enum SessionClaim: Hashable, Sendable {
    /// The lease is the asker's: it waits in line for the user.
    case acquired
    /// Another live instance holds it until the date: wait for its outcome.
    case heldBy(owner: String, until: Date)
    /// The user already passed (on some instance): here is the pass.
    case passed(Pass)
}

/// A stored session lease (the memory and file stores keep these).
struct SessionLeaseRecord: Hashable, Sendable, Codable {
    var id: SessionLeaseID
    var owner: String
    var leaseUntil: Date
    var pass: Pass?

    /// The claim `owner` gets at `now`, and the record after it.
    static func claim(_ existing: SessionLeaseRecord?, id: SessionLeaseID, owner: String, now: Date, until: Date)
        -> (SessionClaim, SessionLeaseRecord?)
    {
        if let existing, existing.leaseUntil > now {
            if let pass = existing.pass, !pass.isExpired(at: now) { return (.passed(pass), existing) }
            if existing.pass == nil, existing.owner != owner {
                return (.heldBy(owner: existing.owner, until: existing.leaseUntil), existing)
            }
        }
        return (.acquired, SessionLeaseRecord(id: id, owner: owner, leaseUntil: until, pass: nil))
    }
}

extension HeldKey {
    /// Oldest first, then by id: the order of listings.
    static func journalOrder(_ a: HeldKey, _ b: HeldKey) -> Bool { (a.takenAt, a.id) < (b.takenAt, b.id) }

    /// Whether this key of `vendor` (nil: any) may be claimed at `now`: its lease lapsed.
    func claimable(vendor: String?, now: Date) -> Bool {
        (vendor == nil || vendor == self.vendor) && leaseUntil <= now
    }

    /// The in-memory claim the memory and file stores share: up to `limit` claimable keys of
    /// `held`, oldest first, handed to `owner` until `leaseUntil`.
    static func claim(
        from held: inout [String: HeldKey], vendor: String?, owner: String, now: Date, leaseUntil: Date, limit: Int
    ) -> [HeldKey] {
        var claimed: [HeldKey] = []
        for var key in held.values.sorted(by: journalOrder) where claimed.count < limit && key.claimable(vendor: vendor, now: now) {
            key.owner = owner
            key.leaseUntil = leaseUntil
            held[key.id] = key
            claimed.append(key)
        }
        return claimed
    }
}
