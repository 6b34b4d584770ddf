/* command.c - command registry, lookup and dispatch (see command.h).
 *
 * Lookup is an open-addressing table keyed by the lowercased name, built once
 * at startup from every group's table. Dispatch applies, in Redis's order:
 * unknown command / subcommand, arity, authentication, commands not allowed
 * in MULTI, maxmemory (evict, or refuse with OOM), the RESP2 pub/sub context,
 * CLIENT PAUSE (the command is held: pause.h), then MULTI queueing, and
 * finally calls the command with per-command statistics. */
#include "command.h"
#include "acl.h"
#include "keyspec.h"
#include "aof.h"
#include "blocking.h"
#include "reply.h"
#include "server.h"
#include "dict.h"
#include "evict.h"
#include "latency.h"
#include "monitor.h"
#include "multi.h"
#include "pause.h"
#include "persist.h"
#include "propagate.h"
#include "pubsub.h"
#include "tracking.h"
#include "zmalloc.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define LOOKUP_BITS 10
#define ERR_MISCONF                                                                                               \
    "Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may "  \
    "modify the data set are disabled, because this instance is configured to report errors during writes if RDB " \
    "snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the "  \
    "RDB error."
#define MAX_NAME 64

static command *index_tab[1 << LOOKUP_BITS]; /* by the name clients call it by */
static command *all_tab[1 << LOOKUP_BITS];   /* every top-level command, in registration order */
static size_t ncommands, nall;

static uint32_t name_hash(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static const char *call_name(const command *cmd) { return cmd->renamed ? cmd->renamed : cmd->name; }

static void index_add(command *cmd) {
    size_t n = strlen(call_name(cmd));
    uint32_t i = name_hash(call_name(cmd), n) & ((1u << LOOKUP_BITS) - 1);
    while (index_tab[i]) i = (i + 1) & ((1u << LOOKUP_BITS) - 1);
    index_tab[i] = cmd;
}

static void index_rebuild(void) {
    memset(index_tab, 0, sizeof index_tab);
    ncommands = 0;
    for (size_t k = 0; k < nall; k++)
        if (command_callable(all_tab[k])) {
            index_add(all_tab[k]);
            ncommands++;
        }
}

static void lower_copy(char *dst, const char *src, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char ch = src[i];
        dst[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
    }
}

command *command_lookup_name(const char *name, size_t len) {
    if (len == 0 || len >= MAX_NAME) return NULL;
    char low[MAX_NAME];
    lower_copy(low, name, len);
    uint32_t i = name_hash(low, len) & ((1u << LOOKUP_BITS) - 1);
    while (index_tab[i]) {
        command *c = index_tab[i];
        const char *nm = call_name(c);
        if (strlen(nm) == len && memcmp(nm, low, len) == 0) return c;
        i = (i + 1) & ((1u << LOOKUP_BITS) - 1);
    }
    return NULL;
}

static command *subcommand_lookup(command *parent, span sub) {
    for (command *s = parent->subcmds; s && s->name; s++)
        if (span_eq_nocase(sub, s->name)) return s;
    return NULL;
}

command *command_lookup(const span *argv, int argc) {
    command *cmd = command_lookup_name(argv[0].p, argv[0].len);
    if (!cmd || !cmd->subcmds) return cmd;
    if (argc < 2) return cmd; /* the container itself: arity error follows */
    return subcommand_lookup(cmd, argv[1]);
}

/* Name forms for the pipeline cache, and whether the command is batchable. */
static void prepare_fast_path(command *c) {
    size_t n = strlen(c->name);
    int cacheable = n < sizeof c->upname && !c->parent && !c->subcmds;
    c->cache_len = cacheable ? (uint32_t)n : UINT32_MAX;
    c->alpha = 1;
    for (size_t i = 0; cacheable && i < n; i++) {
        char ch = c->name[i];
        c->upname[i] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 32) : ch;
        if (ch < 'a' || ch > 'z') c->alpha = 0;
    }
    uint32_t special = CMD_ADMIN | CMD_NO_MULTI | CMD_PUBSUB | CMD_BLOCKING;
    c->batchable = !c->parent && !c->subcmds && c->first_key == 1 && !(c->flags & special) && !(c->props & PROP_TX_CONTROL);
    /* the pipelined hot path: O(1) commands and single-key string commands;
     * collection commands (SMEMBERS, LRANGE, ZUNIONSTORE...) can be slow and
     * are timed one by one while SLOWLOG or the latency monitor is on */
    c->run_timed = (c->flags & CMD_FAST) || (c->batchable && c->group && strcmp(c->group, "string") == 0);
}

