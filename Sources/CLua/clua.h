/* CLua: Debian's Lua 5.4 (liblua5.4-dev) plus static inline wrappers for the C macros Swift
 * cannot import. Only wrappers that cannot raise are meant to be called from Swift frames; anything
 * that may raise runs in CLuaShim (trampolines) instead. */
#ifndef CLUA_H
#define CLUA_H
/* Debian installs the headers under lua5.4/; elsewhere they may sit in the include path itself. */
#if __has_include(<lua5.4/lua.h>)
#include <lua5.4/lua.h>
#include <lua5.4/lualib.h>
#include <lua5.4/lauxlib.h>
#else
#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>
#endif

static inline int clua_registryindex(void) { return LUA_REGISTRYINDEX; }
static inline int clua_upvalueindex(int i) { return lua_upvalueindex(i); }
static inline void clua_pop(lua_State *L, int n) { lua_pop(L, n); }
static inline void clua_newtable(lua_State *L) { lua_newtable(L); }
static inline const char *clua_tostring(lua_State *L, int i) { return lua_tolstring(L, i, NULL); }
static inline lua_Number clua_tonumber(lua_State *L, int i) { return lua_tonumberx(L, i, NULL); }
static inline lua_Integer clua_tointeger(lua_State *L, int i) { return lua_tointegerx(L, i, NULL); }
static inline int clua_isnil(lua_State *L, int i) { return lua_isnil(L, i); }
static inline int clua_isnoneornil(lua_State *L, int i) { return lua_isnoneornil(L, i); }
static inline int clua_istable(lua_State *L, int i) { return lua_istable(L, i); }
static inline int clua_isfunction(lua_State *L, int i) { return lua_isfunction(L, i); }
static inline void clua_insert(lua_State *L, int i) { lua_insert(L, i); }
static inline void clua_remove(lua_State *L, int i) { lua_remove(L, i); }
static inline void clua_replace(lua_State *L, int i) { lua_replace(L, i); }
static inline void *clua_getextraspace(lua_State *L) { return lua_getextraspace(L); }
static inline const char *clua_typename_at(lua_State *L, int i) { return lua_typename(L, lua_type(L, i)); }
static inline void clua_pushglobaltable(lua_State *L) { lua_pushglobaltable(L); }
static inline int clua_maxinteger_exact(lua_Number n, lua_Integer *out) { return lua_numbertointeger(n, out); }
static inline int clua_gc_collect(lua_State *L) { return lua_gc(L, LUA_GCCOLLECT, 0); }
/* Generational mode (Lua 5.4): short-lived garbage such as event tables is cheap to collect. */
static inline int clua_gc_generational(lua_State *L) { return lua_gc(L, LUA_GCGEN, 0, 0); }
static inline int clua_gc_count_bytes(lua_State *L) {
    return lua_gc(L, LUA_GCCOUNT, 0) * 1024 + lua_gc(L, LUA_GCCOUNTB, 0);
}
static inline int clua_ref(lua_State *L) { return luaL_ref(L, LUA_REGISTRYINDEX); }
static inline void clua_unref(lua_State *L, int ref) { luaL_unref(L, LUA_REGISTRYINDEX, ref); }
static inline int clua_getref(lua_State *L, int ref) { return lua_rawgeti(L, LUA_REGISTRYINDEX, ref); }
#endif
