/* cmd_server.c - server administration commands: TIME LASTSAVE ROLE WAIT
 * SHUTDOWN SAVE BGSAVE BGREWRITEAOF, the MEMORY container and DEBUG; INFO
 * itself lives in info.c (it owns the statistics formatting).
 *
 * ferry has no persistence yet: SAVE, BGSAVE and BGREWRITEAOF reply an
 * explicit error instead of pretending, and SHUTDOWN SAVE (without FORCE)
 * fails the way Redis does when the final save fails. There are no
 * replicas, so WAIT answers 0 at once (it never blocks for its timeout).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "client.h"
#include "command.h"
#include "config.h"
#include "db.h"
#include "evict.h"
#include "dict.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

/* info.c */
#include "info.h"
void cmd_memory_stats(client *c);
void cmd_memory_doctor(client *c);
void info_change_replid(void);
/* db.c: DEBUG SET-ACTIVE-EXPIRE */
extern int g_active_expire_enabled;

#define ERR_NO_PERSISTENCE "ERR persistence is not supported by ferry yet"

/* ------------------------------------------------------ simple commands */

static void cmd_time(client *c) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    reply_array(c, 2);
    reply_bulk_ll(c, (long long)tv.tv_sec);
    reply_bulk_ll(c, (long long)tv.tv_usec);
}

static void cmd_lastsave(client *c) { reply_int(c, (long long)srv.lastsave); }

static void cmd_role(client *c) {
    reply_array(c, 3);
    reply_bulk_cstr(c, "master");
    reply_int(c, 0);
    reply_array(c, 0);
}

/* WAIT numreplicas timeout: no replicas, so 0 acknowledgements, at once. */
static void cmd_wait(client *c) {
    long long n, timeout;
    if (!str_to_ll(c->argv[1].p, c->argv[1].len, &n)) {
        reply_err_notint(c);
        return;
    }
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &timeout)) {
        reply_error(c, "ERR timeout is not an integer or out of range");
        return;
    }
    if (timeout < 0) {
        reply_error(c, "ERR timeout is negative");
        return;
    }
    reply_int(c, 0);
}

static void cmd_save(client *c) { reply_error(c, ERR_NO_PERSISTENCE); }

static void cmd_bgsave(client *c) {
    if (c->argc > 2 || (c->argc == 2 && !span_eq_nocase(c->argv[1], "schedule"))) {
        reply_err_syntax(c);
        return;
    }
    reply_error(c, ERR_NO_PERSISTENCE);
}

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. On success nothing is
 * replied: the main loop stops and every connection is closed. */
