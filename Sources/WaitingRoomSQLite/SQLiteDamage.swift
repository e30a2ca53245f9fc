import Foundation
import SQLiteNIO
import WaitingRoom

/// What a damaged database still gave up: the rows that could be read and decoded.
///
/// Each table is read on its own; when a full scan fails part-way (a damaged page), the rows
/// are walked one at a time by `rowid`, stepping over the ones that cannot be read, so one bad
/// page costs the rows on it, not the table.
struct SQLiteSalvage: Sendable {
    var passes: [Pass] = []
    var heldKeys: [HeldKey] = []
    var sessions: [SQLiteSessionRow] = []
    /// Rows found but not decodable.
    var lostRows = 0
    /// What failed, per table.
    var notes: [String] = []

    /// How many rows are kept.
    var kept: Int { passes.count + heldKeys.count + sessions.count }

    /// The most single rows probed past damage in one table (each probe is one statement).
    static let probeLimit = 10_000
    /// When the largest rowid cannot be read: how many missing rowids in a row end the probing.
    static let missLimit = 1_000

    /// Reads what it can of every table of `db`; never throws. (Only reads: `db` is closed
    /// and moved aside afterwards.)
    static func read(from db: SQLiteConnection) async -> SQLiteSalvage {
        let records = SQLiteRecords()
        var salvage = SQLiteSalvage()
        // Lets SQLite read a file shorter than its header says (a truncated file) page by page
        // instead of refusing it whole.
        _ = try? await db.query("PRAGMA writable_schema = ON")
        do {
            _ = try await db.query("SELECT count(*) FROM sqlite_schema")
        } catch {
            // No table can be found (not a database at all, or its schema is damaged).
            salvage.notes.append("schema: \(error)")
            return salvage
        }

        let passRows = await rows(of: "passes", columns: "pass", in: db)
        salvage.note(passRows)
        for row in passRows.rows {
            if let text = row.column("pass")?.string, let pass = try? records.decode(Pass.self, text) {
                salvage.passes.append(pass)
            } else {
                salvage.lostRows += 1
            }
        }

        let keyRows = await rows(of: "held_keys", columns: "record, owner, lease_until", in: db)
        salvage.note(keyRows)
        for row in keyRows.rows {
            if let text = row.column("record")?.string, var key = try? records.decode(HeldKey.self, text) {
                // a renewal updates only the columns
                if let owner = row.column("owner")?.string { key.owner = owner }
                if let lease = SQLiteRecords.date(row.column("lease_until")) { key.leaseUntil = lease }
                salvage.heldKeys.append(key)
            } else {
                salvage.lostRows += 1
            }
        }

        let sessionRows = await rows(of: "sessions", columns: "vendor, scope, room, user, owner, lease_until, pass", in: db)
        salvage.note(sessionRows)
        for row in sessionRows.rows {
            if let session = try? records.sessionRow(row) {
                salvage.sessions.append(session)
            } else {
                salvage.lostRows += 1
            }
        }
        return salvage
    }

    private mutating func note(_ table: TableRows) {
        guard var trouble = table.trouble else { return }
        if table.skipped > 0 { trouble += " (probed \(table.skipped) unreadable or missing rowid(s))" }
        notes.append(trouble)
    }

    /// The rows of one table that could be read.
    struct TableRows {
        var rows: [SQLiteRow] = []
        /// Rowids stepped over because they could not be read (or hold no row).
        var skipped = 0
        /// Why the table could not be read whole, if it could not.
        var trouble: String?
    }

