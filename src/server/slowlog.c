/* slowlog.c - the slow log: SLOWLOG GET [count] / LEN / RESET / HELP, as
 * Redis 7.0 keeps it.
 *
 * A command whose execution took at least slowlog-log-slower-than
 * microseconds (negative: disabled, 0: every command) is pushed at the head
 * of a list trimmed to slowlog-max-len. Each entry owns a copy of the
 * arguments, capped like Redis (at most 32 arguments, the last one replaced
 * by "... (N more arguments)"; arguments longer than 128 bytes truncated
 * with "... (N more bytes)"), so that a huge SET never pins a huge entry.
 * The hook slowlog_maybe_add() is called by the command path after each
 * timed call; commands flagged skip_slowlog (EXEC) are not logged.
 */
#include "latency.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SLOWLOG_ENTRY_MAX_ARGC 32
#define SLOWLOG_ENTRY_MAX_STRING 128

typedef struct slowlog_entry {
    long long id;
    long long time;             /* unix seconds */
    long long duration;         /* us */
    int argc;
    span *argv;                 /* owned copies */
    char *peerid, *cname;
    struct slowlog_entry *next, *prev;
} slowlog_entry;

static slowlog_entry *head, *tail;  /* head = newest */
static long long count, next_id;

static char *copy_bytes(const char *p, size_t n) {
    char *s = zmalloc(n + 1);
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static void entry_free(slowlog_entry *e) {
    for (int j = 0; j < e->argc; j++) zfree((void *)e->argv[j].p);
    zfree(e->argv);
    zfree(e->peerid);
    zfree(e->cname);
    zfree(e);
}

static void unlink_tail(void) {
    slowlog_entry *e = tail;
    tail = e->prev;
    if (tail) tail->next = NULL;
    else head = NULL;
    count--;
    entry_free(e);
}

static slowlog_entry *entry_create(client *c, long long duration) {
    slowlog_entry *e = zcalloc(sizeof *e);
    int argc = c->argc < SLOWLOG_ENTRY_MAX_ARGC ? c->argc : SLOWLOG_ENTRY_MAX_ARGC;
    e->argc = argc;
    e->argv = zmalloc(sizeof(span) * (size_t)(argc ? argc : 1));
    for (int j = 0; j < argc; j++) {
        char buf[SLOWLOG_ENTRY_MAX_STRING + 64];
        span a = c->argv[j];
        if (argc != c->argc && j == argc - 1) {
            int n = snprintf(buf, sizeof buf, "... (%d more arguments)", c->argc - argc + 1);
            e->argv[j] = (span){copy_bytes(buf, (size_t)n), (size_t)n};
        } else if (a.len > SLOWLOG_ENTRY_MAX_STRING) {
            memcpy(buf, a.p, SLOWLOG_ENTRY_MAX_STRING);
            int n = snprintf(buf + SLOWLOG_ENTRY_MAX_STRING, sizeof buf - SLOWLOG_ENTRY_MAX_STRING,
                             "... (%zu more bytes)", a.len - SLOWLOG_ENTRY_MAX_STRING);
            size_t len = SLOWLOG_ENTRY_MAX_STRING + (size_t)n;
            e->argv[j] = (span){copy_bytes(buf, len), len};
        } else {
            e->argv[j] = (span){copy_bytes(a.p, a.len), a.len};
        }
    }
    e->id = next_id++;
    e->time = (long long)time(NULL);
    e->duration = duration;
    e->peerid = zstrdup(c->addr);
    e->cname = zstrdup(c->name ? c->name : "");
    return e;
}

void slowlog_maybe_add(client *c, command *cmd, uint64_t duration_us) {
    long long slower = srv.cfg.slowlog_log_slower_than;
    if (slower < 0 || (cmd && (cmd->flags & CMD_SKIP_SLOWLOG))) return;
    if ((long long)duration_us >= slower) {
        slowlog_entry *e = entry_create(c, (long long)duration_us);
        e->next = head;
        if (head) head->prev = e;
        head = e;
        if (!tail) tail = e;
        count++;
    }
    while (count > (srv.cfg.slowlog_max_len > 0 ? srv.cfg.slowlog_max_len : 0)) unlink_tail();
}

static void slowlog_reset_all(void) {
    while (tail) unlink_tail();
}

static void slowlog_get(client *c) {
    long long n = 10;
    if (c->argc == 3) {
        if (!str_to_ll(c->argv[2].p, c->argv[2].len, &n) || n < -1) {
            reply_error(c, "ERR count should be greater than or equal to -1");
            return;
        }
        if (n == -1) n = count;
    } else if (c->argc > 3) {
        char sub[129];
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try SLOWLOG HELP.",
                     span_cstr(sub, sizeof sub, c->argv[1]));
        return;
    }
    if (n > count) n = count;
    reply_array(c, n);
    slowlog_entry *e = head;
    for (long long i = 0; i < n && e; i++, e = e->next) {
        reply_array(c, 6);
        reply_int(c, e->id);
        reply_int(c, e->time);
        reply_int(c, e->duration);
        reply_array(c, e->argc);
        for (int j = 0; j < e->argc; j++) reply_bulk(c, e->argv[j].p, e->argv[j].len);
        reply_bulk_cstr(c, e->peerid);
        reply_bulk_cstr(c, e->cname);
    }
}

static void slowlog_len(client *c) { reply_int(c, count); }

static void slowlog_reset(client *c) {
    slowlog_reset_all();
    reply_ok(c);
}

static void slowlog_help(client *c) {
    static const char *const lines[] = {
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Prints this help.",
        NULL,
    };
    reply_help(c, lines);
}

#define F_SL (CMD_ADMIN | CMD_LOADING | CMD_STALE)

static command slowlog_subcommands[] = {
    CMD("get", slowlog_get, -2, .flags = F_SL, .acl = "admin slow dangerous", .summary = "Get the slow log's entries",
        .since = "2.2.12", .complexity = "O(N) where N is the number of entries returned"),
    CMD("help", slowlog_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow",
        .summary = "Show helpful text about the different subcommands", .since = "6.2.0", .complexity = "O(1)"),
    CMD("len", slowlog_len, 2, .flags = F_SL, .acl = "admin slow dangerous", .summary = "Get the slow log's length",
        .since = "2.2.12", .complexity = "O(1)"),
    CMD("reset", slowlog_reset, 2, .flags = F_SL, .acl = "admin slow dangerous",
        .summary = "Clear all entries from the slow log", .since = "2.2.12",
        .complexity = "O(N) where N is the number of entries in the slowlog"),
    {0},
};

static command slowlog_commands[] = {
    CMD("slowlog", slowlog_help, -2, .acl = "slow", .summary = "A container for slow log commands", .since = "2.2.12",
        .complexity = "Depends on subcommand.", .subcmds = slowlog_subcommands),
    {0},
};
const command_group slowlog_group = {"server", slowlog_commands};
