/* script.h - the Lua engine behind EVAL, EVALSHA and their _RO forms
 * (cmd_script.c holds the commands and the script cache).
 *
 * Two implementations: script_lua.c embeds Debian's Lua 5.1 with the cjson
 * and bit libraries, as Redis embeds Lua 5.1; script_nolua.c (make LUA=no)
 * keeps the server libc-only, and every scripting command replies with an
 * error saying so.
 *
 * A script is defined once under the SHA-1 of its body and then run by that
 * id. It runs to completion before any other command (atomicity): it calls
 * commands through redis.call / redis.pcall on a client of its own, in the
 * caller's database.
 */
#ifndef FERRY_SCRIPT_H
#define FERRY_SCRIPT_H

#include <stddef.h>
#include "client.h"
#include "command.h"

/* ---- the commands and the script cache (cmd_script.c) ---- */
extern const command_group script_group;
size_t scripts_cached(void);        /* number_of_cached_scripts */
size_t scripts_cache_bytes(void);   /* the cached bodies' bytes */

/* ---- the engine (script_lua.c / script_nolua.c) ---- */

/* 0 when the server was built without Lua. */
int script_engine_available(void);
/* Compile body as script `sha` (40 hex digits). 0, or -1 with the error
 * reply's text in err ("ERR Error compiling script ..."). */
int script_define(const char *sha, const char *body, size_t len, char *err, size_t errlen);
/* Run the defined script `sha` for c with KEYS and ARGV; ro: EVAL_RO (a
 * write command is an error). The script's result is c's reply. */
void script_run(client *c, const char *sha, const span *keys, int nkeys, const span *args, int nargs, int ro);
/* SCRIPT KILL: 0 if the busy script will stop, -1 if none is busy, -2 if
 * it has written (unkillable). */
int script_kill(void);
/* Forget every compiled script (SCRIPT FLUSH): a new Lua state. */
void script_engine_reset(void);
/* Bytes the Lua state uses (INFO's used_memory_lua). */
size_t script_engine_memory(void);

#endif