static void register_group(const command_group *g) {
    for (command *c = g->commands; c->name; c++) {
        if (!c->group) c->group = g->name;
        snprintf(c->fullname, sizeof c->fullname, "%s", c->name);
        prepare_fast_path(c);
        all_tab[nall++] = c;
        for (command *s = c->subcmds; s && s->name; s++) {
            s->parent = c;
            if (!s->group) s->group = c->group;
            snprintf(s->fullname, sizeof s->fullname, "%s|%s", c->name, s->name);
            prepare_fast_path(s); /* never cached, never batchable */
        }
    }
}

void commands_init(const command_group *const *groups, size_t n) {
    nall = 0;
    for (size_t i = 0; i < n; i++) register_group(groups[i]);
    index_rebuild();
    keyspec_attach_all();
}

command *command_lookup_orig(const char *name, size_t len) {
    for (size_t k = 0; k < nall; k++)
        if (strlen(all_tab[k]->name) == len && strncasecmp(all_tab[k]->name, name, len) == 0) return all_tab[k];
    return NULL;
}

/* The pipeline's lookup cache compares a request with the command's own
 * name (command_name_matches): a renamed command is never cached. */
int command_rename(const char *from, const char *to) {
    command *cmd = command_lookup_name(from, strlen(from));
    if (!cmd) return -1;
    command *other = command_lookup_name(to, strlen(to));
    if (other && other != cmd) return -2;
    char *low = zstrdup(to);
    lower_copy(low, low, strlen(low));
    zfree((char *)cmd->renamed); /* renamed before */
    cmd->renamed = low;
    cmd->cache_len = UINT32_MAX;
    cmd->batchable = 0;
    index_rebuild();
    return 0;
}

size_t command_count(void) { return ncommands; }

void command_foreach(void (*fn)(command *cmd, void *ud), void *ud) {
    for (size_t i = 0; i < nall; i++) {
        command *c = all_tab[i];
        fn(c, ud);
        for (command *s = c->subcmds; s && s->name; s++) fn(s, ud);
    }
}

static void reset_one(command *c, void *ud) {
    (void)ud;
    c->calls = c->usec = c->rejected_calls = c->failed_calls = 0;
}

void commands_reset_stats(void) { command_foreach(reset_one, NULL); }

static void reject_unknown(client *c) {
    char name[129], args[512];
    size_t alen = 0;
    args[0] = '\0';
    for (int i = 1; i < c->argc && alen < 128; i++) {
        char arg[129];
        span_cstr(arg, sizeof arg, c->argv[i]);
        int room = 128 - (int)alen;
        int w = snprintf(args + alen, sizeof args - alen, "'%.*s' ", room, arg);
        if (w < 0) break;
        alen += (size_t)w;
        if (alen >= sizeof args) alen = sizeof args - 1;
    }
    command *parent = command_lookup_name(c->argv[0].p, c->argv[0].len);
    if (parent && parent->subcmds && c->argc >= 2) {
        char sub[129], up[MAX_NAME];
        span_cstr(sub, sizeof sub, c->argv[1]);
        size_t n = strlen(parent->name);
        for (size_t i = 0; i <= n; i++) up[i] = (char)((parent->name[i] >= 'a' && parent->name[i] <= 'z') ? parent->name[i] - 32 : parent->name[i]);
        reply_errorf(c, "ERR unknown subcommand '%.128s'. Try %s HELP.", sub, up);
        return;
    }
    span_cstr(name, sizeof name, c->argv[0]);
    reply_errorf(c, "ERR unknown command '%.128s', with args beginning with: %s", name, args);
}

/* A command refused before execution: counts as rejected, dooms an open
 * transaction, and, when the refused command is EXEC itself, aborts the
 * transaction with the reason, as Redis does. `msg` has no "ERR " prefix when
 * `code` is "ERR". */
static void reject(client *c, command *cmd, const char *code, const char *msg) {
    if (cmd) cmd->rejected_calls++;
    if (c->flags & CF_MULTI) c->flags |= CF_DIRTY_EXEC;
    if (cmd && (cmd->props & PROP_EXEC)) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s%s%s", strcmp(code, "ERR") == 0 ? "" : code, strcmp(code, "ERR") == 0 ? "" : " ", msg);
        multi_exec_abort(c, buf);
        return;
    }
    reply_errorf(c, "%s %s", code, msg);
}

