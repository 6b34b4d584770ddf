/* test_bench_resp.c - Criterion unit tests for ferry-bench's reply counter
 * (bench/resp_count.c), plus its histogram and request pool.
 *
 * Why: ferry-bench's throughput and latency numbers are only as good as its
 * reply count. The counter sees the server's stream cut at arbitrary read()
 * boundaries, so every test stream is fed split at every byte position, at
 * every pair of positions and one byte at a time, and must give exactly the
 * same reply count, error count and first error text as one whole feed. Each
 * piece is an exact-size heap copy so AddressSanitizer catches over-reads.
 *
 * Multi-element replies (LRANGE 600, HGETALL / ZRANGE of 1000) are checked
 * at every single split point and byte at a time; the prefill that writes
 * their data is run over a socketpair against canned replies.
 *
 * The bench is a separate program whose objects the unit-test link does not
 * include, so its .c files are included directly (all names are fb_-prefixed
 * and cannot collide with the server's symbols).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>
#include <unistd.h>

#include "../../bench/hist.c"
#include "../../bench/out.c"
#include "../../bench/prefill.c"
#include "../../bench/fbtls.c" /* the plain (no FB_TLS) connection I/O prefill.c calls */
#include "../../bench/resp_count.c"
#include "../../bench/work.c"

typedef struct {
    long replies;
    uint64_t errors;
    int bad;
    char errtext[FB_RESP_ERRTEXT];
} outcome;

/* feed s[from, to) as an exact-size heap copy; returns the count or -1 */
static long feed(fb_resp_state *st, const char *s, size_t from, size_t to) {
    size_t n = to - from;
    char *copy = malloc(n ? n : 1);
    long r;
    cr_assert_not_null(copy);
    memcpy(copy, s + from, n);
    r = fb_resp_count(copy, n, st);
    free(copy);
    return r;
}

/* feed s split at the (sorted) cut positions */
static outcome run_cuts(const char *s, size_t len, const size_t *cuts, int ncuts) {
    fb_resp_state st;
    outcome o;
    size_t prev = 0;
    int i;
    memset(&o, 0, sizeof o);
    fb_resp_init(&st);
    for (i = 0; i <= ncuts; i++) {
        size_t next = i < ncuts ? cuts[i] : len;
        long r = feed(&st, s, prev, next);
        if (r < 0) {
            o.bad = 1;
            return o;
        }
        o.replies += r;
        prev = next;
    }
    cr_assert_eq((uint64_t)o.replies, st.replies);
    o.errors = st.errors;
    if (st.have_errtext) snprintf(o.errtext, sizeof o.errtext, "%s", st.errtext);
    return o;
}

static void same(const outcome *a, const outcome *b, const char *what, size_t i, size_t j) {
    cr_assert_eq(a->bad, b->bad, "%s cut %zu/%zu: bad %d vs %d", what, i, j, a->bad, b->bad);
    if (a->bad) return;
    cr_assert_eq(a->replies, b->replies, "%s cut %zu/%zu: replies %ld vs %ld", what, i, j, a->replies,
                 b->replies);
    cr_assert_eq(a->errors, b->errors, "%s cut %zu/%zu: errors", what, i, j);
    cr_assert_str_eq(a->errtext, b->errtext, "%s cut %zu/%zu: errtext", what, i, j);
}

/* whole feed gives want/want_err; every single and double split and the
 * byte-at-a-time feed agree with it */
static void check_stream(const char *s, long want, uint64_t want_err, const char *want_text) {
    size_t len = strlen(s), i, j;
    size_t cuts[2];
    outcome whole = run_cuts(s, len, NULL, 0), o;
    fb_resp_state st;
    long total = 0;

    cr_assert_not(whole.bad, "protocol error on a valid stream");
    cr_assert_eq(whole.replies, want, "replies %ld, want %ld", whole.replies, want);
    cr_assert_eq(whole.errors, want_err, "errors %llu, want %llu", (unsigned long long)whole.errors,
                 (unsigned long long)want_err);
    cr_assert_str_eq(whole.errtext, want_text);

    for (i = 0; i <= len; i++) {
        cuts[0] = i;
        o = run_cuts(s, len, cuts, 1);
        same(&whole, &o, "single", i, i);
        for (j = i; j <= len; j++) {
            cuts[1] = j;
            o = run_cuts(s, len, cuts, 2);
            same(&whole, &o, "double", i, j);
        }
    }
    fb_resp_init(&st);
    for (i = 0; i < len; i++) {
        long r = feed(&st, s, i, i + 1);
        cr_assert_geq(r, 0);
        total += r;
    }
    cr_assert_eq(total, want);
    cr_assert_eq(st.errors, want_err);
    cr_assert(fb_resp_idle(&st));
}

