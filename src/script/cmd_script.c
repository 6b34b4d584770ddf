/* cmd_script.c - EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (LOAD,
 * EXISTS, FLUSH, KILL, DEBUG, HELP), with Redis 7.0's replies; the engine
 * is script.h's.
 *
 * The script cache maps a body's SHA-1 (40 lowercase hex digits) to the
 * body: EVAL defines a script the first time its body is seen, SCRIPT LOAD
 * defines without running, EVALSHA runs a defined one or answers NOSCRIPT
 * (clients then send EVAL). SCRIPT FLUSH empties the cache and the engine.
 */
#include "command.h"
#include "dict.h"
#include "reply.h"
#include "evict.h"
#include "monitor.h"
#include "script.h"
#include "splitargs.h"
#include "server.h"
#include "sha1.h"
#include "util.h"
#include "zmalloc.h"
#include <stdio.h>
#include <string.h>

static dict cache;              /* sha -> body (a dnode: key sha, value body) */
static size_t cache_bytes;      /* bodies' bytes (used_memory_scripts_eval) */

#define ERR_NOLUA "ERR scripting is not available: this ferry-server was built without Lua (make LUA=no)"
#define ERR_NOSCRIPT "NOSCRIPT No matching script. Please use EVAL."

static dnode *cached(const char *sha) { return cache.table[0] ? dict_find(&cache, sha, SHA1_HEX_LEN) : NULL; }

/* A script body's "#!lua [flags=a,b]" first line (Redis 7): *flags gets
 * SCRIPT_FLAG_* and *shebang 1. 0, or -1 with the error text. Bodies
 * without one are the legacy kind: no flags. */
static int shebang_flags(span body, unsigned *flags, int *shebang, char *err, size_t errlen) {
    *flags = 0;
    *shebang = body.len >= 2 && body.p[0] == '#' && body.p[1] == '!';
    if (!*shebang) return 0;
    const char *nl = memchr(body.p, '\n', body.len);
    size_t end = nl ? (size_t)(nl - body.p) : body.len;
    char *line = zmalloc(end + 1);
    memcpy(line, body.p, end);
    splitargs_span tok[16];
    size_t at = 0;
    ssize_t n = splitargs(line, end, &at, 0, tok, 16);
    int rc = 0;
    if (n < 1 || at < end) {
        snprintf(err, errlen, "ERR Unexpected engine in script shebang: %.*s", (int)(end > 64 ? 64 : end), body.p);
        rc = -1;
    } else if (!(tok[0].len == 5 && memcmp(line + tok[0].off, "#!lua", 5) == 0)) {
        snprintf(err, errlen, "ERR Unexpected engine in script shebang: %.*s", (int)tok[0].len, line + tok[0].off);
        rc = -1;
    }
    for (ssize_t i = 1; rc == 0 && i < n; i++) {
        char *t = line + tok[i].off;
        size_t tl = tok[i].len;
        if (!(tl >= 6 && memcmp(t, "flags=", 6) == 0)) {
            snprintf(err, errlen, "ERR Unknown lua shebang option: %.*s", (int)tl, t);
            rc = -1;
            break;
        }
        for (size_t p = 6; p < tl && rc == 0;) {
            size_t q = p;
            while (q < tl && t[q] != ',') q++;
            int bit = script_flag_bit(t + p, q - p);
            if (!bit) {
                snprintf(err, errlen, "ERR Unexpected flag in script shebang: %.*s", (int)(q - p), t + p);
                rc = -1;
            }
            *flags |= (unsigned)bit;
            p = q + 1;
        }
    }
    zfree(line);
    return rc;
}

/* Define body under sha unless it is known; 0, or -1 after replying the error
 * (a bad shebang line too, as Redis checks it when the script is created). */
static int define(client *c, const char *sha, span body) {
    if (cached(sha)) return 0;
    char err[1024];
    unsigned flags;
    int shebang;
    if (shebang_flags(body, &flags, &shebang, err, sizeof err) != 0) {
        reply_error(c, err);
        return -1;
    }
    if (script_define(sha, body.p, body.len, err, sizeof err) != 0) {
        reply_error(c, script_engine_available() ? err : ERR_NOLUA);
        return -1;
    }
    dnode *n = dn_new(SHA1_HEX_LEN, (uint32_t)body.len, 0);
    memcpy(dn_key(n), sha, SHA1_HEX_LEN);
    memcpy(dn_val(n), body.p, body.len);
    dict_add(&cache, n);
    cache_bytes += body.len;
    return 0;
}

/* The sha argument of EVALSHA / SCRIPT EXISTS in lowercase, or 0 if it
 * cannot be one. */
