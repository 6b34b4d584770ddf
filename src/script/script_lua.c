/* script_lua.c - the Lua 5.1 engine behind EVAL (see script.h).
 *
 * One lua_State holds every script, each compiled once from its body
 * (chunk name "@user_script", so errors read "user_script:LINE: ...", as
 * Redis 7.0's do) and kept in the registry as "f_<sha>". The libraries are
 * those Redis loads: base, table, string, math, debug, cjson and bit, with
 * loadfile/dofile removed and bytecode refused by loadstring and load (a
 * crafted bytecode chunk can escape Lua's sandbox).
 *
 * Globals are read-only for scripts, as in Redis 7: a script's function runs
 * with a proxy table as its environment whose __index reads the real
 * globals (and raises "Script attempted to access nonexistent global
 * variable" for a name that is absent) and whose __newindex raises "Attempt
 * to modify a readonly table". KEYS and ARGV are set in the real table
 * before each run.
 *
 * redis.call runs a command on a client of the engine's own (no socket; it
 * may not block) in the database the script has selected, collects the
 * reply bytes that command staged and turns them into Lua values: the reply
 * format is the one interface every command already has, so the engine
 * needs nothing from them. An error reply makes redis.call raise an error
 * table {err = "CODE message"}; redis.pcall returns that table.
 *
 * A script's result becomes the caller's reply by Redis's rules
 * (script_conv.h). An error ends the script with "-<message> script: <sha>, on
 * @user_script:<line>.".
 *
 * A long script: every HOOK_INSTRUCTIONS instructions a count hook looks at
 * the clock. Past busy-reply-threshold the server is "busy": the hook runs
 * one turn of the event loop each time (clients_events_while_busy), where
 * other clients get -BUSY for everything but the commands flagged
 * allow-busy (SCRIPT KILL, SHUTDOWN NOSAVE, ...). SCRIPT KILL stops a
 * script that has not written (the hook raises an error, and re-raises it
 * on every line so pcall cannot keep the script alive); one that has
 * written is UNKILLABLE, as its effects cannot be undone. SHUTDOWN NOSAVE
 * stops it the same way and the server exits.
 *
 * math.random is Redis's: the rand48 generator (48-bit linear congruential),
 * starting from rand48's default state when the server starts and going on
 * from run to run (math.randomseed reseeds it), so a server draws the same
 * sequence as redis-server given the same calls.
 */
#include "acl.h"
#include "script.h"
#include "script_conv.h"
#include "script_msgpack.h"
#include "script_sandbox.h"
#include "script_struct.h"
#include "cluster_redirect.h"
#include "crc16.h"
#include "command.h"
#include "config.h"
#include "db.h"
#include "event.h"
#include "evict.h"
#include "pause.h"
#include "reply.h"
#include "server.h"
#include "sha1.h"
#include "util.h"
#include "zmalloc.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <lua-bitop.h>
#include <lua-cjson.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CHUNK_NAME "@user_script"
#define FUNC_CHUNK_NAME "@user_function"
#define LOAD_TIMEOUT_MS 500         /* a library's code must register its functions within this */
#define RAND48_MAX 0x7fffffff
#define HOOK_INSTRUCTIONS 100000
#define GC_EVERY_RUNS 50            /* an incremental GC step after this many runs, as Redis does */
#define ERR_KILLED "ERR Script killed by user with SCRIPT KILL..."

static struct script_state {
    lua_State *L;
    lua_State *FL;              /* functions (FUNCTION LOAD), apart from EVAL's scripts as in Redis */
    script_fn_list *loading;    /* the library being loaded: where register_function adds */
    const char *chunk;          /* CHUNK_NAME or FUNC_CHUNK_NAME of what runs */
    client *fake;               /* the client redis.call runs commands on */
    client *caller;             /* whose script runs, NULL between runs */
    const char *sha;
    int ro;                     /* EVAL_RO: writes are refused */
    int allow_oom;              /* the function's allow-oom flag: denyoom commands run past maxmemory */
    int cross_slot;             /* cluster mode: its calls may use keys of several (local) slots */
    int slot;                   /* cluster mode: the slot its keys use so far, -1 none yet */
    int resp;                   /* redis.setresp */
    int wrote;                  /* it ran a write command: SCRIPT KILL cannot stop it */
    int kill;                   /* SCRIPT KILL (or SHUTDOWN NOSAVE) asked it to stop */
    int64_t start_ms;
    long long busy_ms;          /* busy-reply-threshold in force when it started */
    uint64_t rand48;
    uint64_t runs;
} ss = {.rand48 = 0x1234abcd330eULL}; /* rand48's state before any seeding */