/* the mixed stream of the brief: 13 replies, 3 of them errors */
static const char MIXED[] =
    "+OK\r\n"                                 /* 1 */
    "-ERR wrong number of arguments\r\n"      /* 2: error */
    ":1\r\n"                                  /* 3 */
    "$-1\r\n"                                 /* 4 */
    "$5\r\nhello\r\n"                         /* 5 */
    "*2\r\n$3\r\nfoo\r\n$3\r\nbar\r\n"        /* 6 */
    "*-1\r\n"                                 /* 7 */
    "*2\r\n*2\r\n:1\r\n$0\r\n\r\n*1\r\n*0\r\n" /* 8: nested */
    "$0\r\n\r\n"                              /* 9: empty bulk */
    "*3\r\n+QUEUED\r\n-WRONGTYPE inner\r\n$-1\r\n" /* 10: array holding an error */
    "$4\r\n\r\n\r\n\r\n"                      /* 11: bulk of CRLFs */
    "-MOVED 1 x\r\n"                          /* 12: error */
    "*2\r\n$-1\r\n*-1\r\n";                   /* 13 */

Test(bench_resp, mixed_stream_every_split) {
    check_stream(MIXED, 13, 3, "ERR wrong number of arguments");
}

Test(bench_resp, simple_replies) {
    check_stream("+OK\r\n", 1, 0, "");
    check_stream(":1\r\n:-5\r\n", 2, 0, "");
    check_stream("$-1\r\n$5\r\nhello\r\n", 2, 0, "");
    check_stream("*-1\r\n*0\r\n", 2, 0, "");
    check_stream("", 0, 0, "");
}

Test(bench_resp, error_counting_and_first_text) {
    check_stream("-ERR a\r\n-ERR b\r\n+OK\r\n-ERR c\r\n", 4, 3, "ERR a");
    /* errors inside arrays count once per top-level reply */
    check_stream("*3\r\n-E1\r\n-E2\r\n:1\r\n*1\r\n*1\r\n-E3\r\n", 2, 2, "E1");
    /* an error line longer than the kept text is truncated, not overrun */
    {
        char s[400];
        char want[FB_RESP_ERRTEXT];
        memset(s, 0, sizeof s);
        s[0] = '-';
        memset(s + 1, 'e', 300);
        strcat(s, "\r\n+OK\r\n");
        memset(want, 'e', sizeof want - 1);
        want[sizeof want - 1] = '\0';
        check_stream(s, 2, 1, want);
    }
}

Test(bench_resp, resp3_types) {
    check_stream("_\r\n,1.5\r\n#t\r\n(12345678901234567890\r\n", 4, 0, "");
    check_stream("%2\r\n+a\r\n:1\r\n+b\r\n*2\r\n:1\r\n:2\r\n", 1, 0, "");
    check_stream("~2\r\n+a\r\n+b\r\n>3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$2\r\nhi\r\n", 2, 0, "");
    check_stream("=15\r\ntxt:Some string\r\n", 1, 0, "");
    check_stream("!21\r\nSYNTAX invalid syntax\r\n+OK\r\n", 2, 1, "(blob error)");
}

Test(bench_resp, counts_at_each_reply_boundary) {
    /* feeding up to the end of reply k returns exactly k so far */
    static const size_t ends[] = {5, 37, 41, 46, 57, 79, 84, 110, 116, 152, 162, 174, 188};
    fb_resp_state st;
    size_t prev = 0, k;
    long total = 0;
    cr_assert_eq(ends[12], strlen(MIXED));
    fb_resp_init(&st);
    for (k = 0; k < 13; k++) {
        long r = feed(&st, MIXED, prev, ends[k] - 1);
        cr_assert_eq(r, 0, "reply %zu completed one byte early", k + 1);
        cr_assert_not(fb_resp_idle(&st));
        r = feed(&st, MIXED, ends[k] - 1, ends[k]);
        cr_assert_eq(r, 1, "reply %zu not completed by its last byte", k + 1);
        cr_assert(fb_resp_idle(&st));
        total += r;
        prev = ends[k];
    }
    cr_assert_eq(total, 13);
}

