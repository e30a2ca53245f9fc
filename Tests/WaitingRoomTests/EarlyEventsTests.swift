import Testing

@testable import WaitingRoom

/// ``EarlyEvents`` against the plain rule it implements: the last `limit` events, the oldest
/// progress events dropped first (kept in full here, in a plain array).
@Suite("EarlyEvents")
struct EarlyEventsTests {
    /// The rule, without any memory bound: every event kept, then the same selection.
    static func expected(_ events: [WaitingRoomEvent], limit: Int) -> [WaitingRoomEvent] {
        let numbered = Array(events.enumerated())
        let others = numbered.filter { if case .progress = $0.element { return false } else { return true } }.suffix(limit)
        let progress = numbered.filter { if case .progress = $0.element { return true } else { return false } }
            .suffix(max(0, limit - others.count))
        return (Array(others) + Array(progress)).sorted { $0.offset < $1.offset }.map(\.element)
    }

    static func event(_ kind: Int, _ n: Int) -> WaitingRoomEvent {
        let status = VendorStatus(vendor: "scripted", code: 201, message: "n\(n)")
        switch kind {
        case 0: return .stateChanged(.waiting, status)
        case 1: return .queueOpened(QueuePage(queueURL: "http://127.0.0.1/\(n)"), status)
        default: return .progress(QueueProgress(ahead: n), status)
        }
    }

    /// Many random sequences (mostly progress, as a long wait is), several limits: what the
    /// first reader gets is exactly the rule's selection, in order.
    @Test(arguments: [1, 2, 3, 8])
    func drainIsTheLastEventsOldestProgressFirst(limit: Int) {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<300 {
            var early = EarlyEvents(limit: limit)
            var all: [WaitingRoomEvent] = []
            let count = Int.random(in: 0...(round % 3 == 0 ? 200 : 30), using: &generator)
            for n in 0..<count {
                let kind = Int.random(in: 0..<10, using: &generator) < 2 ? Int.random(in: 0...1, using: &generator) : 2
                let event = Self.event(kind, n)
                all.append(event)
                early.append(event)
            }
            #expect(early.drain() == Self.expected(all, limit: limit), "limit \(limit), \(count) events")
        }
    }
}