int script_engine_available(void) { return 1; }

/* ---- math.random as Redis draws it ------------------------------------- */

static void rand48_seed(int32_t seed) { ss.rand48 = ((uint64_t)(uint32_t)seed << 16) | 0x330e; }

static int32_t rand48_next(void) {
    ss.rand48 = (ss.rand48 * 0x5deece66dULL + 0xb) & ((1ULL << 48) - 1);
    return (int32_t)(ss.rand48 >> 17);
}

static int l_math_random(lua_State *L) {
    lua_Number r = (lua_Number)(rand48_next() % RAND48_MAX) / (lua_Number)RAND48_MAX;
    switch (lua_gettop(L)) {
    case 0: lua_pushnumber(L, r); return 1;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        return 1;
    }
    case 2: {
        int l = luaL_checkint(L, 1), u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (u - l + 1)) + l);
        return 1;
    }
    default: return luaL_error(L, "wrong number of arguments");
    }
}

static int l_math_randomseed(lua_State *L) {
    rand48_seed((int32_t)luaL_checkint(L, 1));
    return 0;
}

/* ---- redis.call / redis.pcall -------------------------------------------- */

/* Raise {err = msg} (msg "CODE text"). */
static int raise_err(lua_State *L, const char *msg) {
    lua_newtable(L);
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "err");
    return lua_error(L);
}

/* A command's error reply for pcall, or raised for call. */
static int call_error(lua_State *L, int raise, const char *msg) {
    if (raise) return raise_err(L, msg);
    lua_newtable(L);
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "err");
    return 1;
}

/* Marks the error table on top: already counted in the error stats (by the
 * command that replied it, or as a refused call), so the script's own error
 * reply passing it on is not counted again (Redis's field of the same name). */
static void mark_counted(lua_State *L) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, CONV_ERR_COUNTED);
}

/* redis.call refused before the command ran: counted once here, as Redis
 * counts a rejected command (its rejected_calls, the error stats). */
static int refused_call(lua_State *L, int raise, command *cmd, const char *why) {
    if (cmd) cmd->rejected_calls++;
    reply_count_error(why);
    command_errors_claimed(1);
    lua_newtable(L);
    lua_pushstring(L, why);
    lua_setfield(L, -2, "err");
    mark_counted(L);
    return raise ? lua_error(L) : 1;
}

/* The arguments on the stack as the fake client's argv (numbers become
 * their %.17g text in place, as Redis formats them). NULL on a bad type. */
static const char *set_argv(lua_State *L, client *f, int argc) {
    if ((size_t)argc > f->argv_cap) {
        f->argv = zrealloc(f->argv, sizeof(span) * (size_t)argc);
        f->argv_cap = (size_t)argc;
    }
    for (int i = 1; i <= argc; i++) {
        int t = lua_type(L, i);
        if (t == LUA_TNUMBER) {
            char buf[64];
            snprintf(buf, sizeof buf, "%.17g", (double)lua_tonumber(L, i));
            lua_pushstring(L, buf);
            lua_replace(L, i);
        } else if (t != LUA_TSTRING) {
            return "ERR Lua redis lib command arguments must be strings or integers";
        }
        size_t len;
        const char *s = lua_tolstring(L, i, &len);
        f->argv[i - 1] = (span){s, len};
    }
    f->argc = argc;
    return NULL;
}

/* Why cmd may not run from this script, or NULL. */
static const char *refusal(client *f, command *cmd) {
    if (!cmd) return "ERR Unknown Redis command called from script";
    if (!command_arity_ok(cmd, f->argc)) return "ERR Wrong number of args calling Redis command from script";
    if ((cmd->flags & CMD_NOSCRIPT) && !srv.script_disable_deny) return "ERR This Redis command is not allowed from script";
    if (ss.caller && (ss.caller->flags & CF_ACL_CHECK)) {
        const char *denied = acl_script_refusal(ss.caller, cmd, f->argv, f->argc);
        if (denied) return denied;
    }
    /* may-replicate counts as a write (PUBLISH...), so read-only scripts run during CLIENT PAUSE WRITE */
    if (ss.ro && ((cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) || pause_may_replicate(cmd))) return "ERR Write commands are not allowed from read-only scripts.";
    if (srv.cfg.maxmemory && !ss.allow_oom && (cmd->flags & CMD_DENYOOM) && evict_refuses_command(f, cmd))
        return "OOM command not allowed when used memory > 'maxmemory'.";
    /* READONLY on a replica, NOREPLICAS: a write, unless the script came from our primary */
    if (srv.repl_checks && (cmd->flags & CMD_WRITE) && ss.caller && !(ss.caller->flags & CF_OBEY) && command_repl_refusal)
        return command_repl_refusal(ss.caller, cmd);
    /* cluster mode: every key the script touches must be served here */
    if (cluster && ss.caller && !(ss.caller->flags & CF_OBEY))
        return cluster_script_refusal(f, cmd, ss.caller->cluster_flags, ss.cross_slot, &ss.slot);
    return NULL;
}