Test(bench_resp, large_bulk_across_reads) {
    size_t n = 200000, len, off;
    char *s = malloc(n + 64);
    fb_resp_state st;
    long total = 0;
    len = (size_t)sprintf(s, "$%zu\r\n", n);
    memset(s + len, 'v', n);
    len += n;
    memcpy(s + len, "\r\n:7\r\n", 6);
    len += 6;
    fb_resp_init(&st);
    for (off = 0; off < len; off += 4093) {
        size_t to = off + 4093 < len ? off + 4093 : len;
        long r = feed(&st, s, off, to);
        cr_assert_geq(r, 0);
        total += r;
    }
    cr_assert_eq(total, 2);
    free(s);
}

Test(bench_resp, many_replies_in_one_buffer) {
    /* what a pipelined GET batch looks like */
    char *s = malloc(100 * 80);
    size_t len = 0;
    int i;
    fb_resp_state st;
    for (i = 0; i < 100; i++) {
        if (i % 7 == 3) len += (size_t)sprintf(s + len, "$-1\r\n");
        else len += (size_t)sprintf(s + len, "$64\r\n%064d\r\n", i);
    }
    fb_resp_init(&st);
    cr_assert_eq(fb_resp_count(s, len, &st), 100);
    cr_assert_eq(st.errors, 0);
    free(s);
}

/* ---- multi-element replies ----------------------------------------------------- */

/* s split at every single position and fed byte at a time: always want
 * replies, no errors (check_stream's double splits are O(n^3), too slow here) */
static void check_big(const char *s, size_t len, long want) {
    size_t i;
    outcome o;
    fb_resp_state st;
    long total = 0;
    for (i = 0; i <= len; i++) {
        o = run_cuts(s, len, &i, 1);
        cr_assert_not(o.bad, "protocol error at cut %zu", i);
        cr_assert_eq(o.replies, want, "cut %zu: replies %ld, want %ld", i, o.replies, want);
        cr_assert_eq(o.errors, 0);
    }
    fb_resp_init(&st);
    for (i = 0; i < len; i++) {
        char c = s[i];
        long r = fb_resp_count(&c, 1, &st);
        cr_assert_geq(r, 0);
        total += r;
    }
    cr_assert_eq(total, want);
    cr_assert(fb_resp_idle(&st));
}

/* an LRANGE-like reply: n bulks of vlen bytes, then ":1" */
static char *lrange_reply(size_t n, size_t vlen, size_t *len) {
    char *s = malloc(32 + n * (vlen + 16)), *p = s;
    size_t i;
    p += sprintf(p, "*%zu\r\n", n);
    for (i = 0; i < n; i++) {
        p += sprintf(p, "$%zu\r\n", vlen);
        memset(p, 'x', vlen);
        p += vlen;
        p += sprintf(p, "\r\n");
    }
    p += sprintf(p, ":1\r\n");
    *len = (size_t)(p - s);
    return s;
}

Test(bench_resp, lrange_600_every_split) {
    size_t len;
    char *s = lrange_reply(600, 3, &len);
    check_big(s, len, 2);
    free(s);
}

Test(bench_resp, lrange_600_64b_every_split) {
    size_t len;
    char *s = lrange_reply(600, 64, &len);
    cr_assert_gt(len, 600 * 64);
    check_big(s, len, 2);
    free(s);
}

Test(bench_resp, lrange_600_one_reply_per_request) {
    /* 16 pipelined replies: the 600-element array completes only on its last byte */
    size_t one, i, k;
    char *r = lrange_reply(600, 64, &one), *s;
    fb_resp_state st;
    one -= 4; /* drop the ":1" */
    s = malloc(16 * one);
    for (i = 0; i < 16; i++) memcpy(s + i * one, r, one);
    fb_resp_init(&st);
    for (k = 0; k < 16; k++) {
        cr_assert_eq(fb_resp_count(s + k * one, one - 1, &st), 0);
        cr_assert_eq(fb_resp_count(s + k * one + one - 1, 1, &st), 1);
    }
    cr_assert_eq(st.replies, 16);
    free(s);
    free(r);
}

/* HGETALL of 1000 fields: RESP2 flat array, RESP3 map; ZRANGE WITHSCORES:
 * RESP2 flat array, RESP3 array of [member, double] pairs */