static void cmd_shutdown(client *c) {
    int nosave = 0, save = 0, now = 0, force = 0, abort_ = 0;
    for (int j = 1; j < c->argc; j++) {
        span a = c->argv[j];
        if (span_eq_nocase(a, "nosave")) nosave = 1;
        else if (span_eq_nocase(a, "save")) save = 1;
        else if (span_eq_nocase(a, "now")) now = 1;
        else if (span_eq_nocase(a, "force")) force = 1;
        else if (span_eq_nocase(a, "abort")) abort_ = 1;
        else {
            reply_err_syntax(c);
            return;
        }
    }
    if ((abort_ && (nosave || save || now || force)) || (nosave && save)) {
        reply_err_syntax(c);
        return;
    }
    if (abort_) {
        reply_error(c, "ERR No shutdown in progress.");
        return;
    }
    if (save && !force) {
        server_log(LOG_WARNING_, "Error trying to save the DB: persistence is not supported, can't exit.");
        reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    srv.shutdown_nosave = !save;
    srv.shutdown_asap = 1;
}

/* --------------------------------------------------------------- MEMORY */

static void memory_container(client *c) {
    char sub[129];
    reply_errorf(c, "ERR unknown subcommand '%s'. Try MEMORY HELP.", span_cstr(sub, sizeof sub, c->argv[1]));
}

/* MEMORY USAGE key [SAMPLES count]: the key's allocation (header, key,
 * value and, for aggregates, their structures). SAMPLES is accepted and
 * ignored: sizes are exact, not sampled. As in Redis the key is looked up
 * without the expiry check (an expired key not yet reclaimed is measured). */
static void memory_usage(client *c) {
    for (int j = 3; j < c->argc; j++) {
        long long samples;
        if (span_eq_nocase(c->argv[j], "samples") && j + 1 < c->argc) {
            if (!str_to_ll(c->argv[j + 1].p, c->argv[j + 1].len, &samples)) {
                reply_err_notint(c);
                return;
            }
            if (samples < 0) {
                reply_err_syntax(c);
                return;
            }
            j++;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    dnode *n = dict_find(&c->db->keys, c->argv[2].p, c->argv[2].len);   /* as Redis: no expiry check */
    if (!n) reply_null(c);
    else reply_int(c, (long long)db_node_memory(n));
}

static void memory_malloc_stats(client *c) {
    static const char msg[] = "Stats not supported for the current allocator";
    reply_verbatim(c, msg, sizeof msg - 1, "txt");
}

static void memory_purge(client *c) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    reply_ok(c);
}

static const char *const memory_help_lines[] = {
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
    NULL,
};

static void memory_help(client *c) { reply_help(c, memory_help_lines); }

/* ---------------------------------------------------------------- DEBUG */

static int debug_allowed(const client *c) {
    int mode = srv.cfg.enable_debug_command;
    if (mode == DEBUG_CMD_YES) return 1;
    if (mode != DEBUG_CMD_LOCAL) return 0;
    if (c->flags & CF_FAKE) return 1;
    const char *a = c->addr;
    return strncmp(a, "127.", 4) == 0 || strncmp(a, "::1:", 4) == 0 || strncmp(a, "[::1]", 5) == 0 ||
           a[0] == '/';
}

/* Length of the string as an RDB would serialize it (no compression):
 * small integers as 1+1/2/4 bytes, otherwise a length prefix and the bytes. */
static size_t rdb_string_len(const char *p, size_t len) {
    long long v;
    if (len <= 11 && str_to_ll(p, len, &v)) {
        if (v >= -128 && v <= 127) return 2;
        if (v >= -32768 && v <= 32767) return 3;
        if (v >= -2147483648LL && v <= 2147483647LL) return 5;
    }
    size_t prefix = len < 64 ? 1 : len < 16384 ? 2 : len <= 0xffffffffu ? 5 : 9;
    return prefix + len;
}

static int shared_int(const dnode *n) {
    long long v;
    return n->type == OBJ_STRING && n->enc == ENC_INT && !(n->flags & DN_NOSHARE) && srv.cfg.maxmemory == 0 &&
           str_to_ll(dn_val(n), dn_vlen(n), &v) && v >= 0 && v < 10000;
}

static void debug_object(client *c) {
    dnode *n = dict_find(&c->db->keys, c->argv[2].p, c->argv[2].len);   /* as Redis: no expiry check */
    if (!n) {
        reply_error(c, "ERR no such key");
        return;
    }
    size_t ser = n->type == OBJ_STRING ? rdb_string_len(dn_val(n), dn_vlen(n)) : db_node_memory(n);
    long long idle = (long long)evict_lru_idle(n);
    char line[256];
    snprintf(line, sizeof line, "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%lld",
             (void *)n, shared_int(n) ? INT_MAX : 1, obj_enc_name(n), ser, (unsigned)(n->lru & 0xffffff),
             idle < 0 ? 0 : idle);
    reply_status(c, line);
}

/* DEBUG SLEEP seconds: blocks the whole server (decimals allowed; a
 * non-number sleeps 0, as atof). */
static void debug_sleep(client *c) {
    char buf[64];
    double secs = strtod(span_cstr(buf, sizeof buf, c->argv[2]), NULL);
    if (secs > 0) {
        struct timespec ts;
        ts.tv_sec = (time_t)secs;
        ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
        while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
        }
    }
    reply_ok(c);
}

static void debug_set_active_expire(client *c) {
    char buf[32];
    g_active_expire_enabled = atoi(span_cstr(buf, sizeof buf, c->argv[2])) != 0;
    reply_ok(c);
}

/* DEBUG ERROR text: the text is replied as an error, verbatim (CR/LF made
 * spaces). As in Redis it is not counted in the error statistics. */
static void debug_error(client *c) {
    span s = c->argv[2];
    char *msg = zmalloc(s.len + 3);
    msg[0] = '-';
    for (size_t i = 0; i < s.len; i++) msg[i + 1] = (s.p[i] == '\r' || s.p[i] == '\n') ? ' ' : s.p[i];
    memcpy(msg + 1 + s.len, "\r\n", 2);
    reply_raw(c, msg, s.len + 3);
    zfree(msg);
}

static const char *const debug_help_lines[] = {
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "HELP",
    "    Prints this help.",
    NULL,
};

static void cmd_debug(client *c) {
    if (!debug_allowed(c)) {
        reply_error(c, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
                       "you can run it from a local connection, otherwise you need to set this option in the "
                       "configuration file, and then restart the server.");
        return;
    }
    span sub = c->argv[1];
    if (c->argc == 2 && span_eq_nocase(sub, "help")) reply_help(c, debug_help_lines);
    else if (c->argc == 3 && span_eq_nocase(sub, "sleep")) debug_sleep(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "set-active-expire")) debug_set_active_expire(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "object")) debug_object(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "error")) debug_error(c);
    else if (c->argc == 2 && span_eq_nocase(sub, "change-repl-id")) {
        info_change_replid();
        reply_ok(c);
    } else {
        char buf[129];
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP.",
                     span_cstr(buf, sizeof buf, sub));
    }
}

