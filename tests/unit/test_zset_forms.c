/* test_zset_forms.c - Criterion unit tests for src/keyspace/t_zset.c: the listpack
 * and skiplist forms of a sorted set must behave identically.
 *
 * Why: every command is written once against t_zset.h and runs on either
 * form, so any difference between the two (an off-by-one in a listpack
 * walk, a range bound checked differently, a score text that does not
 * round-trip) is a wrong reply that only shows for small or for large sets.
 * Each test applies the same random operations to one set held as a
 * listpack (thresholds raised) and one held as a skiplist (thresholds 0)
 * and compares every observable result, then checks conversions both ways
 * and the listpack score texts.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "frand.h"
#include "server.h"
#include "t_zset.h"

static zset *new_form(int listpack) {
    srv.cfg.zset_max_listpack_entries = listpack ? 100000 : 0;
    srv.cfg.zset_max_listpack_value = 64;
    zset *zs = zset_new_for_add(1);
    cr_assert_eq(zset_enc(zs), listpack ? ENC_LISTPACK : ENC_SKIPLIST);
    return zs;
}

static size_t member(char *buf, unsigned n) { return (size_t)snprintf(buf, 16, "m%u", (unsigned)frand_below(n)); }
static double score(void) { return (double)((long)frand_below(13) - 6) / 4.0; }

/* The elements walked from an iterator, as text. */
static void walk(zs_iter *it, char *out, size_t cap, int limit) {
    size_t n = 0;
    out[0] = '\0';
    for (; zs_iter_valid(it) && limit--; zs_iter_next(it)) {
        size_t len;
        const char *m = zs_iter_member(it, &len);
        n += (size_t)snprintf(out + n, cap - n, "%.*s=%g ", (int)len, m, zs_iter_score_of(it));
        cr_assert(n < cap);
    }
}

static void same_walks(zset *a, zset *b) {
    static char x[1 << 16], y[1 << 16];
    zs_iter ia, ib;
    int rev = (int)frand_below(2);
    unsigned long rank = frand_below(zset_len(a) + 2);
    zs_iter_rank(&ia, a, rank, rev);
    zs_iter_rank(&ib, b, rank, rev);
    walk(&ia, x, sizeof x, 5);
    walk(&ib, y, sizeof y, 5);
    cr_assert_str_eq(x, y);
    zscore_range sr = {score(), score(), (int)frand_below(2), (int)frand_below(2)};
    zs_iter_score(&ia, a, &sr, rev);
    zs_iter_score(&ib, b, &sr, rev);
    unsigned long skip = frand_below(4);
    zs_iter_skip(&ia, skip);
    zs_iter_skip(&ib, skip);
    walk(&ia, x, sizeof x, 3);
    walk(&ib, y, sizeof y, 3);
    cr_assert_str_eq(x, y);
    cr_assert_eq(zset_count_score(a, &sr), zset_count_score(b, &sr));
}

static void same_everything(zset *a, zset *b) {
    static char x[1 << 16], y[1 << 16];
    cr_assert_eq(zset_len(a), zset_len(b));
    zs_iter ia, ib;
    zs_iter_rank(&ia, a, 0, 0);
    zs_iter_rank(&ib, b, 0, 0);
    walk(&ia, x, sizeof x, -1);
    walk(&ib, y, sizeof y, -1);
    cr_assert_str_eq(x, y);
}

