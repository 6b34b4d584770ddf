/* latency_cmd.c - the LATENCY command (LATEST, HISTORY, RESET, HISTOGRAM,
 * DOCTOR, HELP; GRAPH is in latency_graph.c) in Redis 7.0's reply formats, and STATS: a one-line JSON
 * summary (hit rate, latency quantiles over all commands, batch sizes,
 * syscalls per command, tail events) for dashboards and the benchmark
 * scripts, which would otherwise have to parse INFO. Data lives in latency.c.
 */
#include "latency.h"
#include "latency_graph.h"
#include "reply.h"
#include "sbuf.h"
#include "server.h"
#include "zmalloc.h"
#include <stdio.h>
#include <string.h>

static void latency_latest(client *c) {
    int n = lm_count();
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        int32_t t;
        uint32_t ms;
        lm_latest(i, &t, &ms);
        reply_array(c, 4);
        reply_bulk_cstr(c, lm_name(i));
        reply_int(c, t);
        reply_int(c, ms);
        reply_int(c, lm_max(i));
    }
}

static void history_one(int32_t t, uint32_t ms, void *ud) {
    client *c = ud;
    reply_array(c, 2);
    reply_int(c, t);
    reply_int(c, ms);
}

static void latency_history(client *c) {
    int i = lm_find_index(c->argv[2].p, c->argv[2].len);
    if (i < 0) {
        reply_array(c, 0);
        return;
    }
    reply_array(c, lm_samples(i));
    lm_foreach_sample(i, history_one, c);
}

static void latency_reset(client *c) {
    long long resets = 0;
    if (c->argc == 2) {
        resets = lm_count();
        while (lm_count()) lm_remove(lm_count() - 1);
    } else {
        for (int j = 2; j < c->argc; j++) {
            int i = lm_find_index(c->argv[j].p, c->argv[j].len);
            if (i >= 0) {
                lm_remove(i);
                resets++;
            }
        }
    }
    reply_int(c, resets);
}

/* Redis's fillCommandCDF: log buckets from 1024 ns doubling; each bucket
 * that adds values replies (upper bound in us, cumulative count). */
static void reply_cdf(client *c, const command *cmd, const lhist *h) {
    reply_bulk_cstr(c, cmd->fullname);
    reply_map(c, 2);
    reply_bulk_cstr(c, "calls");
    reply_int(c, (long long)h->total);
    reply_bulk_cstr(c, "histogram_usec");
    long long keys[64], cums[64];
    int n = 0;
    uint64_t cum = 0, prev = 0;
    unsigned i = 0;
    for (uint64_t bound = 1024; n < 64 && cum < h->total; bound <<= 1) {
        unsigned last = lh_index(bound);
        for (; i <= last && i < LH_BUCKETS; i++) cum += h->counts[i];
        if (cum > prev) {
            keys[n] = (long long)(lh_highest(last) / 1000);
            cums[n] = (long long)cum;
            n++;
        }
        prev = cum;
        if (last >= LH_BUCKETS - 1) break;
    }
    reply_map(c, n);
    for (int k = 0; k < n; k++) {
        reply_int(c, keys[k]);
        reply_int(c, cums[k]);
    }
}

typedef struct hist_walk {
    client *c;
    int count;          /* count only (first pass) */
    long n;
} hist_walk;

static void histogram_one(command *cmd, void *ud) {
    hist_walk *w = ud;
    const lhist *h = latency_hist_of(cmd);
    if (!h) return;
    w->n++;
    if (!w->count) reply_cdf(w->c, cmd, h);
}

/* "get", "client|list", "CLIENT" (a container: its subcommands too). */
static command *lookup_fullname(span s) {
    const char *bar = memchr(s.p, '|', s.len);
    if (!bar) return command_lookup_name(s.p, s.len);
    command *parent = command_lookup_name(s.p, (size_t)(bar - s.p));
    if (!parent || !parent->subcmds) return NULL;
    span sub = {bar + 1, s.len - (size_t)(bar + 1 - s.p)};
    for (command *x = parent->subcmds; x->name; x++)
        if (span_eq_nocase(sub, x->name)) return x;
    return NULL;
}

static void histogram_args(client *c, hist_walk *w) {
    for (int j = 2; j < c->argc; j++) {
        command *cmd = lookup_fullname(c->argv[j]);
        if (!cmd) continue;
        histogram_one(cmd, w);
        for (command *s = cmd->subcmds; s && s->name; s++) histogram_one(s, w);
    }
}

static void latency_histogram(client *c) {
    hist_walk w = {c, 1, 0};
    if (c->argc == 2) command_foreach(histogram_one, &w);
    else histogram_args(c, &w);
    reply_map(c, w.n);
    w.count = 0;
    if (c->argc == 2) command_foreach(histogram_one, &w);
    else histogram_args(c, &w);
}

