/* test_listpack.c - Criterion unit tests for src/base/listpack.c.
 *
 * Why: small hashes (and sorted sets and list nodes) live in listpacks, so a
 * framing bug corrupts user data silently. The risky parts are the length
 * header and back-length boundaries (string lengths 127/128 and
 * 16383/16384 change the header; entry sizes 128, 16384 and 2^21 change
 * the back-length), walking backwards over them, and keeping offsets right
 * across the reallocations of insert/delete/replace.
 *
 * The main test drives a listpack and a reference model (an array of byte
 * strings) with the same random operations and after every step checks
 * lp_valid, the count, the byte size against lp_entry_size, a forward and
 * a backward walk, lp_seek from both ends and lp_find, against the model.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "listpack.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ reference */

typedef struct str {
    char *p;
    size_t n;
} str;

typedef struct model {
    str *v;
    size_t n, cap;
} model;

static void model_insert(model *m, size_t i, const char *s, size_t n) {
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->v = realloc(m->v, m->cap * sizeof *m->v);
    }
    memmove(m->v + i + 1, m->v + i, (m->n - i) * sizeof *m->v);
    m->v[i].p = malloc(n ? n : 1);
    if (n) memcpy(m->v[i].p, s, n);
    m->v[i].n = n;
    m->n++;
}

static void model_delete(model *m, size_t i, size_t count) {
    if (count > m->n - i) count = m->n - i;
    for (size_t k = i; k < i + count; k++) free(m->v[k].p);
    memmove(m->v + i, m->v + i + count, (m->n - i - count) * sizeof *m->v);
    m->n -= count;
}

static void model_replace(model *m, size_t i, const char *s, size_t n) {
    free(m->v[i].p);
    m->v[i].p = malloc(n ? n : 1);
    if (n) memcpy(m->v[i].p, s, n);
    m->v[i].n = n;
}

static void model_free(model *m) {
    model_delete(m, 0, m->n);
    free(m->v);
}

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { /* splitmix64: deterministic, independent of frand */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* Lengths around every framing boundary, plus small ones. */
static const size_t EDGE_LENS[] = {0, 1, 2, 63, 64, 125, 126, 127, 128, 129, 130, 255, 256,
                                   16381, 16382, 16383, 16384, 16385, 16386};

static size_t pick_len(void) {
    uint64_t r = rnd_below(10);
    if (r < 5) return rnd_below(20);
    if (r < 9) return EDGE_LENS[rnd_below(sizeof EDGE_LENS / sizeof EDGE_LENS[0])];
    return rnd_below(40000);
}

/* A string of n bytes whose content identifies it (all byte values occur). */
static char *make_str(size_t n, uint64_t tag) {
    char *s = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) s[i] = (char)((tag * 131 + i * 7 + (i >> 8)) & 0xff);
    return s;
}

static size_t off_of(const unsigned char *lp, size_t i) {
    size_t off = lp_first(lp);
    while (i--) off = lp_next(lp, off);
    return off;
}

static void expect_entry(const unsigned char *lp, size_t off, const str *want, size_t idx) {
    cr_assert_neq(off, LP_NONE, "entry %zu missing", idx);
    size_t len = 12345;
    const char *p = lp_get(lp, off, &len);
    cr_assert_eq(len, want->n, "entry %zu: length %zu, want %zu", idx, len, want->n);
    cr_assert(len == 0 || memcmp(p, want->p, len) == 0, "entry %zu: bytes differ", idx);
}

/* Everything observable about lp agrees with the model. */
static void check(const unsigned char *lp, const model *m) {
    cr_assert(lp_valid(lp, lp_bytes(lp)), "lp_valid failed");
    cr_assert_eq(lp_count(lp), m->n);
    size_t bytes = LP_HDR;
    for (size_t i = 0; i < m->n; i++) bytes += lp_entry_size(m->v[i].n);
    cr_assert_eq(lp_bytes(lp), bytes, "size %zu, want %zu", lp_bytes(lp), bytes);
    /* forward */
    size_t off = lp_first(lp), i = 0;
    size_t *offs = malloc((m->n + 1) * sizeof *offs);
    for (; off != LP_NONE; off = lp_next(lp, off), i++) {
        cr_assert_lt(i, m->n, "forward walk longer than %zu", m->n);
        expect_entry(lp, off, &m->v[i], i);
        offs[i] = off;
    }
    cr_assert_eq(i, m->n, "forward walk: %zu entries, want %zu", i, m->n);
    /* backward */
    off = lp_last(lp);
    for (i = m->n; i > 0; i--) {
        cr_assert_eq(off, offs[i - 1], "backward walk: entry %zu at %zu, forward at %zu", i - 1, off,
                     offs[i - 1]);
        off = lp_prev(lp, off);
    }
    cr_assert_eq(off, LP_NONE, "backward walk goes past the head");
    /* seek from both ends, and just outside */
    for (size_t k = 0; k < m->n; k++) {
        cr_assert_eq(lp_seek(lp, (long)k), offs[k]);
        cr_assert_eq(lp_seek(lp, (long)k - (long)m->n), offs[k]);
    }
    cr_assert_eq(lp_seek(lp, (long)m->n), LP_NONE);
    cr_assert_eq(lp_seek(lp, -(long)m->n - 1), LP_NONE);
    free(offs);
}

