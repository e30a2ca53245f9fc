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
        .sessionRestarted: "on_restart", .completed: "on_complete",
    ]
    /// Every handler a flow table may define, in documentation order.
    static let handlerNames = [
        "on_progress", "on_queue_opened", "on_success", "on_disabled", "on_block", "on_error",
        "on_close", "on_restart", "on_complete",
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
        return map
    }()
}

extension LuaVM {
    /// Push `event` as a table with the core's field names (`WaitingRoomEvent.fields`): `event`,
    /// `vendor`, `code`, `message`, and `state`, `queue_url`, `target_url`, `ahead`, `behind`,
    /// `eta`, `eta_text`, `percent`, `pass`, `error` where they apply. Built field by field (the
    /// hot path for progress events).
    func push(_ L: OpaquePointer, event: WaitingRoomEvent) {
        let status = event.status
        lua_createtable(L, 0, 9)
        push(L, event.name.rawValue)
        lua_setfield(L, -2, "event")
        push(L, status.vendor)
        lua_setfield(L, -2, "vendor")
        lua_pushinteger(L, lua_Integer(status.code))
        lua_setfield(L, -2, "code")
        push(L, status.message)
        lua_setfield(L, -2, "message")
        switch event {
        case .stateChanged(let state, _):
            setField(L, "state", state.rawValue)
        case .queueOpened(let page, _):
            setField(L, "queue_url", page.queueURL)
            setField(L, "target_url", page.targetURL)
        case .progress(let progress, _):
            setField(L, "ahead", progress.ahead)
            setField(L, "behind", progress.behind)
            if let eta = progress.eta { setField(L, "eta", eta.seconds) }
            setField(L, "eta_text", progress.etaText)
            setField(L, "percent", progress.percent)
        case .passed(let pass, _):
            push(L, json: .object(pass.fields(revealSecrets: true)))
            lua_setfield(L, -2, "pass")
        case .disabled(let pass, _):
            if let pass {
                push(L, json: .object(pass.fields(revealSecrets: true)))
                lua_setfield(L, -2, "pass")
            }
        case .failed(let error):
            push(L, json: .object(error.fields))
            lua_setfield(L, -2, "error")
            setField(L, "kind", error.kind.rawValue)
        case .blocked, .closed, .sessionRestarted, .completed:
            break
        }
    }
}
