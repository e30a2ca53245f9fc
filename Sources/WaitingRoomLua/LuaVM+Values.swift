import CLua
import CLuaShim

extension LuaVM {
    /// The number at `index` if it is a number (strings are not coerced).
    func number(_ L: OpaquePointer, _ index: Int32) -> Double? {
        guard lua_type(L, index) == LUA_TNUMBER else { return nil }
        return clua_tonumber(L, index)
    }

    /// The integer at `index` if it is a number with an integral value.
    func integer(_ L: OpaquePointer, _ index: Int32) -> Int? {
        guard lua_type(L, index) == LUA_TNUMBER else { return nil }
        if lua_isinteger(L, index) != 0 { return Int(clua_tointeger(L, index)) }
        let value = clua_tonumber(L, index)
        guard value.rounded(.towardZero) == value, abs(value) < 9.0e18 else { return nil }
        return Int(value)
    }

    /// `t[key]` as a string, for a table at `index`.
    func stringField(_ L: OpaquePointer, _ index: Int32, _ key: String) -> String? {
        guard lua_type(L, index) == LUA_TTABLE else { return nil }
        let absolute = lua_absindex(L, index)
        push(L, key)
        _ = lua_rawget(L, absolute)
        defer { clua_pop(L, 1) }
        if lua_type(L, -1) == LUA_TNUMBER {
            lua_pushvalue(L, -1)
            let text = lua_tolstring(L, -1, nil).map { String(cString: $0) }
            clua_pop(L, 1)
            return text
        }
        return string(L, -1)
    }

    /// `t[key]` as a number, for a table at `index`.
    func numberField(_ L: OpaquePointer, _ index: Int32, _ key: String) -> Double? {
        guard lua_type(L, index) == LUA_TTABLE else { return nil }
        let absolute = lua_absindex(L, index)
        push(L, key)
        _ = lua_rawget(L, absolute)
        defer { clua_pop(L, 1) }
        return number(L, -1)
    }

    /// Push `t[key]` (raw) for a table at `index`; returns its type.
    @discardableResult
    func pushField(_ L: OpaquePointer, _ index: Int32, _ key: String) -> Int32 {
        let absolute = lua_absindex(L, index)
        push(L, key)
        return lua_rawget(L, absolute)
    }

    func setField(_ L: OpaquePointer, _ key: StaticString, _ value: String?) {
        guard let value else { return }
        push(L, value)
        key.withUTF8Buffer { buffer in buffer.withMemoryRebound(to: CChar.self) { lua_setfield(L, -2, $0.baseAddress) } }
    }

    func setField(_ L: OpaquePointer, _ key: StaticString, _ value: Int?) {
        guard let value else { return }
        lua_pushinteger(L, lua_Integer(value))
        key.withUTF8Buffer { buffer in buffer.withMemoryRebound(to: CChar.self) { lua_setfield(L, -2, $0.baseAddress) } }
    }

    func setField(_ L: OpaquePointer, _ key: StaticString, _ value: Double?) {
        guard let value else { return }
        lua_pushnumber(L, value)
        key.withUTF8Buffer { buffer in buffer.withMemoryRebound(to: CChar.self) { lua_setfield(L, -2, $0.baseAddress) } }
    }

    func setField(_ L: OpaquePointer, _ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        lua_pushboolean(L, value ? 1 : 0)
        key.withUTF8Buffer { buffer in buffer.withMemoryRebound(to: CChar.self) { lua_setfield(L, -2, $0.baseAddress) } }
    }
}
