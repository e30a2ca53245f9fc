/// The events a session keeps for its first stream while nobody reads it: at most `limit`,
/// the oldest progress events dropped first (see ``WaitingSession/events``).
///
/// Progress events live in a ring of `limit` slots, so a session that waits for hours without a
/// reader holds at most `limit` of them and an emit never shifts the buffer; the other events
/// (state changes, the queue page, restarts, the outcome) are few and kept in order. Both carry
/// a sequence number, so ``drain()`` gives them back in the order they happened.
struct EarlyEvents {
    private struct Numbered {
        var sequence: Int
        var event: WaitingRoomEvent
    }

    let limit: Int
    private var progress: [Numbered] = []
    /// Where the next progress event goes once the ring is full.
    private var oldest = 0
    private var others: [Numbered] = []
    private var sequence = 0

    init(limit: Int) { self.limit = limit }

    mutating func append(_ event: WaitingRoomEvent) {
        sequence += 1
        let numbered = Numbered(sequence: sequence, event: event)
        if case .progress = event {
            if progress.count < limit {
                progress.append(numbered)
            } else {
                progress[oldest] = numbered
                oldest += 1
                if oldest == limit { oldest = 0 }
            }
        } else {
            others.append(numbered)
            // Not progress: kept unless they alone pass the limit (the oldest go first).
            if others.count > 2 * limit { others.removeFirst(others.count - limit) }
        }
    }

    /// The kept events in order: the last `limit`, the oldest progress events dropped first.
    func drain() -> [WaitingRoomEvent] {
        let ring = progress.count < limit ? progress : Array(progress[oldest...] + progress[..<oldest])
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
