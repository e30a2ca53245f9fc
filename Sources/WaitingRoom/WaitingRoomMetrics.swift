import CoreMetrics
import Synchronization

/// The SDK's metrics, through swift-metrics: whatever backend the app bootstrapped
/// (swift-prometheus, an OpenTelemetry exporter, …). The library bootstraps none.
///
/// Names are vendor-neutral; dimensions are bounded (`vendor`, `scope`, `room`, outcome, vendor
/// code, request kind, connection state, event name: never a user id or a key):
///
/// | label | type | dimensions |
/// |---|---|---|
/// | `waitingroom_sessions_started_total` | counter | vendor, scope, room |
/// | `waitingroom_sessions_finished_total` | counter | vendor, scope, room, outcome, code |
/// | `waitingroom_time_to_pass_seconds` | timer | vendor, scope, room |
/// | `waitingroom_vendor_requests_total` | counter | vendor, kind, result |
/// | `waitingroom_vendor_retries_total` | counter | vendor, kind |
/// | `waitingroom_key_returns_total` | counter | vendor, result (`started`, `late`, `gave_up`) |
/// | `waitingroom_key_returns_pending` | gauge | (none) |
/// | `waitingroom_connection_changes_total` | counter | vendor, state |
/// | `waitingroom_events_total` | counter | vendor, event |
///
/// Zero cost when nothing is bootstrapped: `ProviderEnvironment/metrics` is then nil and no
/// metric object is made.
public struct WaitingRoomMetrics: Sendable {
    /// The labels, in one table.
    package enum Label {
        package static let sessionsStarted = "waitingroom_sessions_started_total"
        package static let sessionsFinished = "waitingroom_sessions_finished_total"
        package static let timeToPass = "waitingroom_time_to_pass_seconds"
        package static let vendorRequests = "waitingroom_vendor_requests_total"
        package static let vendorRetries = "waitingroom_vendor_retries_total"
        package static let keyReturns = "waitingroom_key_returns_total"
        package static let keyReturnsPending = "waitingroom_key_returns_pending"
        package static let connectionChanges = "waitingroom_connection_changes_total"
        package static let events = "waitingroom_events_total"
    }

    /// What each metric means, by label (for exporters that print help text, such as
    /// Prometheus's `# HELP`; swift-metrics itself carries none).
    package static let help: [String: String] = [
        Label.sessionsStarted: "Waiting-room sessions started (users enqueued), by vendor, scope and room.",
        Label.sessionsFinished: "Sessions that reached an outcome, by vendor, scope, room, outcome and vendor status code.",
        Label.timeToPass: "Time from enqueue to pass, in seconds, by vendor, scope and room.",
        Label.vendorRequests: "Requests to the vendor, by vendor, request kind and result.",
        Label.vendorRetries: "Retried vendor requests, by vendor and request kind.",
        Label.keyReturns: "Key returns handed to the background, and how they ended, by vendor and result.",
        Label.keyReturnsPending: "Key returns still running in the background.",
        Label.connectionChanges: "Connection state changes seen by sessions, by vendor and state.",
        Label.events: "Session events delivered, by vendor and event name."
    ]

    /// The backend.
    package let factory: any MetricsFactory
    /// Each vendor's per-event counters, made once and shared by its sessions.
    private let cache: VendorCounterCache

    /// Metrics through `factory`.
    public init(factory: any MetricsFactory) {
        self.factory = factory
        self.cache = VendorCounterCache()
    }

    /// `vendor`'s per-event counters (made on first use).
    func counters(vendor: String) -> VendorCounters { cache.counters(vendor: vendor, factory: factory) }

    /// The process's bootstrapped backend (`MetricsSystem.bootstrap`), or nil when none was
    /// bootstrapped: then nothing is measured.
    @usableFromInline package static var bootstrapped: WaitingRoomMetrics? {
        let factory = MetricsSystem.factory
        return factory is NOOPMetricsHandler ? nil : WaitingRoomMetrics(factory: factory)
    }

    func count(_ label: String, _ dimensions: [(String, String)]) {
        Counter(label: label, dimensions: dimensions, factory: factory).increment()
    }