/* The reply the fake client staged, pushed as a Lua value: read in place
 * when the ring holds it in one piece (unless it wrapped), else from a
 * copy. Returns 1 if it is an error reply. */
static int push_staged_reply(lua_State *L, client *f) {
    struct iovec iov[2];
    int n = ring_iov(&f->out, iov);
    size_t first = n ? iov[0].iov_len : 0, total = first + (n > 1 ? iov[1].iov_len : 0);
    if (total == 0) {
        lua_pushnil(L);
        return 0;
    }
    const char *p = iov[0].iov_base;
    char *copy = NULL;
    if (n > 1) {
        copy = zmalloc(total);
        memcpy(copy, iov[0].iov_base, first);
        memcpy(copy + first, iov[1].iov_base, iov[1].iov_len);
        p = copy;
    }
    int is_err = p[0] == '-';
    conv_push_reply(L, p, p + total, 0);
    zfree(copy);
    ring_consume(&f->out, total);
    return is_err;
}

static int redis_call(lua_State *L, int raise) {
    int argc = lua_gettop(L);
    if (argc == 0) return call_error(L, raise, "ERR Please specify at least one argument for this redis lib call");
    client *f = ss.fake;
    const char *why = set_argv(L, f, argc);
    if (why) return call_error(L, raise, why);
    command *cmd = command_lookup(f->argv, f->argc);
    why = refusal(f, cmd);
    if (why) return refused_call(L, raise, cmd, why);
    f->resp = ss.resp;
    if (cmd->flags & CMD_WRITE) ss.wrote = 1;
    command_call(f, cmd);
    lua_settop(L, 0);
    if (push_staged_reply(L, f)) { /* the {err = ...} table just pushed */
        mark_counted(L);
        if (raise) return lua_error(L);
    }
    return 1;
}

static int l_call(lua_State *L) { return redis_call(L, 1); }
static int l_pcall(lua_State *L) { return redis_call(L, 0); }

/* redis.acl_check_cmd(name, args...): whether the caller's ACL user may run
 * it (nothing is logged). */
static int l_acl_check_cmd(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc == 0) return raise_err(L, "ERR Please specify at least one argument for this redis lib call");
    client *f = ss.fake;
    const char *why = set_argv(L, f, argc);
    if (why) return raise_err(L, why);
    command *cmd = command_lookup(f->argv, f->argc);
    if (!cmd) return raise_err(L, "ERR Invalid command passed to redis.acl_check_cmd()");
    int pos;
    lua_pushboolean(L, !ss.caller || acl_check_cmd(acl_client_user(ss.caller), cmd, f->argv, f->argc, &pos) == ACL_OK);
    return 1;
}

/* ---- the rest of the redis table ------------------------------------------ */

/* redis.error_reply / status_reply: {err = s} / {ok = s}. For errors, as
 * Redis 7.0: one leading "-" is dropped, and a text without a space (no
 * error code: "x", "") gets the generic code: "ERR x". */
static int bad_reply_args(lua_State *L) {
    conv_push_field(L, "err", "ERR wrong number or type of arguments", 37);
    return 1;
}

static int l_error_reply(lua_State *L) {
    size_t n;
    if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) return bad_reply_args(L);
    const char *s = lua_tolstring(L, 1, &n);
    if (n && s[0] == '-') s++, n--;
    if (memchr(s, ' ', n)) {
        conv_push_field(L, "err", s, n);
        return 1;
    }
    lua_pushlstring(L, "ERR ", 4);
    lua_pushlstring(L, s, n);
    lua_concat(L, 2);
    const char *coded = lua_tolstring(L, -1, &n);
    conv_push_field(L, "err", coded, n);
    lua_remove(L, -2);
    return 1;
}

static int l_status_reply(lua_State *L) {
    size_t n;
    if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) return bad_reply_args(L);
    const char *s = lua_tolstring(L, 1, &n);
    conv_push_field(L, "ok", s, n);
    return 1;
}

static int l_sha1hex(lua_State *L) {
    if (lua_gettop(L) != 1) return raise_err(L, "ERR wrong number of arguments");
    size_t n;
    const char *s = lua_tolstring(L, 1, &n);
    char hex[SHA1_HEX_LEN + 1];
    sha1_hex(s ? s : "", s ? n : 0, hex);
    lua_pushstring(L, hex);
    return 1;
}

