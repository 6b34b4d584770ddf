/* test_zset.c - Criterion unit tests for the sorted-set skiplist
 * (src/base/zskiplist.c).
 *
 * Why: every sorted-set command with a rank or a range relies on the spans
 * and links being exactly right after any mix of inserts, deletes, score
 * updates and range deletions; an off-by-one span only shows as a wrong
 * ZRANK much later. Each test drives the skiplist and a plain sorted array
 * (the reference) with the same random operations and compares: contents in
 * order, ranks, rank lookups, range ends and range deletions, plus the
 * structural self-check (zsl_check) after each step.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frand.h"
#include "zmalloc.h"
#include "zskiplist.h"

/* ------------------------------------------------------------ reference */

typedef struct ref_el {
    double score;
    char m[16];
    size_t len;
} ref_el;

typedef struct ref {
    ref_el *v;
    size_t n, cap;
} ref;

static int ref_cmp(const void *a, const void *b) {
    const ref_el *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? -1 : 1;
    return zmember_cmp(x->m, x->len, y->m, y->len);
}

static long ref_find(const ref *r, const char *m, size_t len) {
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].len == len && memcmp(r->v[i].m, m, len) == 0) return (long)i;
    return -1;
}

static void ref_put(ref *r, double score, const char *m, size_t len) {
    long i = ref_find(r, m, len);
    if (i < 0) {
        if (r->n == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 64;
            r->v = realloc(r->v, r->cap * sizeof *r->v);
        }
        i = (long)r->n++;
        memcpy(r->v[i].m, m, len);
        r->v[i].len = len;
    }
    r->v[i].score = score;
    qsort(r->v, r->n, sizeof *r->v, ref_cmp);
}

static void ref_del_at(ref *r, size_t i) {
    memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof *r->v);
    r->n--;
}

/* ------------------------------------------------------------ helpers */

/* Members "m0".."m<nm-1>", with small integer scores so ties are common. */
static size_t rand_member(char *buf, unsigned nm) {
    return (size_t)snprintf(buf, 16, "m%u", (unsigned)frand_below(nm));
}

static double rand_score(void) { return (double)((long)frand_below(21) - 10) / 2.0; }

static void same_contents(const zskiplist *zsl, const ref *r) {
    cr_assert(zsl_check(zsl), "structure check failed");
    cr_assert_eq(zsl->length, r->n);
    size_t i = 0;
    for (dnode *x = zsl_first(zsl); x; x = zsn_next(x), i++) {
        cr_assert_eq(zsn_score(x), r->v[i].score);
        cr_assert_eq(zsn_len(x), r->v[i].len);
        cr_assert(memcmp(zsn_member(x), r->v[i].m, r->v[i].len) == 0);
    }
    cr_assert_eq(i, r->n);
    /* backwards too */
    i = r->n;
    for (dnode *x = zsl_last(zsl); x; x = zsn_prev(x)) {
        cr_assert(i > 0);
        i--;
        cr_assert_eq(zsn_score(x), r->v[i].score);
    }
    cr_assert_eq(i, 0);
}

static zscore_range rand_score_range(void) {
    zscore_range sr = {rand_score(), rand_score(), (int)frand_below(2), (int)frand_below(2)};
    if (frand_below(8) == 0) sr.min = -INFINITY;
    if (frand_below(8) == 0) sr.max = INFINITY;
    return sr;
}

static zlex_bound rand_lex_bound(char *buf) {
    zlex_bound b;
    unsigned k = (unsigned)frand_below(10);
    if (k == 0) {
        b.kind = ZLEX_NEG_INF; b.p = NULL; b.len = 0;
    } else if (k == 1) {
        b.kind = ZLEX_POS_INF; b.p = NULL; b.len = 0;
    } else {
        b.kind = k & 1 ? ZLEX_EXCL : ZLEX_INCL;
        b.len = rand_member(buf, 60);
        if (frand_below(4) == 0) b.len = 1; /* "m": before every member */
        b.p = buf;
    }
    return b;
}