    static func roomDimensions(vendor: String, room: RoomKey) -> [(String, String)] {
        [("vendor", vendor), ("scope", room.scope), ("room", room.room)]
    }

    /// A session's event other than progress, as the metrics above (its `waitingroom_events_total`
    /// was counted already, with `counters`).
    func record(_ event: WaitingRoomEvent, counters: VendorCounters, room: RoomKey, waited: Duration?) {
        let vendor = counters.vendor
        switch event {
        case .stateChanged(.connecting, _):
            count(Label.sessionsStarted, Self.roomDimensions(vendor: vendor, room: room))
        case .passed(_, let status), .blocked(let status), .closed(let status), .disabled(_, let status):
            count(
                Label.sessionsFinished,
                Self.roomDimensions(vendor: vendor, room: room)
                    + [("outcome", event.name.rawValue), ("code", String(status.code))])
            if case .passed = event, let waited {
                Timer(label: Label.timeToPass, dimensions: Self.roomDimensions(vendor: vendor, room: room), factory: factory)
                    .recordNanoseconds(Int64(waited.components.seconds) * 1_000_000_000 + waited.components.attoseconds / 1_000_000_000)
            }
        case .failed(let error):
            count(
                Label.sessionsFinished,
                Self.roomDimensions(vendor: vendor, room: room)
                    + [("outcome", event.name.rawValue), ("code", String(error.vendorCode ?? 0))])
        case .connection(let state, _):
            count(Label.connectionChanges, [("vendor", vendor), ("state", state.name)])
        default:
            break
        }
    }

    /// One request to a vendor (``ProviderEnvironment/send(_:vendor:kind:attempt:)``).
    func request(vendor: String, kind: String, result: String, attempt: Int) {
        count(Label.vendorRequests, [("vendor", vendor), ("kind", kind), ("result", result)])
        if attempt > 0 { count(Label.vendorRetries, [("vendor", vendor), ("kind", kind)]) }
    }

    /// A key return handed to the background (`started`), and how it ended (`late`: returned,
    /// `gone`: the server no longer knew it, `gave_up`); `pending` is how many are still out.
    package func keyReturn(vendor: String, result: String, pending: Int) {
        count(Label.keyReturns, [("vendor", vendor), ("result", result)])
        Gauge(label: Label.keyReturnsPending, dimensions: [], factory: factory).record(pending)
    }
}

/// One vendor's counter of each event name, indexed like `EventName.allCases`.
final class VendorCounters: Sendable {
    let vendor: String
    /// The backend's handlers themselves: `Counter.increment()` is generic over the amount's
    /// type and not specialised across modules, which cost the emit path ~15 ns.
    private let events: [any CounterHandler]

    init(vendor: String, factory: any MetricsFactory) {
        self.vendor = vendor
        self.events = EventName.allCases.map {
            factory.makeCounter(label: WaitingRoomMetrics.Label.events, dimensions: [("vendor", vendor), ("event", $0.rawValue)])
        }
    }

    /// Counts one event `name`: an array index, no hashing, no generic call on the emit path.
    func count(_ name: EventName) { events[name.ordinal].increment(by: 1) }
}

/// The vendors' counters, made once per vendor.
final class VendorCounterCache: Sendable {
    private let byVendor = Mutex<[String: VendorCounters]>([:])

    func counters(vendor: String, factory: any MetricsFactory) -> VendorCounters {
        byVendor.withLock { byVendor in
            if let made = byVendor[vendor] { return made }
            let made = VendorCounters(vendor: vendor, factory: factory)
            byVendor[vendor] = made
            return made
        }
    }
}

extension EventName {
    /// The position in `allCases` (kept in step with it by the metrics tests).
    var ordinal: Int {
        switch self {
        case .stateChanged: return 0
        case .queueOpened: return 1
        case .progress: return 2
        case .passed: return 3
        case .disabled: return 4
        case .blocked: return 5
        case .closed: return 6
        case .sessionRestarted: return 7
        case .failed: return 8
        case .completed: return 9
        case .keyReturnedLate: return 10
        case .connection: return 11
        case .queuePageChanged: return 12
        case .userExited: return 13
        }
    }
}