static int l_log(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc < 2) return raise_err(L, "ERR redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1)) return raise_err(L, "ERR First argument must be a number (log level).");
    int level = (int)lua_tonumber(L, 1);
    if (level < LOG_DEBUG_ || level > LOG_WARNING_) return raise_err(L, "ERR Invalid debug level.");
    char msg[1024];
    size_t off = 0;
    for (int i = 2; i <= argc && off < sizeof msg - 1; i++) {
        size_t n;
        const char *s = lua_tolstring(L, i, &n);
        if (!s) continue;
        int w = snprintf(msg + off, sizeof msg - off, "%s%.*s", i > 2 ? " " : "", (int)n, s);
        if (w > 0) off += (size_t)w;
    }
    if (off >= sizeof msg) off = sizeof msg - 1;
    msg[off] = '\0';
    server_log(level, "%s", msg);
    return 0;
}

static int l_setresp(lua_State *L) {
    if (lua_gettop(L) != 1) return raise_err(L, "ERR redis.setresp() requires one argument.");
    int v = (int)lua_tonumber(L, 1);
    if (v != 2 && v != 3) return raise_err(L, "ERR RESP version must be 2 or 3.");
    ss.resp = v;
    return 0;
}

static int l_noop(lua_State *L) {
    (void)L;
    return 0;
}

static int l_true(lua_State *L) {
    lua_pushboolean(L, 1);
    return 1;
}

static void set_int(lua_State *L, const char *name, int v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
}

static void open_redis_table(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"call", l_call}, {"pcall", l_pcall}, {"error_reply", l_error_reply}, {"status_reply", l_status_reply},
        {"sha1hex", l_sha1hex}, {"log", l_log}, {"setresp", l_setresp}, {"set_repl", l_noop},
        {"replicate_commands", l_true}, {"breakpoint", l_noop}, {"acl_check_cmd", l_acl_check_cmd}, {"debug", l_noop}, {NULL, NULL},
    };
    lua_newtable(L);
    for (const luaL_Reg *r = fns; r->name; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, -2, r->name);
    }
    set_int(L, "LOG_DEBUG", LOG_DEBUG_);
    set_int(L, "LOG_VERBOSE", LOG_VERBOSE_);
    set_int(L, "LOG_NOTICE", LOG_NOTICE_);
    set_int(L, "LOG_WARNING", LOG_WARNING_);
    set_int(L, "REPL_NONE", 0);
    set_int(L, "REPL_AOF", 1);
    set_int(L, "REPL_SLAVE", 2);
    set_int(L, "REPL_REPLICA", 2);
    set_int(L, "REPL_ALL", 3);
    lua_pushstring(L, FERRY_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    int maj = 0, min = 0, pat = 0;
    sscanf(FERRY_VERSION, "%d.%d.%d", &maj, &min, &pat);
    set_int(L, "REDIS_VERSION_NUM", (maj << 16) | (min << 8) | pat);
    lua_setglobal(L, "redis");
}

/* ---- the state: libraries, sandbox, read-only globals ------------------------ */

/* Open a library; one that only returns its table (cjson) is made the
 * global `name` too. */
static void open_lib(lua_State *L, const char *name, lua_CFunction fn) {
    lua_pushcfunction(L, fn);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (*name && lua_istable(L, -1)) {
        lua_getglobal(L, name);
        int missing = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (missing) {
            lua_pushvalue(L, -1);
            lua_setglobal(L, name);
        }
    }
    lua_pop(L, 1);
}

static lua_State *new_state(void) {
    lua_State *L = luaL_newstate();
    if (!L) return NULL;
    open_lib(L, "", luaopen_base);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, LUA_DBLIBNAME, luaopen_debug);
    open_lib(L, "cjson", luaopen_cjson);
    open_lib(L, "bit", luaopen_bit);
    open_lib(L, "cmsgpack", script_open_cmsgpack);
    open_lib(L, "struct", script_open_struct);
    lua_getglobal(L, "math");
    lua_pushcfunction(L, l_math_random);
    lua_setfield(L, -2, "random");
    lua_pushcfunction(L, l_math_randomseed);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
    open_redis_table(L);
    if (sandbox_apply(L) != 0) {
        lua_close(L);
        return NULL;
    }
    return L;
}

static int ensure_state(void) {
    if (ss.L) return 0;
    ss.L = new_state();
    if (!ss.L) return -1;
    if (!ss.fake) {
        ss.fake = client_create(-1);
        ss.fake->flags |= CF_SCRIPT | CF_AUTHENTICATED;
    }
    ss.resp = 2;
    return 0;
}

