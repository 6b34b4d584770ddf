/* test_hll.c - Criterion unit tests for the HyperLogLog representation
 * (src/keyspace/hll.c).
 *
 * Why: the bytes of an HLL are Redis's format, so the tests pin them to
 * values taken from redis-server 7.0.15 (the empty sparse value, the bytes
 * after PFADD a b c, the estimates for e0..eN), then check the invariants
 * the commands rely on: the sparse and dense forms hold the same registers
 * and give the same estimate, sparse edits never pass hll-sparse-max-bytes
 * (PROMOTE exactly when they would) nor hold a register above 32, the
 * dense 6-bit packing round-trips without touching neighbours, merge is the
 * register-wise maximum, and damaged values (every truncation, every byte
 * of every value at every position) are refused consistently by validate,
 * count, merge and conversion, while sparse_set on them stays in bounds
 * (buffers are allocated to the exact size so ASan sees any overrun).
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hll.h"

static size_t unhex(const char *h, uint8_t *out) {
    size_t n = 0;
    for (; h[0] && h[1]; h += 2) {
        unsigned v;
        sscanf(h, "%2x", &v);
        out[n++] = (uint8_t)v;
    }
    return n;
}

/* a sparse HLL being built: buffer with room, length */
typedef struct sp {
    uint8_t *p;
    size_t len, cap;
    int dense;
} sp;

static void sp_init(sp *s) {
    s->cap = 64;
    s->p = malloc(s->cap);
    s->len = hll_init_sparse(s->p);
    s->dense = 0;
}

/* add as the commands do: sparse, promoted to dense when needed */
static int sp_add_count(sp *s, unsigned idx, unsigned cnt, size_t max_bytes) {
    if (s->dense) return hll_dense_set(s->p, idx, cnt);
    if (s->cap < s->len + HLL_SPARSE_SLACK) {
        s->cap = (s->len + HLL_SPARSE_SLACK) * 2;
        s->p = realloc(s->p, s->cap);
    }
    int r = hll_sparse_set(s->p, &s->len, s->cap, idx, cnt, max_bytes);
    if (r != HLL_PROMOTE) return r;
    uint8_t *d = malloc(HLL_DENSE_SIZE);
    cr_assert_eq(hll_sparse_to_dense(s->p, s->len, d), 0);
    free(s->p);
    s->p = d;
    s->len = s->cap = HLL_DENSE_SIZE;
    s->dense = 1;
    return hll_dense_set(s->p, idx, cnt);
}

static int sp_add(sp *s, const char *ele, size_t max_bytes) {
    unsigned idx;
    int cnt = hll_pat_len(ele, strlen(ele), &idx);
    return sp_add_count(s, idx, (unsigned)cnt, max_bytes);
}

static void sp_free(sp *s) { free(s->p); }

Test(hll, empty_sparse_layout) {
    uint8_t b[HLL_SPARSE_EMPTY_SIZE], want[32];
    cr_assert_eq(hll_init_sparse(b), 18);
    size_t n = unhex("48594c4c010000000000000000000000" "7fff", want);
    cr_assert_eq(n, 18);
    cr_assert_eq(memcmp(b, want, n), 0);
    cr_assert(hll_validate(b, 18));
    cr_assert(hll_cache_valid(b));
    int inv = 0;
    cr_assert_eq(hll_count(b, 18, &inv), 0);
    cr_assert_eq(inv, 0);
}

Test(hll, bytes_as_redis) {
    uint8_t want[64];
    sp s;
    sp_init(&s);
    sp_add(&s, "a", 3000);
    sp_add(&s, "b", 3000);
    sp_add(&s, "c", 3000);
    size_t n = unhex("48594c4c01000000000000000000008060f38050b1844bfb80425a", want);
    cr_assert_eq(s.len, n);
    cr_assert_eq(memcmp(s.p, want, n), 0, "PFADD h a b c differs from redis-server's bytes");
    sp_free(&s);

    sp_init(&s);
    sp_add(&s, "hello", 3000);
    n = unhex("48594c4c01000000000000000000008063ff805bfe", want);
    cr_assert_eq(s.len, n);
    cr_assert_eq(memcmp(s.p, want, n), 0);
    hll_op op = hll_sparse_op(s.p + 16, s.p + s.len);
    cr_assert_eq(op.kind, 'Z');
    cr_assert_eq(op.runlen, 9216);
    sp_free(&s);
}