/* Timing. Reading a clock around every call costs ~50 ns of server CPU per
 * pipelined GET here (40% of it; the clock read also keeps the next
 * commands' cache misses from overlapping), so fast (O(1)) commands are timed
 * per run: a top-level call reads the clock only when its command differs
 * from the one of the open run, and the run is closed by a different command
 * or by command_stats_flush() at the end of each read batch. Closing a run
 * adds its elapsed time to the command's usec and records n samples of
 * elapsed/n in its latency histogram. Trade-offs: `calls` stays exact; a
 * run's time also covers the parsing and dispatch between its calls (tens of
 * ns per request); one slow call inside a pipelined run of identical fast
 * commands is seen as the run's average; and SLOWLOG and the latency monitor
 * see only the calls timed one by one, exactly: commands that are neither
 * fast nor single-key string commands (while either of them is on), so every
 * collection command (SMEMBERS, LRANGE, ZUNIONSTORE...), calls nested in EXEC,
 * and every call while slowlog-log-slower-than is 0. A slow single-key call
 * (SET of a huge value) is therefore not logged under a non-zero threshold:
 * a known gap (issue #4). */
static struct {
    command *cmd;           /* command of the open run, NULL if none */
    uint64_t t0;            /* when it started (ns, latency_now_ns) */
    uint64_t calls;         /* calls in the run */
    int depth;              /* command_call nesting */
} run;

static void add_time(command *cmd, uint64_t ns) {
    uint64_t total = ns + cmd->ns_carry;
    cmd->usec += total / 1000;
    cmd->ns_carry = (uint32_t)(total % 1000);
}

static void run_close(uint64_t now) {
    if (run.cmd) {
        uint64_t ns = now - run.t0;
        add_time(run.cmd, ns);
        latency_record_run(run.cmd, ns, run.calls);
    }
    run.cmd = NULL;
}

void command_stats_flush(void) {
    if (run.cmd) run_close(latency_now_ns());
}

/* One call timed on its own: its time, histogram sample, SLOWLOG entry and
 * latency-monitor event are exact. */
static void call_timed(client *c, command *cmd) {
    uint64_t t0 = latency_now_ns();
    cmd->proc(c);
    uint64_t ns = latency_now_ns() - t0;
    add_time(cmd, ns);
    latency_after_call(c, cmd, ns);
}

static void call_proc(client *c, command *cmd) {
    /* one by one: EXEC's queued commands, every command while
     * slowlog-log-slower-than is 0 ("log everything"), and commands off the
     * pipelined hot path (neither fast nor a single-key string command nor a
     * call within the command's run_argc) while SLOWLOG or the latency
     * monitor is on; with both off, run timing serves all */
    long long slower = srv.cfg.slowlog_log_slower_than;
    int exact_wanted = slower >= 0 || srv.cfg.latency_monitor_threshold > 0;
    int bounded = cmd->run_timed || c->argc <= cmd->run_argc;
    if (run.depth > 0 || slower == 0 || (!bounded && exact_wanted)) {
        if (run.depth == 0 && run.cmd) run_close(latency_now_ns());
        run.depth++;
        call_timed(c, cmd);
        run.depth--;
        return;
    }
    if (run.cmd != cmd) {
        uint64_t now = latency_now_ns();
        run_close(now);
        run.cmd = cmd;
        run.t0 = now;
        run.calls = 0;
    }
    run.calls++;
    run.depth++;
    cmd->proc(c);
    run.depth--;
}

/* Error replies already counted as a failure of a call that ended: a
 * command's own failures are the errors during its call minus those its
 * nested calls (EXEC's queued commands, a script's redis.call) counted, as
 * Redis counts them (EXEC / EVAL are not failed by a failing inner call). */
static uint64_t errors_claimed;

void command_errors_claimed(uint64_t n) { errors_claimed += n; }