void script_engine_reset(void) {
    if (ss.L) lua_close(ss.L);
    ss.L = NULL;
}

size_t script_engine_memory(void) {
    if (ensure_state() != 0) return 0;
    return (size_t)lua_gc(ss.L, LUA_GCCOUNT, 0) * 1024 + (size_t)lua_gc(ss.L, LUA_GCCOUNTB, 0);
}

/* ---- busy scripts ------------------------------------------------------------- */

static void busy_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    int64_t now = ev_mono_us() / 1000;
    if (!srv.script_busy && now - ss.start_ms >= ss.busy_ms) {
        server_log(LOG_WARNING_, "Slow script detected: still in execution after %lld milliseconds. You can try "
                   "killing the script using the SCRIPT KILL command. Script name is: %s.",
                   (long long)(now - ss.start_ms), ss.sha);
        srv.script_busy = strcmp(ss.chunk, FUNC_CHUNK_NAME) == 0 ? SCRIPT_BUSY_FUNCTION : SCRIPT_BUSY_EVAL;
    }
    if (srv.script_busy && srv.el) clients_events_while_busy();
    else if (srv.script_busy) ss.kill = 1; /* no event loop (fuzzing, tests): nobody could send SCRIPT KILL */
    if (srv.shutdown_asap) ss.kill = 1;
    if (!ss.kill) return;
    lua_sethook(L, busy_hook, LUA_MASKLINE, 0); /* raised again at every line: pcall cannot swallow it */
    server_log(LOG_WARNING_, "Lua script killed by user with SCRIPT KILL.");
    raise_err(L, ERR_KILLED);
}

int script_kill(int function) {
    if (!srv.script_busy || !ss.caller) return -1;
    if ((srv.script_busy == SCRIPT_BUSY_FUNCTION) != (function != 0)) return -3;
    if (ss.wrote) return -2;
    ss.kill = 1;
    return 0;
}

/* ---- define and run -------------------------------------------------------- */

/* The registry name of script sha: "f_" and the 40 hex digits. */
static void fn_name(char buf[SHA1_HEX_LEN + 3], const char *sha) {
    buf[0] = 'f';
    buf[1] = '_';
    memcpy(buf + 2, sha, SHA1_HEX_LEN);
    buf[SHA1_HEX_LEN + 2] = '\0';
}

int script_define(const char *sha, const char *body, size_t len, char *err, size_t errlen) {
    if (ensure_state() != 0) {
        snprintf(err, errlen, "ERR Failed to create the Lua state");
        return -1;
    }
    lua_State *L = ss.L;
    size_t skip = 0;
    if (len >= 2 && body[0] == '#' && body[1] == '!') { /* the shebang line counts, empty */
        const char *nl = memchr(body, '\n', len);
        skip = nl ? (size_t)(nl - body) : len;
    }
    if (luaL_loadbuffer(L, body + skip, len - skip, CHUNK_NAME)) {
        snprintf(err, errlen, "ERR Error compiling script (new function): %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, SANDBOX_ENV);
    lua_setfenv(L, -2);
    char name[SHA1_HEX_LEN + 3];
    fn_name(name, sha);
    lua_setfield(L, LUA_REGISTRYINDEX, name);
    return 0;
}

static void push_array(lua_State *L, const span *v, int n) {
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, v[i].p, v[i].len);
        lua_rawseti(L, -2, i + 1);
    }
}

static void set_array_global(lua_State *L, const char *name, const span *v, int n) {
    push_array(L, v, n);
    lua_setglobal(L, name);
}

/* Message handler: the error as {err = "CODE text", line = N} with the line
 * of the innermost frame of the script itself. */
static int error_handler(lua_State *L) {
    lua_Debug ar;
    int line = -1;
    for (int lvl = 1; lua_getstack(L, lvl, &ar); lvl++) {
        lua_getinfo(L, "Sl", &ar);
        if (ar.currentline >= 0 && (strcmp(ar.source, CHUNK_NAME) == 0 || strcmp(ar.source, FUNC_CHUNK_NAME) == 0)) {
            line = ar.currentline;
            break;
        }
    }
    lua_newtable(L);
    if (lua_istable(L, 1)) {
        conv_raw_field(L, 1, CONV_ERR_COUNTED);
        lua_setfield(L, -2, CONV_ERR_COUNTED);
        conv_raw_field(L, 1, "err");
    } else {
        lua_pushfstring(L, "ERR %s", lua_tostring(L, 1) ? lua_tostring(L, 1) : "unknown error");
    }
    lua_setfield(L, -2, "err");
    lua_pushnumber(L, line);
    lua_setfield(L, -2, "line");
    return 1;
}

