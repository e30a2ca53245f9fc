import Testing

@testable import WaitingRoom

/// The metrics' per-event counters are found by `EventName.ordinal`: it must follow `allCases`.
@Suite("Event counter index")
struct EventOrdinalTests {
    @Test func everyEventNameHasItsPositionInAllCases() {
        for (index, name) in EventName.allCases.enumerated() {
            #expect(name.ordinal == index, "\(name)")
        }
    }
}
