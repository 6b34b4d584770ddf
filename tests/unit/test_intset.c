/* test_intset.c - Criterion unit tests for src/base/intset.c and the set value
 * type built on it (src/keyspace/t_set.c).
 *
 * Why: the intset is a sorted array whose element width changes under it
 * (2 -> 4 -> 8 bytes when a wider value arrives, never back), so the risky
 * parts are the in-place upgrade (elements widened back to front, the new
 * value at the right end), inserts and removals at the edges, and binary
 * search across widths. Every operation here is mirrored on a plain sorted
 * int64 array (the reference) and the whole intset is compared with it
 * after each step, including its width (the narrowest that fits every
 * value ever added). The fset tests check the intset -> hash table
 * conversion rules (non-integer member, set-max-intset-entries) and that
 * iteration, membership and removal agree with a reference in both forms.
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "db.h"
#include "frand.h"
#include "intset.h"
#include "server.h"
#include "t_set.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ reference */

typedef struct ref {
    int64_t *v;
    size_t n, cap;
    uint32_t width;     /* widest value ever added */
} ref;

static uint32_t width_of(int64_t v) {
    if (v >= INT16_MIN && v <= INT16_MAX) return 2;
    if (v >= INT32_MIN && v <= INT32_MAX) return 4;
    return 8;
}

static size_t ref_pos(const ref *r, int64_t v, int *found) {
    size_t i = 0;
    while (i < r->n && r->v[i] < v) i++;
    *found = i < r->n && r->v[i] == v;
    return i;
}

static int ref_add(ref *r, int64_t v) {
    int found;
    size_t i = ref_pos(r, v, &found);
    if (width_of(v) > r->width) r->width = width_of(v);
    if (found) return 0;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
    }
    memmove(r->v + i + 1, r->v + i, (r->n - i) * sizeof *r->v);
    r->v[i] = v;
    r->n++;
    return 1;
}

static int ref_remove(ref *r, int64_t v) {
    int found;
    size_t i = ref_pos(r, v, &found);
    if (!found) return 0;
    memmove(r->v + i, r->v + i + 1, (r->n - i - 1) * sizeof *r->v);
    r->n--;
    return 1;
}

static void check_same(const intset *is, const ref *r) {
    cr_assert_eq(intset_len(is), r->n, "length %u, reference %zu", intset_len(is), r->n);
    cr_assert_eq(is->width, r->width, "width %u, reference %u", is->width, r->width);
    cr_assert_eq(intset_blob_len(is), sizeof(intset) + r->n * r->width);
    for (size_t i = 0; i < r->n; i++)
        cr_assert_eq(intset_get(is, (uint32_t)i), r->v[i], "element %zu: %" PRId64 " vs %" PRId64, i,
                     intset_get(is, (uint32_t)i), r->v[i]);
}

/* Values concentrated around the width boundaries and the extremes. */
static int64_t interesting(void) {
    static const int64_t edges[] = {0, 1, -1, INT16_MAX, INT16_MIN, (int64_t)INT16_MAX + 1, (int64_t)INT16_MIN - 1,
                                    INT32_MAX, INT32_MIN, (int64_t)INT32_MAX + 1, (int64_t)INT32_MIN - 1,
                                    INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1};
    switch (frand_below(4)) {
    case 0: return edges[frand_below(sizeof edges / sizeof edges[0])];
    case 1: return (int64_t)frand_below(200) - 100;
    case 2: return (int64_t)frand_below(1u << 20) - (1 << 19);
    default: return (int64_t)frand64();
    }
}

/* ------------------------------------------------------------ intset */

Test(intset, empty) {
    intset *is = intset_new();
    cr_assert_eq(intset_len(is), 0);
    cr_assert_eq(is->width, 2);
    cr_assert(!intset_find(is, 0));
    int removed = 1;
    is = intset_remove(is, 5, &removed);
    cr_assert_eq(removed, 0);
    intset_free(is);
}

