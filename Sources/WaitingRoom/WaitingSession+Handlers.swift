import Foundation
import Logging
import Synchronization

/// Bound handlers (EventflitSwift style): called for future events, on the emitting thread.
extension WaitingSession {
    /// Calls `handler` for every event named `name` (every event when `name` is nil) and
    /// returns an id for ``unbind(_:)``. Handlers run on the emitting task, in bind order.
    @discardableResult
    package func bind(_ name: EventName?, _ handler: @escaping @Sendable (WaitingRoomEvent) -> Void) -> HandlerID {
        core.withLock { core in
            core.nextID += 1
            core.handlers.append(BoundHandler(id: core.nextID, name: name, handler: handler))
            return HandlerID(value: core.nextID)
        }
    }

    /// Removes one handler; returns false when the id is unknown.
    @discardableResult
    package func unbind(_ id: HandlerID) -> Bool {
        core.withLock { core in
            let before = core.handlers.count
            core.handlers.removeAll { $0.id == id.value }
            return core.handlers.count != before
        }
    }

    /// Removes every handler.
    package func unbindAll() { core.withLock { $0.handlers.removeAll() } }
}