static void latency_doctor(client *c) {
    sbuf b = {0};
    if (lm_count() == 0) {
        sb_adds(&b, "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the "
                    "slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think "
                    "things over.\n");
    } else {
        sb_adds(&b, "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about "
                    "it, do you Dave?\n\n");
        for (int i = 0; i < lm_count(); i++) {
            int32_t t;
            uint32_t ms;
            lm_latest(i, &t, &ms);
            sb_addf(&b, "%d. %s: %d latency spikes (average %ums, mean deviation 0ms, period 0 sec). Worst all "
                        "time event %ums.\n", i + 1, lm_name(i), lm_samples(i), ms, lm_max(i));
        }
    }
    reply_verbatim(c, b.p, b.len, "txt");
    sb_free(&b);
}

static void latency_help(client *c) {
    static const char *const lines[] = {
        "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the specified command "
        "names.",
        "    If no commands are specified then all histograms are replied.",
        "HELP",
        "    Prints this help.",
        NULL,
    };
    reply_help(c, lines);
}

/* ------------------------------------------------------------------ STATS */

static double per_op(uint64_t n, uint64_t ops) { return ops ? (double)n / (double)ops : 0.0; }

static void cmd_stats(client *c) {
    const server_stats *s = &srv.stats;
    const lhist *all = latency_hist_all(), *bh = latency_hist_batch();
    uint64_t lookups = s->keyspace_hits + s->keyspace_misses;
    sbuf b = {0};
    sb_addf(&b, "{\"hits\":%llu,\"misses\":%llu,\"hit_rate\":%.6f,", (unsigned long long)s->keyspace_hits,
            (unsigned long long)s->keyspace_misses, per_op(s->keyspace_hits, lookups));
    sb_addf(&b, "\"p50_us\":%.3f,\"p95_us\":%.3f,\"p99_us\":%.3f,", (double)lh_quantile(all, 0.50) / 1000.0,
            (double)lh_quantile(all, 0.95) / 1000.0, (double)lh_quantile(all, 0.99) / 1000.0);
    sb_addf(&b, "\"batch\":{\"count\":%llu,\"mean\":%.3f,\"p50\":%llu,\"p99\":%llu,\"max\":%llu},",
            (unsigned long long)bh->total, per_op(bh->sum, bh->total), (unsigned long long)lh_quantile(bh, 0.50),
            (unsigned long long)lh_quantile(bh, 0.99), (unsigned long long)bh->max);
    sb_addf(&b, "\"syscalls_per_op\":{\"read\":%.6f,\"writev\":%.6f,\"epoll_wait\":%.6f},",
            per_op(s->reads, s->numcommands), per_op(s->writes, s->numcommands),
            per_op(srv.el ? srv.el->polls : 0, s->numcommands));
    sb_addf(&b, "\"tail_events\":{\"over_1ms\":%llu,\"over_10ms\":%llu}}", (unsigned long long)latency_tail_over(0),
            (unsigned long long)latency_tail_over(1));
    reply_bulk(c, b.p, b.len);
    sb_free(&b);
}

/* ---------------------------------------------------------------- tables */

static void latency_container(client *c) { latency_help(c); }

#define F_LAT (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define A_LAT "admin slow dangerous"

static command latency_subcommands[] = {
    CMD("doctor", latency_doctor, 2, .flags = F_LAT, .acl = A_LAT,
        .summary = "Return a human readable latency analysis report.", .since = "2.8.13", .complexity = "O(1)"),
    CMD("graph", latency_graph, 3, .flags = F_LAT, .acl = A_LAT,
        .summary = "Return a latency graph for the event.", .since = "2.8.13", .complexity = "O(1)"),
    CMD("help", latency_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow",
        .summary = "Show helpful text about the different subcommands.", .since = "2.8.13", .complexity = "O(1)"),
    CMD("histogram", latency_histogram, -2, .flags = F_LAT, .acl = A_LAT,
        .summary = "Return the cumulative distribution of latencies of a subset of commands or all.", .since = "7.0.0",
        .complexity = "O(N) where N is the number of commands with latency information being retrieved."),
    CMD("history", latency_history, 3, .flags = F_LAT, .acl = A_LAT,
        .summary = "Return timestamp-latency samples for the event.", .since = "2.8.13", .complexity = "O(1)"),
    CMD("latest", latency_latest, 2, .flags = F_LAT, .acl = A_LAT,
        .summary = "Return the latest latency samples for all events.", .since = "2.8.13", .complexity = "O(1)"),
    CMD("reset", latency_reset, -2, .flags = F_LAT, .acl = A_LAT,
        .summary = "Reset latency data for one or more events.", .since = "2.8.13", .complexity = "O(1)"),
    {0},
};

static command latency_commands[] = {
    CMD("latency", latency_container, -2, .acl = "slow", .summary = "A container for latency diagnostics commands",
        .since = "2.8.13", .complexity = "Depends on subcommand.", .subcmds = latency_subcommands),
    CMD("stats", cmd_stats, 1, .flags = CMD_LOADING | CMD_STALE, .acl = "slow",
        .summary = "Return hit rate, latency quantiles, batch sizes and syscalls per command as JSON (ferry)",
        .since = "0.1.0", .complexity = "O(1)"),
    {0},
};
const command_group latency_group = {"server", latency_commands};
