import CLua
import CLuaShim

extension LuaVM {
    /// A readable rendering of the value at `index` for the REPL and logs: strings raw at the top
    /// level and quoted inside tables, tables expanded to `depth` levels (at most `maxItems` entries
    /// each), cycles shown as `<cycle>`. Reads with raw access only, so no metamethod runs.
    func describe(_ L: OpaquePointer, _ index: Int32, depth: Int = 3, maxItems: Int = 40) -> String {
        let absolute = lua_absindex(L, index)
        var seen: Set<UnsafeRawPointer> = []
        return describeValue(L, absolute, depth: depth, maxItems: maxItems, quoted: false, seen: &seen)
    }

    private func describeValue(
        _ L: OpaquePointer, _ index: Int32, depth: Int, maxItems: Int, quoted: Bool,
        seen: inout Set<UnsafeRawPointer>
    ) -> String {
        switch lua_type(L, index) {
        case LUA_TNIL, LUA_TNONE:
            return "nil"
        case LUA_TBOOLEAN:
            return lua_toboolean(L, index) != 0 ? "true" : "false"
        case LUA_TNUMBER:
            lua_pushvalue(L, index)
            let text = lua_tolstring(L, -1, nil).map { String(cString: $0) } ?? "?"
            clua_pop(L, 1)
            return text
        case LUA_TSTRING:
            let text = string(L, index) ?? ""
            return quoted ? Self.quote(text) : text
        case LUA_TTABLE:
            guard let pointer = lua_topointer(L, index) else { return "table" }
            if seen.contains(pointer) { return "<cycle>" }
            if depth <= 0 { return "{...}" }
            seen.insert(pointer)
            defer { seen.remove(pointer) }
            var parts: [String] = []
            let length = Int(lua_rawlen(L, index))
            var count = 0
            for i in 1...max(length, 1) where length > 0 {
                if count >= maxItems {
                    parts.append("...")
                    break
                }
                _ = lua_rawgeti(L, index, lua_Integer(i))
                parts.append(describeValue(L, lua_gettop(L), depth: depth - 1, maxItems: maxItems, quoted: true, seen: &seen))
                clua_pop(L, 1)
                count += 1
            }
            var keyed: [(String, String)] = []
            lua_pushnil(L)
            while lua_next(L, index) != 0 {
                let keyIndex = lua_gettop(L) - 1
                if lua_isinteger(L, keyIndex) != 0 {
                    let k = clua_tointeger(L, keyIndex)
                    if k >= 1 && k <= length {
                        clua_pop(L, 1)
                        continue
                    }
                }
                if keyed.count + count < maxItems {
                    let key: String
                    if lua_type(L, keyIndex) == LUA_TSTRING, let s = string(L, keyIndex), Self.isIdentifier(s) {
                        key = s
                    } else {
                        key = "[" + describeValue(L, keyIndex, depth: 0, maxItems: 0, quoted: true, seen: &seen) + "]"
                    }
                    let value = describeValue(L, lua_gettop(L), depth: depth - 1, maxItems: maxItems, quoted: true, seen: &seen)
                    keyed.append((key, value))
                } else if keyed.count + count == maxItems {
                    keyed.append(("...", ""))
                }
                clua_pop(L, 1)
            }
            keyed.sort { $0.0 < $1.0 }
            parts += keyed.map { $0.1.isEmpty && $0.0 == "..." ? "..." : "\($0.0) = \($0.1)" }
            return parts.isEmpty ? "{}" : "{ " + parts.joined(separator: ", ") + " }"
        default:
            let name = String(cString: clua_typename_at(L, index))
            return "<\(name)>"
        }
    }

    static func isIdentifier(_ s: String) -> Bool {
        guard let first = s.utf8.first,
            first == UInt8(ascii: "_") || (first | 0x20) >= UInt8(ascii: "a") && (first | 0x20) <= UInt8(ascii: "z")
        else { return false }
        return s.utf8.allSatisfy { c in
            c == UInt8(ascii: "_") || (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z")
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 { out += "\\\(scalar.value)" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}
