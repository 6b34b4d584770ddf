/* script_sandbox.c - read-only globals and libraries for scripts (see
 * script_sandbox.h).
 *
 * Every script shares one Lua state, so a script that could write
 * `string.format = nil` or `redis.call = f` would change every later
 * script's behaviour, and Redis 7.0 refuses both with "Attempt to modify a
 * readonly table". Its Lua carries a read-only bit on tables; Debian's
 * does not, so the same effect is built from metatables:
 *
 *   - Each table among the globals (string, table, math, redis, cjson, bit,
 *     cmsgpack, struct, coroutine) is replaced by an empty proxy whose
 *     metatable reads through to the real table (__index is the table, so a
 *     lookup stays inside the VM) and raises the error on __newindex. The
 *     metatable is protected (__metatable), and nothing else in reach of a
 *     script refers to the real table: it has no other name.
 *   - The globals themselves are read through a proxy whose __index is a
 *     function (a missing global raises Redis's error) and which is what
 *     scripts see as _G.
 *   - Strings share a metatable whose __index is the string library: it now
 *     names the proxy, and getmetatable('') returns a proxy of it.
 *   - A proxy is empty, so the functions that work on a table's own slots
 *     would see nothing (pairs, next, rawget) or write past the guard
 *     (rawset, setmetatable). They are replaced by wrappers that look the
 *     proxy up in a registry map (proxy -> table) and work on the table, or
 *     refuse. The wrappers keep Lua 5.1's argument checks and messages.
 */
#include "script_sandbox.h"

#include <lauxlib.h>
#include <lualib.h>

#define RO_MAP "ferry_ro" /* registry: proxy -> the table it stands for */
#define ENV_MT "ferry_env_mt" /* registry: what getmetatable(_G) gives, a read-only proxy of its metatable */

/* Lua source run once in a new state: loadstring and load refuse bytecode
 * (a crafted bytecode chunk can escape Lua's sandbox). */
static const char bytecode_guard_src[] =
    "local ls = loadstring\n"
    "loadstring = function(s, name)\n"
    "  if type(s) == 'string' and s:byte(1) == 27 then return nil, 'bytecode is not allowed' end\n"
    "  return ls(s, name)\n"
    "end\n"
    "load = function(f, name)\n"
    "  local parts = {}\n"
    "  while true do local p = f(); if p == nil or p == '' then break end; parts[#parts + 1] = p end\n"
    "  return loadstring(table.concat(parts), name)\n"
    "end\n";

/* What Redis 7.0 leaves out of a script's globals. */
static const char *const removed_globals[] = {"loadfile", "dofile", "print", "setfenv", "getfenv",
                                              "newproxy", "debug", NULL};

static int ro_error(lua_State *L) {
    lua_pushliteral(L, SANDBOX_RO_ERROR);
    return lua_error(L);
}

static int proxy_newindex(lua_State *L) { return luaL_error(L, SANDBOX_RO_ERROR); }

int sandbox_env_index(lua_State *L) {
    lua_pushvalue(L, 2);
    lua_rawget(L, LUA_GLOBALSINDEX);
    if (!lua_isnil(L, -1)) return 1;
    return luaL_error(L, SANDBOX_NO_GLOBAL, lua_tostring(L, 2));
}

void sandbox_make_proxy(lua_State *L, int target) {
    int idx = lua_gettop(L);
    lua_newtable(L); /* the proxy */
    lua_newtable(L); /* its metatable */
    lua_pushvalue(L, idx);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, proxy_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    if (target) {
        lua_getfield(L, LUA_REGISTRYINDEX, RO_MAP);
        lua_pushvalue(L, -2);
        lua_pushvalue(L, target);
        lua_rawset(L, -3);
        lua_pop(L, 1);
    }
    lua_replace(L, idx);
}

/* If the value at idx is a proxy, replaces it by its table; 1 if so. */
static int see_through(lua_State *L, int idx) {
    if (!lua_istable(L, idx)) return 0;
    lua_pushvalue(L, idx);
    lua_rawget(L, lua_upvalueindex(1));
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    lua_replace(L, idx);
    return 1;
}

