#include "clua_shim.h"
#if __has_include(<lua5.4/lua.h>)
#include <lua5.4/lauxlib.h>
#include <lua5.4/lualib.h>
#else
#include <lauxlib.h>
#include <lualib.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char clua_sentinel_tag;

static void clua_enter(clua_Limits *lim, const char *what);
static void clua_leave(clua_Limits *lim);

void *clua_sentinel(void) { return &clua_sentinel_tag; }

static char clua_json_null_tag;

void *clua_json_null(void) { return &clua_json_null_tag; }

int64_t clua_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + (int64_t)ts.tv_nsec;
}

const char *clua_trip_message(int reason) {
    switch (reason) {
    case CLUA_TRIP_BUDGET: return "instruction budget exceeded";
    case CLUA_TRIP_DEADLINE: return "handler deadline exceeded";
    case CLUA_TRIP_INTERRUPT: return "interrupted";
    case CLUA_TRIP_MEMORY: return "memory limit exceeded";
    default: return "limit exceeded";
    }
}

clua_Limits *clua_limits(lua_State *L) {
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return (clua_Limits *)ud;
}

/* ---- allocator ---------------------------------------------------------------------------- */

static void *clua_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    clua_Limits *lim = (clua_Limits *)ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        lim->mem_used -= old;
        return NULL;
    }
    if (nsize > old && lim->mem_limit > 0 && lim->in_host == 0 &&
        lim->mem_used - old + nsize > lim->mem_limit) {
        /* The refusal raises "not enough memory", which a script could catch. Whether it was a
         * real violation (and becomes sticky) is decided by the hook after a full collection. */
        lim->refused_growth = nsize - old;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p == NULL) return NULL;
    lim->mem_used = lim->mem_used - old + nsize;
    if (lim->mem_used > lim->mem_peak) lim->mem_peak = lim->mem_used;
    return p;
}

static int clua_panic(lua_State *L) {
    (void)L;
    abort();
    return 0;
}

lua_State *clua_newstate(clua_Limits *lim) {
    lim->in_host = 1;
    if (lim->step <= 0) lim->step = 1000;
    lua_State *L = lua_newstate(clua_alloc, lim);
    if (L != NULL) lua_atpanic(L, clua_panic);
    return L;
}

void clua_close(lua_State *L) {
    clua_Limits *lim = clua_limits(L);
    clua_enter(lim, "lua_close");
    lim->in_host++;
    lua_close(L);
    lim->depth = 0;
    __atomic_store_n(&lim->owner, 0, __ATOMIC_RELEASE);
}

/* ---- hook --------------------------------------------------------------------------------- */

static void clua_count_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    clua_Limits *lim = clua_limits(L);
    if (lim->tripped == CLUA_TRIP_NONE && lim->refused_growth > 0) {
        size_t growth = lim->refused_growth;
        lim->refused_growth = 0;
        lim->in_host++;
        lua_gc(L, LUA_GCCOLLECT, 0);
        lim->in_host--;
        /* a violation when the request still does not fit after a full collection, or when
         * live data fills the cap (within 1/8): refusals caused by garbage alone are forgiven */
        if (lim->mem_used + growth > lim->mem_limit || lim->mem_used > lim->mem_limit - lim->mem_limit / 8)
            lim->tripped = CLUA_TRIP_MEMORY;
    }
    if (lim->tripped == CLUA_TRIP_NONE) {
        if (lim->budget_enabled) {
            lim->budget -= lua_gethookcount(L);
            if (lim->budget < 0) lim->tripped = CLUA_TRIP_BUDGET;
        }
        if (lim->tripped == CLUA_TRIP_NONE && lim->deadline_ns > 0 && clua_now_ns() > lim->deadline_ns)
            lim->tripped = CLUA_TRIP_DEADLINE;
        if (lim->tripped == CLUA_TRIP_NONE && lim->poll != NULL && lim->poll(lim->poll_ctx))
            lim->tripped = CLUA_TRIP_INTERRUPT;
    }
    if (lim->tripped != CLUA_TRIP_NONE) {
        /* sticky: fire on every instruction so no pcall level can absorb it */
        lua_sethook(L, clua_count_hook, LUA_MASKCOUNT, 1);
        luaL_error(L, "%s", clua_trip_message(lim->tripped));
    }
}

void clua_arm(lua_State *L) {
    clua_Limits *lim = clua_limits(L);
    lua_sethook(L, clua_count_hook, LUA_MASKCOUNT, lim->step > 0 ? lim->step : 1000);
}

