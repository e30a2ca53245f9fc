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
    /// A dense index (0..<``count``) for tables keyed by event: the position in `allCases` (at
    /// most 14 one-byte comparisons).
    var ordinal: Int {
        // swiftlint:disable:next force_unwrapping
        Self.allCases.firstIndex(of: self)!
    }

    static let count = allCases.count
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
