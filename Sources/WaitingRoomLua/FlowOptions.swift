import Logging
import WaitingRoom

/// How a `FlowRuntime` runs its flows. Everything a flow file may give (entry, vendor, config)
/// can be given here instead; a value given here wins over the flow's.
public struct FlowOptions: Sendable {
    /// Sandbox limits (memory per runtime, budget and deadline per handler).
    package var limits: LuaLimits
    /// Where `print`, `warn` and `wr.log` go (label `waitingroom.lua`, metadata `flow`).
    package var logger: Logger
    /// If set, `print` output goes here instead of the logger (the REPL prints to the terminal).
    package var printHandler: (@Sendable (String) -> Void)?
    /// The vendors `wr.open` and the flow's `vendor` can name.
    package var registry: VendorRegistry
    /// Transport, clock, pass store and logger handed to every provider; `wr.sleep` and `wr.now`
    /// use its clock.
    package var environment: ProviderEnvironment
    /// The entry to run (instead of the flow's `entry`).
    package var entry: Entry?
    /// The vendor id (instead of the flow's `vendor`).
    package var vendor: String?
    /// The vendor configuration. When both this and the flow's `config` are objects they are
    /// merged key by key, these keys winning (so a host can point `serverUrl` or
    /// `waitingRoomDomain` at an emulator and keep the flow's other options).
    package var config: JSONValue?
    /// How many times a flow may answer `wr.retry` before its outcome stands. Default 3.
    /// A flow's `max_retries` field lowers or raises it for that flow.
    package var maxRetries: Int
    /// Return a held key (NetFUNNEL) when the flow did not call `session:complete()` itself by the
    /// end of `on_success`. Default true, so no key is ever left held.
    package var autoComplete: Bool
    /// Called with every event of the sessions a flow runs, before its handler (for a live
    /// progress line in the CLI). Runs on the runtime's executor: keep it short.
    package var eventObserver: (@Sendable (_ flow: String, _ event: WaitingRoomEvent) -> Void)?

    public init(
        limits: LuaLimits = .default,
        logger: Logger = Logger(label: "waitingroom.lua"),
        printHandler: (@Sendable (String) -> Void)? = nil,
        registry: VendorRegistry = VendorRegistry(),
        environment: ProviderEnvironment = ProviderEnvironment(),
        entry: Entry? = nil,
        vendor: String? = nil,
        config: JSONValue? = nil,
        maxRetries: Int = 3,
        autoComplete: Bool = true,
        eventObserver: (@Sendable (_ flow: String, _ event: WaitingRoomEvent) -> Void)? = nil
    ) {
        self.limits = limits
        self.logger = logger
        self.printHandler = printHandler
        self.registry = registry
        self.environment = environment
        self.entry = entry
        self.vendor = vendor
        self.config = config
        self.maxRetries = maxRetries
        self.autoComplete = autoComplete
        self.eventObserver = eventObserver
    }
}

/// Something a flow handed to the host with `wr.emit(name, payload)` (navigate, show a message, …).
public struct FlowAction: Sendable, Hashable {
    /// The flow that emitted it.
    package var flow: String
    public var name: String
    public var payload: JSONValue

    package init(flow: String, name: String, payload: JSONValue) {
        self.flow = flow
        self.name = name
        self.payload = payload
    }
}

/// How a flow ended.
public enum FlowOutcome: Sendable, Hashable {
    /// The vendor's outcome stands (passed, disabled, blocked, closed, failed).
    case vendor(Outcome)
    /// A handler answered `wr.bypass(reason)`: let the user through without a pass (fail-open).
    case bypassed(reason: String, after: Outcome?)
    /// A handler answered `wr.abort(reason)`: stop; the session was cancelled (and a held key returned).
    case aborted(reason: String, after: Outcome?)
    /// The flow could not run: bad file, error at its top level, unknown vendor, bad config.
    case flowError(LuaError)

    /// A short name: the vendor outcome's name, `bypassed`, `aborted` or `error`.
    public var name: String {
        switch self {
        case .vendor(let outcome): return outcome.name
        case .bypassed: return "bypassed"
        case .aborted: return "aborted"
        case .flowError: return "error"
        }
    }

    /// Whether the user may go on to the protected step (passed, disabled room or bypassed).
    public var allowsEntry: Bool {
        switch self {
        case .vendor(.passed), .vendor(.disabled), .bypassed: return true
        default: return false
        }
    }
}

/// What `FlowRuntime.run()` returns.
public struct FlowResult: Sendable {
    public var outcome: FlowOutcome
    /// Every `wr.emit` of the flow, in order.
    public var actions: [FlowAction]
    /// How many times the entry was run (1 + retries).
    package var attempts: Int
    /// Handlers that failed (the run went on as if they had returned nothing).
    public var handlerErrors: [LuaError]
    /// The status of the key return, when the pass was completed.
    package var completion: VendorStatus?
    /// Keys the flow still held when it ended (from `room:try_pass` without `room:release`, or
    /// sessions it started with `room:enqueue` and left passed or waiting) that the host gave
    /// back; each is also a `key_returned` action (``actions``).
    package var keysReturnedByHost: Int = 0
}