static char *coll_reply(int kind, size_t *len) {
    char *s = malloc(1000 * 64 + 64), *p = s;
    int i;
    p += sprintf(p, kind == 0 ? "*2000\r\n" : kind == 1 ? "%%1000\r\n" : "*1000\r\n");
    for (i = 0; i < 1000; i++) {
        if (kind == 2) p += sprintf(p, "*2\r\n$4\r\nm%03d\r\n,%d.5\r\n", i, i);
        else p += sprintf(p, "$4\r\nf%03d\r\n$3\r\nxxx\r\n", i);
    }
    p += sprintf(p, "+OK\r\n");
    *len = (size_t)(p - s);
    return s;
}

Test(bench_resp, hgetall_and_zrange_1000_every_split) {
    int kind;
    for (kind = 0; kind < 3; kind++) {
        size_t len;
        char *s = coll_reply(kind, &len);
        check_big(s, len, 2);
        free(s);
    }
}

static int is_bad(const char *s) {
    outcome o = run_cuts(s, strlen(s), NULL, 0);
    return o.bad;
}

Test(bench_resp, protocol_errors) {
    char deep[200];
    int i;
    cr_assert(is_bad("?what\r\n"));
    cr_assert(is_bad("$abc\r\n"));
    cr_assert(is_bad("$\r\n"));
    cr_assert(is_bad("$-2\r\n"));
    cr_assert(is_bad("*-5\r\n"));
    cr_assert(is_bad("$3\r\nfooXY"));
    cr_assert(is_bad("$3\r\nfoo\rX"));
    cr_assert(is_bad("*1\r\n|1\r\n+a\r\n+b\r\n"));
    cr_assert(is_bad("$99999999999999999999\r\n"));
    cr_assert(is_bad("$1-\r\n"));
    cr_assert(is_bad("$1\rx"));
    deep[0] = '\0';
    for (i = 0; i < FB_RESP_MAXDEPTH + 1; i++) strcat(deep, "*1\r\n");
    cr_assert(is_bad(deep));
    deep[0] = '\0';
    for (i = 0; i < FB_RESP_MAXDEPTH; i++) strcat(deep, "*1\r\n");
    strcat(deep, ":1\r\n");
    cr_assert_not(is_bad(deep));
    {
        /* once broken, it stays broken until re-initialised */
        fb_resp_state st;
        fb_resp_init(&st);
        cr_assert_eq(fb_resp_count("?", 1, &st), -1);
        cr_assert_eq(fb_resp_count("+OK\r\n", 5, &st), -1);
        fb_resp_init(&st);
        cr_assert_eq(fb_resp_count("+OK\r\n", 5, &st), 1);
    }
}

/* ---- histogram ---------------------------------------------------------------- */

Test(bench_hist, buckets_within_one_percent) {
    uint64_t v, lo, hi, rng = 7;
    int i;
    for (i = 0; i < 200000; i++) {
        unsigned idx;
        v = fb_rand(&rng) >> (fb_rand(&rng) % 64);
        if (v >= (UINT64_C(1) << FB_HIST_MAXLOG)) continue;
        idx = fb_hist_index(v);
        cr_assert_lt(idx, FB_HIST_N);
        fb_hist_range(idx, &lo, &hi);
        cr_assert(lo <= v && v <= hi, "v %llu not in [%llu, %llu]", (unsigned long long)v,
                  (unsigned long long)lo, (unsigned long long)hi);
        cr_assert_leq((double)(hi - lo), 0.01 * (double)lo + 0.5);
    }
    cr_assert_eq(fb_hist_index(UINT64_MAX), FB_HIST_N - 1);
}

Test(bench_hist, percentiles) {
    fb_hist h, h2;
    uint64_t i;
    fb_hist_reset(&h);
    fb_hist_reset(&h2);
    for (i = 1; i <= 100000; i++) fb_hist_add(i <= 50000 ? &h : &h2, i * 1000, 1);
    fb_hist_merge(&h, &h2);
    cr_assert_eq(h.count, 100000);
    cr_assert_eq(h.min, 1000);
    cr_assert_eq(h.max, 100000000);
    cr_assert_float_eq(fb_hist_mean(&h), 50000.5 * 1000, 1e-3);
    cr_assert_float_eq(fb_hist_pct(&h, 50), 50e6, 50e6 * 0.01);
    cr_assert_float_eq(fb_hist_pct(&h, 99), 99e6, 99e6 * 0.01);
    cr_assert_float_eq(fb_hist_pct(&h, 99.9), 99.9e6, 99.9e6 * 0.01);
    fb_hist_reset(&h);
    fb_hist_add(&h, 1234567, 10);
    cr_assert_float_eq(fb_hist_pct(&h, 50), 1234567.0, 1e-9);
}