static int sha_arg(span s, char out[SHA1_HEX_LEN + 1]) {
    if (s.len != SHA1_HEX_LEN) return 0;
    for (size_t i = 0; i < s.len; i++) out[i] = (s.p[i] >= 'A' && s.p[i] <= 'Z') ? (char)(s.p[i] + 32) : s.p[i];
    out[SHA1_HEX_LEN] = '\0';
    return 1;
}

static void eval_generic(client *c, int by_sha, int ro) {
    long long numkeys;
    monitor_feed(c); /* before its commands, whatever follows (EVAL is skip-monitor) */
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &numkeys)) {
        reply_err_notint(c);
        return;
    }
    if (numkeys > c->argc - 3) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    if (!script_engine_available()) {
        reply_error(c, ERR_NOLUA);
        return;
    }
    char sha[SHA1_HEX_LEN + 1];
    span body = c->argv[1];
    if (by_sha) {
        dnode *n = sha_arg(c->argv[1], sha) ? cached(sha) : NULL;
        if (!n) {
            reply_error(c, ERR_NOSCRIPT);
            return;
        }
        body = (span){dn_val(n), dn_vlen(n)};
    } else {
        sha1_hex(c->argv[1].p, c->argv[1].len, sha);
        if (define(c, sha, c->argv[1]) != 0) return;
    }
    unsigned flags;
    int shebang;
    char err[256];
    if (shebang_flags(body, &flags, &shebang, err, sizeof err) != 0) {
        reply_error(c, err);
        return;
    }
    if (shebang && (flags & SCRIPT_FLAG_NO_CLUSTER) && srv.cluster_mode) {
        reply_error(c, "ERR Can not run script on cluster, 'no-cluster' flag is set.");
        return;
    }
    if (shebang && ro && !(flags & SCRIPT_FLAG_NO_WRITES)) {
        reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    if (shebang && !(flags & (SCRIPT_FLAG_NO_WRITES | SCRIPT_FLAG_ALLOW_OOM)) && srv.cfg.maxmemory &&
        evict_perform() == EVICT_FAIL) {
        reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    int nk = (int)numkeys;
    if (!shebang) flags = SCRIPT_FLAG_ALLOW_CROSS_SLOT; /* Redis's compatibility mode */
    if (ro) flags |= SCRIPT_FLAG_NO_WRITES;
    script_run(c, sha, c->argv + 3, nk, c->argv + 3 + nk, c->argc - 3 - nk, flags);
}

/* Whether the script EVAL/EVALSHA/FCALL would run declares writes; for an
 * EVAL without a shebang (or an unknown script), `unflagged`. */
static int script_writes(const span *argv, int argc, int unflagged) {
    if (argc < 2) return unflagged;
    if (span_eq_nocase(argv[0], "fcall")) return function_may_write(argv[1]);
    span body = argv[1];
    if (span_eq_nocase(argv[0], "evalsha")) {
        char sha[SHA1_HEX_LEN + 1];
        dnode *n = sha_arg(argv[1], sha) ? cached(sha) : NULL;
        if (!n) return unflagged;
        body = (span){dn_val(n), dn_vlen(n)};
    }
    unsigned flags;
    int shebang;
    char err[256];
    if (shebang_flags(body, &flags, &shebang, err, sizeof err) != 0 || !shebang) return unflagged;
    return !(flags & SCRIPT_FLAG_NO_WRITES);
}

int script_declares_write(const span *argv, int argc) { return script_writes(argv, argc, 0); }

int script_cmd_may_write(const span *argv, int argc) { return script_writes(argv, argc, 1); }

static void cmd_eval(client *c) { eval_generic(c, 0, 0); }
static void cmd_evalsha(client *c) { eval_generic(c, 1, 0); }
static void cmd_eval_ro(client *c) { eval_generic(c, 0, 1); }
static void cmd_evalsha_ro(client *c) { eval_generic(c, 1, 1); }

/* ---- SCRIPT ------------------------------------------------------------------ */

static void script_load(client *c) {
    char sha[SHA1_HEX_LEN + 1];
    sha1_hex(c->argv[2].p, c->argv[2].len, sha);
    if (define(c, sha, c->argv[2]) == 0) reply_bulk(c, sha, SHA1_HEX_LEN);
}

static void script_exists(client *c) {
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        char sha[SHA1_HEX_LEN + 1];
        reply_int(c, sha_arg(c->argv[j], sha) && cached(sha) != NULL);
    }
}

static void free_body(dnode *n) { dn_free(n); }

