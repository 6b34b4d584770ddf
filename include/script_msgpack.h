/* script_msgpack.h - the cmsgpack library of scripts (script_msgpack.c),
 * built only with Lua (make LUA=yes). */
#ifndef FERRY_SCRIPT_MSGPACK_H
#define FERRY_SCRIPT_MSGPACK_H

struct lua_State;

/* Pushes the cmsgpack table and sets the global of that name. */
int script_open_cmsgpack(struct lua_State *L);

#endif