/* pairs(t): the original next (upvalue 2) over t's table. */
static int l_pairs(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    see_through(L, 1);
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

static int l_next(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    see_through(L, 1);
    lua_settop(L, 2);
    if (lua_next(L, 1)) return 2;
    lua_pushnil(L);
    return 1;
}

static int l_rawget(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    see_through(L, 1);
    lua_settop(L, 2);
    lua_rawget(L, 1);
    return 1;
}

static int l_rawset(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    if (see_through(L, 1)) return ro_error(L);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

/* A read-only table has no metatable, as in Redis, except _G, whose
 * metatable (the globals' guard) Redis shows read-only. */
static int l_getmetatable(lua_State *L) {
    luaL_checkany(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, SANDBOX_ENV);
    int is_env = lua_rawequal(L, 1, -1);
    lua_pop(L, 1);
    if (is_env) {
        lua_getfield(L, LUA_REGISTRYINDEX, ENV_MT);
        return 1;
    }
    if (see_through(L, 1) || !lua_getmetatable(L, 1)) {
        lua_pushnil(L);
        return 1;
    }
    luaL_getmetafield(L, 1, "__metatable");
    return 1;
}

static int l_setmetatable(lua_State *L) {
    int t = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argcheck(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table expected");
    lua_pushvalue(L, 1);
    if (see_through(L, lua_gettop(L))) return ro_error(L);
    lua_pop(L, 1);
    if (luaL_getmetafield(L, 1, "__metatable")) return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

static void set_wrapper(lua_State *L, const char *name, lua_CFunction fn) {
    lua_getfield(L, LUA_REGISTRYINDEX, RO_MAP);
    lua_getglobal(L, "next"); /* the original: pairs returns it */
    lua_pushcclosure(L, fn, 2);
    lua_setglobal(L, name);
}

/* Replaces every table among the globals by its read-only proxy. */
static void protect_libraries(lua_State *L) {
    lua_newtable(L); /* the names, collected before the globals change */
    int names = lua_gettop(L), n = 0;
    lua_pushnil(L);
    while (lua_next(L, LUA_GLOBALSINDEX)) {
        int lib = lua_istable(L, -1) && !lua_rawequal(L, -1, LUA_GLOBALSINDEX);
        lua_pop(L, 1);
        if (!lib) continue;
        lua_pushvalue(L, -1);
        lua_rawseti(L, names, ++n);
    }
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, names, i);
        lua_pushvalue(L, -1);
        lua_rawget(L, LUA_GLOBALSINDEX);
        lua_pushvalue(L, -1);
        sandbox_make_proxy(L, lua_gettop(L) - 1);
        lua_remove(L, -2);
        lua_rawset(L, LUA_GLOBALSINDEX);
    }
    lua_pop(L, 1);
}

/* The strings' metatable: __index names the string library's proxy, and
 * getmetatable('') sees a read-only proxy of the metatable. */
static void protect_string_metatable(lua_State *L) {
    lua_pushliteral(L, "");
    if (!lua_getmetatable(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    int mt = lua_gettop(L);
    lua_getglobal(L, "string");
    lua_setfield(L, mt, "__index");
    lua_pushvalue(L, mt);
    sandbox_make_proxy(L, mt);
    lua_setfield(L, mt, "__metatable");
    lua_pop(L, 2);
}

/* The scripts' environment: a proxy of the globals, which is also _G. */
static void make_env(lua_State *L) {
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_pushcfunction(L, sandbox_env_index);
    sandbox_make_proxy(L, lua_gettop(L) - 1);
    lua_remove(L, -2);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "_G");
    lua_getmetatable(L, -1);
    sandbox_make_proxy(L, lua_gettop(L)); /* replaces the metatable by its proxy */
    lua_setfield(L, LUA_REGISTRYINDEX, ENV_MT);
    lua_setfield(L, LUA_REGISTRYINDEX, SANDBOX_ENV);
}

static int apply(lua_State *L) {
    for (int i = 0; removed_globals[i]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, removed_globals[i]);
    }
    if (luaL_loadbuffer(L, bytecode_guard_src, sizeof bytecode_guard_src - 1, "=sandbox")) return lua_error(L);
    lua_call(L, 0, 0);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, RO_MAP);
    set_wrapper(L, "pairs", l_pairs);
    set_wrapper(L, "next", l_next);
    set_wrapper(L, "rawget", l_rawget);
    set_wrapper(L, "rawset", l_rawset);
    set_wrapper(L, "getmetatable", l_getmetatable);
    set_wrapper(L, "setmetatable", l_setmetatable);
    protect_libraries(L);
    protect_string_metatable(L);
    make_env(L);
    return 0;
}

int sandbox_apply(lua_State *L) {
    lua_pushcfunction(L, apply);
    return lua_pcall(L, 0, 0, 0) == 0 ? 0 : -1;
}