Test(intset, upgrade_puts_new_value_at_the_right_end) {
    ref r = {0};
    r.width = 2;
    intset *is = intset_new();
    int64_t seq[] = {5, -3, 100, -70000, 70000, 1, -((int64_t)1 << 40), (int64_t)1 << 40, INT64_MIN, INT64_MAX, 0};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        int added;
        is = intset_add(is, seq[i], &added);
        cr_assert_eq(added, ref_add(&r, seq[i]), "add %" PRId64, seq[i]);
        check_same(is, &r);
    }
    /* removals never narrow the width */
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        int removed;
        is = intset_remove(is, seq[i], &removed);
        cr_assert_eq(removed, ref_remove(&r, seq[i]));
        check_same(is, &r);
    }
    cr_assert_eq(is->width, 8);
    intset_free(is);
    free(r.v);
}

Test(intset, find_across_widths) {
    intset *is = intset_new();
    int added;
    is = intset_add(is, 10, &added);
    cr_assert(!intset_find(is, 70000), "a value wider than the set is never present");
    cr_assert(!intset_find(is, INT64_MIN));
    is = intset_add(is, 70000, &added);
    cr_assert(intset_find(is, 10) && intset_find(is, 70000));
    cr_assert(!intset_find(is, 11) && !intset_find(is, -10));
    is = intset_add(is, 10, &added);
    cr_assert_eq(added, 0);
    intset_free(is);
}

Test(intset, random_against_reference) {
    for (uint64_t seed = 1; seed <= 20; seed++) {
        frand_seed(seed);
        ref r = {0};
        r.width = 2;
        intset *is = intset_new();
        for (int step = 0; step < 3000; step++) {
            int64_t v = step % 3 == 2 && r.n ? r.v[frand_below(r.n)] : interesting();
            int op = (int)frand_below(10);
            if (op < 6) {
                int added;
                is = intset_add(is, v, &added);
                cr_assert_eq(added, ref_add(&r, v), "seed %" PRIu64 " step %d add %" PRId64, seed, step, v);
            } else if (op < 9) {
                int removed;
                is = intset_remove(is, v, &removed);
                cr_assert_eq(removed, ref_remove(&r, v), "seed %" PRIu64 " step %d remove %" PRId64, seed,
                             step, v);
            } else {
                int found;
                ref_pos(&r, v, &found);
                cr_assert_eq(intset_find(is, v), found, "seed %" PRIu64 " step %d find %" PRId64, seed, step, v);
            }
            if (step % 50 == 0 || r.n < 20) check_same(is, &r);
        }
        check_same(is, &r);
        intset *d = intset_dup(is);
        check_same(d, &r);
        intset_free(d);
        intset_free(is);
        free(r.v);
    }
}

static int keep_even(int64_t v, void *ud) {
    (*(int *)ud)++;
    return v % 2 == 0;
}

Test(intset, filter_keeps_order_and_width) {
    intset *is = intset_new();
    ref r = {0};
    r.width = 2;
    int added;
    for (int64_t v = -50; v <= 50; v++) {
        is = intset_add(is, v * 1000, &added);
        ref_add(&r, v * 1000);
    }
    int calls = 0;
    is = intset_filter(is, keep_even, &calls);
    cr_assert_eq(calls, 101);
    ref want = {0};
    want.width = r.width;
    for (size_t i = 0; i < r.n; i++)
        if (r.v[i] % 2 == 0) ref_add(&want, r.v[i]);
    check_same(is, &want);
    intset_free(is);
    free(r.v);
    free(want.v);
}

/* ------------------------------------------------------------ fset */

static void fset_setup(void) {
    config_defaults(&srv.cfg);
    frand_seed(42);
}

TestSuite(fset, .init = fset_setup);

static int add_str(fset **s, const char *m) { return fset_add(s, m, strlen(m)); }

