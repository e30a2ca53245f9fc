/// Everything a waiting session reports, vendor-neutral. Every case carries the vendor's own
/// status code and message (``status``); position fields are optional.
///
/// The enum is `indirect`: every event is one reference to a box. A progress event comes every
/// poll and is copied into the session's buffers and every stream's batch; boxed, a copy is one
/// reference count instead of each string of its payload through the payload's value witnesses
/// (an emit nobody listens to: 132 → 84 ns, `waitingroom bench events`), and every async frame
/// or buffer that holds an event holds 8 bytes.
public indirect enum WaitingRoomEvent: Hashable, Sendable, Codable {
    /// The session moved to a new state.
    case stateChanged(SessionState, VendorStatus)
    /// A vendor queue page is ready to show (Queue-it `QueueUrl`, NetFUNNEL template page).
    case queueOpened(QueuePage, VendorStatus)
    /// The user's place in line changed.
    case progress(QueueProgress, VendorStatus)
    /// The user was admitted.
    case passed(Pass, VendorStatus)
    /// The room is not active; the user may proceed. A token may be attached.
    case disabled(Pass?, VendorStatus)
    /// The vendor refused the user.
    case blocked(VendorStatus)
    /// The user or the queue page closed the waiting room.
    case closed(VendorStatus)
    /// The session started over (vendor request or ``WaitingSession/restart()``).
    case sessionRestarted(VendorStatus)
    /// The session ended with an error.
    case failed(WaitingRoomError)
    /// The pass was given back (``WaitingSession/complete()``).
    case completed(VendorStatus)
    /// A key whose documented return attempts had failed (reported as such with `completed`,
    /// `closed` or `failed`) was returned later, in the background (see ``PendingReturns``).
    case keyReturnedLate(VendorStatus)
    /// The session's connection to the vendor changed (see ``ConnectionState``): emitted when a
    /// request fails and the session keeps trying (`reconnecting`), when the device has no route
    /// to the vendor (`offline`), and when the vendor answers again (`connected`). Not emitted
    /// for a session that never failed a request.
    case connection(ConnectionState, VendorStatus)
    /// The queue page moved to another address on the queue's host (Queue-it
    /// `notifyQueueUrlChanged`): the page a host shows or a user would bookmark.
    case queuePageChanged(QueuePage, VendorStatus)
    /// The user left the queue page's flow (Queue-it `notifyUserExited`: the page's body has
    /// the class `exit`); the session goes on until the vendor's outcome.
    case userExited(VendorStatus)

    /// The event's name, for ``WaitingSession/bind(_:_:)``.
    package var name: EventName {
        switch self {
        case .stateChanged: return .stateChanged
        case .queueOpened: return .queueOpened
        case .progress: return .progress
        case .passed: return .passed
        case .disabled: return .disabled
        case .blocked: return .blocked
        case .closed: return .closed
        case .sessionRestarted: return .sessionRestarted
        case .failed: return .failed
        case .completed: return .completed
        case .keyReturnedLate: return .keyReturnedLate
        case .connection: return .connection
        case .queuePageChanged: return .queuePageChanged
        case .userExited: return .userExited
        }
    }

    /// What the vendor said with this event.
    public var status: VendorStatus {
        switch self {
        case .stateChanged(_, let s), .queueOpened(_, let s), .progress(_, let s), .passed(_, let s),
            .disabled(_, let s), .blocked(let s), .closed(let s), .sessionRestarted(let s), .completed(let s),
            .keyReturnedLate(let s), .connection(_, let s), .queuePageChanged(_, let s), .userExited(let s):
            return s
        case .failed(let error):
            return error.status
        }
    }
}

/// Names of ``WaitingRoomEvent`` cases, used to bind handlers to one kind of event.
package enum EventName: String, Hashable, Sendable, Codable, CaseIterable {
    case stateChanged, queueOpened, progress, passed, disabled, blocked, closed, sessionRestarted, failed, completed
    case keyReturnedLate
    case connection, queuePageChanged, userExited
}
