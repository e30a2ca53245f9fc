import Foundation
import Synchronization
import WaitingRoom

/// Collects a session's events (for the vendors' tests).
package final class Events: Sendable {
    /// Where the events are kept.
    package final class Store: Sendable {
        /// The events so far.
        package let events = Mutex<[WaitingRoomEvent]>([])
    }

    /// Where the events are kept.
    package let store = Store()
    /// The task that reads the session's events.
    package let task: Task<Void, Never>

    /// Starts collecting `session`'s events.
    package init(_ session: WaitingSession) {
        let store = self.store
        let events = session.events
        task = Task { for await e in events { store.events.withLock { $0.append(e) } } }
    }

    /// The events so far.
    package var all: [WaitingRoomEvent] { store.events.withLock { $0 } }
}

/// Polls `condition` every 50 ms for up to `seconds` (generous: the machine is loaded).
package func eventually(_ seconds: Double = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
