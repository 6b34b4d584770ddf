/* hist.c - log-linear latency histogram (see hist.h for the layout and why). */
#include "hist.h"

#include <math.h>
#include <string.h>

void fb_hist_reset(fb_hist *h) {
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

unsigned fb_hist_index(uint64_t v) {
    unsigned msb, shift;
    if (v < 2 * FB_HIST_SUB) return (unsigned)v;
    if (v >= (UINT64_C(1) << FB_HIST_MAXLOG)) v = (UINT64_C(1) << FB_HIST_MAXLOG) - 1;
    msb = 63u - (unsigned)__builtin_clzll(v);
    shift = msb - 7u; /* keeps the top 8 bits: mantissa in [128, 256) */
    return 2 * FB_HIST_SUB + (shift - 1) * FB_HIST_SUB + (unsigned)((v >> shift) - FB_HIST_SUB);
}

void fb_hist_range(unsigned idx, uint64_t *lo, uint64_t *hi) {
    unsigned k, shift;
    uint64_t mant;
    if (idx < 2 * FB_HIST_SUB) {
        *lo = *hi = idx;
        return;
    }
    k = idx - 2 * FB_HIST_SUB;
    shift = k / FB_HIST_SUB + 1;
    mant = FB_HIST_SUB + k % FB_HIST_SUB;
    *lo = mant << shift;
    *hi = *lo + (UINT64_C(1) << shift) - 1;
}

void fb_hist_add(fb_hist *h, uint64_t v, uint64_t n) {
    if (n == 0) return;
    h->b[fb_hist_index(v)] += n;
    h->count += n;
    h->sum += (double)v * (double)n;
    if (v < h->min) h->min = v;
    if (v > h->max) h->max = v;
}

void fb_hist_merge(fb_hist *dst, const fb_hist *src) {
    unsigned i;
    if (src->count == 0) return;
    for (i = 0; i < FB_HIST_N; i++) dst->b[i] += src->b[i];
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
}

double fb_hist_mean(const fb_hist *h) {
    return h->count ? h->sum / (double)h->count : 0.0;
}

double fb_hist_pct(const fb_hist *h, double q) {
    uint64_t rank, seen = 0, lo, hi;
    unsigned i;
    double mid;
    if (h->count == 0) return 0.0;
    if (q <= 0) return (double)h->min;
    if (q >= 100) return (double)h->max;
    rank = (uint64_t)ceil(q / 100.0 * (double)h->count);
    if (rank < 1) rank = 1;
    for (i = 0; i < FB_HIST_N; i++) {
        seen += h->b[i];
        if (seen >= rank) break;
    }
    if (i == FB_HIST_N) return (double)h->max;
    fb_hist_range(i, &lo, &hi);
    mid = ((double)lo + (double)hi) / 2.0;
    if (mid < (double)h->min) mid = (double)h->min;
    if (mid > (double)h->max) mid = (double)h->max;
    return mid;
}