/* lp_find for the string of entry j, from the head, with skip 0 and 1. */
static void check_find(const unsigned char *lp, const model *m, size_t j) {
    const str *s = &m->v[j];
    size_t first = m->n, first_even = m->n;
    for (size_t i = 0; i < m->n; i++) {
        if (m->v[i].n != s->n || memcmp(m->v[i].p, s->p, s->n) != 0) continue;
        if (first == m->n) first = i;
        if (i % 2 == 0 && first_even == m->n) first_even = i;
    }
    cr_assert_eq(lp_find(lp, lp_first(lp), s->p, s->n, 0), off_of(lp, first));
    size_t want = first_even == m->n ? LP_NONE : off_of(lp, first_even);
    cr_assert_eq(lp_find(lp, lp_first(lp), s->p, s->n, 1), want);
}

/* ------------------------------------------------------------ tests */

Test(listpack, empty) {
    unsigned char *lp = lp_new();
    cr_assert_eq(lp_count(lp), 0);
    cr_assert_eq(lp_bytes(lp), LP_HDR);
    cr_assert_eq(lp_first(lp), LP_NONE);
    cr_assert_eq(lp_last(lp), LP_NONE);
    cr_assert_eq(lp_seek(lp, 0), LP_NONE);
    cr_assert_eq(lp_seek(lp, -1), LP_NONE);
    cr_assert_eq(lp_find(lp, lp_first(lp), "", 0, 0), LP_NONE);
    cr_assert(lp_valid(lp, lp_bytes(lp)));
    lp = lp_append(lp, "", 0);
    cr_assert_eq(lp_count(lp), 1);
    cr_assert_eq(lp_find(lp, lp_first(lp), "", 0, 0), LP_HDR);
    lp = lp_delete(lp, LP_HDR, 1);
    cr_assert_eq(lp_count(lp), 0);
    cr_assert_eq(lp_bytes(lp), LP_HDR);
    lp_free(lp);
}

Test(listpack, entry_sizes_at_boundaries) {
    /* header 1/2/5 bytes; back-length 1 byte below 128, 2 below 16384, 3 below 2^21 */
    cr_assert_eq(lp_entry_size(0), 2);
    cr_assert_eq(lp_entry_size(126), 1 + 126 + 1);
    cr_assert_eq(lp_entry_size(127), 1 + 127 + 2);      /* 128 bytes: 2-byte back-length */
    cr_assert_eq(lp_entry_size(128), 2 + 128 + 2);
    cr_assert_eq(lp_entry_size(16381), 2 + 16381 + 2);
    cr_assert_eq(lp_entry_size(16382), 2 + 16382 + 3);  /* 16384 bytes: 3-byte back-length */
    cr_assert_eq(lp_entry_size(16383), 2 + 16383 + 3);
    cr_assert_eq(lp_entry_size(16384), 5 + 16384 + 3);
    cr_assert_eq(lp_entry_size(2097146), 5 + 2097146 + 3);
    cr_assert_eq(lp_entry_size(2097147), 5 + 2097147 + 4);  /* 2^21 bytes */
}

Test(listpack, every_boundary_length_both_directions) {
    static const size_t lens[] = {0, 1, 126, 127, 128, 129, 16381, 16382, 16383, 16384, 16385,
                                  2097146, 2097147, 2097148};
    size_t nl = sizeof lens / sizeof lens[0];
    model m = {0};
    unsigned char *lp = lp_new();
    for (size_t round = 0; round < 2; round++) {
        for (size_t i = 0; i < nl; i++) {
            char *s = make_str(lens[i], i + round * 100);
            if (round == 0) {
                lp = lp_append(lp, s, lens[i]);
                model_insert(&m, m.n, s, lens[i]);
            } else {
                lp = lp_prepend(lp, s, lens[i]);
                model_insert(&m, 0, s, lens[i]);
            }
            free(s);
            check(lp, &m);
        }
    }
    /* replace every entry with the next length up / down */
    for (size_t i = 0; i < m.n; i++) {
        size_t n = lens[(i + 1) % nl];
        char *s = make_str(n, 1000 + i);
        size_t off = lp_seek(lp, (long)i);
        lp = lp_replace(lp, off, s, n);
        model_replace(&m, i, s, n);
        cr_assert_eq(lp_seek(lp, (long)i), off, "replaced entry moved");
        free(s);
        check(lp, &m);
    }
    lp_free(lp);
    model_free(&m);
}