/* ---- request pool ------------------------------------------------------------- */

/* requests are RESP arrays (inline PING aside), so the counter counts them */
Test(bench_pool, slices_hold_whole_requests) {
    int t;
    for (t = FB_T_PING_MBULK; t < FB_T_COUNT; t++) {
        fb_workload w = {.test = t, .datasize = 64, .keyspace = 1000, .ratio_set = 1,
                         .ratio_get = 3, .seed = 9};
        fb_pool p;
        size_t i, len;
        cr_assert_eq(fb_pool_build(&p, &w, 100), 0);
        if (fb_test_coll_key(t)) cr_assert_eq(p.n, 1, "collection test %d: one fixed request", t);
        else cr_assert_geq(p.n, 4);
        for (i = 0; i < p.n; i += p.n / 7 + 1) {
            fb_resp_state st;
            const char *s = fb_pool_slice(&p, i, 100, &len);
            fb_resp_init(&st);
            cr_assert_eq(fb_resp_count(s, len, &st), 100, "test %d slice at %zu", t, i);
            cr_assert(fb_resp_idle(&st));
        }
        /* the tail repeats the head byte for byte */
        cr_assert_eq(memcmp(p.buf + p.off[p.n], p.buf, p.off[100] - p.off[0]), 0);
        fb_pool_free(&p);
    }
}

Test(bench_pool, keys_and_ratio) {
    fb_workload w = {.test = FB_T_MIXED, .datasize = 3, .keyspace = 0, .ratio_set = 1,
                     .ratio_get = 10, .seed = 1};
    fb_pool p;
    size_t i, len, sets = 0;
    cr_assert_eq(fb_pool_build(&p, &w, 1), 0);
    cr_assert_eq(p.n, 11);
    for (i = 0; i < p.n; i++) {
        const char *s = fb_pool_slice(&p, i, 1, &len);
        if (memmem(s, len, "SET", 3)) {
            sets++;
            cr_assert(memmem(s, len, "$16\r\nkey:__rand_int__\r\n$3\r\nxxx\r\n", 31) != NULL);
        }
    }
    cr_assert_eq(sets, 1);
    fb_pool_free(&p);

    w.test = FB_T_INCR;
    w.keyspace = 100;
    cr_assert_eq(fb_pool_build(&p, &w, 1), 0);
    for (i = 0; i < p.n; i++) {
        const char *s = fb_pool_slice(&p, i, 1, &len);
        cr_assert_eq(len, strlen("*2\r\n$4\r\nINCR\r\n$20\r\ncounter:000000000042\r\n"));
        cr_assert_eq(memcmp(s + 19, "counter:0000000000", 18), 0);
    }
    fb_pool_free(&p);
}

/* ---- prefill -------------------------------------------------------------------- */

Test(bench_pool, collection_requests) {
    static const struct { int test; const char *req; } want[] = {
        {FB_T_LRANGE_100, "*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$2\r\n99\r\n"},
        {FB_T_LRANGE_500, "*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$3\r\n499\r\n"},
        {FB_T_LRANGE_600, "*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$3\r\n599\r\n"},
        {FB_T_HGETALL, "*2\r\n$7\r\nHGETALL\r\n$6\r\nmyhash\r\n"},
        {FB_T_SMEMBERS, "*2\r\n$8\r\nSMEMBERS\r\n$5\r\nmyset\r\n"},
        {FB_T_ZRANGE, "*5\r\n$6\r\nZRANGE\r\n$6\r\nmyzset\r\n$1\r\n0\r\n$2\r\n-1\r\n"
                      "$10\r\nWITHSCORES\r\n"},
    };
    size_t i, len;
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        fb_workload w = {.test = want[i].test, .datasize = 64, .keyspace = 1000, .seed = 1};
        fb_pool p;
        const char *s;
        cr_assert_eq(fb_pool_build(&p, &w, 16), 0);
        s = fb_pool_slice(&p, 0, 1, &len);
        cr_assert_eq(len, strlen(want[i].req), "test %d", want[i].test);
        cr_assert_eq(memcmp(s, want[i].req, len), 0, "test %d", want[i].test);
        fb_pool_free(&p);
    }
}

static int has(const fb_out *o, const char *needle) {
    return memmem(o->p, o->len, needle, strlen(needle)) != NULL;
}