Test(hll, estimates_as_redis) {
    static const struct { unsigned n; uint64_t card; int dense; } known[] = {
        {1, 1, 0}, {10, 10, 0}, {100, 100, 0}, {1000, 1008, 0}, {10000, 9973, 1}, {100000, 100853, 1},
        {1000000, 991657, 1},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        sp s;
        sp_init(&s);
        char e[32];
        for (unsigned i = 0; i < known[k].n; i++) {
            snprintf(e, sizeof e, "e%u", i);
            sp_add(&s, e, 3000);
        }
        int inv = 0;
        cr_assert_eq(hll_count(s.p, s.len, &inv), known[k].card, "n=%u", known[k].n);
        cr_assert_eq(inv, 0);
        cr_assert_eq(s.dense, known[k].dense, "n=%u", known[k].n);
        cr_assert(hll_validate(s.p, s.len));
        sp_free(&s);
    }
}

Test(hll, murmur_and_pattern) {
    /* the register and count of "hello" (from the bytes above: register 9216, value 1) */
    unsigned idx;
    int cnt = hll_pat_len("hello", 5, &idx);
    cr_assert_eq(idx, 9216);
    cr_assert_eq(cnt, 1);
    /* every length of tail goes through its own branch: deterministic and distinct */
    uint64_t seen[17];
    const char *s = "0123456789abcdefg";
    for (size_t l = 0; l <= 16; l++) {
        seen[l] = hll_murmur64a(s, l, 0xadc83b19ULL);
        for (size_t k = 0; k < l; k++) cr_assert_neq(seen[k], seen[l]);
        cr_assert_eq(seen[l], hll_murmur64a(s, l, 0xadc83b19ULL));
    }
}

Test(hll, dense_packing_roundtrip) {
    uint8_t *regs = calloc(1, HLL_DENSE_REGS);
    uint8_t *want = malloc(HLL_REGISTERS);
    uint64_t x = 88172645463325252ULL;
    for (int round = 0; round < 20; round++) {
        for (unsigned i = 0; i < HLL_REGISTERS; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            want[i] = (uint8_t)(x & 63);
            hll_dense_put(regs, i, want[i]);
        }
        for (unsigned i = 0; i < HLL_REGISTERS; i++) cr_assert_eq(hll_dense_get(regs, i), want[i]);
    }
    /* one register written leaves its neighbours alone */
    memset(regs, 0xff, HLL_DENSE_REGS);
    hll_dense_put(regs, 5, 0);
    for (unsigned i = 0; i < 12; i++) cr_assert_eq(hll_dense_get(regs, i), i == 5 ? 0u : 63u);
    hll_dense_put(regs, HLL_REGISTERS - 1, 7);
    cr_assert_eq(hll_dense_get(regs, HLL_REGISTERS - 1), 7);
    cr_assert_eq(hll_dense_get(regs, HLL_REGISTERS - 2), 63);
    free(regs);
    free(want);
}

Test(hll, sparse_and_dense_agree) {
    sp s;
    sp_init(&s);
    uint8_t *d = calloc(1, HLL_DENSE_SIZE), *conv = malloc(HLL_DENSE_SIZE);
    memcpy(d, "HYLL", 4);
    char e[32];
    for (unsigned i = 0; i < 5000; i++) {
        snprintf(e, sizeof e, "agree-%u", i);
        unsigned idx;
        int cnt = hll_pat_len(e, strlen(e), &idx);
        hll_dense_set(d, idx, (unsigned)cnt);
        cr_assert_neq(sp_add_count(&s, idx, (unsigned)cnt, 1u << 20), HLL_CORRUPT);
        if (i % 250 == 0 || i == 4999) {
            cr_assert(!s.dense);
            cr_assert_eq(hll_sparse_to_dense(s.p, s.len, conv), 0);
            cr_assert_eq(memcmp(conv + HLL_HDR_SIZE, d + HLL_HDR_SIZE, HLL_DENSE_REGS), 0, "i=%u", i);
            cr_assert_eq(hll_count(s.p, s.len, NULL), hll_count(d, HLL_DENSE_SIZE, NULL));
        }
    }
    free(d);
    free(conv);
    sp_free(&s);
}

