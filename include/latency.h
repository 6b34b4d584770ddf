/* latency.h - latency observability: log-linear latency histograms per
 * command (INFO latencystats, LATENCY HISTOGRAM, Prometheus), the batch-size
 * histogram (commands executed per read), the latency monitor (LATENCY
 * LATEST/HISTORY/RESET) and the STATS JSON summary.
 *
 * Why a home-grown histogram: HdrHistogram-style buckets (64 linear
 * sub-buckets per power of two) give <= 1.6% relative error from 1 ns to
 * ~137 s in 2048 uint64 counters, and recording is a clz, a shift and an
 * increment: constant time, no allocation on the hot path after the first
 * call of a command. A command's histogram hangs off the command itself
 * (command.lat_hist), allocated at its first timed call.
 */
#ifndef FERRY_LATENCY_H
#define FERRY_LATENCY_H

#include <stdint.h>
#include "command.h"

#define LH_SUB_BITS 6
#define LH_SUB (1u << LH_SUB_BITS)              /* linear sub-buckets per power of two */
#define LH_MAX_EXP 37                            /* values clamp to 2^37-1 (~137 s in ns) */
#define LH_BUCKETS (LH_SUB + (LH_MAX_EXP - LH_SUB_BITS) * LH_SUB)   /* 2048 */

typedef struct lhist {
    uint64_t total;             /* number of recorded values */
    uint64_t sum;               /* sum of recorded values (unclamped) */
    uint64_t max;               /* largest recorded value (unclamped) */
    uint64_t counts[LH_BUCKETS];
} lhist;

/* Bucket of a value: exact below 64, then 64 sub-buckets per power of two. */
static inline unsigned lh_index(uint64_t v) {
    if (v >= (1ULL << LH_MAX_EXP)) v = (1ULL << LH_MAX_EXP) - 1;
    if (v < LH_SUB) return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    return LH_SUB + (e - LH_SUB_BITS) * LH_SUB + (unsigned)((v >> (e - LH_SUB_BITS)) & (LH_SUB - 1));
}
uint64_t lh_lowest(unsigned idx);       /* smallest value of bucket idx */
uint64_t lh_highest(unsigned idx);      /* largest value of bucket idx ("highest equivalent value") */
static inline void lh_record(lhist *h, uint64_t v) {
    h->counts[lh_index(v)]++;
    h->total++;
    h->sum += v;
    if (v > h->max) h->max = v;
}
/* n values of v at once (a run of identical commands timed together). */
static inline void lh_record_n(lhist *h, uint64_t v, uint64_t n) {
    h->counts[lh_index(v)] += n;
    h->total += n;
    h->sum += v * n;
    if (v > h->max) h->max = v;
}
/* Value at quantile q in [0,1]: the highest equivalent value of the bucket
 * holding the ceil(q*total)-th smallest value (HdrHistogram's convention);
 * 0 if empty. */
uint64_t lh_quantile(const lhist *h, double q);
/* Number of recorded values whose bucket index <= lh_index(v), i.e. the
 * values <= v within the bucket resolution. */
uint64_t lh_count_le(const lhist *h, uint64_t v);
void lh_reset(lhist *h);

/* ---- hooks the command path calls ---- */

/* Monotonic clock in ns (for timing a call). */
uint64_t latency_now_ns(void);
/* Calibrates the fast per-call clock (main calls it once at start-up). */
void latency_clock_init(void);
/* Everything after a timed call: latency_record + slowlog_maybe_add +
 * latency monitor "command"/"fast-command" event. Call with c->argv/argc
 * still those of the call. */
void latency_after_call(client *c, struct command *cmd, uint64_t ns);
/* A run of n consecutive calls of one fast command took ns in all: records n
 * samples of ns/n in the command's histogram (see command.c). */
void latency_record_run(struct command *cmd, uint64_t ns, uint64_t n);
/* Record one call's duration (no-op when latency-tracking is no). */
void latency_record(struct command *cmd, uint64_t ns);
/* Record the number of commands one read() yielded (p in the paper). */
void latency_record_batch(uint64_t commands_in_this_read);
/* Latency monitor: add a sample to `event` if latency-monitor-threshold is
 * set and ms >= it (Redis's latencyAddSampleIfNeeded). */
void latency_monitor_add(const char *event, uint64_t ms);
/* The latency monitor's events, for the LATENCY command (latency_cmd.c):
 * how many, each one's name, worst sample (ms), samples kept (oldest first
 * through lm_foreach_sample), latest sample; lookup by name (-1 if none)
 * and removal (LATENCY RESET). */
int lm_count(void);
const char *lm_name(int i);
uint32_t lm_max(int i);
int lm_samples(int i);
void lm_foreach_sample(int i, void (*fn)(int32_t t, uint32_t ms, void *ud), void *ud);
void lm_latest(int i, int32_t *t, uint32_t *ms);
int lm_find_index(const char *name, size_t len);
void lm_remove(int i);
/* Forget all histograms (CONFIG RESETSTAT). */
void latency_reset_stats(void);

/* ---- readers (INFO, metrics) ---- */
const lhist *latency_hist_of(const struct command *cmd);  /* NULL if none */
const lhist *latency_hist_all(void);                      /* every command */
const lhist *latency_hist_batch(void);
uint64_t latency_tail_over(int ms10);  /* calls over 1 ms (ms10=0) or 10 ms (ms10=1) */

struct sbuf;
void latency_info_section(struct sbuf *b);  /* INFO latencystats body */

/* SLOWLOG (slowlog.c) */
void slowlog_maybe_add(client *c, struct command *cmd, uint64_t duration_us);

#endif