static void random_ops(uint64_t seed, int steps) {
    frand_seed(seed);
    zset *a = new_form(1), *b = new_form(0);
    for (int s = 0; s < steps; s++) {
        char m[16];
        size_t len = member(m, 40);
        double sc = score(), sa, sb;
        unsigned op = (unsigned)frand_below(100);
        if (op < 40) {
            int flags = (int)frand_below(2) ? 0 : (int[]){ZADD_NX, ZADD_XX, ZADD_GT, ZADD_LT, ZADD_INCR}[frand_below(5)];
            int oa, ob;
            double na = 0, nb = 0;
            cr_assert_eq(zset_add(a, sc, m, len, flags, &oa, &na), zset_add(b, sc, m, len, flags, &ob, &nb));
            cr_assert_eq(oa, ob);
            if (!(oa & ZADD_OUT_NOP)) cr_assert_eq(na, nb);
        } else if (op < 60) {
            cr_assert_eq(zset_del(a, m, len), zset_del(b, m, len));
        } else if (op < 65) {
            zscore_range sr = {score(), score(), (int)frand_below(2), (int)frand_below(2)};
            cr_assert_eq(zset_del_score(a, &sr), zset_del_score(b, &sr));
        } else if (op < 68 && zset_len(a)) {
            unsigned long st = frand_below(zset_len(a)), en = st + frand_below(3);
            if (en >= zset_len(a)) en = zset_len(a) - 1;
            cr_assert_eq(zset_del_rank(a, st, en), zset_del_rank(b, st, en));
        } else if (op < 85) {
            int fa = zset_score(a, m, len, &sa), fb = zset_score(b, m, len, &sb);
            cr_assert_eq(fa, fb);
            if (fa) cr_assert_eq(sa, sb);
            int rev = (int)frand_below(2);
            cr_assert_eq(zset_rank(a, m, len, rev), zset_rank(b, m, len, rev));
        } else {
            same_walks(a, b);
        }
        if (s % 50 == 0) same_everything(a, b);
    }
    same_everything(a, b);
    /* conversions keep everything */
    zset_convert_to_skiplist(a);
    cr_assert_eq(zset_enc(a), ENC_SKIPLIST);
    same_everything(a, b);
    srv.cfg.zset_max_listpack_entries = 100000;
    zset_maybe_to_listpack(b, 64);
    cr_assert_eq(zset_enc(b), ENC_LISTPACK);
    same_everything(a, b);
    zset *c = zset_dup(b), *d = zset_dup(a);
    same_everything(c, d);
    zset_free(a);
    zset_free(b);
    zset_free(c);
    zset_free(d);
}

Test(zset_forms, random_equivalence) {
    for (uint64_t seed = 1; seed <= 20; seed++) random_ops(seed, 1500);
}

Test(zset_forms, lex_equal_scores) {
    frand_seed(99);
    zset *a = new_form(1), *b = new_form(0);
    for (int i = 0; i < 60; i++) {
        char m[16];
        size_t len = member(m, 50);
        int oa, ob;
        double n;
        zset_add(a, 0, m, len, 0, &oa, &n);
        zset_add(b, 0, m, len, 0, &ob, &n);
    }
    const char *bounds[] = {"m1", "m2", "m25", "m3", "m", "m9"};
    for (int i = 0; i < 200; i++) {
        zlex_range r;
        r.min = (zlex_bound){bounds[frand_below(6)], 0, (int)frand_below(4)};
        r.max = (zlex_bound){bounds[frand_below(6)], 0, (int)frand_below(4)};
        r.min.len = strlen(r.min.p);
        r.max.len = strlen(r.max.p);
        cr_assert_eq(zset_count_lex(a, &r), zset_count_lex(b, &r));
        char x[4096], y[4096];
        zs_iter ia, ib;
        int rev = (int)frand_below(2);
        zs_iter_lex(&ia, a, &r, rev);
        zs_iter_lex(&ib, b, &r, rev);
        walk(&ia, x, sizeof x, 4);
        walk(&ib, y, sizeof y, 4);
        cr_assert_str_eq(x, y);
        if (i % 20 == 19) cr_assert_eq(zset_del_lex(a, &r), zset_del_lex(b, &r));
    }
    same_everything(a, b);
    zset_free(a);
    zset_free(b);
}

Test(zset_forms, listpack_score_text) {
    struct { double d; const char *txt; } cases[] = {
        {0.1, "0.10000000000000001"}, {-0.0, "0"}, {3.0, "3"}, {1e17, "100000000000000000"},
        {4611686018427387904.0, "4611686018427387904"}, {4611686018427388928.0, "4.6116860184273889e+18"},
        {-4611686018427387904.0, "-4611686018427387904"}, {1e19, "1e+19"}, {INFINITY, "inf"},
        {-INFINITY, "-inf"}, {1.5e-7, "1.4999999999999999e-07"}, {123.25, "123.25"}, {-17, "-17"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        size_t n = zset_score_str(buf, cases[i].d);
        buf[n] = '\0';
        cr_assert_str_eq(buf, cases[i].txt);
    }
    /* every stored score reads back exactly */
    zset *a = new_form(1);
    frand_seed(5);
    for (int i = 0; i < 100; i++) {
        uint64_t bits = frand64();
        double d;
        memcpy(&d, &bits, sizeof d);
        if (isnan(d)) continue;
        char m[16];
        int len = snprintf(m, sizeof m, "k%d", i), o;
        double n, back;
        zset_add(a, d, m, (size_t)len, 0, &o, &n);
        cr_assert(zset_score(a, m, (size_t)len, &back));
        cr_assert(back == d || (d == 0 && back == 0), "%.17g read back as %.17g", d, back);
    }
    zset_free(a);
}
