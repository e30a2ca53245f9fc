import CLua
import CLuaShim
import Foundation
import WaitingRoom

/// Names Lua uses for events: handler (`on_success`), listener name (`success`), and the Swift
/// `EventName` it comes from.
enum LuaEventNames {
    static let handlers: [EventName: String] = [
        .queueOpened: "on_queue_opened", .progress: "on_progress", .passed: "on_success",
        .disabled: "on_disabled", .blocked: "on_block", .failed: "on_error", .closed: "on_close",
        .sessionRestarted: "on_restart", .completed: "on_complete", .keyReturnedLate: "on_key_returned_late",
        .connection: "on_connection", .queuePageChanged: "on_queue_page_changed", .userExited: "on_user_exited"
    ]
    /// Every handler a flow table may define, in documentation order.
    static let handlerNames = [
        "on_progress", "on_queue_opened", "on_success", "on_disabled", "on_block", "on_error",
        "on_close", "on_restart", "on_complete", "on_key_returned_late", "on_connection", "on_queue_page_changed",
        "on_user_exited"
    ]
    /// `wr.on` accepts the handler stem (`success`), the Swift name (`passed`) or `*`.
    static let listenerAliases: [String: EventName] = {
        var map: [String: EventName] = [:]
        for name in EventName.allCases { map[name.rawValue] = name }
        map["queue_opened"] = .queueOpened
        map["success"] = .passed
        map["block"] = .blocked
        map["error"] = .failed
        map["close"] = .closed
        map["restart"] = .sessionRestarted
        map["session_restarted"] = .sessionRestarted
        map["complete"] = .completed
        map["state"] = .stateChanged
        map["state_changed"] = .stateChanged
        map["key_returned_late"] = .keyReturnedLate
        map["queue_page_changed"] = .queuePageChanged
        map["queue_url_changed"] = .queuePageChanged
        map["user_exited"] = .userExited
        return map
    }()
}

extension LuaVM {
    /// Push `event` as a table with the core's field names (`WaitingRoomEvent.fields`): `event`,
    /// `vendor`, `code`, `message`, and `state`, `queue_url`, `target_url`, `ahead`, `behind`,
    /// `eta`, `eta_text`, `percent`, `pass`, `error`, `connection`, `attempt`, `retry_in` where they apply. Built field by field with
    /// interned keys and raw sets (the hot path for progress events).
    func push(_ L: OpaquePointer, event: WaitingRoomEvent) {
        let status = event.status
        lua_createtable(L, 0, 9)
        _ = clua_getref(L, interned.keys[LuaEventKey.event.rawValue])
        _ = clua_getref(L, interned.eventNames[event.name.ordinal])
        lua_rawset(L, -3)
        rawSet(L, .vendor, status.vendor)
        rawSet(L, .code, status.code)
        rawSet(L, .message, status.message)
        switch event {
        case .stateChanged(let state, _):
            rawSet(L, .state, state.rawValue)
        case .queueOpened(let page, _):
            rawSet(L, .queueURL, page.queueURL)
            rawSet(L, .targetURL, page.targetURL)
        case .progress(let progress, _):
            rawSet(L, .ahead, progress.ahead)
            rawSet(L, .behind, progress.behind)
            if let eta = progress.eta { rawSet(L, .eta, eta.seconds) }
            rawSet(L, .etaText, progress.etaText)
            rawSet(L, .percent, progress.percent)
        case .passed(let pass, _):
            _ = clua_getref(L, interned.keys[LuaEventKey.pass.rawValue])
            push(L, json: .object(pass.fields(revealSecrets: true)))
            lua_rawset(L, -3)
        case .disabled(let pass, _):
            if let pass {
                _ = clua_getref(L, interned.keys[LuaEventKey.pass.rawValue])
                push(L, json: .object(pass.fields(revealSecrets: true)))
                lua_rawset(L, -3)
            }
        case .failed(let error):
            _ = clua_getref(L, interned.keys[LuaEventKey.error.rawValue])
            push(L, json: .object(error.fields))
            lua_rawset(L, -3)
            rawSet(L, .kind, error.kind.rawValue)
        case .connection(let state, _):
            rawSet(L, .connection, state.name)
            if case .reconnecting(let attempt, let next) = state {
                rawSet(L, .attempt, attempt)
                if let next { rawSet(L, .retryIn, next.seconds) }
            }
        case .queuePageChanged(let page, _):
            rawSet(L, .queueURL, page.queueURL)
            rawSet(L, .targetURL, page.targetURL)
        case .blocked, .closed, .sessionRestarted, .completed, .keyReturnedLate, .userExited:
            break
        }
    }

    @inline(__always)
    private func rawSet(_ L: OpaquePointer, _ key: LuaEventKey, _ value: String?) {
        guard let value else { return }
        _ = clua_getref(L, interned.keys[key.rawValue])
        push(L, value)
        lua_rawset(L, -3)
    }

    @inline(__always)
    private func rawSet(_ L: OpaquePointer, _ key: LuaEventKey, _ value: Int?) {
        guard let value else { return }
        _ = clua_getref(L, interned.keys[key.rawValue])
        lua_pushinteger(L, lua_Integer(value))
        lua_rawset(L, -3)
    }

    @inline(__always)
    private func rawSet(_ L: OpaquePointer, _ key: LuaEventKey, _ value: Double?) {
        guard let value else { return }
        _ = clua_getref(L, interned.keys[key.rawValue])
        lua_pushnumber(L, value)
        lua_rawset(L, -3)
    }
}
