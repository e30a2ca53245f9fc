import CLua
import CLuaShim
import WaitingRoom

extension LuaVM {
    /// The Lua value at `index` as JSON. Tables with keys 1…n become arrays, other tables objects
    /// (keys must be strings or numbers), `wr.json.null` becomes null. Functions, threads,
    /// userdata, NaN, infinities and cycles are refused with a message naming the path.
    ///
    /// Each table level holds a key and a value on the Lua stack while its members are read, and
    /// the stack is grown for them (`lua_checkstack`): Lua promises a C function only
    /// `LUA_MINSTACK` (20) free slots, and a push past them writes over the heap.
    func json(_ L: OpaquePointer, _ index: Int32, path: String = "value", depth: Int = 0) -> Result<JSONValue, LuaError> {
        let index = lua_absindex(L, index)
        guard depth < Self.jsonDepthLimit else {
            return .failure(LuaError(kind: .runtime, message: "\(path): nested too deeply (or a cycle)"))
        }
        switch lua_type(L, index) {
        case LUA_TNIL, LUA_TNONE:
            return .success(.null)
        case LUA_TBOOLEAN:
            return .success(.bool(lua_toboolean(L, index) != 0))
        case LUA_TNUMBER:
            // JSON has no NaN or infinity (the whole payload was written as null)
            let number = clua_tonumber(L, index)
            guard number.isFinite else {
                return .failure(LuaError(kind: .runtime, message: "\(path): \(number) cannot be converted to JSON (not a finite number)"))
            }
            return .success(.number(number))
        case LUA_TSTRING:
            return .success(.string(string(L, index) ?? ""))
        case LUA_TLIGHTUSERDATA where lua_touserdata(L, index) == clua_json_null():
            return .success(.null)
        case LUA_TTABLE:
            guard lua_checkstack(L, Self.slotsPerLevel) != 0 else {
                return .failure(LuaError(kind: .runtime, message: "\(path): nested too deeply (the Lua stack cannot grow)"))
            }
            let length = Int(lua_rawlen(L, index))
            var count = 0
            var object: [String: JSONValue] = [:]
            lua_pushnil(L)
            while lua_next(L, index) != 0 {
                count += 1
                let key: String
                if lua_type(L, -2) == LUA_TSTRING {
                    key = string(L, -2) ?? ""
                } else if lua_type(L, -2) == LUA_TNUMBER {
                    lua_pushvalue(L, -2)
                    key = lua_tolstring(L, -1, nil).map { String(cString: $0) } ?? ""
                    clua_pop(L, 1)
                } else {
                    clua_pop(L, 2)
                    return .failure(LuaError(kind: .runtime, message: "\(path): keys must be strings or numbers"))
                }
                switch json(L, -1, path: "\(path).\(key)", depth: depth + 1) {
                case .success(let value): object[key] = value
                case .failure(let error):
                    clua_pop(L, 2)
                    return .failure(error)
                }
                clua_pop(L, 1)
            }
            if length > 0 && count == length {
                var array: [JSONValue] = []
                array.reserveCapacity(length)
                for i in 1...length { array.append(object[String(i)] ?? .null) }
                return .success(.array(array))
            }
            return .success(.object(object))
        default:
            let name = String(cString: clua_typename_at(L, index))
            return .failure(LuaError(kind: .runtime, message: "\(path): a \(name) cannot be converted to JSON"))
        }
    }

    /// How deep a Lua value converted to JSON may nest (a cycle ends here too): as deep as
    /// `JSONValue.parse` reads.
    static let jsonDepthLimit = JSONValue.maximumDepth
    /// The most Lua stack slots one level of ``json(_:_:path:depth:)`` or ``push(_:json:inArray:)``
    /// holds at once (a table, a key and a value or its copy).
    static let slotsPerLevel: Int32 = 3

    /// Push `value`: objects and arrays as tables, null as `wr.json.null` inside arrays (so
    /// positions are kept) and as a missing key inside objects; integral numbers as integers.
    ///
    /// Each array or object level grows the Lua stack for its table, key and value first
    /// (`lua_checkstack`; JSON from a file, a vendor or `wr.json.decode` may nest hundreds of
    /// levels, past the 20 free slots Lua promises). Where the stack cannot grow (the process is
    /// out of memory), that part is pushed as nil and the result is false.
    @discardableResult
    func push(_ L: OpaquePointer, json value: JSONValue, inArray: Bool = false) -> Bool {
        switch value {
        case .array, .object:
            guard lua_checkstack(L, Self.slotsPerLevel) != 0 else {
                lua_pushnil(L)
                return false
            }
        default:
            break
        }
        var complete = true
        switch value {
        case .null:
            if inArray { lua_pushlightuserdata(L, clua_json_null()) } else { lua_pushnil(L) }
        case .bool(let b):
            lua_pushboolean(L, b ? 1 : 0)
        case .number(let n):
            if n.rounded(.towardZero) == n, abs(n) < 9.0e15 { lua_pushinteger(L, lua_Integer(n)) } else { lua_pushnumber(L, n) }
        case .string(let s):
            push(L, s)
        case .array(let items):
            lua_createtable(L, Int32(clamping: items.count), 0)
            for (i, item) in items.enumerated() {
                complete = push(L, json: item, inArray: true) && complete
                lua_rawseti(L, -2, lua_Integer(i + 1))
            }
        case .object(let fields):
            lua_createtable(L, 0, Int32(clamping: fields.count))
            for (key, item) in fields {
                if case .null = item { continue }
                push(L, key)
                complete = push(L, json: item) && complete
                lua_rawset(L, -3)
            }
        }
        return complete
    }
}
