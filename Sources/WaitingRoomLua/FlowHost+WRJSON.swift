import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

extension FlowHost {
    /// Pushes the `wr.json` table: `encode(value)`, `decode(text)` (each `nil, message` on
    /// failure) and `null`.
    func pushWRJSON(_ L: OpaquePointer) {
        let encodeID = vm.register { vm, L in
            switch vm.json(L, 1) {
            case .success(let value):
                vm.push(L, value.jsonText)
                return .values(1)
            case .failure(let error):
                lua_pushnil(L)
                vm.push(L, error.message)
                return .values(2)
            }
        }
        let decodeID = vm.register { vm, L in
            guard let text = vm.string(L, 1) else { return .error("wr.json.decode: expected a string") }
            do {
                let value = try JSONValue.parse(text)
                guard vm.push(L, json: value) else {
                    clua_pop(L, 1)
                    lua_pushnil(L)
                    vm.push(L, "invalid JSON: nested too deeply (the Lua stack cannot grow)")
                    return .values(2)
                }
                return .values(1)
            } catch {
                lua_pushnil(L)
                vm.push(L, "invalid JSON: \(error)")
                return .values(2)
            }
        }
        lua_createtable(L, 0, 3)
        clua_pushhost(L, encodeID)
        lua_setfield(L, -2, "encode")
        clua_pushhost(L, decodeID)
        lua_setfield(L, -2, "decode")
        lua_pushlightuserdata(L, clua_json_null())
        lua_setfield(L, -2, "null")
    }
}
