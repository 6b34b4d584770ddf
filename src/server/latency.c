/* latency.c - latency histograms (per command, all commands, batch size),
 * the hooks the command path calls after a timed call, the latency monitor's
 * event store, and INFO latencystats. See latency.h for the why.
 *
 * Per-command histograms are allocated lazily (16 KB each) and hang off
 * the command (cmd->lat_hist), so only commands that ran pay for one and
 * the hot path reaches its histogram through one pointer.
 */
#include "latency.h"
#include "config.h"
#include "sbuf.h"
#include "server.h"
#include "zmalloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ histogram */

uint64_t lh_lowest(unsigned idx) {
    if (idx < LH_SUB) return idx;
    unsigned k = idx - LH_SUB;
    unsigned shift = k / LH_SUB;                 /* exponent - LH_SUB_BITS */
    return ((uint64_t)LH_SUB + (k % LH_SUB)) << shift;
}

uint64_t lh_highest(unsigned idx) {
    if (idx < LH_SUB) return idx;
    unsigned shift = (idx - LH_SUB) / LH_SUB;
    return lh_lowest(idx) + ((uint64_t)1 << shift) - 1;
}

uint64_t lh_quantile(const lhist *h, double q) {
    if (!h || h->total == 0) return 0;
    if (q < 0) q = 0;
    if (q > 1) q = 1;
    double t = q * (double)h->total;
    uint64_t target = (uint64_t)t;
    if ((double)target < t) target++;
    if (target == 0) target = 1;
    uint64_t cum = 0;
    for (unsigned i = 0; i < LH_BUCKETS; i++) {
        cum += h->counts[i];
        if (cum >= target) return lh_highest(i);
    }
    return lh_highest(LH_BUCKETS - 1);
}

uint64_t lh_count_le(const lhist *h, uint64_t v) {
    if (!h) return 0;
    unsigned last = lh_index(v);
    uint64_t cum = 0;
    for (unsigned i = 0; i <= last; i++) cum += h->counts[i];
    return cum;
}

void lh_reset(lhist *h) { memset(h, 0, sizeof *h); }

static lhist hist_all, hist_batch;
static uint64_t over_1ms, over_10ms;

const lhist *latency_hist_of(const command *cmd) {
    return cmd->lat_hist && cmd->lat_hist->total ? cmd->lat_hist : NULL;
}
const lhist *latency_hist_all(void) { return &hist_all; }
const lhist *latency_hist_batch(void) { return &hist_batch; }
uint64_t latency_tail_over(int ms10) { return ms10 ? over_10ms : over_1ms; }

/* cmd's histogram, created on first use. */
static lhist *hist_for(command *cmd) {
    if (!cmd->lat_hist) cmd->lat_hist = zcalloc(sizeof(lhist));
    return cmd->lat_hist;
}

void latency_record(command *cmd, uint64_t ns) {
    if (!srv.cfg.latency_tracking) return;
    lh_record(hist_for(cmd), ns);
    lh_record(&hist_all, ns);
    if (ns > 1000000) over_1ms++;
    if (ns > 10000000) over_10ms++;
}

void latency_record_run(command *cmd, uint64_t ns, uint64_t n) {
    if (!srv.cfg.latency_tracking || n == 0) return;
    uint64_t each = ns / n;
    lh_record_n(hist_for(cmd), each, n);
    lh_record_n(&hist_all, each, n);
    if (each > 1000000) over_1ms += n;
    if (each > 10000000) over_10ms += n;
}

void latency_record_batch(uint64_t n) { lh_record(&hist_batch, n); }

static void reset_hist(command *cmd, void *ud) {
    (void)ud;
    if (cmd->lat_hist) lh_reset(cmd->lat_hist);
}

void latency_reset_stats(void) {
    command_foreach(reset_hist, NULL);
    lh_reset(&hist_all);
    lh_reset(&hist_batch);
    over_1ms = over_10ms = 0;
}

/* The per-call clock. clock_gettime() costs ~25 ns per read here and its
 * vDSO orders the TSC read with lfence, which also keeps the next pipelined
 * commands' cache misses from overlapping (measured: ~50 ns per timed call at
 * P=100). On x86-64 we read the TSC directly (no fence: a few ns of skew is
 * far below the histogram's resolution) and scale it with a factor
 * calibrated against CLOCK_MONOTONIC at start-up; elsewhere, or before
 * latency_clock_init(), clock_gettime is used. */
#if defined(__x86_64__)
#include <x86intrin.h>
static double tsc_ns_per_tick; /* 0 = not calibrated */
#endif

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void latency_clock_init(void) {
#if defined(__x86_64__)
    uint64_t n0 = mono_ns(), t0 = __rdtsc(), n1;
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    uint64_t t1 = __rdtsc();
    n1 = mono_ns();
    if (t1 > t0 && n1 > n0) tsc_ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
#endif
}

uint64_t latency_now_ns(void) {
#if defined(__x86_64__)
    if (tsc_ns_per_tick > 0) return (uint64_t)((double)__rdtsc() * tsc_ns_per_tick);
#endif
    return mono_ns();
}