/* The reply for an error that ended the script (the handler's table on top). */
static void reply_script_error(client *c, lua_State *L) {
    lua_getfield(L, -1, "err");
    lua_getfield(L, -2, "line");
    lua_getfield(L, -3, CONV_ERR_COUNTED);
    const char *msg = lua_tostring(L, -3);
    int line = (int)lua_tonumber(L, -2), counted = lua_toboolean(L, -1);
    char lbuf[16];
    snprintf(lbuf, sizeof lbuf, "%d", line);
    lua_pushfstring(L, "%s script: %s, on %s:%s.", msg ? msg : "ERR unknown error", ss.sha, ss.chunk,
                    line >= 0 ? lbuf : "?");
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    if (counted) conv_reply_counted_error(c, text, len);
    else reply_error(c, text);
    lua_pop(L, 4);
}

/* Run the function at the top of L's stack (the error handler at index 1,
 * its nargs arguments above it) for c; name is what errors call it. */
static void run_on(client *c, lua_State *L, int nargs, const char *name, const char *chunk, unsigned flags,
                   const span *keys, int nkeys) {
    ss.caller = c;
    ss.allow_oom = (flags & SCRIPT_FLAG_ALLOW_OOM) != 0;
    ss.cross_slot = (flags & SCRIPT_FLAG_ALLOW_CROSS_SLOT) != 0;
    ss.slot = srv.cluster_mode && nkeys > 0 ? (int)key_hash_slot(keys[0].p, keys[0].len) : -1;
    ss.sha = name;
    ss.chunk = chunk;
    ss.ro = (flags & SCRIPT_FLAG_NO_WRITES) != 0;
    ss.resp = 2;
    ss.wrote = ss.kill = 0;
    ss.start_ms = ev_mono_us() / 1000;
    ss.busy_ms = srv.cfg.busy_reply_threshold;
    lua_sethook(L, busy_hook, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
    c->flags |= CF_SCRIPT_CALLER;
    ss.fake->db = c->db;
    ss.fake->flags |= CF_PENDING_WRITE; /* its replies are read back, never sent */
    int rc = lua_pcall(L, nargs, 1, 1);
    ss.fake->flags &= ~CF_PENDING_WRITE;
    if (rc == 0) conv_reply_value(c, L, -1, ss.resp);
    else if (lua_istable(L, -1)) reply_script_error(c, L);
    else reply_error(c, "ERR out of memory running the script");
    c->flags &= ~CF_SCRIPT_CALLER;
    ss.caller = NULL;
    if (srv.script_busy) {
        srv.script_busy = 0;
        server_log(LOG_WARNING_, "Script %s ended after %lld milliseconds.", name,
                   (long long)(ev_mono_us() / 1000 - ss.start_ms));
    }
    lua_sethook(L, NULL, 0, 0);
    lua_settop(L, 0);
    if (++ss.runs % GC_EVERY_RUNS == 0) lua_gc(L, LUA_GCSTEP, 1);
}

void script_run(client *c, const char *sha, const span *keys, int nkeys, const span *args, int nargs, unsigned flags) {
    if (ensure_state() != 0) {
        reply_error(c, "ERR Failed to create the Lua state");
        return;
    }
    lua_State *L = ss.L;
    lua_settop(L, 0);
    set_array_global(L, "KEYS", keys, nkeys);
    set_array_global(L, "ARGV", args, nargs);
    lua_pushcfunction(L, error_handler);
    char name[SHA1_HEX_LEN + 3];
    fn_name(name, sha);
    lua_getfield(L, LUA_REGISTRYINDEX, name);
    run_on(c, L, 0, sha, CHUNK_NAME, flags, keys, nkeys);
}

/* ---- functions: libraries in a Lua state of their own ------------------------
 *
 * A library's code runs once, at FUNCTION LOAD, in an environment where
 * the only global is `redis`, the load-time API (register_function, log, the
 * LOG_ constants, REDIS_VERSION): anything else raises the nonexistent-
 * global error, as in Redis, and register_function refuses to run later. The functions it registers keep that environment; when they run
 * later, `redis` resolves to the full API. The code must finish within
 * LOAD_TIMEOUT_MS. */


/* 0, -1 for an unknown flag, -2 if flags is not a table. */
static int parse_flags(lua_State *L, int idx, unsigned *flags) {
    *flags = 0;
    if (lua_isnil(L, idx)) return 0;
    if (!lua_istable(L, idx)) return -2;
    for (int j = 1;; j++) {
        lua_rawgeti(L, idx, j);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            return 0;
        }
        size_t fl = 0;
        const char *f = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &fl) : NULL;
        int bit = f ? script_flag_bit(f, fl) : 0;
        lua_pop(L, 1);
        if (!bit) return -1;
        *flags |= (unsigned)bit;
    }
}

