/* CLuaShim: the little C that must be C (docs/lua-embedding.md §1.3).
 *  - error / yield trampolines: Swift host functions return a code, C raises or yields,
 *    so a Lua longjmp never crosses a Swift frame;
 *  - a capped allocator with the `in_host` rule (the host's own pushes are never refused);
 *  - a sticky count hook: instruction budget, wall-clock deadline, asynchronous interrupt and
 *    memory violations, which `pcall` cannot swallow;
 *  - a traceback message handler and the sandboxed library opener (bounded pattern functions). */
#ifndef CLUA_SHIM_H
#define CLUA_SHIM_H
#include <stddef.h>
#include <stdint.h>
/* Debian installs the headers under lua5.4/ (as Sources/CLua/clua.h). */
#if __has_include(<lua5.4/lua.h>)
#include <lua5.4/lua.h>
#else
#include <lua.h>
#endif

/// Why the sticky hook stopped the running handler (0 = not tripped).
#define CLUA_TRIP_NONE 0
#define CLUA_TRIP_BUDGET 1
#define CLUA_TRIP_DEADLINE 2
#define CLUA_TRIP_INTERRUPT 3
#define CLUA_TRIP_MEMORY 4

/// Return codes of a host function (besides n >= 0 results already pushed).
#define CLUA_HOST_RAISE (-1)        /* raise the value on top of the stack as is */
#define CLUA_HOST_RAISE_WHERE (-2)  /* raise the string on top, prefixed with the caller's file:line */
#define CLUA_HOST_YIELD_BASE (-3)   /* -3 - n: yield the n values on top of the stack */

typedef int (*clua_HostDispatch)(lua_State *L, void *ctx, int fid);
typedef int (*clua_PollFn)(void *ctx);

/// Per-state limits and accounting; owned by the host, used as the allocator's `ud`.
typedef struct clua_Limits {
    /* memory */
    size_t mem_limit;          /* bytes; 0 = unlimited */
    size_t mem_used;
    size_t mem_peak;
    int in_host;               /* > 0: host code is running; the allocator never refuses */
    size_t refused_growth;     /* > 0: a request was refused; the hook decides after a full GC */
    /* CPU, for the slice that is running */
    int budget_enabled;
    long long budget;          /* instructions left for the running handler */
    int step;                  /* hook period in instructions */
    int64_t deadline_ns;       /* monotonic ns; 0 = none */
    int tripped;               /* CLUA_TRIP_* (sticky until the next slice) */
    clua_PollFn poll;          /* asynchronous interrupt (Ctrl-C, cancellation); may be NULL */
    void *poll_ctx;
    /* C-library bounds */
    double pattern_limit;      /* estimated matcher steps; 0 = unlimited */
    long long move_limit;      /* max elements for table.move; 0 = unlimited */
    /* host functions */
    clua_HostDispatch dispatch;
    void *dispatch_ctx;
    /* entry guard: the thread running Lua code on this state now (0 = none) and its nesting.
     * Lua allows one thread at a time in a state and all its coroutines; the host keeps to that
     * by running Lua only on its actor. Entering from a second thread while one is inside aborts
     * with a message (a host bug) instead of silently corrupting the heap or the string table. */
    uintptr_t owner;
    int depth;
} clua_Limits;

lua_State *clua_newstate(clua_Limits *lim);
void clua_close(lua_State *L);
clua_Limits *clua_limits(lua_State *L);
int64_t clua_now_ns(void);
const char *clua_trip_message(int reason);
void *clua_sentinel(void);
/// The light userdata that stands for JSON null (`wr.json.null`).
void *clua_json_null(void);

/// Push the host function `fid` (a C closure over the trampoline).
void clua_pushhost(lua_State *L, int fid);
/// Resume `co` with the hook armed and the allocator limited; restores host mode afterwards.
int clua_resume(lua_State *co, lua_State *from, int nargs, int *nres);
/// Protected call with the traceback handler, the hook armed and the allocator limited.
int clua_pcall(lua_State *L, int nargs, int nresults);
/// Plain protected call in host mode (no limits), for trusted host chunks.
int clua_pcall_host(lua_State *L, int nargs, int nresults);
/// Compile text (never binary) under the memory limit.
int clua_load(lua_State *L, const char *buf, size_t len, const char *chunkname);
/// Push a traceback of `co` (or L) with `msg` onto L.
void clua_traceback(lua_State *L, lua_State *co, const char *msg, int level);
/// Open base, table, string, math, utf8, coroutine; bound the pattern functions, string.rep and
/// table.move; remove string.dump; lock the string metatable. Returns a lua status.
int clua_open_sandbox(lua_State *L);
/// Arm the count hook on `L` (e.g. a new coroutine) with the current step.
void clua_arm(lua_State *L);

#endif
