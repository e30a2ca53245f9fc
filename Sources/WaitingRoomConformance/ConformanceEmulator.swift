import WaitingRoom

/// The rooms every conformance emulator offers, by behaviour.
public enum ConformanceRoom: String, Sendable, Hashable, CaseIterable {
    /// Lets everyone in at once (pass without waiting).
    case open
    /// Keeps everyone in line until ``ConformanceEmulator/admit(_:in:)`` lets them in, in
    /// arrival order.
    case queue
    /// Refuses everyone (NetFUNNEL block, or what the vendor declares instead).
    case block
    /// Not active: the user may proceed without waiting (Queue-it `disabled`, NetFUNNEL
    /// deactivated segment).
    case closed
}

/// What an injected fault does to a request.
public enum ConformanceFaultAction: String, Sendable, Hashable, CaseIterable {
    /// The answer comes later than the client's deadline for one attempt.
    case delay
    /// The connection closes without a complete answer.
    case drop
    /// The server answers with an HTTP 5xx status.
    case serverError
    /// The server answers HTTP 200 with a body that is not the vendor's format.
    case garbage
}

/// When a vendor sends a kind of request, so the suite knows how to reach it.
public enum ConformancePhase: String, Sendable, Hashable, CaseIterable {
    /// The first request of a wait (NetFUNNEL 5101, Queue-it enqueue).
    case entry
    /// A request made while in line (NetFUNNEL 5002).
    case waiting
    /// The request that returns a key (NetFUNNEL 5004), made by `complete()`.
    case completion
}

/// A kind of request the vendor sends, as its emulator names it.
public struct ConformanceRequestKind: Sendable, Hashable, CustomStringConvertible {
    /// The emulator's name for it (`"5101"`, `"enqueue"`, …).
    public var name: String
    /// When it is sent.
    package var phase: ConformancePhase

    /// Creates a request kind.
    public init(_ name: String, phase: ConformancePhase) {
        self.name = name
        self.phase = phase
    }

    public var description: String { "\(name) (\(phase.rawValue))" }
}

/// A fault for ``ConformanceEmulator/inject(_:)``: `action` on the next `count` requests of
/// kind `request`.
public struct ConformanceFault: Sendable, Hashable, CustomStringConvertible {
    /// The request kind it targets.
    public var request: ConformanceRequestKind
    /// What happens to it.
    public var action: ConformanceFaultAction
    /// How many consecutive requests of that kind it affects.
    public var count: Int

    /// Creates a fault.
    package init(request: ConformanceRequestKind, action: ConformanceFaultAction, count: Int) {
        self.request = request
        self.action = action
        self.count = count
    }

    public var description: String { "\(action.rawValue) on \(request.name) ×\(count)" }
}

/// What the emulator counted, vendor-neutral.
public struct ConformanceCounters: Sendable, Hashable, CustomStringConvertible {
    /// Entry requests the emulator answered (NetFUNNEL 5101, Queue-it enqueue calls).
    package var entries: Int
    /// Keys of admitted users the client gave back.
    package var keysReturned: Int
    /// Keys of admitted users the client did not give back: still held, or timed out by the
    /// server. 0 for a vendor without keys.
    package var keysLeftBehind: Int
    /// Users the server still counts in line.
    package var waiting: Int

    /// Creates counters.
    public init(entries: Int = 0, keysReturned: Int = 0, keysLeftBehind: Int = 0, waiting: Int = 0) {
        self.entries = entries
        self.keysReturned = keysReturned
        self.keysLeftBehind = keysLeftBehind
        self.waiting = waiting
    }

    public var description: String {
        "entries \(entries), keysReturned \(keysReturned), keysLeftBehind \(keysLeftBehind), waiting \(waiting)"
    }
}

/// What the conformance suite needs of a vendor's emulator: rooms by behaviour, faults,
/// counters, reset, and a provider pointed at it. Each vendor's adapter is a thin wrapper over
/// its emulator's own admin API; it lives with the vendor's tests (or emulator), never in the
/// core.
///
/// One emulator serves one check at a time: the suite makes a new one for each promise.
public protocol ConformanceEmulator: Sendable {
    /// The room with `behaviour` (the same key every time).
    func room(_ behaviour: ConformanceRoom) -> RoomKey
    /// Lets `count` more users waiting in `room` in, in arrival order.
    func admit(_ count: Int, in room: RoomKey) async throws
    /// Injects `fault`.
    func inject(_ fault: ConformanceFault) async throws
    /// Removes every fault not used up yet.
    func clearFaults() async throws
    /// The counters now.
    func counters() async throws -> ConformanceCounters
    /// Forgets users, keys, counters and faults, and restores every room's behaviour.
    func reset() async throws
    /// A provider of the vendor under test that talks to this emulator, built on `environment`
    /// (the suite's clock, pass store and duplicate policy).
    func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider
    /// Stops the emulator.
    func shutdown() async
}

extension ConformanceEmulator {
    /// A request's deadline for a provider talking to an emulator on loopback, and
    /// ``delayMs`` a delay fault's pause: well above a loaded machine's loopback answer (5 s
    /// expired on an ordinary answer in a full parallel run on two cores; with 1 s, a CI run timed
    /// out every enqueue attempt of some promises), well below the pause.
    package static var requestTimeout: Duration { .seconds(8) }
    /// A delay fault's pause in milliseconds (see ``requestTimeout``).
    package static var delayMs: Int { 15_000 }
}