void command_call(client *c, command *cmd) {
    uint64_t errs = srv.stats.total_error_replies, claimed0 = errors_claimed;
    prop_frame pf;
    prop_enter(&pf);
    c->cmd = cmd;
    c->lastcmd = cmd; /* CLIENT LIST shows the running command as cmd= */
    srv.no_touch = (c->flags & CF_NO_TOUCH) && strcmp(cmd->name, "touch") != 0;
    client *outer = srv.executing_client;
    srv.executing_client = c;
    call_proc(c, cmd);
    srv.executing_client = outer;
    cmd->calls++;
    uint64_t total = srv.stats.total_error_replies; /* CONFIG RESETSTAT may have zeroed it */
    uint64_t during = total >= errs ? total - errs : 0;
    if (during > errors_claimed - claimed0) cmd->failed_calls++;
    errors_claimed = claimed0 + during;
    srv.stats.numcommands++;
    c->tot_cmds++;
    c->lastcmd = cmd;
    prop_leave(&pf, c, cmd);
    if (srv.observers) { /* MONITOR, client-side caching */
        monitor_after_call(c, cmd);
        tracking_after_call(c, cmd, outer == NULL);
    }
}

const char *(*command_repl_refusal)(client *c, command *cmd);
int (*command_cluster_redirect)(client *c, command *cmd);
void (*command_flushall_done)(void);
int (*command_cluster_local)(const client *c, const command *cmd);

void command_dispatch(client *c) {
    command_dispatch_resolved(c, command_lookup_cached(c->lastcmd, c->argv, c->argc));
}