/* ---------------------------------------------------------------- tables */

#define CMD(n, pr, ar, fl, acl_, fk, lk, st, grp, sum, since_, cx, subs)                                          \
    {                                                                                                              \
        .name = n, .proc = pr, .arity = ar, .flags = fl, .acl = acl_, .first_key = fk, .last_key = lk,             \
        .key_step = st, .group = grp, .summary = sum, .since = since_, .complexity = cx, .subcmds = subs           \
    }
#define F_ADMIN (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define ALLOC_CX "Depends on how much memory is allocated, could be slow"

static command memory_subcommands[] = {
    CMD("doctor", cmd_memory_doctor, 2, 0, "slow", 0, 0, 0, "server", "Outputs memory problems report", "4.0.0",
        "O(1)", NULL),
    CMD("help", memory_help, 2, CMD_LOADING | CMD_STALE, "slow", 0, 0, 0, "server",
        "Show helpful text about the different subcommands", "4.0.0", "O(1)", NULL),
    CMD("malloc-stats", memory_malloc_stats, 2, 0, "slow", 0, 0, 0, "server", "Show allocator internal stats",
        "4.0.0", ALLOC_CX, NULL),
    CMD("purge", memory_purge, 2, 0, "slow", 0, 0, 0, "server", "Ask the allocator to release memory", "4.0.0",
        ALLOC_CX, NULL),
    CMD("stats", cmd_memory_stats, 2, 0, "slow", 0, 0, 0, "server", "Show memory usage details", "4.0.0", "O(1)",
        NULL),
    CMD("usage", memory_usage, -3, CMD_READONLY, "read slow", 2, 2, 1, "server", "Estimate the memory usage of a key",
        "4.0.0", "O(N) where N is the number of samples.", NULL),
    {0},
};

command server_commands[] = {
    CMD("bgrewriteaof", cmd_save, 1, CMD_ADMIN | CMD_NOSCRIPT, "admin slow dangerous", 0, 0, 0, "server",
        "Asynchronously rewrite the append-only file", "1.0.0", "O(1)", NULL),
    CMD("bgsave", cmd_bgsave, -1, CMD_ADMIN | CMD_NOSCRIPT, "admin slow dangerous", 0, 0, 0, "server",
        "Asynchronously save the dataset to disk", "1.0.0", "O(1)", NULL),
    CMD("debug", cmd_debug, -2, F_ADMIN, "admin slow dangerous", 0, 0, 0, "server",
        "A container for debugging commands", "1.0.0", "Depends on subcommand.", NULL),
    CMD("info", cmd_info, -1, CMD_LOADING | CMD_STALE, "slow dangerous", 0, 0, 0, "server",
        "Get information and statistics about the server", "1.0.0", "O(1)", NULL),
    CMD("lastsave", cmd_lastsave, 1, CMD_LOADING | CMD_STALE | CMD_FAST, "admin fast dangerous", 0, 0, 0, "server",
        "Get the UNIX time stamp of the last successful save to disk", "1.0.0", "O(1)", NULL),
    CMD("memory", memory_container, -2, 0, "slow", 0, 0, 0, "server", "A container for memory diagnostics commands",
        "4.0.0", "Depends on subcommand.", memory_subcommands),
    CMD("role", cmd_role, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST, "admin fast dangerous", 0, 0, 0,
        "server", "Return the role of the instance in the context of replication", "2.8.12", "O(1)", NULL),
    CMD("save", cmd_save, 1, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_MULTI, "admin slow dangerous", 0, 0, 0, "server",
        "Synchronously save the dataset to disk", "1.0.0",
        "O(N) where N is the total number of keys in all databases", NULL),
    CMD("shutdown", cmd_shutdown, -1, F_ADMIN | CMD_NO_MULTI | CMD_ALLOW_BUSY, "admin slow dangerous", 0, 0, 0,
        "server", "Synchronously save the dataset to disk and then shut down the server", "1.0.0",
        "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
        NULL),
    CMD("time", cmd_time, 1, CMD_LOADING | CMD_STALE | CMD_FAST, "fast", 0, 0, 0, "server",
        "Return the current server time", "2.6.0", "O(1)", NULL),
    CMD("wait", cmd_wait, 3, CMD_NOSCRIPT, "slow connection", 0, 0, 0, "generic",
        "Wait for the synchronous replication of all the write commands sent in the context of the current "
        "connection",
        "3.0.0", "O(1)", NULL),
    {0},
};