/* all of w's prefill commands, back to back */
static fb_out prefill_all(const fb_workload *w) {
    fb_out o = {0};
    size_t k;
    for (k = 0; k < fb_prefill_ncmds(w); k++) fb_prefill_encode(&o, w, k);
    cr_assert_not(o.oom);
    return o;
}

Test(bench_prefill, commands) {
    static const char del[] = "*2\r\n$3\r\nDEL\r\n$6\r\nmylist\r\n";
    fb_workload w = {.test = FB_T_LRANGE_600, .datasize = 64};
    fb_out o = prefill_all(&w);
    fb_resp_state st;
    /* DEL + 6 RPUSHes of 100 values */
    cr_assert_eq(fb_prefill_ncmds(&w), 7);
    cr_assert_eq(memcmp(o.p, del, sizeof del - 1), 0);
    cr_assert(has(&o, "*102\r\n$5\r\nRPUSH\r\n$6\r\nmylist\r\n$64\r\nxxxx"));
    fb_resp_init(&st); /* requests are arrays: the counter frames them */
    cr_assert_eq(fb_resp_count(o.p, o.len, &st), 7);
    fb_out_free(&o);

    w.test = FB_T_HGETALL;
    o = prefill_all(&w);
    cr_assert_eq(fb_prefill_ncmds(&w), 11);
    cr_assert(has(&o, "*202\r\n$4\r\nHSET\r\n$6\r\nmyhash\r\n$20\r\nelement:000000000000\r\n$64\r\n"));
    cr_assert(has(&o, "$20\r\nelement:000000000999\r\n"));
    fb_out_free(&o);

    w.test = FB_T_ZRANGE; /* members padded to -d, score i */
    o = prefill_all(&w);
    cr_assert(has(&o, "$3\r\n999\r\n$64\r\nelement:000000000999xxxx"));
    fb_out_free(&o);

    w.test = FB_T_SMEMBERS;
    w.datasize = 3; /* members never shorter than element:%012d */
    o = prefill_all(&w);
    cr_assert(has(&o, "*102\r\n$4\r\nSADD\r\n$5\r\nmyset\r\n$20\r\nelement:000000000000\r\n"));
    fb_out_free(&o);

    w.datasize = 4 << 20; /* big values: one element per command */
    cr_assert_eq(fb_prefill_ncmds(&w), 1001);
    w.test = FB_T_GET;
    cr_assert_eq(fb_prefill_ncmds(&w), 0);
}

/* run the prefill over a socketpair whose other end already holds `replies` */
static int prefill_pair(const fb_workload *w, const char *replies, char *err, fb_out *sent) {
    int sv[2], rc;
    char buf[65536];
    ssize_t r;
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cr_assert_eq(write(sv[1], replies, strlen(replies)), (ssize_t)strlen(replies));
    rc = fb_prefill_run(sv[0], w, 100, err, 160);
    close(sv[0]);
    while ((r = read(sv[1], buf, sizeof buf)) > 0) fb_out_mem(sent, buf, (size_t)r);
    close(sv[1]);
    return rc;
}

Test(bench_prefill, run_over_socketpair) {
    fb_workload w = {.test = FB_T_ZRANGE, .datasize = 8};
    fb_out sent = {0}, want = prefill_all(&w);
    char err[160], replies[256] = ":1\r\n";
    int i, n = (int)fb_prefill_ncmds(&w);
    for (i = 1; i < n; i++) strcat(replies, ":100\r\n");
    cr_assert_eq(prefill_pair(&w, replies, err, &sent), 0, "%s", err);
    cr_assert_eq(sent.len, want.len);
    cr_assert_eq(memcmp(sent.p, want.p, want.len), 0);
    fb_out_free(&sent);

    /* an error reply fails the prefill with its text */
    strcpy(replies, ":0\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    for (i = 2; i < n; i++) strcat(replies, ":100\r\n");
    cr_assert_eq(prefill_pair(&w, replies, err, &sent), -1);
    cr_assert_str_eq(err, "WRONGTYPE Operation against a key holding the wrong kind of value");
    fb_out_free(&sent);

    /* a missing reply times out */
    strcpy(replies, ":0\r\n");
    cr_assert_eq(prefill_pair(&w, replies, err, &sent), -1);
    cr_assert_str_eq(err, "no reply for 100 ms");
    fb_out_free(&sent);
    fb_out_free(&want);
}
