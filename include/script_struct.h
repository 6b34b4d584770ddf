/* script_struct.h - the struct library of scripts (script_struct.c),
 * built only with Lua (make LUA=yes). */
#ifndef FERRY_SCRIPT_STRUCT_H
#define FERRY_SCRIPT_STRUCT_H

struct lua_State;

/* Pushes the struct table and sets the global of that name. */
int script_open_struct(struct lua_State *L);

#endif
