/// The trusted Lua code that builds each flow's sandboxed global table (docs/lua-embedding.md §3.1) and makes
/// `coroutine.resume`/`wrap` forward host awaits from script coroutines to the host (§4.2).
/// It runs once per `lua_State` with the real globals and the yield sentinel, and returns
/// `make_env(host)`.
enum LuaPrelude {
    static let source = #"""
        local G, SENTINEL = ...
        local pairs, ipairs, type, select, error, rawget = pairs, ipairs, type, select, error, rawget
        local setmetatable_, collectgarbage_, load_ = setmetatable, collectgarbage, load
        local co_resume, co_yield, co_status, co_create, co_close =
          coroutine.resume, coroutine.yield, coroutine.status, coroutine.create, coroutine.close
        local pack, unpack = table.pack, table.unpack

        local base = { "assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall", "rawequal",
          "rawget", "rawlen", "rawset", "select", "tonumber", "tostring", "type", "xpcall", "_VERSION" }
        local libs = { "string", "table", "math", "utf8", "coroutine" }

        -- A host call inside a script coroutine yields the sentinel to *that* coroutine's resume; pass it
        -- up to the host and hand the host's answer back down.
        local function forward(co, r)
          while r[1] and r[2] == SENTINEL and co_status(co) == "suspended" do
            local answer = pack(co_yield(SENTINEL, r[3]))
            r = pack(co_resume(co, unpack(answer, 1, answer.n)))
          end
          return r
        end

        local function resume(co, ...)
          local r = forward(co, pack(co_resume(co, ...)))
          return unpack(r, 1, r.n)
        end

        local function wrap(f)
          local co = co_create(f)
          return function(...)
            local r = forward(co, pack(co_resume(co, ...)))
            if r[1] then return unpack(r, 2, r.n) end
            if co_status(co) == "dead" then co_close(co) end
            error(r[2], 0)
          end
        end

        return function(host)
          local env = {}
          for _, k in ipairs(base) do env[k] = G[k] end
          for _, name in ipairs(libs) do
            local copy = {}
            for k, v in pairs(G[name]) do copy[k] = v end
            env[name] = copy
          end
          env.coroutine.resume = resume
          env.coroutine.wrap = wrap
          env.setmetatable = function(t, mt)
            if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
              error("setmetatable: __gc metamethods are not available in flows", 2)
            end
            return setmetatable_(t, mt)
          end
          env.collectgarbage = function(opt)
            if opt == "count" then return collectgarbage_("count") end
            error("collectgarbage: only collectgarbage(\"count\") is available in flows", 2)
          end
          env.load = function(chunk, name, mode, ...)
            if select("#", ...) > 0 then return load_(chunk, name, "t", ...) end
            return load_(chunk, name, "t", env)
          end
          for k, v in pairs(host) do env[k] = v end
          env._G = env
          return env
        end
        """#
}
