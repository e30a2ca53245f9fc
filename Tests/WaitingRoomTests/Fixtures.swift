import Foundation
import Synchronization
import WaitingRoom
import WaitingRoomTesting

/// Shared helpers for the core tests.
enum Fixture {
    static let room = RoomKey(scope: "project", room: "segment")
    static let entry = Entry(room: room, userId: "user-1")

    static func status(_ code: Int, _ message: String = "") -> VendorStatus {
        VendorStatus(vendor: "scripted", code: code, message: message)
    }

    static func keyPass(clock: any WaitingRoomClock = SystemClock()) -> Pass {
        Pass(vendor: "scripted", room: room, credential: "KEY-123456", kind: .key, issuedAt: clock.now(), requiresCompletion: true)
    }

    /// Collects every event of a stream until it ends.
    static func collect(_ stream: AsyncStream<WaitingRoomEvent>) async -> [WaitingRoomEvent] {
        var events: [WaitingRoomEvent] = []
        for await event in stream { events.append(event) }
        return events
    }
}

/// A thread-safe list for handler callbacks.
final class Recorder<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    func append(_ item: T) { items.withLock { $0.append(item) } }
    var all: [T] { items.withLock { $0 } }
}
