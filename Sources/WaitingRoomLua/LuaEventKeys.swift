import CLua
import CLuaShim
import WaitingRoom

/// The field names of event tables and the event names, interned once per Lua state and kept in
/// the registry: building an event table then costs a `rawgeti` per key instead of hashing and
/// looking up a C string (the progress-event hot path, docs/lua-embedding.md §6).
enum LuaEventKey: Int, CaseIterable {
    case event, vendor, code, message, state, queueURL, targetURL, ahead, behind, eta, etaText, percent, pass, error, kind
    case connection, attempt, retryIn

    /// The name Lua sees.
    var luaName: String {
        switch self {
        case .queueURL: return "queue_url"
        case .targetURL: return "target_url"
        case .etaText: return "eta_text"
        case .retryIn: return "retry_in"
        default: return "\(self)"
        }
    }
}

extension EventName {
    /// A dense index (0..<14) for tables keyed by event.
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

    static let count = 14
}

/// Registry refs of the interned key and event-name strings of one Lua state.
struct LuaInternedStrings {
    let keys: [Int32]
    let eventNames: [Int32]

    init(keys: [Int32], eventNames: [Int32]) {
        self.keys = keys
        self.eventNames = eventNames
    }

    init(_ L: OpaquePointer, push: (OpaquePointer, String) -> Void) {
        keys = LuaEventKey.allCases.map { key in
            push(L, key.luaName)
            return clua_ref(L)
        }
        var names = [Int32](repeating: LUA_NOREF, count: EventName.count)
        for name in EventName.allCases {
            push(L, name.rawValue)
            names[name.ordinal] = clua_ref(L)
        }
        eventNames = names
    }
}
