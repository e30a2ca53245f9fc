import Foundation
import SQLiteNIO
import WaitingRoom

/// How passes, held keys and session leases are laid out in rows (see ``SQLiteSchema``).
///
/// Each record is kept whole as JSON text (the `pass` and `record` columns), so nothing of it
/// is lost and a later version of a type still reads; the columns beside it are copies of the
/// fields the SQL looks at (keys, owners, leases, times). Dates in columns are `REAL` seconds
/// since 1970, compared numerically. In the JSON they are Foundation's own encoding (seconds
/// since 2001), which gives back exactly the `Date` that was stored: a `Double` through 1970
/// can be one rounding step off, and a store must return a key exactly as it was recorded.
/// (A session's lease has no JSON of its own: its end is read back from `lease_until`, which
/// may differ from the date given by that one step, well under a microsecond.)
package struct SQLiteRecords {
    private let encoder: JSONEncoder
    private let decoder = JSONDecoder()

    init() {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
    }

    /// `value` as JSON text.
    func text(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The value in the JSON `text`.
    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }

    // MARK: - passes

    static let selectPass = "SELECT pass FROM passes WHERE vendor = ?1 AND scope = ?2 AND room = ?3"
    static let insertPass = """
        INSERT OR REPLACE INTO passes (vendor, scope, room, issued_at, expires_at, pass) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        """

    /// The binds of ``insertPass``.
    func passBinds(_ pass: Pass) throws -> [SQLiteData] {
        Self.roomBinds(vendor: pass.vendor, room: pass.room)
            + [Self.seconds(pass.issuedAt), Self.seconds(pass.expiresAt), .text(try text(pass))]
    }

    /// The binds of a pass's key (`vendor`, `scope`, `room`).
    static func roomBinds(vendor: String, room: RoomKey) -> [SQLiteData] {
        [.text(vendor), .text(room.scope), .text(room.room)]
    }

    // MARK: - held keys

    static let insertHeldKey = """
        INSERT OR REPLACE INTO held_keys (id, vendor, owner, lease_until, taken_at, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        """
    static let updateHeldKey = "UPDATE held_keys SET owner = ?2, lease_until = ?3, record = ?4 WHERE id = ?1"

    /// The binds of ``insertHeldKey``.
    package func heldKeyBinds(_ key: HeldKey) throws -> [SQLiteData] {
        [.text(key.id), .text(key.vendor), .text(key.owner), Self.seconds(key.leaseUntil), Self.seconds(key.takenAt), .text(try text(key))]
    }

    /// The binds of ``updateHeldKey``: the key's new owner and lease.
    func heldKeyLeaseBinds(_ key: HeldKey) throws -> [SQLiteData] {
        [.text(key.id), .text(key.owner), Self.seconds(key.leaseUntil), .text(try text(key))]
    }

    // MARK: - sessions

    static let selectSession = """
        SELECT vendor, scope, room, user, owner, lease_until, pass FROM sessions
        WHERE vendor = ?1 AND scope = ?2 AND room = ?3 AND user = ?4
        """
    static let insertSession = """
        INSERT OR REPLACE INTO sessions (vendor, scope, room, user, owner, lease_until, pass) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
        """

    /// The binds of a session's key (`vendor`, `scope`, `room`, `user`).
    static func sessionBinds(_ id: SessionLeaseID) -> [SQLiteData] {
        roomBinds(vendor: id.vendor, room: id.room) + [.text(id.user)]
    }

    /// The binds of ``insertSession``.
    func sessionRowBinds(_ row: SQLiteSessionRow) throws -> [SQLiteData] {
        Self.sessionBinds(row.id) + [.text(row.owner), Self.seconds(row.leaseUntil), try row.pass.map { .text(try text($0)) } ?? .null]
    }

    /// A session row as read by ``selectSession``; throws when a column is missing or the pass
    /// does not decode.
    func sessionRow(_ row: SQLiteRow) throws -> SQLiteSessionRow {
        guard let vendor = row.column("vendor")?.string, let scope = row.column("scope")?.string,
            let room = row.column("room")?.string, let user = row.column("user")?.string,
            let owner = row.column("owner")?.string, let leaseUntil = Self.date(row.column("lease_until"))
        else { throw SQLiteRecordError(message: "a session row lacks a column") }
        let pass = try row.column("pass")?.string.map { try decode(Pass.self, $0) }
        return SQLiteSessionRow(
            id: SessionLeaseID(vendor: vendor, room: RoomKey(scope: scope, room: room), user: user),
            owner: owner, leaseUntil: leaseUntil, pass: pass)
    }

    // MARK: - dates

    /// `date` as `REAL` seconds since 1970 (NULL for nil).
    static func seconds(_ date: Date?) -> SQLiteData {
        date.map { .float($0.timeIntervalSince1970) } ?? .null
    }

    /// The date in a column of seconds since 1970, if there is one.
    static func date(_ data: SQLiteData?) -> Date? {
        guard let data, !data.isNull, let seconds = data.double else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}

/// One session lease as stored (the store's copy of the core's session-lease record).
struct SQLiteSessionRow: Hashable, Sendable {
    var id: SessionLeaseID
    var owner: String
    var leaseUntil: Date
    var pass: Pass?

    /// The claim `owner` gets at `now`, and the row after it: the rule every store follows
    /// (the core's session-lease record). A live lease with an unexpired pass gives the pass; a
    /// live lease without a pass held by another owner is theirs; anything else (no row, a
    /// lapsed lease, the asker's own lease) gives the lease to the asker until `until`.
    static func claim(_ existing: SQLiteSessionRow?, id: SessionLeaseID, owner: String, now: Date, until: Date)
        -> (SessionClaim, SQLiteSessionRow?)
    {
        if let existing, existing.leaseUntil > now {
            if let pass = existing.pass, !pass.isExpired(at: now) { return (.passed(pass), existing) }
            if existing.pass == nil, existing.owner != owner {
                return (.heldBy(owner: existing.owner, until: existing.leaseUntil), existing)
            }
        }
        return (.acquired, SQLiteSessionRow(id: id, owner: owner, leaseUntil: until, pass: nil))
    }
}

/// A row that does not hold what its table promises.
struct SQLiteRecordError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension HeldKey {
    /// Oldest first, then by id: the order of listings (as the core's stores list them).
    static func sqliteJournalOrder(_ a: HeldKey, _ b: HeldKey) -> Bool { (a.takenAt, a.id) < (b.takenAt, b.id) }

    /// Whether this key of `vendor` (nil: any) may be claimed at `now`: its lease lapsed (the
    /// core's rule; a running lease is never claimed, not even by its owner).
    func sqliteClaimable(vendor: String?, now: Date) -> Bool {
        (vendor == nil || vendor == self.vendor) && leaseUntil <= now
    }
}

extension Pass {
    /// A stable order for listings: by issue time, then vendor, scope and room (as the core's
    /// stores list them).
    static func sqliteStoreOrder(_ a: Pass, _ b: Pass) -> Bool {
        (a.issuedAt, a.vendor, a.room.scope, a.room.room) < (b.issuedAt, b.vendor, b.room.scope, b.room.room)
    }
}