Test(listpack, random_operations_against_model, .timeout = 60) {
    for (int seed = 1; seed <= 6; seed++) {
        rng_state = (uint64_t)seed * 0x1234567ull;
        model m = {0};
        unsigned char *lp = lp_new();
        for (int step = 0; step < 1500; step++) {
            uint64_t op = rnd_below(100);
            size_t n = pick_len();
            char *s = make_str(n, rnd());
            if (op < 35 || m.n == 0) { /* insert before a random entry, or append */
                size_t i = rnd_below(m.n + 1);
                size_t off = i == m.n ? LP_NONE : lp_seek(lp, (long)i);
                size_t want = i == m.n ? lp_bytes(lp) : off;
                lp = lp_insert(lp, off, s, n);
                model_insert(&m, i, s, n);
                size_t got_len;
                const char *got = lp_get(lp, want, &got_len);
                cr_assert(got_len == n && (n == 0 || memcmp(got, s, n) == 0), "insert: not at off");
            } else if (op < 45) {
                lp = lp_prepend(lp, s, n);
                model_insert(&m, 0, s, n);
            } else if (op < 55) {
                lp = lp_append(lp, s, n);
                model_insert(&m, m.n, s, n);
            } else if (op < 75) { /* delete a run (maybe past the end) */
                size_t i = rnd_below(m.n);
                uint32_t count = (uint32_t)(1 + rnd_below(4));
                size_t off = lp_seek(lp, (long)i);
                lp = lp_delete(lp, off, count);
                model_delete(&m, i, count);
                if (i < m.n) expect_entry(lp, off, &m.v[i], i);
                else cr_assert_eq(off, lp_bytes(lp), "delete: off is not the end");
            } else if (op < 95) { /* replace */
                size_t i = rnd_below(m.n);
                size_t off = lp_seek(lp, -(long)(m.n - i));
                lp = lp_replace(lp, off, s, n);
                model_replace(&m, i, s, n);
                expect_entry(lp, off, &m.v[i], i);
            } else { /* a copy of an existing string: finds must see the first one */
                size_t i = rnd_below(m.n), j = rnd_below(m.n + 1);
                str dup = m.v[i];
                char *copy = malloc(dup.n ? dup.n : 1);
                memcpy(copy, dup.p, dup.n);
                lp = lp_insert(lp, j == m.n ? LP_NONE : lp_seek(lp, (long)j), copy, dup.n);
                model_insert(&m, j, copy, dup.n);
                free(copy);
            }
            free(s);
            check(lp, &m);
            if (m.n) check_find(lp, &m, rnd_below(m.n));
            while (m.n > 200) { /* keep it small enough to stay fast */
                lp = lp_delete(lp, lp_first(lp), 50);
                model_delete(&m, 0, 50);
            }
        }
        lp_free(lp);
        model_free(&m);
    }
}

Test(listpack, find_skip_looks_at_fields_only) {
    unsigned char *lp = lp_new();
    const char *kv[] = {"a", "x", "x", "b", "b", "y"}; /* field a=x, x=b, b=y */
    for (int i = 0; i < 6; i++) lp = lp_append(lp, kv[i], 1);
    size_t f0 = lp_first(lp), v0 = lp_next(lp, f0), f1 = lp_next(lp, v0), v1 = lp_next(lp, f1);
    size_t f2 = lp_next(lp, v1);
    cr_assert_eq(lp_find(lp, f0, "x", 1, 1), f1);          /* not the value at v0 */
    cr_assert_eq(lp_find(lp, f0, "b", 1, 1), f2);          /* not the value at v1 */
    cr_assert_eq(lp_find(lp, f0, "y", 1, 1), LP_NONE);     /* only a value */
    cr_assert_eq(lp_find(lp, f0, "y", 1, 0), lp_last(lp));
    cr_assert_eq(lp_find(lp, f1, "a", 1, 1), LP_NONE);     /* starts at f1 */
    cr_assert_eq(lp_find(lp, v0, "b", 1, 1), v1);          /* phase follows the start */
    cr_assert_eq(lp_find(lp, f0, "xx", 2, 0), LP_NONE);
    cr_assert_eq(lp_find(lp, LP_NONE, "a", 1, 0), LP_NONE);
    lp_free(lp);
}

Test(listpack, valid_rejects_corruption) {
    unsigned char *lp = lp_new();
    char *big = make_str(200, 7);
    lp = lp_append(lp, "hello", 5);
    lp = lp_append(lp, big, 200);
    lp = lp_append(lp, "", 0);
    free(big);
    size_t n = lp_bytes(lp);
    cr_assert(lp_valid(lp, n));
    cr_assert_not(lp_valid(lp, n - 1), "buffer shorter than the total");
    cr_assert_not(lp_valid(lp, 7), "buffer shorter than the header");
    unsigned char *c = malloc(n);
    size_t flips[] = {4, LP_HDR, LP_HDR + 6, LP_HDR + 7, n - 1};
    for (size_t k = 0; k < sizeof flips / sizeof flips[0]; k++) {
        memcpy(c, lp, n);
        c[flips[k]] ^= 0x41;
        cr_assert_not(lp_valid(c, n), "corruption at byte %zu accepted", flips[k]);
    }
    memcpy(c, lp, n);
    c[0] = (unsigned char)(n + 3); /* total larger than the buffer */
    cr_assert_not(lp_valid(c, n));
    free(c);
    lp_free(lp);
}