void command_dispatch_resolved(client *c, command *cmd) {
    c->cmd = cmd;
    /* the common case first: none of the checks below applies (with
     * maxmemory set, every command takes the checked path: eviction first;
     * a restricted ACL user stays here when its rules plainly allow the
     * command and its one key, else the full check below decides; our
     * primary's stream (CF_OBEY) skips the replication rules below, so it
     * stays here on a replica too; a replica's link to us does not: it may
     * not touch the keyspace) */
    if (!(c->flags & (CF_REPLY_SKIP_NEXT | CF_REPLY_SKIP | CF_MULTI | CF_PUBSUB)) && (c->flags & CF_AUTHENTICATED) &&
        cmd && (!(c->flags & CF_ACL_CHECK) || acl_allows_fast(c, cmd)) && !srv.observers && !srv.cfg.maxmemory && !srv.rdb_bgsave_failed && !srv.aof_write_failed && !srv.loading && !srv.script_busy && !srv.client_pause && (!srv.repl_checks || (c->flags & CF_OBEY)) && c->repl_role != CLIENT_REPL_REPLICA && command_arity_ok(cmd, c->argc) &&
        (!command_cluster_local || command_cluster_local(c, cmd))) {
        command_call(c, cmd);
        c->flags &= ~CF_REPLY_SKIP;
        if (blocking_ready_pending) blocking_handle_ready();
        return;
    }
    if (c->flags & CF_REPLY_SKIP_NEXT) {
        c->flags &= ~CF_REPLY_SKIP_NEXT;
        c->flags |= CF_REPLY_SKIP;
    } else {
        c->flags &= ~CF_REPLY_SKIP;
    }
    if (!cmd) {
        if (span_eq_nocase(c->argv[0], "post") || span_eq_nocase(c->argv[0], "host:")) {
            /* an HTTP request sent to the RESP port (cross-protocol
             * scripting): close silently, as Redis does */
            server_log(LOG_WARNING_, "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or "
                                     "Host: commands to ferry. This is likely due to an attacker attempting to use "
                                     "Cross Protocol Scripting to compromise your server. Connection aborted.");
            client_close_async(c);
            goto done;
        }
        reject_unknown(c);
        if (c->flags & CF_MULTI) c->flags |= CF_DIRTY_EXEC;
        goto done;
    }
    if (!command_arity_ok(cmd, c->argc)) {
        char msg[96];
        snprintf(msg, sizeof msg, "wrong number of arguments for '%s' command", cmd->fullname);
        reject(c, cmd, "ERR", msg);
        goto done;
    }
    if (client_auth_required(c) && !(cmd->flags & CMD_NO_AUTH)) {
        reject(c, cmd, "NOAUTH", "Authentication required.");
        goto done;
    }
    if ((c->flags & CF_MULTI) && (cmd->flags & CMD_NO_MULTI)) {
        reject(c, cmd, "ERR", "Command not allowed inside a transaction");
        goto done;
    }
    int acl_r = (c->flags & CF_ACL_CHECK) ? acl_dispatch_check(c, cmd) : ACL_OK;
    if (acl_r != ACL_OK) {
        char msg[160];
        acl_denied_message(msg, sizeof msg, acl_r, cmd);
        reject(c, cmd, "NOPERM", msg + 7); /* without the "NOPERM " */
        goto done;
    }
    int obey = (c->flags & CF_OBEY) != 0; /* the primary's stream: executed whatever this server's state */
    if (command_cluster_redirect && !obey && command_cluster_redirect(c, cmd)) goto done;
    if (!obey && srv.rdb_bgsave_failed && (cmd->flags & CMD_WRITE || cmd->props & PROP_MISCONF_DENIED) && persist_writes_refused()) {
        reject(c, cmd, "MISCONF", ERR_MISCONF);
        goto done;
    }
    const char *aof_why;
    if (!obey && srv.aof_write_failed && (cmd->flags & CMD_WRITE || cmd->props & PROP_MISCONF_DENIED) && aof_writes_refused(&aof_why)) {
        char msg[256];
        snprintf(msg, sizeof msg, "Errors writing to the AOF file: %s", aof_why);
        reject(c, cmd, "MISCONF", msg);
        goto done;
    }
    const char *repl_why;
    if (srv.repl_checks && !obey && command_repl_refusal && (repl_why = command_repl_refusal(c, cmd)) != NULL) {
        char code[16];
        size_t cl = strcspn(repl_why, " ");
        snprintf(code, sizeof code, "%.*s", (int)(cl < sizeof code ? cl : sizeof code - 1), repl_why);
        reject(c, cmd, code, repl_why + cl + 1);
        goto done;
    }
    if (srv.script_busy && !(cmd->flags & CMD_ALLOW_BUSY)) {
        reject(c, cmd, "BUSY", script_busy_error() + 5);
        goto done;
    }
    if (srv.loading && !(cmd->flags & CMD_LOADING)) {
        reject(c, cmd, "LOADING", "Redis is loading the dataset in memory");
        goto done;
    }
    if (srv.cfg.maxmemory && !obey && evict_refuses_command(c, cmd)) {
        reject(c, cmd, "OOM", "command not allowed when used memory > 'maxmemory'.");
        goto done;
    }
    if (srv.tracking_clients) tracking_limit_table();
    if ((c->flags & CF_PUBSUB) && c->resp == 2 && !pubsub_allowed_in_context(cmd)) {
        char msg[192];
        pubsub_context_error(msg, sizeof msg, cmd);
        reject(c, cmd, "ERR", msg);
        goto done;
    }
    if ((c->flags & CF_MONITOR || c->repl_role == CLIENT_REPL_REPLICA) &&
        (cmd->flags & (CMD_WRITE | CMD_READONLY | CMD_MAY_REPLICATE))) {
        if (c->repl_role == CLIENT_REPL_REPLICA) /* Redis's words for an error sent down a replica's link */
            server_log(LOG_WARNING_, "== CRITICAL == This master is sending an error to its replica: "
                                     "'Replica can't interact with the keyspace' after processing the command '%s'",
                       cmd->fullname);
        reject(c, cmd, "ERR", "Replica can't interact with the keyspace");
        goto done;
    }
    if (srv.client_pause && pause_must_hold(c, cmd)) {
        /* held: dispatched again when the pause ends (CLIENT REPLY SKIP stays armed) */
        if (c->flags & CF_REPLY_SKIP) c->flags = (c->flags & ~CF_REPLY_SKIP) | CF_REPLY_SKIP_NEXT;
        c->lastcmd = cmd;
        pause_hold(c);
        return;
    }
    if ((c->flags & CF_MULTI) && !(cmd->props & PROP_TX_CONTROL)) {
        multi_queue_command(c, cmd);
        goto done;
    }
    command_call(c, cmd);
    if (blocking_ready_pending) blocking_handle_ready();
done:
    c->flags &= ~CF_REPLY_SKIP;
    if (c->cluster_flags & (CLF_ASKING | CLF_ASKING_FRESH)) { /* ASKING lasts one command (or a transaction) */
        if (c->cluster_flags & CLF_ASKING_FRESH) c->cluster_flags &= (uint8_t)~CLF_ASKING_FRESH;
        else if (!(c->flags & CF_MULTI)) c->cluster_flags &= (uint8_t)~CLF_ASKING;
    }
    if (c->flags & CF_TRACKING_CACHING) tracking_command_done(c, cmd);
}