Test(fset, converts_on_non_integer_and_on_size) {
    srv.cfg.set_max_intset_entries = 3;
    fset *s = fset_new_for("1", 1);
    cr_assert_eq(fset_encoding(s), ENC_INTSET);
    cr_assert_eq(add_str(&s, "1"), 1);
    cr_assert_eq(add_str(&s, "2"), 1);
    cr_assert_eq(add_str(&s, "3"), 1);
    cr_assert_eq(add_str(&s, "3"), 0);
    cr_assert_eq(fset_encoding(s), ENC_INTSET, "3 entries fit a threshold of 3");
    cr_assert_eq(add_str(&s, "4"), 1);
    cr_assert_eq(fset_encoding(s), ENC_HT, "the 4th entry converts");
    cr_assert_eq(fset_size(s), 4);
    cr_assert(fset_contains(s, "4", 1) && fset_contains(s, "1", 1) && !fset_contains(s, "5", 1));
    fset_free(s);

    srv.cfg.set_max_intset_entries = 512;
    s = fset_new_for("7", 1);
    add_str(&s, "7");
    add_str(&s, "-0");       /* not canonical: a string */
    cr_assert_eq(fset_encoding(s), ENC_HT);
    cr_assert(fset_contains(s, "7", 1) && fset_contains(s, "-0", 2) && !fset_contains(s, "0", 1));
    fset_free(s);

    s = fset_new_for("abc", 3);
    cr_assert_eq(fset_encoding(s), ENC_HT, "created for a string member: hash table from the start");
    fset_free(s);
}

/* Compare an fset with a reference list of distinct member strings. */
static void check_fset(fset *s, char **want, size_t n) {
    cr_assert_eq(fset_size(s), n);
    size_t seen = 0;
    fset_iter it;
    fset_member m;
    fset_iter_init(&it, s);
    int64_t prev = INT64_MIN;
    int first = 1;
    while (fset_iter_next(&it, &m)) {
        seen++;
        int found = 0;
        for (size_t i = 0; i < n && !found; i++) found = strlen(want[i]) == m.len && !memcmp(want[i], m.p, m.len);
        cr_assert(found, "iterated member %.*s is not in the reference", (int)m.len, m.p);
        if (fset_encoding(s) == ENC_INTSET) {
            cr_assert(m.is_int);
            cr_assert(first || m.v > prev, "intset iteration is ascending");
            prev = m.v;
            first = 0;
        }
    }
    fset_iter_end(&it);
    cr_assert_eq(seen, n);
    for (size_t i = 0; i < n; i++) cr_assert(fset_contains(s, want[i], strlen(want[i])));
}

Test(fset, random_against_reference) {
    static const char *pool[] = {"0", "1", "-1", "2", "300", "70000", "-70000", "9223372036854775807",
                                 "-9223372036854775808", "a", "b", "007", "", "x y", "12", "13"};
    const size_t npool = sizeof pool / sizeof pool[0];
    for (long long threshold = 1; threshold <= 20; threshold += 3) {
        srv.cfg.set_max_intset_entries = threshold;
        fset *s = fset_new_intset();
        char *want[64];
        size_t n = 0;
        for (int step = 0; step < 2000; step++) {
            const char *m = pool[frand_below(npool)];
            size_t i;
            for (i = 0; i < n && strcmp(want[i], m); i++) {}
            if (frand_below(3)) {
                int added = fset_add(&s, m, strlen(m));
                cr_assert_eq(added, i == n);
                if (added) want[n++] = (char *)m;
            } else {
                int removed = fset_remove(&s, m, strlen(m));
                cr_assert_eq(removed, i < n);
                if (removed) want[i] = want[--n];
                fset_removed_done(s);
            }
            check_fset(s, want, n);
            if (fset_encoding(s) == ENC_INTSET) cr_assert_leq((long long)fset_size(s), threshold);
            if (n) {
                fset_member r;
                fset_random(s, &r);
                cr_assert(fset_contains(s, r.p, r.len));
            }
        }
        fset *d = fset_dup(s);
        cr_assert_eq(fset_encoding(d), fset_encoding(s));
        check_fset(d, want, n);
        cr_assert_geq(fset_mem(d), fset_size(d) * (fset_encoding(d) == ENC_HT ? sizeof(dnode) : 2));
        fset_free(d);
        fset_free(s);
    }
}
