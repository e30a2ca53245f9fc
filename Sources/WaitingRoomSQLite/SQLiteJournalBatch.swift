import WaitingRoom

/// One write to the journal of held keys, waiting for its group commit.
enum SQLiteJournalWrite: Sendable {
    /// A key was taken from a vendor's server (``StateStore/recordHeldKey(_:)``).
    case record(HeldKey)
    /// A key went back (``StateStore/removeHeldKey(id:)``).
    case remove(id: String)
}

/// The journal writes that arrived while the store was busy, committed together.
///
/// Every user's first key is written before the app sees it, so a crowd arriving at once
/// queues thousands of writes at the same moment. One transaction per write makes each wait for
/// all the commits before it (and keeps the whole crowd's tasks suspended meanwhile); a group
/// commit writes whatever has queued up in one transaction, in arrival order, and answers
/// every caller once it is committed: a caller still returns only after its write is durable.
/// A write that finds nothing in progress is written at once by its own caller (the common case
/// when keys come one at a time), and only what queues behind it is grouped.
///
/// Kept inside the store's actor, so it needs no lock of its own.
struct SQLiteJournalBatch {
    struct Entry {
        let write: SQLiteJournalWrite
        let continuation: CheckedContinuation<Void, any Error>
    }

    private var entries: [Entry] = []
    private var draining = false

    /// True when nothing is being written: the caller writes its own write at once (no
    /// suspension, no task) and must call ``handOff()`` afterwards.
    mutating func lead() -> Bool {
        if draining { return false }
        draining = true
        return true
    }

    /// After a leader's own write: true when writes queued up meanwhile and the caller must
    /// start a drain for them; otherwise the batch is idle again.
    mutating func handOff() -> Bool {
        if entries.isEmpty { draining = false }
        return draining
    }

    /// Queues a write; true when no drain is running and the caller must start one.
    mutating func append(_ write: SQLiteJournalWrite, _ continuation: CheckedContinuation<Void, any Error>) -> Bool {
        entries.append(Entry(write: write, continuation: continuation))
        if draining { return false }
        draining = true
        return true
    }

    /// Everything queued so far, in arrival order; nil (and the drain ends) when nothing is.
    mutating func take() -> [Entry]? {
        if entries.isEmpty {
            draining = false
            return nil
        }
        defer { entries = [] }
        return entries
    }
}
