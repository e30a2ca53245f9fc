/// The events a session keeps for its first stream while nobody reads it: at most `limit`,
/// the oldest progress events dropped first (see ``WaitingSession/events``). Connection
/// changes count as progress here: a later one says where the session stands.
///
/// Progress events live in a ring, so a session that waits for hours without a reader holds a
/// bounded number of them and an emit never shifts the buffer; the other events (state changes,
/// the queue page, restarts, the outcome) are few and kept in order. Both carry a sequence
/// number, so ``drain()`` gives them back in the order they happened.
///
/// The ring holds only the progress events ``drain()`` could still return: `limit` minus the
/// other events kept. The other events only grow in number, so a progress event dropped for
/// want of room would never have been drained (a waiting NetFUNNEL user keeps 4 progress events
/// next to its 4 state and page events, not 8: ~550 bytes less per user nobody reads).
struct EarlyEvents {
    private struct Numbered {
        var sequence: Int
        var event: WaitingRoomEvent
    }

    let limit: Int
    private var progress: [Numbered] = []
    /// Where the next progress event goes once the ring is full (0 until then).
    private var oldest = 0
    private var others: [Numbered] = []
    private var sequence = 0

    /// How many progress events ``drain()`` could still return: `limit` minus the other
    /// events kept (updated when one is appended).
    private var progressRoom: Int

    init(limit: Int) {
        self.limit = limit
        self.progressRoom = max(0, limit)
    }

    mutating func append(_ event: WaitingRoomEvent) {
        sequence += 1
        let numbered = Numbered(sequence: sequence, event: event)
        if event.isSuperseded {
            if progress.count < progressRoom {
                if progress.isEmpty { progress.reserveCapacity(progressRoom) }
                progress.append(numbered)
            } else if !progress.isEmpty {
                progress[oldest] = numbered
                oldest += 1
                if oldest == progress.count { oldest = 0 }
            }
        } else {
            others.append(numbered)
            // Not progress: kept unless they alone pass the limit (the oldest go first).
            if others.count > 2 * limit { others.removeFirst(others.count - limit) }
            progressRoom = max(0, limit - min(limit, others.count))
            if progress.count > progressRoom {
                progress = Array(orderedProgress.suffix(progressRoom))
                oldest = 0
            }
        }
    }

    /// The progress events kept, oldest first.
    private var orderedProgress: [Numbered] {
        oldest == 0 ? progress : Array(progress[oldest...] + progress[..<oldest])
    }

    /// The kept events in order: the last `limit`, the oldest progress events dropped first.
    func drain() -> [WaitingRoomEvent] {
        let ring = orderedProgress
        let keptOthers = others.suffix(limit)
        let keptProgress = ring.suffix(max(0, limit - keptOthers.count))
        var merged: [WaitingRoomEvent] = []
        merged.reserveCapacity(keptOthers.count + keptProgress.count)
        var i = keptOthers.startIndex
        var j = keptProgress.startIndex
        while i < keptOthers.endIndex || j < keptProgress.endIndex {
            if j == keptProgress.endIndex || (i < keptOthers.endIndex && keptOthers[i].sequence < keptProgress[j].sequence) {
                merged.append(keptOthers[i].event)
                i += 1
            } else {
                merged.append(keptProgress[j].event)
                j += 1
            }
        }
        return merged
    }
}

extension WaitingRoomEvent {
    /// Progress and connection changes: a later one of either tells what an earlier one told.
    var isSuperseded: Bool {
        switch self {
        case .progress, .connection: return true
        default: return false
        }
    }
}
