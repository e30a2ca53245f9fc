import Synchronization

/// Whether the device is online, checked before every enqueue attempt (docs/queueit-protocol.md §3.1: iOS
/// `NWPathMonitor`). Offline ⇒ error `-100` at once, no retry, no thread blocked.
public protocol QueueItConnectivity: Sendable {
    /// True when the device is known to be offline. Unknown ⇒ false (the SDK assumes online).
    var isOffline: Bool { get }
}

/// Always online (the default; transport failures are then retried like any other failure).
public struct QueueItAssumeOnline: QueueItConnectivity {
    public init() {}
    public var isOffline: Bool { false }
}

/// A switch the app (or a test) flips from its own network monitor.
package final class QueueItManualConnectivity: QueueItConnectivity {
    private let offline: Mutex<Bool>
    package init(offline: Bool = false) { self.offline = Mutex(offline) }
    package var isOffline: Bool {
        offline.withLock { $0 }
    }
    /// Sets the state.
    package func set(offline value: Bool) { offline.withLock { $0 = value } }
}