Test(hll, promotion_boundaries) {
    for (size_t max = 18; max < 400; max += 7) {
        sp s;
        sp_init(&s);
        char e[32];
        for (unsigned i = 0; i < 2000 && !s.dense; i++) {
            snprintf(e, sizeof e, "p%u", i);
            size_t before = s.len;
            unsigned idx;
            int cnt = hll_pat_len(e, strlen(e), &idx);
            size_t len = s.len;
            uint8_t *copy = malloc(s.len + HLL_SPARSE_SLACK);
            memcpy(copy, s.p, s.len);
            int r = hll_sparse_set(copy, &len, s.len + HLL_SPARSE_SLACK, idx, (unsigned)cnt, max);
            if (r == HLL_PROMOTE) {
                cr_assert(len == before && memcmp(copy, s.p, before) == 0, "PROMOTE changed nothing");
                /* with no limit the same edit grows the value past max */
                size_t l2 = s.len;
                cr_assert_eq(hll_sparse_set(copy, &l2, s.len + HLL_SPARSE_SLACK, idx, (unsigned)cnt, SIZE_MAX),
                             HLL_CHANGED);
                cr_assert_gt(l2, max);
            } else {
                cr_assert(r == HLL_CHANGED || r == HLL_UNCHANGED);
                cr_assert(len <= max || len <= before, "sparse grew to %zu past max %zu", len, max);
            }
            free(copy);
            sp_add_count(&s, idx, (unsigned)cnt, max);
        }
        cr_assert(s.dense, "max=%zu never promoted", max);
        sp_free(&s);
    }
    /* a register above 32 cannot be sparse */
    sp s;
    sp_init(&s);
    cr_assert_eq(sp_add_count(&s, 100, 32, 3000), HLL_CHANGED);
    cr_assert(!s.dense);
    size_t len = s.len;
    cr_assert_eq(hll_sparse_set(s.p, &len, s.cap, 101, 33, 3000), HLL_PROMOTE);
    cr_assert_eq(sp_add_count(&s, 101, 33, 3000), HLL_CHANGED);
    cr_assert(s.dense);
    cr_assert_eq(hll_dense_get(s.p + HLL_HDR_SIZE, 100), 32);
    cr_assert_eq(hll_dense_get(s.p + HLL_HDR_SIZE, 101), 33);
    cr_assert_eq(sp_add_count(&s, 101, 20, 3000), HLL_UNCHANGED);
    sp_free(&s);
}

Test(hll, merge_is_register_max) {
    sp a, b, u;
    sp_init(&a);
    sp_init(&b);
    sp_init(&u);
    char e[32];
    for (unsigned i = 0; i < 3000; i++) {
        snprintf(e, sizeof e, "m%u", i);
        sp_add(i % 3 ? &a : &b, e, 3000);
        sp_add(&u, e, 3000);
    }
    static uint8_t max[HLL_REGISTERS];
    memset(max, 0, sizeof max);
    cr_assert_eq(hll_merge(max, a.p, a.len), 0);
    cr_assert_eq(hll_merge(max, b.p, b.len), 0);
    uint8_t *ud = malloc(HLL_DENSE_SIZE);
    if (u.dense) memcpy(ud, u.p, HLL_DENSE_SIZE);
    else cr_assert_eq(hll_sparse_to_dense(u.p, u.len, ud), 0);
    for (unsigned i = 0; i < HLL_REGISTERS; i++) cr_assert_eq(max[i], hll_dense_get(ud + HLL_HDR_SIZE, i));
    cr_assert_eq(hll_count_raw(max), hll_count(u.p, u.len, NULL));
    free(ud);
    sp_free(&a);
    sp_free(&b);
    sp_free(&u);
}

Test(hll, cache_field) {
    uint8_t b[HLL_SPARSE_EMPTY_SIZE];
    hll_init_sparse(b);
    hll_cache_set(b, 0x0102030405060708ULL);
    cr_assert_eq(b[8], 0x08);
    cr_assert_eq(b[15], 0x01);
    cr_assert(hll_cache_valid(b));
    cr_assert_eq(hll_cache_get(b), 0x0102030405060708ULL);
    hll_invalidate_cache(b);
    cr_assert(!hll_cache_valid(b));
    cr_assert_eq(b[15], 0x81);
}

/* Every function on a damaged value: in bounds (exact-size copies) and
 * agreeing on whether it is damaged. */
