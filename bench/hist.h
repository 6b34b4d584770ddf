/* hist.h - log-linear latency histogram for ferry-bench (HdrHistogram-style).
 *
 * Why: recording must cost a few instructions per reply (the client has to
 * outrun the server) and percentiles must stay accurate over ns..minutes.
 * Values are nanoseconds: 0..255 are exact, above that every power of two
 * is cut into 128 equal buckets, so a bucket is at most 1/128 (0.78%) of its
 * value wide. Percentiles report the bucket's midpoint (error <= 0.4%);
 * min, max and mean are exact. Fixed size (~36 KiB), no allocation, so each
 * thread keeps its own and they are merged at the end.
 */
#ifndef FB_HIST_H
#define FB_HIST_H

#include <stdint.h>

#define FB_HIST_SUB    128                      /* buckets per power of two */
#define FB_HIST_MAXLOG 40                       /* values clamp at 2^40 ns (~18 min) */
#define FB_HIST_N      (2 * FB_HIST_SUB + (FB_HIST_MAXLOG - 8) * FB_HIST_SUB)

typedef struct fb_hist {
    uint64_t count;
    uint64_t min, max; /* ns, exact */
    double sum;        /* ns, for the mean */
    uint64_t b[FB_HIST_N];
} fb_hist;

void fb_hist_reset(fb_hist *h);
/* Record n samples of value v (ns). */
void fb_hist_add(fb_hist *h, uint64_t v, uint64_t n);
void fb_hist_merge(fb_hist *dst, const fb_hist *src);
/* Value (ns) at percentile q in [0,100]; 0 if empty. */
double fb_hist_pct(const fb_hist *h, double q);
double fb_hist_mean(const fb_hist *h);

/* bucket index of v and the bucket's [lo, hi] range (exposed for tests) */
unsigned fb_hist_index(uint64_t v);
void fb_hist_range(unsigned idx, uint64_t *lo, uint64_t *hi);

#endif
