/* script_sandbox.h - what a script may not do to the Lua state it shares
 * with every other script (script_sandbox.c; built with Lua only).
 *
 * Redis 7.0 marks every table reachable from the globals read-only in its
 * own patched Lua. Debian's Lua 5.1 has no such flag, so here each of those
 * tables is replaced by an empty proxy that reads through to it and refuses
 * writes with Redis's error, and the functions that bypass metatables
 * (pairs, next, rawget, rawset, getmetatable, setmetatable) are wrapped to
 * see through a proxy to its table, or refuse to change it.
 */
#ifndef FERRY_SCRIPT_SANDBOX_H
#define FERRY_SCRIPT_SANDBOX_H

#include <lua.h>

#define SANDBOX_RO_ERROR "Attempt to modify a readonly table"
#define SANDBOX_NO_GLOBAL "Script attempted to access nonexistent global variable '%s'"

/* Run once on a new state after its libraries are open: removes what
 * scripts may not reach (file access, the environment functions, debug,
 * print), makes loadstring/load refuse bytecode, makes every library table
 * and the strings' metatable read-only, and stores the scripts' read-only
 * environment (a proxy of the globals) in the registry as SANDBOX_ENV.
 * Returns 0, or -1 if Lua failed (out of memory). */
int sandbox_apply(lua_State *L);

#define SANDBOX_ENV "ferry_env"

/* Replaces the __index function on top of the stack by an empty read-only
 * proxy table that reads through it; `target` is what pairs/next/rawget
 * see through the proxy (a stack index, or 0 for none). */
void sandbox_make_proxy(lua_State *L, int target);

/* The globals environment's __index: the global, or the error Redis raises
 * for a name that does not exist. */
int sandbox_env_index(lua_State *L);

#endif
