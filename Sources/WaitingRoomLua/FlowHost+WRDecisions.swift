import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

extension FlowHost {
    /// `wr.retry{after, reason}`, `wr.bypass(reason)` and `wr.abort(reason)`: the decisions a
    /// handler returns (tables with the `wr.decision` metatable).
    static func wrDecisionFunctions() -> [(String, HostFunction)] {
        func decision(_ kind: String) -> HostFunction {
            return { vm, L in
                var after: Double?
                var reason: String?
                if kind == "retry" {
                    // `after` is a number or absent (0): `after = "x"` was taken for 0 without a word
                    let afterType: Int32
                    if lua_type(L, 1) == LUA_TTABLE {
                        afterType = vm.pushField(L, 1, "after")
                        clua_pop(L, 1)
                        after = vm.numberField(L, 1, "after")
                        reason = vm.stringField(L, 1, "reason")
                    } else {
                        afterType = lua_type(L, 1)
                        after = vm.number(L, 1)
                    }
                    guard afterType == LUA_TNIL || afterType == LUA_TNONE || afterType == LUA_TNUMBER else {
                        return .error("wr.retry: 'after' must be a number of seconds >= 0")
                    }
                    if let value = after, value < 0 || !value.isFinite {
                        return .error("wr.retry: 'after' must be a number of seconds >= 0")
                    }
                } else {
                    // a reason is text or absent: `wr.bypass(5)` and `wr.abort({})` gave an empty one without a word
                    let type = lua_type(L, 1)
                    guard type == LUA_TSTRING || type == LUA_TNIL || type == LUA_TNONE else {
                        return .error("wr.\(kind): 'reason' must be a string, not a \(String(cString: clua_typename_at(L, 1)))")
                    }
                    reason = vm.string(L, 1)
                }
                lua_createtable(L, 0, 3)
                vm.setField(L, "decision", kind)
                vm.setField(L, "after", after ?? (kind == "retry" ? 0 : nil))
                vm.setField(L, "reason", reason)
                luaL_setmetatable(L, "wr.decision")
                return .values(1)
            }
        }
        return [("retry", decision("retry")), ("bypass", decision("bypass")), ("abort", decision("abort"))]
    }
}
