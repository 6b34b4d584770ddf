/* cmd_server.c - server administration commands: TIME ROLE WAIT SHUTDOWN,
 * the MEMORY container and DEBUG; INFO itself lives in info.c (it owns the
 * statistics formatting).
 *
 * SAVE, BGSAVE and LASTSAVE are in cmd_persist.c, BGREWRITEAOF in aof.c;
 * SHUTDOWN saves through cmd_persist.c (and fails the way Redis does when
 * the final save fails). There are no replicas, so WAIT answers 0 at once
 * (it never blocks for its timeout).
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

#include "aof.h"
#include "client.h"
#include "command.h"
#include "config.h"
#include "db.h"
#include "evict.h"
#include "dict.h"
#include "monitor.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

#include "digest.h"
#include "info.h"
#include "persist.h"


/* ------------------------------------------------------ simple commands */

static void cmd_time(client *c) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    reply_array(c, 2);
    reply_bulk_ll(c, (long long)tv.tv_sec);
    reply_bulk_ll(c, (long long)tv.tv_usec);
}


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
    if (srv.script_busy && !nosave) {
        reply_error(c, script_busy_error());
        return;
    }
    if (persist_shutdown_save(save, nosave) != 0 && !force) {
        reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    srv.shutdown_nosave = 1; /* saved (or not wanted) already */
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
    db_set_active_expire(atoi(span_cstr(buf, sizeof buf, c->argv[2])) != 0);
    reply_ok(c);
}

/* DEBUG PAUSE-CRON 0|1 (Redis's test hook: no periodic work while paused). */
static void debug_pause_cron(client *c) {
    char buf[32];
    srv.cron_paused = atoi(span_cstr(buf, sizeof buf, c->argv[2])) != 0;
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
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num> (<prefix>:<num> if given), with",
    "    values value:<num>, padded with zero bytes or cut to <size> when given.",
    "RELOAD",
    "    Save the RDB on disk and reload it back to memory.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "HELP",
    "    Prints this help.",
    NULL,
};

/* DEBUG DIGEST: one fingerprint of the whole dataset (all zeros if empty). */
static void debug_digest(client *c) {
    unsigned char d[DIGEST_LEN];
    char hex[2 * DIGEST_LEN + 1];
    digest_dataset(d);
    digest_hex(d, hex);
    reply_status(c, hex);
}

/* DEBUG DIGEST-VALUE key ...: the fingerprint of each value (zeros for a
 * missing key). */
static void debug_digest_value(client *c) {
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        unsigned char d[DIGEST_LEN] = {0};
        char hex[2 * DIGEST_LEN + 1];
        dnode *n = db_lookup(c->db, c->argv[j].p, c->argv[j].len);
        if (n) digest_value(n, d);
        digest_hex(d, hex);
        reply_status(c, hex);
    }
}

/* DEBUG POPULATE count [prefix] [size]: string keys prefix:0..count-1 with
 * values "value:N" (cut or zero-padded to size when given); keys that exist
 * are left alone. Redis's tests fill servers with it. */
static void debug_populate(client *c) {
    long long count, size = 0;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &count) || count < 0) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    if (c->argc == 5 && (!str_to_ll(c->argv[4].p, c->argv[4].len, &size) || size < 0 || size > 512LL * 1024 * 1024)) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    char prefix[129] = "key";
    if (c->argc >= 4) span_cstr(prefix, sizeof prefix, c->argv[3]);
    char *val = size ? zcalloc((size_t)size) : NULL;
    for (long long j = 0; j < count; j++) {
        char key[160], num[40];
        int klen = snprintf(key, sizeof key, "%s:%lld", prefix, j);
        if (db_lookup(c->db, key, (size_t)klen)) continue;
        int nlen = snprintf(num, sizeof num, "value:%lld", j);
        if (!size) {
            db_set_string(c->db, key, (size_t)klen, num, (size_t)nlen, -1);
            continue;
        }
        memcpy(val, num, (size_t)(nlen < size ? nlen : size));
        db_set_string(c->db, key, (size_t)klen, val, (size_t)size, -1);
    }
    zfree(val);
    reply_ok(c);
}

