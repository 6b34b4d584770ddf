/* test_latency.c - the log-linear latency histogram (latency.h): bucket
 * boundaries are contiguous and monotonic, every value from 1 ns to 1e11 ns
 * is reported within 2% relative error, quantiles agree with a sorted sample
 * of random data, and count_le / reset behave. These are the properties
 * INFO latencystats, LATENCY HISTOGRAM and the Prometheus histograms rely on. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "command.h"
#include "latency.h"
#include "registry.h"
#include "server.h"
#include "zmalloc.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

Test(latency, bucket_boundaries_contiguous) {
    cr_assert_eq(lh_lowest(0), 0);
    for (unsigned i = 0; i + 1 < LH_BUCKETS; i++) {
        cr_assert(lh_lowest(i) <= lh_highest(i), "bucket %u", i);
        cr_assert_eq(lh_highest(i) + 1, lh_lowest(i + 1), "gap after bucket %u", i);
        cr_assert_eq(lh_index(lh_lowest(i)), i);
        cr_assert_eq(lh_index(lh_highest(i)), i);
    }
    cr_assert_eq(lh_highest(LH_BUCKETS - 1), (1ULL << LH_MAX_EXP) - 1);
}

Test(latency, exact_below_64_and_clamped_above_max) {
    for (uint64_t v = 0; v < 64; v++) cr_assert_eq(lh_index(v), v);
    cr_assert_eq(lh_index(64), 64);
    cr_assert_eq(lh_index(127), 127);
    cr_assert_eq(lh_index(128), 128);
    cr_assert_eq(lh_index(UINT64_MAX), LH_BUCKETS - 1);
    cr_assert_eq(lh_index(1ULL << LH_MAX_EXP), LH_BUCKETS - 1);
}

static void check_rel_error(uint64_t v) {
    uint64_t hi = lh_highest(lh_index(v)), lo = lh_lowest(lh_index(v));
    cr_assert(lo <= v && v <= hi, "value %llu outside its bucket", (unsigned long long)v);
    double err = (double)(hi - v) / (double)v;
    cr_assert(err <= 0.02, "value %llu reported as %llu (%.4f)", (unsigned long long)v, (unsigned long long)hi, err);
}

Test(latency, relative_error_1ns_to_1e11ns) {
    for (uint64_t v = 1; v <= 100000; v++) check_rel_error(v);
    for (double d = 1e5; d <= 1e11; d *= 1.0007) check_rel_error((uint64_t)d);
    for (int k = 0; k < 37; k++) {
        uint64_t p = 1ULL << k;
        check_rel_error(p);
        if (p > 1) check_rel_error(p - 1);
        check_rel_error(p + 1);
    }
    check_rel_error(100000000000ULL);
}

Test(latency, quantiles_match_sorted_sample) {
    enum { N = 100000 };
    static lhist h;
    static uint64_t sample[N];
    lh_reset(&h);
    for (int i = 0; i < N; i++) {
        /* log-uniform over 1 ns .. 1e11 ns */
        double e = (double)(rng() >> 11) / (double)(1ULL << 53) * 11.0;
        uint64_t v = (uint64_t)pow(10.0, e);
        if (v == 0) v = 1;
        sample[i] = v;
        lh_record(&h, v);
    }
    qsort(sample, N, sizeof sample[0], cmp_u64);
    cr_assert_eq(h.total, N);
    cr_assert_eq(h.max, sample[N - 1]);
    const double qs[] = {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0};
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        size_t rank = (size_t)ceil(qs[k] * N);
        if (rank == 0) rank = 1;
        uint64_t exact = sample[rank - 1], got = lh_quantile(&h, qs[k]);
        double err = (double)(got > exact ? got - exact : exact - got) / (double)exact;
        cr_assert(err <= 0.02, "q=%g exact=%llu got=%llu", qs[k], (unsigned long long)exact,
                  (unsigned long long)got);
    }
}

Test(latency, count_le_and_reset) {
    static lhist h;
    lh_reset(&h);
    cr_assert_eq(lh_quantile(&h, 0.5), 0);
    for (uint64_t v = 1; v <= 1000; v++) lh_record(&h, v * 1000);
    cr_assert_eq(lh_count_le(&h, UINT64_MAX), 1000);
    cr_assert_eq(lh_count_le(&h, 0), 0);
    uint64_t half = lh_count_le(&h, 500000);
    cr_assert(half >= 500 && half <= 510, "count_le(500us) = %llu", (unsigned long long)half);
    uint64_t prev = 0;
    for (uint64_t b = 1; b < (1ULL << 40); b *= 3) {
        uint64_t c = lh_count_le(&h, b);
        cr_assert(c >= prev);
        prev = c;
    }
    cr_assert_eq(h.sum, 1000ULL * 1001 / 2 * 1000);
    lh_reset(&h);
    cr_assert_eq(h.total, 0);
    cr_assert_eq(lh_count_le(&h, UINT64_MAX), 0);
}

/* A registered command (CONFIG RESETSTAT must reach every command's
 * histogram, which it finds through the command table). */
Test(latency, record_honours_latency_tracking) {
    registry_commands();
    command *fake = command_lookup_name("get", 3);
    cr_assert_not_null(fake);
    srv.cfg.latency_tracking = 0;
    latency_record(fake, 1000);
    cr_assert_null(latency_hist_of(fake));
    srv.cfg.latency_tracking = 1;
    latency_record(fake, 1000);
    latency_record(fake, 3000);
    const lhist *h = latency_hist_of(fake);
    cr_assert_not_null(h);
    cr_assert_eq(h->total, 2);
    cr_assert_eq(latency_hist_all()->total, 2);
    latency_record_batch(7);
    cr_assert_eq(latency_hist_batch()->total, 1);
    cr_assert_eq(latency_hist_batch()->max, 7);
    latency_reset_stats();
    cr_assert_null(latency_hist_of(fake));
    cr_assert_eq(latency_hist_all()->total, 0);
}