/* Add the function (name at -3... see callers) to the library being loaded. */
static int add_function(lua_State *L, int name_idx, int fn_idx, unsigned flags, int desc_idx) {
    size_t n;
    const char *name = lua_tolstring(L, name_idx, &n);
    if (!script_valid_name(name, n))
        return raise_err(L, "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
                            "least one character long");
    script_fn_list *out = ss.loading;
    for (int i = 0; i < out->n; i++)
        if (strcasecmp(out->v[i].name, name) == 0) return raise_err(L, "ERR Function already exists in the library");
    if (out->n == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 4;
        out->v = zrealloc(out->v, sizeof *out->v * (size_t)out->cap);
    }
    script_fn *f = &out->v[out->n++];
    f->name = zstrdup(name);
    f->desc = desc_idx && lua_type(L, desc_idx) == LUA_TSTRING ? zstrdup(lua_tostring(L, desc_idx)) : NULL;
    f->flags = flags;
    lua_pushvalue(L, fn_idx);
    f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

static int l_register_function(lua_State *L) {
    int argc = lua_gettop(L);
    if (!ss.loading) return raise_err(L, "ERR redis.register_function can only be called on FUNCTION LOAD command");
    if (argc == 1 && !lua_istable(L, 1))
        return raise_err(L, "ERR calling redis.register_function with a single argument is only applicable to Lua "
                            "table (representing named arguments).");
    if (argc == 2) {
        if (lua_type(L, 1) != LUA_TSTRING) return raise_err(L, "ERR first argument to redis.register_function must be a string");
        if (lua_type(L, 2) != LUA_TFUNCTION)
            return raise_err(L, "ERR second argument to redis.register_function must be a function");
        return add_function(L, 1, 2, 0, 0);
    }
    if (argc != 1 || !lua_istable(L, 1)) return raise_err(L, "ERR wrong number of arguments to redis.register_function");
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
        int t = lua_type(L, -1);
        lua_pop(L, 1);
        if (strcmp(k, "function_name") == 0) {
            if (t != LUA_TSTRING)
                return raise_err(L, "ERR function_name argument given to redis.register_function must be a string");
        } else if (strcmp(k, "callback") == 0) {
            if (t != LUA_TFUNCTION)
                return raise_err(L, "ERR callback argument given to redis.register_function must be a function");
        } else if (strcmp(k, "description") == 0) {
            if (t != LUA_TSTRING)
                return raise_err(L, "ERR description argument given to redis.register_function must be a string");
        } else if (strcmp(k, "flags") != 0) {
            return raise_err(L, "ERR unknown argument given to redis.register_function");
        }
    }
    lua_getfield(L, 1, "function_name"); /* 2 */
    lua_getfield(L, 1, "callback");      /* 3 */
    lua_getfield(L, 1, "flags");         /* 4 */
    lua_getfield(L, 1, "description");   /* 5 */
    if (lua_type(L, 2) != LUA_TSTRING) return raise_err(L, "ERR redis.register_function must get a function name argument");
    if (lua_type(L, 3) != LUA_TFUNCTION) return raise_err(L, "ERR redis.register_function must get a callback argument");
    unsigned flags;
    int frc = parse_flags(L, 4, &flags);
    if (frc == -2)
        return raise_err(L, "ERR flags argument to redis.register_function must be a table representing function "
                            "flags");
    if (frc != 0) return raise_err(L, "ERR unknown flag given");
    return add_function(L, 2, 3, flags, 5);
}

/* __index of a library's environment: `redis` is the load-time API while
 * the code loads, the full one afterwards. */
static int lib_env_index(lua_State *L) {
    if (!ss.loading) return sandbox_env_index(L);
    const char *k = lua_tostring(L, 2);
    if (k && strcmp(k, "redis") == 0) { /* while loading, nothing but the load-time API */
        lua_getfield(L, LUA_REGISTRYINDEX, "ferry_load_redis");
        return 1;
    }
    return luaL_error(L, SANDBOX_NO_GLOBAL, k ? k : "?");
}

/* The proxy of the load-time redis table. */
static int load_redis_index(lua_State *L) {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1)) return 1;
    return luaL_error(L, SANDBOX_NO_GLOBAL, lua_tostring(L, 2));
}