/* ---- trampolines -------------------------------------------------------------------------- */

static int clua_trampoline(lua_State *L) {
    clua_Limits *lim = clua_limits(L);
    int fid = (int)lua_tointegerx(L, lua_upvalueindex(1), NULL);
    lim->in_host++;
    int r = lim->dispatch(L, lim->dispatch_ctx, fid);
    if (r >= 0) {
        lim->in_host--;
        return r;
    }
    if (r == CLUA_HOST_RAISE_WHERE && lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    lim->in_host--;
    if (r == CLUA_HOST_RAISE || r == CLUA_HOST_RAISE_WHERE) return lua_error(L);
    return lua_yield(L, CLUA_HOST_YIELD_BASE - r);
}

void clua_pushhost(lua_State *L, int fid) {
    lua_pushinteger(L, fid);
    lua_pushcclosure(L, clua_trampoline, 1);
}

/* ---- entry guard -------------------------------------------------------------------------- */

static void clua_enter(clua_Limits *lim, const char *what) {
    uintptr_t self = (uintptr_t)pthread_self();
    uintptr_t expected = 0;
    if (!__atomic_compare_exchange_n(&lim->owner, &expected, self, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)
        && expected != self) {
        fprintf(stderr, "WaitingRoomLua: %s entered a lua_State that another thread is running; "
                        "Lua code must only run on its FlowRuntime's actor\n", what);
        abort();
    }
    lim->depth++;
}

static void clua_leave(clua_Limits *lim) {
    if (--lim->depth == 0) __atomic_store_n(&lim->owner, 0, __ATOMIC_RELEASE);
}

int clua_resume(lua_State *co, lua_State *from, int nargs, int *nres) {
    clua_Limits *lim = clua_limits(co);
    clua_enter(lim, "lua_resume");
    int saved = lim->in_host;
    lim->in_host = 0;
    clua_arm(co);
    int status = lua_resume(co, from, nargs, nres);
    lim->in_host = saved;
    clua_leave(lim);
    return status;
}

static int clua_msgh(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int clua_pcall(lua_State *L, int nargs, int nresults) {
    clua_Limits *lim = clua_limits(L);
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, clua_msgh);
    lua_insert(L, base);
    clua_enter(lim, "lua_pcall");
    int saved = lim->in_host;
    lim->in_host = 0;
    clua_arm(L);
    int status = lua_pcall(L, nargs, nresults, base);
    clua_leave(lim);
    lua_sethook(L, NULL, 0, 0);
    lim->in_host = saved;
    lua_remove(L, base);
    return status;
}

int clua_pcall_host(lua_State *L, int nargs, int nresults) {
    clua_Limits *lim = clua_limits(L);
    clua_enter(lim, "lua_pcall");
    int status = lua_pcall(L, nargs, nresults, 0);
    clua_leave(lim);
    return status;
}

int clua_load(lua_State *L, const char *buf, size_t len, const char *chunkname) {
    clua_Limits *lim = clua_limits(L);
    int saved = lim->in_host;
    lim->in_host = 0;
    int status = luaL_loadbufferx(L, buf, len, chunkname, "t");
    lim->in_host = saved;
    return status;
}

void clua_traceback(lua_State *L, lua_State *co, const char *msg, int level) {
    luaL_traceback(L, co, msg, level);
}

/* ---- bounded C library functions ---------------------------------------------------------- */

/* Estimated worst-case matcher steps for `pattern` over a subject of `n` bytes: each repetition
 * item (`*`, `+`, `-`, `?`, `%b`) can backtrack over the whole subject, and an unanchored search
 * retries at every position. */
static double clua_pattern_cost(const char *p, size_t plen, size_t n, int can_anchor) {
    size_t i = 0;
    int anchored = 0, items = 0;
    if (can_anchor && plen > 0 && p[0] == '^') { anchored = 1; i = 1; }
    while (i < plen) {
        char c = p[i];
        int single = 0;
        if (c == '(' || c == ')') { i++; continue; }
        if (c == '%') {
            if (i + 1 < plen && p[i + 1] == 'b') { items++; i += 4; continue; }
            if (i + 1 < plen && p[i + 1] == 'f') {
                i += 2;
                if (i < plen && p[i] == '[') {
                    i++;
                    if (i < plen && p[i] == '^') i++;
                    if (i < plen && p[i] == ']') i++;
                    while (i < plen && p[i] != ']') { if (p[i] == '%') i++; i++; }
                    i++;
                }
                continue;
            }
            i += 2; single = 1;
        } else if (c == '[') {
            i++;
            if (i < plen && p[i] == '^') i++;
            if (i < plen && p[i] == ']') i++;
            while (i < plen && p[i] != ']') { if (p[i] == '%') i++; i++; }
            i++; single = 1;
        } else {
            i++; single = 1;
        }
        if (single && i < plen && (p[i] == '*' || p[i] == '+' || p[i] == '-' || p[i] == '?')) {
            items++;
            i++;
        }
    }
    double cost = 1.0;
    int k = items + (anchored ? 0 : 1);
    for (int j = 0; j < k && cost < 1e300; j++) cost *= (double)n + 1.0;
    return cost;
}

static void clua_check_pattern(lua_State *L, int can_anchor, const char *fname) {
    clua_Limits *lim = clua_limits(L);
    if (lim->pattern_limit <= 0) return;
    size_t n = 0, plen = 0;
    const char *s = lua_tolstring(L, 1, &n);
    const char *p = lua_tolstring(L, 2, &plen);
    (void)s;
    if (p == NULL || n == 0) return;  /* the library reports bad arguments itself */
    double cost = clua_pattern_cost(p, plen, n, can_anchor);
    if (cost > lim->pattern_limit) {
        luaL_error(L, "%s: pattern too complex for a %d-byte subject (sandbox pattern limit); "
                      "use fewer repetition items, a shorter subject, or plain find",
                   fname, (int)n);
    }
}

static int clua_call_orig(lua_State *L) {
    lua_CFunction orig = lua_tocfunction(L, lua_upvalueindex(1));
    return orig(L);
}

static int clua_bounded_find(lua_State *L) {
    if (!lua_toboolean(L, 4)) clua_check_pattern(L, 1, "find");
    return clua_call_orig(L);
}
static int clua_bounded_match(lua_State *L) { clua_check_pattern(L, 1, "match"); return clua_call_orig(L); }
static int clua_bounded_gmatch(lua_State *L) { clua_check_pattern(L, 0, "gmatch"); return clua_call_orig(L); }
static int clua_bounded_gsub(lua_State *L) { clua_check_pattern(L, 1, "gsub"); return clua_call_orig(L); }

static int clua_bounded_rep(lua_State *L) {
    size_t l = 0, lsep = 0;
    luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || (l == 0 && lsep == 0)) {  /* the stock loop would spin n times copying nothing */
        lua_pushliteral(L, "");
        return 1;
    }
    return clua_call_orig(L);
}

