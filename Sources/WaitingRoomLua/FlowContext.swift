import CLua
import CLuaShim
import Logging
import WaitingRoom

/// Per-flow state on a host: its global table, its handlers and `wr.on` listeners, its actions.
/// Not `Sendable`: it lives inside the `FlowRuntime` actor with the `LuaVM`.
package final class FlowContext {
    let id: Int
    let name: String
    let chunkName: String
    var env: Int32 = LUA_NOREF
    /// The compiled chunk (flows loaded from a file or source).
    var chunkRef: Int32 = LUA_NOREF
    var logger: Logger
    /// `on_*` handlers from the flow table (registry refs).
    var handlers: [String: Int32] = [:] {
        didSet {
            var byEvent = [(name: String, ref: Int32)?](repeating: nil, count: EventName.count)
            for (event, name) in LuaEventNames.handlers { if let ref = handlers[name] { byEvent[event.ordinal] = (name, ref) } }
            handlersByEvent = byEvent
        }
    }
    /// `handlers` indexed by `EventName.ordinal` of the event that calls them (the dispatch hot path).
    var handlersByEvent = [(name: String, ref: Int32)?](repeating: nil, count: EventName.count)
    /// `wr.on` listeners: id → (event name, function ref).
    var listeners: [(id: Int, event: String, ref: Int32)] = []
    var nextListenerID = 1
    var actions: [FlowAction] = []

    init(id: Int, name: String, chunkName: String, logger: Logger) {
        self.id = id
        self.name = name
        self.chunkName = chunkName
        var logger = logger
        logger[metadataKey: "flow"] = .string(name)
        self.logger = logger
    }
}

/// Rooms and sessions handed to Lua (userdata hold an id into these tables).
final class HostObjects {
    var rooms: [Int64: (vendor: String, provider: any WaitingRoomProvider, context: Int)] = [:]
    var sessions: [Int64: WaitingSession] = [:]
    var sessionRefs: [Int64: Int32] = [:]
    var sessionIDs: [ObjectIdentifier: Int64] = [:]
    /// The flow context of each session Lua started with `room:enqueue` (the flow's own
    /// session is the host's: it is in ``FlowResult``).
    var enqueuedBy: [Int64: Int] = [:]
    var nextID: Int64 = 1
    /// Keys from `room:try_pass` not given back yet.
    let held = HeldKeys()
}
