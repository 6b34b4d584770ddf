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

/* ---- FUNCTION, FCALL and the libraries (cmd_function.c) ---- */
extern const command_group function_group;
size_t functions_count(void);       /* number_of_functions */
size_t functions_libraries(void);   /* number_of_libraries */
size_t functions_code_bytes(void);  /* the libraries' code */
/* rdb.h's function hooks: the libraries into a snapshot, one back from it,
 * all dropped. */
struct rdbw;
void functions_rdb_save(struct rdbw *w);
int functions_rdb_load(const char *code, size_t len, int replace, char *err, size_t errlen);
void functions_flush(void);
/* May this EVAL / EVALSHA / FCALL (argv) write? 0 only when its script or
 * function declares no-writes; an unknown script may (CLIENT PAUSE WRITE
 * holds it, pause.h's hook). */
/* EVAL/EVALSHA with a shebang, or FCALL, whose script does not declare
 * no-writes: a write for min-replicas and read-only replicas (as Redis
 * counts it at dispatch; a script without a shebang is checked per call). */
int script_declares_write(const span *argv, int argc);
int script_cmd_may_write(const span *argv, int argc);
int function_may_write(span name);

/* ---- the engine (script_lua.c / script_nolua.c) ---- */

/* 0 when the server was built without Lua. */
int script_engine_available(void);
/* Compile body as script `sha` (40 hex digits); a "#!lua ..." first line
 * is compiled as an empty line. 0, or -1 with the error reply's text in err
 * ("ERR Error compiling script ..."). */
int script_define(const char *sha, const char *body, size_t len, char *err, size_t errlen);
/* Run the defined script `sha` for c with KEYS and ARGV. flags
 * (SCRIPT_FLAG_*): NO_WRITES: a write command is an error (EVAL_RO,
 * no-writes); ALLOW_OOM: denyoom commands run past maxmemory;
 * ALLOW_CROSS_SLOT: in cluster mode its calls may touch several local slots
 * (a script without a shebang, or its flag). The script's result is c's
 * reply. */
void script_run(client *c, const char *sha, const span *keys, int nkeys, const span *args, int nargs, unsigned flags);
/* ---- functions (FUNCTION LOAD / FCALL): a second Lua state ---- */
#define SCRIPT_FLAG_NO_WRITES       (1u << 0)
#define SCRIPT_FLAG_ALLOW_OOM       (1u << 1)
#define SCRIPT_FLAG_ALLOW_STALE     (1u << 2)
#define SCRIPT_FLAG_NO_CLUSTER      (1u << 3)
#define SCRIPT_FLAG_ALLOW_CROSS_SLOT (1u << 4)
#define SCRIPT_FLAG_COUNT 5
/* The flags' names, by bit (script_names.c); script_flag_bit gives a
 * name's bit, 0 if unknown. */
extern const char *const script_flag_names[SCRIPT_FLAG_COUNT + 1];
int script_flag_bit(const char *p, size_t len);
/* Function and library names: letters, digits, '_', at least one. */
int script_valid_name(const char *s, size_t n);

/* One function a library registered; ref names its Lua function. */
typedef struct script_fn {
    char *name;
    char *desc;                 /* NULL if none */
    unsigned flags;             /* SCRIPT_FLAG_* */
    int ref;
} script_fn;

typedef struct script_fn_list {
    script_fn *v;
    int n, cap;
} script_fn_list;

/* Run a library's code (its first line, the "#!lua ..." metadata, kept as
 * an empty line so line numbers count it) and collect the functions it
 * registers into out. 0, or -1 with the error reply's text in err. */
int script_lib_load(const char *code, size_t len, script_fn_list *out, char *err, size_t errlen);
/* Drop a function's Lua reference and its strings. */
void script_fn_release(script_fn *f);
/* FCALL: run f for c with KEYS and ARGV as its two arguments. */
void script_fcall(client *c, const script_fn *f, const span *keys, int nkeys, const span *args, int nargs);
/* The functions' Lua state: memory, and a fresh one (FUNCTION FLUSH). */
size_t script_functions_memory(void);
void script_functions_reset(void);

/* SCRIPT KILL (function 0) / FUNCTION KILL (1): 0 if the busy script will
 * stop, -1 if none is busy, -2 if it has written (unkillable), -3 if what
 * runs is the other kind. */
int script_kill(int function);
#define SCRIPT_ERR_UNKILLABLE                                                                                     \
    "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the "  \
    "script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
/* What runs now (FUNCTION STATS): 1 with its name, caller and run time. */
int script_running(const char **name, const client **caller, long long *ms);
/* Forget every compiled script (SCRIPT FLUSH): a new Lua state. */
void script_engine_reset(void);
/* Bytes the Lua state uses (INFO's used_memory_lua). */
size_t script_engine_memory(void);

#endif