static void check_value(const uint8_t *v, size_t len) {
    uint8_t *x = malloc(len ? len : 1);
    memcpy(x, v, len);
    int hdr = hll_header_ok(x, len);
    int ok = hll_validate(x, len);
    if (!hdr) {
        cr_assert(!ok);
        free(x);
        return;
    }
    int inv = 0;
    uint64_t c = hll_count(x, len, &inv);
    (void)c;
    cr_assert_eq(inv, !ok);
    static uint8_t max[HLL_REGISTERS];
    memset(max, 0, sizeof max);
    cr_assert_eq(hll_merge(max, x, len) == 0, ok);
    if (x[4] == HLL_SPARSE) {
        uint8_t *d = malloc(HLL_DENSE_SIZE);
        cr_assert_eq(hll_sparse_to_dense(x, len, d) == 0, ok);
        free(d);
        for (const uint8_t *p = x + HLL_HDR_SIZE; p < x + len;) p += hll_sparse_op(p, x + len).size;
        /* edits at a few registers: never outside the buffer */
        static const unsigned idxs[] = {0, 1, 63, 64, 4000, 16383};
        for (size_t k = 0; k < sizeof idxs / sizeof idxs[0]; k++) {
            size_t cap = len + HLL_SPARSE_SLACK, l = len;
            uint8_t *w = malloc(cap);
            memcpy(w, x, len);
            int r = hll_sparse_set(w, &l, cap, idxs[k], 1 + (unsigned)k * 5, 4096);
            cr_assert(r >= HLL_CORRUPT && r <= HLL_PROMOTE);
            cr_assert_leq(l, cap);
            free(w);
        }
    }
    free(x);
}

Test(hll, damaged_values_refused_never_overrun) {
    sp s;
    sp_init(&s);
    char e[32];
    for (unsigned i = 0; i < 60; i++) {
        snprintf(e, sizeof e, "dmg%u", i);
        sp_add(&s, e, 3000);
    }
    cr_assert(!s.dense);
    /* every truncation */
    for (size_t cut = 0; cut <= s.len; cut++) check_value(s.p, cut);
    /* every byte of the body at every position */
    uint8_t *v = malloc(s.len);
    for (size_t pos = 0; pos < s.len; pos++) {
        for (unsigned b = 0; b < 256; b++) {
            memcpy(v, s.p, s.len);
            v[pos] = (uint8_t)b;
            check_value(v, s.len);
        }
    }
    free(v);
    /* a dense value: truncations and flips of the header and the length check */
    uint8_t *d = malloc(HLL_DENSE_SIZE);
    cr_assert_eq(hll_sparse_to_dense(s.p, s.len, d), 0);
    for (size_t cut = HLL_DENSE_SIZE - 40; cut <= HLL_DENSE_SIZE; cut++) check_value(d, cut);
    for (unsigned b = 0; b < 256; b++) {
        uint8_t saved = d[4];
        d[4] = (uint8_t)b;
        check_value(d, HLL_DENSE_SIZE);
        d[4] = saved;
    }
    cr_assert(hll_validate(d, HLL_DENSE_SIZE));
    free(d);
    sp_free(&s);
}

Test(hll, known_damaged_cases) {
    uint8_t b[64];
    size_t n = hll_init_sparse(b);
    cr_assert(hll_validate(b, n));
    cr_assert(!hll_validate(b, n - 1));             /* XZERO cut: 16129 registers */
    b[n] = 0x00;                                     /* one ZERO past the end */
    cr_assert(!hll_validate(b, n + 1));
    b[16] = 0x7f, b[17] = 0xfe, b[18] = 0x40;        /* cut XZERO of 1: the missing byte reads 0 */
    cr_assert(hll_validate(b, 19));
    size_t l = 16;                                   /* no opcodes at all */
    cr_assert_eq(hll_sparse_set(b, &l, sizeof b, 5, 3, 3000), HLL_CORRUPT);
    cr_assert(!hll_validate(b, 16));
    memcpy(b + 4, "\x02", 1);                        /* unknown encoding */
    cr_assert(!hll_header_ok(b, 18));
}

Test(hll, selftest_passes) {
    char err[256] = "";
    cr_assert_eq(hll_selftest(err, sizeof err, 3000, 12345), 0, "%s", err);
}