static int clua_bounded_move(lua_State *L) {
    clua_Limits *lim = clua_limits(L);
    lua_Integer f = luaL_checkinteger(L, 2);
    lua_Integer e = luaL_checkinteger(L, 3);
    if (lim->move_limit > 0 && e >= f && (e - f) >= lim->move_limit) {
        return luaL_error(L, "table.move: %I elements exceed the sandbox limit of %I",
                          (lua_Integer)(e - f + 1), (lua_Integer)lim->move_limit);
    }
    return clua_call_orig(L);
}

static void clua_wrap_field(lua_State *L, const char *name, lua_CFunction wrapper) {
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, wrapper, 1);
    lua_setfield(L, -2, name);
}

static int clua_open_sandbox_impl(lua_State *L) {
    luaL_requiref(L, LUA_GNAME, luaopen_base, 1); lua_pop(L, 1);
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1); lua_pop(L, 1);
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1); lua_pop(L, 1);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1); lua_pop(L, 1);
    luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1); lua_pop(L, 1);
    luaL_requiref(L, LUA_COLIBNAME, luaopen_coroutine, 1); lua_pop(L, 1);

    lua_getglobal(L, LUA_STRLIBNAME);
    clua_wrap_field(L, "find", clua_bounded_find);
    clua_wrap_field(L, "match", clua_bounded_match);
    clua_wrap_field(L, "gmatch", clua_bounded_gmatch);
    clua_wrap_field(L, "gsub", clua_bounded_gsub);
    clua_wrap_field(L, "rep", clua_bounded_rep);
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);

    lua_getglobal(L, LUA_TABLIBNAME);
    clua_wrap_field(L, "move", clua_bounded_move);
    lua_pop(L, 1);

    /* scripts cannot reach the shared string metatable (and through it the real string table) */
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

int clua_open_sandbox(lua_State *L) {
    lua_pushcfunction(L, clua_open_sandbox_impl);
    return lua_pcall(L, 0, 0, 0);
}