static void make_function_envs(lua_State *L) {
    lua_newtable(L); /* the load-time API */
    lua_pushcfunction(L, l_register_function);
    lua_setfield(L, -2, "register_function");
    lua_getglobal(L, "redis");
    static const char *const shared[] = {"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
                                         "REDIS_VERSION", "REDIS_VERSION_NUM", NULL};
    for (int i = 0; shared[i]; i++) {
        lua_getfield(L, -1, shared[i]);
        lua_setfield(L, -3, shared[i]);
    }
    lua_pop(L, 1);
    lua_pushcclosure(L, load_redis_index, 1); /* its proxy */
    sandbox_make_proxy(L, 0);
    lua_setfield(L, LUA_REGISTRYINDEX, "ferry_load_redis");
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_pushcfunction(L, lib_env_index); /* the libraries' environment */
    sandbox_make_proxy(L, lua_gettop(L) - 1);
    lua_remove(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, "ferry_lib_env");
}

static int ensure_functions_state(void) {
    if (ensure_state() != 0) return -1;
    if (ss.FL) return 0;
    ss.FL = new_state();
    if (!ss.FL) return -1;
    make_function_envs(ss.FL);
    return 0;
}

static void load_timeout_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    if (ev_mono_us() / 1000 - ss.start_ms < LOAD_TIMEOUT_MS) return;
    lua_sethook(L, load_timeout_hook, LUA_MASKLINE, 0);
    raise_err(L, "ERR FUNCTION LOAD timeout");
}

void script_fn_release(script_fn *f) {
    if (ss.FL && f->ref != LUA_NOREF) luaL_unref(ss.FL, LUA_REGISTRYINDEX, f->ref);
    zfree(f->name);
    zfree(f->desc);
    f->name = f->desc = NULL;
    f->ref = LUA_NOREF;
}

int script_lib_load(const char *code, size_t len, script_fn_list *out, char *err, size_t errlen) {
    if (ensure_functions_state() != 0) {
        snprintf(err, errlen, "ERR Failed to create the Lua state");
        return -1;
    }
    lua_State *L = ss.FL;
    lua_settop(L, 0);
    const char *nl = memchr(code, '\n', len);
    size_t skip = nl ? (size_t)(nl - code) : len; /* the metadata line is compiled as an empty one */
    lua_pushcfunction(L, error_handler);
    if (luaL_loadbuffer(L, code + skip, len - skip, FUNC_CHUNK_NAME)) {
        snprintf(err, errlen, "ERR Error compiling function: %s", lua_tostring(L, -1));
        lua_settop(L, 0);
        return -1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "ferry_lib_env");
    lua_setfenv(L, -2);
    ss.loading = out;
    ss.start_ms = ev_mono_us() / 1000;
    lua_sethook(L, load_timeout_hook, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
    int rc = lua_pcall(L, 0, 0, 1);
    lua_sethook(L, NULL, 0, 0);
    ss.loading = NULL;
    if (rc != 0) {
        const char *msg = "unknown error";
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
        }
        snprintf(err, errlen, "ERR Error registering functions: %s", msg);
    } else if (out->n == 0) {
        snprintf(err, errlen, "ERR No functions registered");
        rc = -1;
    }
    lua_settop(L, 0);
    if (rc != 0) {
        for (int i = 0; i < out->n; i++) script_fn_release(&out->v[i]);
        out->n = 0;
        return -1;
    }
    return 0;
}


void script_fcall(client *c, const script_fn *f, const span *keys, int nkeys, const span *args, int nargs) {
    if (ensure_functions_state() != 0) {
        reply_error(c, "ERR Failed to create the Lua state");
        return;
    }
    lua_State *L = ss.FL;
    lua_settop(L, 0);
    lua_pushcfunction(L, error_handler);
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
    push_array(L, keys, nkeys);
    push_array(L, args, nargs);
    run_on(c, L, 2, f->name, FUNC_CHUNK_NAME, f->flags, keys, nkeys);
}

int script_running(const char **name, const client **caller, long long *ms) {
    if (!ss.caller) return 0;
    *name = ss.sha;
    *caller = ss.caller;
    *ms = ev_mono_us() / 1000 - ss.start_ms;
    return 1;
}

size_t script_functions_memory(void) {
    if (ensure_functions_state() != 0) return 0;
    return (size_t)lua_gc(ss.FL, LUA_GCCOUNT, 0) * 1024 + (size_t)lua_gc(ss.FL, LUA_GCCOUNTB, 0);
}

void script_functions_reset(void) {
    if (ss.FL) lua_close(ss.FL);
    ss.FL = NULL;
}