static void check_ranges(const zskiplist *zsl, const ref *r) {
    zscore_range sr = rand_score_range();
    long first = -1, last = -1;
    for (size_t i = 0; i < r->n; i++)
        if (zscore_in_range(r->v[i].score, &sr)) {
            if (first < 0) first = (long)i;
            last = (long)i;
        }
    dnode *f = zsl_first_in_score(zsl, &sr), *l = zsl_last_in_score(zsl, &sr);
    if (first < 0) {
        cr_assert_null(f);
        cr_assert_null(l);
    } else {
        cr_assert_not_null(f);
        cr_assert_not_null(l);
        cr_assert_eq(zsl_rank(zsl, f), (unsigned long)first + 1);
        cr_assert_eq(zsl_rank(zsl, l), (unsigned long)last + 1);
    }
    /* lex range: meaningful when all scores are equal; the reference uses
     * the same definition (first/last element satisfying the bounds in
     * list order), which is what the skiplist computes for equal scores */
    char b1[16], b2[16];
    zlex_range lr = {rand_lex_bound(b1), rand_lex_bound(b2)};
    int all_equal = 1;
    for (size_t i = 1; i < r->n; i++)
        if (r->v[i].score != r->v[0].score) all_equal = 0;
    if (!all_equal) return;
    first = last = -1;
    for (size_t i = 0; i < r->n; i++)
        if (zlex_in_range(r->v[i].m, r->v[i].len, &lr)) {
            if (first < 0) first = (long)i;
            last = (long)i;
        }
    f = zsl_first_in_lex(zsl, &lr);
    l = zsl_last_in_lex(zsl, &lr);
    if (first < 0) {
        cr_assert_null(f);
        cr_assert_null(l);
    } else {
        cr_assert_eq(zsl_rank(zsl, f), (unsigned long)first + 1);
        cr_assert_eq(zsl_rank(zsl, l), (unsigned long)last + 1);
    }
}

/* One random operation on both structures. */
static void random_op(zskiplist *zsl, ref *r, unsigned nm, int equal_scores) {
    char m[16];
    size_t len = rand_member(m, nm);
    double score = equal_scores ? 0 : rand_score();
    unsigned op = (unsigned)frand_below(100);
    dnode *x = zsl_find(zsl, m, len);
    long i = ref_find(r, m, len);
    cr_assert_eq(x != NULL, i >= 0);
    if (op < 45) { /* add or update */
        if (x) zsl_update_score(zsl, x, score);
        else zsl_insert(zsl, score, m, len);
        ref_put(r, score, m, len);
    } else if (op < 75) { /* delete one */
        if (x) {
            zsl_delete(zsl, x);
            ref_del_at(r, (size_t)i);
        }
    } else if (op < 80) { /* delete a score range */
        zscore_range sr = rand_score_range();
        unsigned long want = 0;
        for (size_t j = 0; j < r->n;)
            if (zscore_in_range(r->v[j].score, &sr)) { ref_del_at(r, j); want++; }
            else j++;
        cr_assert_eq(zsl_delete_score_range(zsl, &sr), want);
    } else if (op < 84) { /* delete a rank range */
        if (r->n == 0) return;
        unsigned long a = 1 + frand_below(r->n), b = a + frand_below(4);
        if (b > r->n) b = r->n;
        cr_assert_eq(zsl_delete_rank_range(zsl, a, b), b - a + 1);
        for (unsigned long k = a; k <= b; k++) ref_del_at(r, (size_t)a - 1);
    } else if (op < 87 && equal_scores) { /* delete a lex range */
        char b1[16], b2[16];
        zlex_range lr = {rand_lex_bound(b1), rand_lex_bound(b2)};
        unsigned long want = 0;
        for (size_t j = 0; j < r->n;)
            if (zlex_in_range(r->v[j].m, r->v[j].len, &lr)) { ref_del_at(r, j); want++; }
            else j++;
        cr_assert_eq(zsl_delete_lex_range(zsl, &lr), want);
    } else { /* read checks */
        if (x) cr_assert_eq(zsl_rank(zsl, x), (unsigned long)i + 1);
        if (r->n) {
            unsigned long k = 1 + frand_below(r->n);
            dnode *y = zsl_by_rank(zsl, k);
            cr_assert_not_null(y);
            cr_assert_eq(zsn_score(y), r->v[k - 1].score);
            cr_assert(zsn_len(y) == r->v[k - 1].len && memcmp(zsn_member(y), r->v[k - 1].m, zsn_len(y)) == 0);
        }
        cr_assert_null(zsl_by_rank(zsl, 0));
        cr_assert_null(zsl_by_rank(zsl, r->n + 1));
        check_ranges(zsl, r);
    }
}

