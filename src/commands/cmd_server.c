/* cmd_server.c - server administration commands: TIME SHUTDOWN,
 * the MEMORY container and the command table entry of DEBUG (its
 * subcommands are in cmd_debug.c); INFO itself lives in info.c (it owns the
 * statistics formatting).
 *
 * SAVE, BGSAVE and LASTSAVE are in cmd_persist.c, BGREWRITEAOF in aof.c;
 * SHUTDOWN saves through cmd_persist.c (and fails the way Redis does when
 * the final save fails). ROLE and WAIT are replication's (repl/cmd_repl.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "client.h"
#include "cmd_debug.h"
#include "cmd_lolwut.h"
#include "command.h"
#include "db.h"
#include "dict.h"
#include "monitor.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

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

/* MEMORY MALLOC-STATS: Redis prints jemalloc's report; ferry allocates with
 * the C library's malloc, counted by zmalloc, so it says that and gives
 * what it knows: its own count and, with glibc, mallinfo2's totals. */
static void memory_malloc_stats(client *c) {
    char msg[640];
    int n = snprintf(msg, sizeof msg,
                     "ferry allocator: the C library's malloc (no jemalloc), every allocation counted by zmalloc.\n"
                     "zmalloc used bytes: %zu\n", zmalloc_used());
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    n += snprintf(msg + n, sizeof msg - (size_t)n,
                  "glibc mallinfo2: arena %zu, mmapped %zu (%zu chunks), in use %zu, free %zu, releasable %zu\n",
                  mi.arena, mi.hblkhd, mi.hblks, mi.uordblks, mi.fordblks, mi.keepcost);
#endif
    reply_verbatim(c, msg, (size_t)n, "txt");
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
    CMD("lolwut", cmd_lolwut, -1, .flags = CMD_READONLY | CMD_FAST, .acl = "read fast",
        .summary = "Display some computer art and the Redis version", .since = "5.0.0"),
    CMD("memory", memory_container, -2, .acl = "slow", .summary = "A container for memory diagnostics commands",
        .since = "4.0.0", .complexity = "Depends on subcommand.", .subcmds = memory_subcommands),
    CMD("monitor", cmd_monitor, 1, .flags = F_ADMIN, .acl = "admin slow dangerous",
        .summary = "Listen for all requests received by the server in real time", .since = "1.0.0"),
    CMD("shutdown", cmd_shutdown, -1, .flags = F_ADMIN | CMD_NO_MULTI | CMD_ALLOW_BUSY, .acl = "admin slow dangerous",
        .summary = "Synchronously save the dataset to disk and then shut down the server", .since = "1.0.0",
        .complexity = "O(N) when saving, where N is the total number of keys in all databases when saving "
            "data, otherwise O(1)"),
    CMD("time", cmd_time, 1, .flags = CMD_LOADING | CMD_STALE | CMD_FAST, .acl = "fast",
        .summary = "Return the current server time", .since = "2.6.0", .complexity = "O(1)"),
    {0},
};
const command_group server_group = {"server", server_commands};