/* DEBUG RELOAD: save the dataset, empty it and load the file back. */
/* DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE] */
static void debug_reload(client *c) {
    unsigned opts = 0;
    for (int j = 2; j < c->argc; j++) {
        if (span_eq_nocase(c->argv[j], "merge")) opts |= RELOAD_MERGE;
        else if (span_eq_nocase(c->argv[j], "noflush")) opts |= RELOAD_NOFLUSH;
        else if (span_eq_nocase(c->argv[j], "nosave")) opts |= RELOAD_NOSAVE;
        else {
            reply_error(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    char err[1100];
    if (persist_debug_reload(opts, err, sizeof err) != 0) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    server_log(LOG_NOTICE_, "DB reloaded by DEBUG RELOAD");
    reply_ok(c);
}

/* DEBUG QUICKLIST-PACKED-THRESHOLD <size>: Redis stores list elements at
 * least this big as plain quicklist nodes. ferry's lists have no such
 * split (every element is stored the same way whatever its size), so the
 * value is checked as Redis checks it and changes nothing. */
static void debug_quicklist_packed_threshold(client *c) {
    char buf[64];
    unsigned long long sz;
    if (!config_parse_memory(span_cstr(buf, sizeof buf, c->argv[2]), &sz) || sz > (1ULL << 32) - (1ULL << 20)) {
        reply_error(c, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
        return;
    }
    reply_ok(c);
}

static void debug_loadaof(client *c) {
    char err[1100];
    if (aof_debug_loadaof(err, sizeof err) != 0) reply_error(c, err);
    else reply_ok(c);
}

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
    else if (c->argc == 3 && span_eq_nocase(sub, "pause-cron")) debug_pause_cron(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "object")) debug_object(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "error")) debug_error(c);
    else if (span_eq_nocase(sub, "reload")) debug_reload(c);
    else if (c->argc == 2 && span_eq_nocase(sub, "loadaof")) debug_loadaof(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "quicklist-packed-threshold")) debug_quicklist_packed_threshold(c);
    else if (c->argc >= 3 && c->argc <= 5 && span_eq_nocase(sub, "populate")) debug_populate(c);
    else if (c->argc == 2 && span_eq_nocase(sub, "digest")) debug_digest(c);
    else if (c->argc >= 2 && span_eq_nocase(sub, "digest-value")) debug_digest_value(c);
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

#define F_ADMIN (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define ALLOC_CX "Depends on how much memory is allocated, could be slow"

static command memory_subcommands[] = {
    CMD("doctor", cmd_memory_doctor, 2, .acl = "slow", .summary = "Outputs memory problems report", .since = "4.0.0",
        .complexity = "O(1)"),
    CMD("help", memory_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow",
        .summary = "Show helpful text about the different subcommands", .since = "4.0.0", .complexity = "O(1)"),
    CMD("malloc-stats", memory_malloc_stats, 2, .acl = "slow", .summary = "Show allocator internal stats",
        .since = "4.0.0", .complexity = ALLOC_CX),
    CMD("purge", memory_purge, 2, .acl = "slow", .summary = "Ask the allocator to release memory", .since = "4.0.0",
        .complexity = ALLOC_CX),
    CMD("stats", cmd_memory_stats, 2, .acl = "slow", .summary = "Show memory usage details", .since = "4.0.0",
        .complexity = "O(1)"),
    CMD("usage", memory_usage, -3, .flags = CMD_READONLY, .acl = "read slow", CMD_KEYS(2, 2, 1),
        .summary = "Estimate the memory usage of a key", .since = "4.0.0",
        .complexity = "O(N) where N is the number of samples."),
    {0},
};

static command server_commands[] = {
    CMD("debug", cmd_debug, -2, .flags = F_ADMIN, .props = PROP_NO_PROPAGATE, .acl = "admin slow dangerous",
        .summary = "A container for debugging commands", .since = "1.0.0", .complexity = "Depends on subcommand."),
    CMD("info", cmd_info, -1, .flags = CMD_LOADING | CMD_STALE, .acl = "slow dangerous",
        .summary = "Get information and statistics about the server", .since = "1.0.0", .complexity = "O(1)"),
    CMD("memory", memory_container, -2, .acl = "slow", .summary = "A container for memory diagnostics commands",
        .since = "4.0.0", .complexity = "Depends on subcommand.", .subcmds = memory_subcommands),
    CMD("monitor", cmd_monitor, 1, .flags = F_ADMIN, .acl = "admin slow dangerous",
        .summary = "Listen for all requests received by the server in real time", .since = "1.0.0"),
    CMD("role", cmd_role, 1, .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST, .acl = "admin fast dangerous",
        .summary = "Return the role of the instance in the context of replication", .since = "2.8.12",
        .complexity = "O(1)"),
    CMD("shutdown", cmd_shutdown, -1, .flags = F_ADMIN | CMD_NO_MULTI | CMD_ALLOW_BUSY, .acl = "admin slow dangerous",
        .summary = "Synchronously save the dataset to disk and then shut down the server", .since = "1.0.0",
        .complexity = "O(N) when saving, where N is the total number of keys in all databases when saving "
            "data, otherwise O(1)"),
    CMD("time", cmd_time, 1, .flags = CMD_LOADING | CMD_STALE | CMD_FAST, .acl = "fast",
        .summary = "Return the current server time", .since = "2.6.0", .complexity = "O(1)"),
    CMD("wait", cmd_wait, 3, .flags = CMD_NOSCRIPT, .acl = "slow connection", .group = "generic",
        .summary = "Wait for the synchronous replication of all the write commands sent in the context of the "
            "current connection", .since = "3.0.0", .complexity = "O(1)"),
    {0},
};
const command_group server_group = {"server", server_commands};