void latency_after_call(client *c, command *cmd, uint64_t ns) {
    latency_record(cmd, ns);
    slowlog_maybe_add(c, cmd, ns / 1000);
    if (srv.cfg.latency_monitor_threshold > 0)
        latency_monitor_add((cmd->flags & CMD_FAST) ? "fast-command" : "command", ns / 1000000);
}

/* ------------------------------------------------------ INFO latencystats */

typedef struct info_ctx {
    sbuf *b;
    char *pct;              /* latency-tracking-info-percentiles, canonical ("50 99 99.9") */
} info_ctx;

static void info_one(command *cmd, void *ud) {
    info_ctx *ctx = ud;
    const lhist *h = latency_hist_of(cmd);
    if (!h) return;
    sb_addf(ctx->b, "latency_percentiles_usec_%s:", cmd->fullname);
    const char *p = ctx->pct;
    for (int i = 0; p && *p; i++) { /* "p<percentile as configured>=<usec>", comma separated */
        const char *sp = strchr(p, ' ');
        size_t n = sp ? (size_t)(sp - p) : strlen(p);
        char num[64];
        snprintf(num, sizeof num, "%.*s", (int)n, p);
        double q = strtod(num, NULL) / 100.0;
        sb_addf(ctx->b, "%sp%s=%.3f", i ? "," : "", num, (double)lh_quantile(h, q) / 1000.0);
        p = sp ? sp + 1 : NULL;
    }
    sb_adds(ctx->b, "\r\n");
}

void latency_info_section(sbuf *b) {
    info_ctx ctx = {b, config_get_by_name(&srv.cfg, "latency-tracking-info-percentiles")};
    command_foreach(info_one, &ctx);
    zfree(ctx.pct);
}

/* -------------------------------------------------------- latency monitor */

#define LM_EVENTS 32
#define LM_SAMPLES 160      /* Redis's LATENCY_TS_LEN */

typedef struct lm_event {
    char name[48];
    struct { int32_t time; uint32_t latency; } samples[LM_SAMPLES];
    int idx;                /* next slot */
    uint32_t max;
} lm_event;

static lm_event events[LM_EVENTS];
static int nevents;

static lm_event *lm_find(const char *name, size_t len) {
    for (int i = 0; i < nevents; i++)
        if (strlen(events[i].name) == len && memcmp(events[i].name, name, len) == 0) return &events[i];
    return NULL;
}

/* Redis's latencyAddSample: one sample per second (the max of that second). */
static void lm_add_sample(const char *event, uint32_t ms) {
    size_t len = strlen(event);
    lm_event *e = lm_find(event, len);
    if (!e) {
        if (nevents == LM_EVENTS || len >= sizeof e->name) return;
        e = &events[nevents++];
        memset(e, 0, sizeof *e);
        memcpy(e->name, event, len + 1);
    }
    int32_t now = (int32_t)(ev_now_ms() / 1000);
    if (ms > e->max) e->max = ms;
    int prev = (e->idx + LM_SAMPLES - 1) % LM_SAMPLES;
    if (e->samples[prev].time == now) {
        if (ms > e->samples[prev].latency) e->samples[prev].latency = ms;
        return;
    }
    e->samples[e->idx].time = now;
    e->samples[e->idx].latency = ms;
    e->idx = (e->idx + 1) % LM_SAMPLES;
}

void latency_monitor_add(const char *event, uint64_t ms) {
    long long th = srv.cfg.latency_monitor_threshold;
    if (th > 0 && ms >= (uint64_t)th) lm_add_sample(event, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
}

/* Accessors for latency_cmd.c */
int lm_count(void) { return nevents; }
const char *lm_name(int i) { return events[i].name; }
uint32_t lm_max(int i) { return events[i].max; }
/* Samples of event i oldest first: calls fn(time, latency) for each. */
void lm_foreach_sample(int i, void (*fn)(int32_t t, uint32_t ms, void *ud), void *ud) {
    lm_event *e = &events[i];
    for (int j = 0; j < LM_SAMPLES; j++) {
        int k = (e->idx + j) % LM_SAMPLES;
        if (e->samples[k].time) fn(e->samples[k].time, e->samples[k].latency, ud);
    }
}
int lm_samples(int i) {
    int n = 0;
    for (int j = 0; j < LM_SAMPLES; j++) n += events[i].samples[j].time != 0;
    return n;
}
/* Latest sample of event i. */
void lm_latest(int i, int32_t *t, uint32_t *ms) {
    lm_event *e = &events[i];
    int prev = (e->idx + LM_SAMPLES - 1) % LM_SAMPLES;
    *t = e->samples[prev].time;
    *ms = e->samples[prev].latency;
}
int lm_find_index(const char *name, size_t len) {
    lm_event *e = lm_find(name, len);
    return e ? (int)(e - events) : -1;
}
/* Remove event i (order of the others is kept). */
void lm_remove(int i) {
    memmove(&events[i], &events[i + 1], sizeof(lm_event) * (size_t)(nevents - i - 1));
    nevents--;
}