    /// Every readable row of `table` (only `columns`, plus `salvage_rowid` after a failure).
    static func rows(of table: String, columns: String, in db: SQLiteConnection) async -> TableRows {
        do {
            return TableRows(rows: try await db.query("SELECT \(columns) FROM \(table)"))
        } catch {
            var result = TableRows(trouble: "\(table): \(error)")
            // The largest rowid, when the path to it is intact: how far to step over damage.
            let largest = (try? await db.query("SELECT max(rowid) AS largest FROM \(table)"))?.first?.column("largest")?.integer
            let next = "SELECT rowid AS salvage_rowid, \(columns) FROM \(table) WHERE rowid > ?1 ORDER BY rowid LIMIT 1"
            let one = "SELECT rowid AS salvage_rowid, \(columns) FROM \(table) WHERE rowid = ?1"
            var after = SQLiteInt64.min
            var probes = 0
            walk: while true {
                // The next row in rowid order; a damaged page can fail, or give rows that are
                // out of order (a page past the end of a truncated file reads as zeros).
                if let found = try? await db.query(next, [.integer(after)]) {
                    guard let row = found.first else { break walk }  // the end of the table
                    if let rowid = row.column("salvage_rowid")?.integer, rowid > after {
                        result.rows.append(row)
                        after = rowid
                        continue walk
                    }
                }
                // Step over the unreadable rows one rowid at a time: up to the largest rowid when
                // it is known, else until `missLimit` rowids in a row were missing.
                if after == SQLiteInt64.min { after = 0 }
                var misses = 0
                while probes < probeLimit && misses < (largest == nil ? missLimit : probeLimit) {
                    if let largest, after >= largest { break walk }
                    after += 1
                    probes += 1
                    if let row = try? await db.query(one, [.integer(after)]).first, row.column("salvage_rowid")?.integer == after {
                        result.rows.append(row)
                        continue walk
                    }
                    misses += 1
                    result.skipped += 1
                }
                break walk
            }
            return result
        }
    }

    /// True for the errors of a damaged file (as opposed to a missing folder, a permission, a
    /// lock held too long): only those lead to moving the file aside.
    static func isDamage(_ error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        switch error.reason {
        case .corrupt, .corruptIndex, .corruptSequenceSchema, .corruptVirtualTable, .notADatabase, .format, .ioErrorIncompleteRead:
            return true
        default:
            return false
        }
    }
}

extension SQLiteStateStore {
    /// Recovers from a damaged database: reads what it can from `damaged` (nil when it could
    /// not even be opened), closes it, moves the file and its companions aside as
    /// `PATH.corrupt-EPOCH`, creates a fresh database and puts the salvaged rows in it.
    /// Reports the damage (``problems`` and a warning). Throws when the file cannot be moved
    /// aside or the fresh database cannot be made.
    func recover(damaged: SQLiteConnection?, reason: String) async throws -> SQLiteConnection {
        var salvage = SQLiteSalvage()
        if let damaged {
            salvage = await SQLiteSalvage.read(from: damaged)
            try? await damaged.close()
        }
        let aside: String
        do {
            aside = try SQLiteFiles.moveAside(path)
        } catch {
            let problem = "state store \(path) is damaged (\(reason)) and could not be moved aside: \(error)"
            report(problem)
            throw WaitingRoomError(.invalidConfiguration, message: problem, field: "stateStore")
        }
        let fresh = try await openFresh()
        do {
            _ = try await fresh.query("BEGIN IMMEDIATE")
            for pass in salvage.passes { _ = try await fresh.query(SQLiteRecords.insertPass, try records.passBinds(pass)) }
            for key in salvage.heldKeys { _ = try await fresh.query(SQLiteRecords.insertHeldKey, try records.heldKeyBinds(key)) }
            for session in salvage.sessions { _ = try await fresh.query(SQLiteRecords.insertSession, try records.sessionRowBinds(session)) }
            _ = try await fresh.query("COMMIT")
        } catch {
            _ = try? await fresh.query("ROLLBACK")
            try? await fresh.close()
            let problem =
                "state store \(path) was damaged (\(reason)); moved aside to \(aside), but the salvaged rows could not be written back: \(error)"
            report(problem)
            throw WaitingRoomError(.invalidConfiguration, message: problem, field: "stateStore")
        }
        var problem =
            "state store \(path) was damaged (\(reason)); kept \(salvage.kept) readable row(s) "
            + "(\(salvage.passes.count) pass(es), \(salvage.heldKeys.count) held key(s), \(salvage.sessions.count) session(s))"
        if salvage.lostRows > 0 { problem += ", lost \(salvage.lostRows) unreadable row(s)" }
        if !salvage.notes.isEmpty { problem += " [\(salvage.notes.joined(separator: "; "))]" }
        problem += "; the damaged file is at \(aside)"
        report(problem)
        return fresh
    }
}
