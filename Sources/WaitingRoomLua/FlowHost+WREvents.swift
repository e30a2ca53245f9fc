import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

extension FlowHost {
    /// `wr.on(event, handler)` and `wr.off(id)`: the flow's own listeners.
    func wrEventFunctions(for context: FlowContext) -> [(String, HostFunction)] {
        return [
            (
                "on",
                { vm, L in
                    guard let name = vm.string(L, 1) else { return .error("wr.on: expected an event name such as \"progress\" or \"*\"") }
                    let event: String
                    if name == "*" {
                        event = "*"
                    } else if let known = LuaEventNames.listenerAliases[name] {
                        event = known.rawValue
                    } else {
                        return .error(
                            "wr.on: unknown event \"\(name)\"; expected one of progress, queue_opened, success, disabled, block, error, close, restart, complete, key_returned_late, connection, queue_page_changed, user_exited, state or \"*\""
                        )
                    }
                    guard clua_isfunction(L, 2) != 0 else { return .error("wr.on: expected a function as the second argument") }
                    lua_pushvalue(L, 2)
                    let ref = clua_ref(L)
                    let id = context.nextListenerID
                    context.nextListenerID += 1
                    context.listeners.append((id, event, ref))
                    lua_pushinteger(L, lua_Integer(id))
                    return .values(1)
                }
            ),
            (
                "off",
                { vm, L in
                    guard let id = vm.integer(L, 1) else { return .error("wr.off: expected the id wr.on returned") }
                    guard let index = context.listeners.firstIndex(where: { $0.id == id }) else {
                        lua_pushboolean(L, 0)
                        return .values(1)
                    }
                    clua_unref(L, context.listeners[index].ref)
                    context.listeners.remove(at: index)
                    lua_pushboolean(L, 1)
                    return .values(1)
                }
            )
        ]
    }
}