static void run_random(uint64_t seed, unsigned nm, int steps, int equal_scores) {
    frand_seed(seed);
    zskiplist *zsl = zsl_new();
    ref r = {0};
    for (int s = 0; s < steps; s++) {
        random_op(zsl, &r, nm, equal_scores);
        if (s % 7 == 0 || r.n < 8) same_contents(zsl, &r);
    }
    same_contents(zsl, &r);
    zsl_free(zsl);
    free(r.v);
}

/* ------------------------------------------------------------ tests */

Test(zskiplist, empty) {
    zskiplist *zsl = zsl_new();
    cr_assert(zsl_check(zsl));
    cr_assert_null(zsl_first(zsl));
    cr_assert_null(zsl_last(zsl));
    cr_assert_null(zsl_by_rank(zsl, 1));
    zscore_range sr = {-INFINITY, INFINITY, 0, 0};
    cr_assert_null(zsl_first_in_score(zsl, &sr));
    cr_assert_null(zsl_last_in_score(zsl, &sr));
    cr_assert_eq(zsl_delete_score_range(zsl, &sr), 0);
    cr_assert_eq(zsl_delete_rank_range(zsl, 1, 10), 0);
    zsl_free(zsl);
}

Test(zskiplist, order_ties_by_member_bytes) {
    zskiplist *zsl = zsl_new();
    zsl_insert(zsl, 1, "b", 1);
    zsl_insert(zsl, 1, "ab", 2);
    zsl_insert(zsl, 1, "a", 1);
    zsl_insert(zsl, 0, "z", 1);
    zsl_insert(zsl, 1, "\xff", 1);
    const char *want[] = {"z", "a", "ab", "b", "\xff"};
    int i = 0;
    for (dnode *x = zsl_first(zsl); x; x = zsn_next(x), i++)
        cr_assert(zsn_len(x) == strlen(want[i]) && memcmp(zsn_member(x), want[i], zsn_len(x)) == 0);
    cr_assert_eq(i, 5);
    cr_assert(zsl_check(zsl));
    zsl_free(zsl);
}

Test(zskiplist, update_in_place_and_move) {
    zskiplist *zsl = zsl_new();
    for (int i = 0; i < 100; i++) {
        char m[8];
        int n = snprintf(m, sizeof m, "e%d", i);
        zsl_insert(zsl, i, m, (size_t)n);
    }
    dnode *x = zsl_find(zsl, "e50", 3);
    cr_assert_eq(zsl_update_score(zsl, x, 50.5), x);     /* stays between e50 and e51 */
    cr_assert_eq(zsl_rank(zsl, x), 51);
    x = zsl_update_score(zsl, x, -1);
    cr_assert_eq(zsl_rank(zsl, x), 1);
    x = zsl_update_score(zsl, x, 1000);
    cr_assert_eq(zsl_rank(zsl, x), 100);
    cr_assert_eq(zsl_last(zsl), x);
    cr_assert(zsl_check(zsl));
    zsl_free(zsl);
}

Test(zskiplist, random_small_keyspace) { run_random(1, 20, 5000, 0); }
Test(zskiplist, random_medium_keyspace) { run_random(2, 300, 8000, 0); }
Test(zskiplist, random_equal_scores_lex) { run_random(3, 60, 6000, 1); }
Test(zskiplist, random_more_seeds) {
    for (uint64_t s = 10; s < 20; s++) run_random(s, 40, 1500, (int)(s & 1));
}

Test(zskiplist, large_rank_walk) {
    frand_seed(7);
    zskiplist *zsl = zsl_new();
    for (int i = 0; i < 50000; i++) {
        char m[16];
        int n = snprintf(m, sizeof m, "%08d", (int)frand_below(1000000000));
        if (!zsl_find(zsl, m, (size_t)n)) zsl_insert(zsl, (double)frand_below(1000), m, (size_t)n);
    }
    cr_assert(zsl_check(zsl));
    unsigned long k = 1;
    for (dnode *x = zsl_first(zsl); x; x = zsn_next(x), k++) {
        if (k % 97 == 0) {
            cr_assert_eq(zsl_rank(zsl, x), k);
            cr_assert_eq(zsl_by_rank(zsl, k), x);
        }
    }
    size_t mem = zsl_mem(zsl);
    cr_assert(mem > zsl->length * 40);
    zsl_free(zsl);
}