static void script_flush(client *c) {
    if (c->argc == 3 && !span_eq_nocase(c->argv[2], "sync") && !span_eq_nocase(c->argv[2], "async")) {
        reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    if (c->argc > 3) {
        reply_err_syntax(c);
        return;
    }
    dict_clear(&cache, free_body);
    cache_bytes = 0;
    script_engine_reset();
    reply_ok(c);
}

static void cmd_script_kill(client *c) {
    int rc = script_kill(0);
    if (rc == 0) reply_ok(c);
    else if (rc == -1) reply_error(c, "NOTBUSY No scripts in execution right now.");
    else if (rc == -3) reply_error(c, script_busy_error());
    else reply_error(c, SCRIPT_ERR_UNKILLABLE);
}

static void script_debug(client *c) {
    if (span_eq_nocase(c->argv[2], "no")) reply_ok(c);
    else if (span_eq_nocase(c->argv[2], "yes") || span_eq_nocase(c->argv[2], "sync"))
        reply_error(c, "ERR ferry does not have the Lua debugger (SCRIPT DEBUG)");
    else reply_error(c, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
}

static const char *const script_help_lines[] = {
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
    NULL,
};

static void script_help(client *c) { reply_help(c, script_help_lines); }

size_t scripts_cached(void) { return dict_size(&cache); }
size_t scripts_cache_bytes(void) { return cache_bytes; }

#define SCRIPTING "slow scripting"
#define EVAL_FLAGS (CMD_NOSCRIPT | CMD_STALE | CMD_SKIP_MONITOR | CMD_NO_MANDATORY_KEYS | CMD_MOVABLE_KEYS)
#define EVAL_CX "Depends on the script that is executed."

static command script_subcommands[] = {
    CMD("debug", script_debug, 3, .flags = CMD_NOSCRIPT, .acl = SCRIPTING,
        .summary = "Set the debug mode for executed scripts.", .since = "3.2.0", .complexity = "O(1)"),
    CMD("exists", script_exists, -3, .flags = CMD_NOSCRIPT, .acl = SCRIPTING,
        .summary = "Check existence of scripts in the script cache.", .since = "2.6.0",
        .complexity = "O(N) with N being the number of scripts to check (so checking a single script is an O(1) "
                      "operation)."),
    CMD("flush", script_flush, -2, .flags = CMD_NOSCRIPT, .acl = SCRIPTING,
        .summary = "Remove all the scripts from the script cache.", .since = "2.6.0",
        .complexity = "O(N) with N being the number of scripts in cache"),
    CMD("help", script_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = SCRIPTING,
        .summary = "Show helpful text about the different subcommands", .since = "5.0.0", .complexity = "O(1)"),
    CMD("kill", cmd_script_kill, 2, .flags = CMD_NOSCRIPT | CMD_ALLOW_BUSY, .acl = SCRIPTING,
        .summary = "Kill the script currently in execution.", .since = "2.6.0", .complexity = "O(1)"),
    CMD("load", script_load, 3, .flags = CMD_NOSCRIPT | CMD_STALE, .acl = SCRIPTING,
        .summary = "Load the specified Lua script into the script cache.", .since = "2.6.0",
        .complexity = "O(N) with N being the length in bytes of the script body."),
    {0},
};

static command script_commands[] = {
    CMD("eval", cmd_eval, -3, .flags = EVAL_FLAGS, .props = PROP_NUMKEYS_AT_2 | PROP_NO_PROPAGATE, .acl = SCRIPTING, .summary = "Execute a Lua script server side",
        .since = "2.6.0", .complexity = EVAL_CX),
    CMD("evalsha", cmd_evalsha, -3, .flags = EVAL_FLAGS, .props = PROP_NUMKEYS_AT_2 | PROP_NO_PROPAGATE, .acl = SCRIPTING,
        .summary = "Execute a Lua script server side", .since = "2.6.0", .complexity = EVAL_CX),
    CMD("eval_ro", cmd_eval_ro, -3, .flags = EVAL_FLAGS | CMD_READONLY, .props = PROP_NUMKEYS_AT_2 | PROP_NO_PROPAGATE, .acl = SCRIPTING,
        .summary = "Execute a read-only Lua script server side", .since = "7.0.0", .complexity = EVAL_CX),
    CMD("evalsha_ro", cmd_evalsha_ro, -3, .flags = EVAL_FLAGS | CMD_READONLY, .props = PROP_NUMKEYS_AT_2 | PROP_NO_PROPAGATE,
        .acl = SCRIPTING,
        .summary = "Execute a read-only Lua script server side", .since = "7.0.0", .complexity = EVAL_CX),
    CMD("script", NULL, -2, .acl = "slow", .summary = "A container for Lua scripts management commands",
        .since = "2.6.0", .complexity = "Depends on subcommand.", .subcmds = script_subcommands),
    {0},
};
const command_group script_group = {"scripting", script_commands};
