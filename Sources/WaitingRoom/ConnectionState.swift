/// Whether a session can reach its vendor, in the shape of a realtime client's connection
/// states: a session starts `connected` (it has not failed yet); a request that fails while the
/// session keeps trying makes it `reconnecting`; a failure while the device has no route to the
/// vendor (``ConnectivityMonitor``) makes it `offline`; the next answer from the vendor makes it
/// `connected` again. Each change is one ``WaitingRoomEvent/connection(_:_:)`` event.
public enum ConnectionState: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The vendor answers.
    case connected
    /// A request failed and the session tries again: the `attempt`-th retry (1-based) comes
    /// after `nextRetryIn` (nil when the vendor's schedule does not say).
    case reconnecting(attempt: Int, nextRetryIn: Duration?)
    /// The device has no route to the vendor (the ``ConnectivityMonitor`` says so).
    case offline

    /// `connected`, `reconnecting` or `offline` (the Lua and JSON `connection` field).
    package var name: String {
        switch self {
        case .connected: return "connected"
        case .reconnecting: return "reconnecting"
        case .offline: return "offline"
        }
    }

    public var description: String {
        switch self {
        case .reconnecting(let attempt, let next?):
            return "reconnecting (attempt \(attempt), next in \(next.seconds) s)"
        case .reconnecting(let attempt, nil):
            return "reconnecting (attempt \(attempt))"
        default:
            return name
        }
    }
}
