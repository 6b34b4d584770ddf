/* test_list.c - Criterion unit tests for src/keyspace/t_list.c (the list value).
 *
 * Why: every list command sits on this structure, and its risky parts are
 * the chunk boundaries (pushes and pops that start or empty a chunk, gaps
 * that run out and force a rebuild, inserts that split a full chunk) and the
 * integer encoding (values must come back byte for byte, and only canonical
 * integers may be stored as integers). Each test drives the list and a plain
 * reference array of strings with the same operations and compares the
 * whole content, plus tl_check's structural invariants, after every step.
 * Small chunk limits (list-max-listpack-size 1, 2, 5 and 4 KB) make chunk
 * boundaries frequent.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "t_list.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ reference */

typedef struct ref {
    char **v;
    size_t *len;
    size_t n, cap;
} ref;

static void ref_insert(ref *r, size_t at, const char *s, size_t n) {
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        r->len = realloc(r->len, r->cap * sizeof *r->len);
    }
    memmove(r->v + at + 1, r->v + at, (r->n - at) * sizeof *r->v);
    memmove(r->len + at + 1, r->len + at, (r->n - at) * sizeof *r->len);
    r->v[at] = malloc(n + 1);
    memcpy(r->v[at], s, n);
    r->len[at] = n;
    r->n++;
}

static void ref_delete(ref *r, size_t at) {
    free(r->v[at]);
    memmove(r->v + at, r->v + at + 1, (r->n - at - 1) * sizeof *r->v);
    memmove(r->len + at, r->len + at + 1, (r->n - at - 1) * sizeof *r->len);
    r->n--;
}

static void ref_free(ref *r) {
    for (size_t i = 0; i < r->n; i++) free(r->v[i]);
    free(r->v);
    free(r->len);
}

static int same_elem(const tl_elem *e, const char *s, size_t n) { return e->len == n && memcmp(e->p, s, n) == 0; }

/* The whole list equals the reference, read forwards, backwards and by index. */
static void check_equal(tlist *l, ref *r, const char *what) {
    cr_assert(tl_check(l), "structure broken after %s", what);
    cr_assert_eq(tl_len(l), r->n, "length after %s", what);
    tl_iter it;
    tl_elem e;
    size_t i = 0;
    tl_iter_init(&it, l, 0, TL_TAIL);
    while (tl_iter_next(&it, &e)) {
        cr_assert(i < r->n && same_elem(&e, r->v[i], r->len[i]), "forward element %zu after %s", i, what);
        i++;
    }
    cr_assert_eq(i, r->n);
    if (r->n) {
        tl_iter_init(&it, l, r->n - 1, TL_HEAD);
        i = r->n;
        while (tl_iter_next(&it, &e)) {
            i--;
            cr_assert(same_elem(&e, r->v[i], r->len[i]), "backward element %zu after %s", i, what);
        }
        cr_assert_eq(i, 0);
    }
}

/* ------------------------------------------------------------ values */

static const char *const fixed_vals[] = {
    "", "0", "1", "-1", "127", "128", "-128", "-129", "32767", "-32768", "65536", "007", "-0", "+1", " 1",
    "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1.5", "abc", "hello world",
};

static size_t rand_val(char *buf, size_t cap) {
    int kind = rand() % 6;
    if (kind == 0) {
        const char *s = fixed_vals[rand() % (sizeof fixed_vals / sizeof fixed_vals[0])];
        size_t n = strlen(s);
        memcpy(buf, s, n);
        return n;
    }
    if (kind == 1) return (size_t)snprintf(buf, cap, "%lld", (long long)rand() * (rand() % 2 ? 1 : -1) * (rand() % 1000));
    size_t n = kind == 5 ? (size_t)(rand() % 3000) : (size_t)(rand() % 70);
    if (n >= cap) n = cap - 1;
    for (size_t i = 0; i < n; i++) buf[i] = (char)(rand() % 256);
    return n;
}

static void set_fill(long long f) { srv.cfg.list_max_listpack_size = f; }

/* ------------------------------------------------------------ tests */

Test(t_list, push_pop_both_ends_across_chunks) {
    long long fills[] = {1, 2, 5, -1, -2};
    for (size_t fi = 0; fi < sizeof fills / sizeof fills[0]; fi++) {
        set_fill(fills[fi]);
        tlist *l = tl_new();
        ref r = {0};
        char buf[64];
        for (int i = 0; i < 3000; i++) {
            size_t n = (size_t)snprintf(buf, sizeof buf, i % 3 ? "v%d" : "%d", i);
            if (i % 2) {
                tl_push(l, TL_HEAD, buf, n);
                ref_insert(&r, 0, buf, n);
            } else {
                tl_push(l, TL_TAIL, buf, n);
                ref_insert(&r, r.n, buf, n);
            }
        }
        check_equal(l, &r, "pushes");
        cr_assert(fills[fi] > 0 ? tl_chunks(l) >= 3000 / (size_t)fills[fi] : tl_chunks(l) > 1);
        while (r.n) {
            tl_elem e;
            int where = r.n % 3 ? TL_HEAD : TL_TAIL;
            size_t at = where == TL_HEAD ? 0 : r.n - 1;
            cr_assert(tl_peek(l, where, &e));
            cr_assert(same_elem(&e, r.v[at], r.len[at]));
            tl_pop_n(l, where, 1);
            ref_delete(&r, at);
            if (r.n % 97 == 0) check_equal(l, &r, "pops");
        }
        cr_assert_eq(tl_len(l), 0);
        cr_assert_eq(tl_chunks(l), 0);
        tl_free(l);
        ref_free(&r);
    }
}

Test(t_list, integers_round_trip_and_only_canonical_ones_match) {
    set_fill(-2);
    tlist *l = tl_new();
    ref r = {0};
    for (size_t i = 0; i < sizeof fixed_vals / sizeof fixed_vals[0]; i++) {
        tl_push(l, TL_TAIL, fixed_vals[i], strlen(fixed_vals[i]));
        ref_insert(&r, r.n, fixed_vals[i], strlen(fixed_vals[i]));
    }
    char buf[32];
    for (long long v = -70000; v <= 70000; v += 7) {
        size_t n = (size_t)snprintf(buf, sizeof buf, "%lld", v);
        tl_push(l, TL_TAIL, buf, n);
        ref_insert(&r, r.n, buf, n);
    }
    for (int s = 0; s < 63; s++) {
        long long v = (long long)(1ULL << s);
        size_t n = (size_t)snprintf(buf, sizeof buf, "%lld", v);
        tl_push(l, TL_HEAD, buf, n);
        ref_insert(&r, 0, buf, n);
        n = (size_t)snprintf(buf, sizeof buf, "%lld", -v - 1);
        tl_push(l, TL_HEAD, buf, n);
        ref_insert(&r, 0, buf, n);
    }
    check_equal(l, &r, "integer pushes");
    /* "007" must match only "007", "7" only the integer 7 */
    const char *needles[] = {"007", "7", "-0", "0", "+1", "1", "abc", "9223372036854775808"};
    for (size_t k = 0; k < sizeof needles / sizeof needles[0]; k++) {
        tl_needle nd;
        tl_needle_init(&nd, needles[k], strlen(needles[k]));
        size_t want = 0, got = 0;
        for (size_t i = 0; i < r.n; i++) want += r.len[i] == strlen(needles[k]) && !memcmp(r.v[i], needles[k], r.len[i]);
        tl_iter it;
        tl_iter_init(&it, l, 0, TL_TAIL);
        while (tl_iter_next(&it, NULL)) got += tl_iter_eq(&it, &nd);
        cr_assert_eq(got, want, "matches of %s", needles[k]);
    }
    tl_free(l);
    ref_free(&r);
}

Test(t_list, random_operations_against_reference) {
    long long fills[] = {1, 3, 16, -1, -2, -5, 0};
    char buf[4096];
    for (size_t fi = 0; fi < sizeof fills / sizeof fills[0]; fi++) {
        srand((unsigned)(1234 + fi));
        set_fill(fills[fi]);
        tlist *l = tl_new();
        ref r = {0};
        for (int step = 0; step < 6000; step++) {
            int op = rand() % 10;
            size_t n;
            if (op <= 2) { /* push */
                n = rand_val(buf, sizeof buf);
                int where = rand() % 2;
                tl_push(l, where, buf, n);
                ref_insert(&r, where == TL_HEAD ? 0 : r.n, buf, n);
            } else if (op == 3 && r.n) { /* pop some */
                size_t k = (size_t)rand() % 4 + 1;
                int where = rand() % 2;
                tl_pop_n(l, where, k);
                for (size_t i = 0; i < k && r.n; i++) ref_delete(&r, where == TL_HEAD ? 0 : r.n - 1);
            } else if (op == 4 && r.n) { /* index */
                long long idx = (long long)(rand() % (2 * r.n + 2)) - (long long)r.n - 1;
                tl_elem e;
                int ok = tl_index(l, idx, &e);
                long long abs = idx < 0 ? (long long)r.n + idx : idx;
                cr_assert_eq(ok, abs >= 0 && abs < (long long)r.n);
                if (ok) cr_assert(same_elem(&e, r.v[abs], r.len[abs]));
            } else if (op == 5 && r.n) { /* set */
                size_t at = (size_t)rand() % r.n;
                n = rand_val(buf, sizeof buf);
                cr_assert(tl_set(l, (long long)at, buf, n));
                ref_delete(&r, at);
                ref_insert(&r, at, buf, n);
            } else if (op == 6 && r.n) { /* insert before/after an element */
                size_t at = (size_t)rand() % r.n;
                int after = rand() % 2;
                tl_iter it;
                tl_iter_init(&it, l, at, rand() % 2 ? TL_TAIL : TL_HEAD);
                cr_assert(tl_iter_next(&it, NULL));
                n = rand_val(buf, sizeof buf);
                tl_iter_insert(&it, after, buf, n);
                ref_insert(&r, at + (size_t)after, buf, n);
            } else if (op == 7 && r.n) { /* delete a run while iterating either way */
                size_t at = (size_t)rand() % r.n;
                int dir = rand() % 2 ? TL_TAIL : TL_HEAD;
                size_t k = (size_t)rand() % 6;
                tl_iter it;
                tl_iter_init(&it, l, at, dir);
                for (size_t i = 0; i < k && tl_iter_next(&it, NULL); i++) {
                    tl_iter_delete(&it);
                    ref_delete(&r, at);
                    if (dir == TL_HEAD) {
                        if (at == 0) break;
                        at--;
                    } else if (at == r.n) {
                        break;
                    }
                }
            } else if (op == 8 && r.n) { /* the next element after a delete is the right one */
                size_t at = (size_t)rand() % r.n;
                tl_iter it;
                tl_elem e;
                tl_iter_init(&it, l, at, TL_TAIL);
                cr_assert(tl_iter_next(&it, NULL));
                tl_iter_delete(&it);
                ref_delete(&r, at);
                if (tl_iter_next(&it, &e)) cr_assert(same_elem(&e, r.v[at], r.len[at]));
                else cr_assert_eq(at, r.n);
            } else if (op == 9 && r.n > 50 && rand() % 8 == 0) {
                tlist *d = tl_dup(l);
                check_equal(d, &r, "dup");
                tl_free(d);
            } else if (op == 9 && rand() % 3 == 0) {
                tl_tidy(l);
            }
            if (step % 50 == 0) check_equal(l, &r, "random step");
        }
        check_equal(l, &r, "random end");
        tl_free(l);
        ref_free(&r);
    }
}

Test(t_list, memory_per_element_is_small) {
    set_fill(-2);
    size_t before = zmalloc_used();
    tlist *l = tl_new();
    char buf[32];
    for (int i = 0; i < 100000; i++) {
        size_t n = (size_t)snprintf(buf, sizeof buf, "element:%06d", i); /* 14 bytes */
        tl_push(l, i % 2 ? TL_HEAD : TL_TAIL, buf, n);
    }
    double per = (double)(zmalloc_used() - before) / 100000.0;
    cr_log_info("%.2f bytes per 14-byte element, %zu chunks", per, tl_chunks(l));
    cr_assert(per < 15.5, "%.2f bytes per 14-byte element", per);
    cr_assert(tl_mem(l) == zmalloc_used() - before);
    tl_free(l);
}

Test(t_list, reserved_first_chunk_fits_one_push_command) {
    long long fills[] = {-2, -1, 4};
    for (size_t fi = 0; fi < sizeof fills / sizeof fills[0]; fi++) {
        set_fill(fills[fi]);
        for (int where = TL_HEAD; where <= TL_TAIL; where++) {
            for (size_t count = 1; count <= 3000; count *= 7) {
                char buf[32];
                size_t bytes = 0;
                for (size_t i = 0; i < count; i++) bytes += (size_t)snprintf(buf, sizeof buf, "e%zu", i);
                size_t before = zmalloc_used();
                tlist *l = tl_new_reserved(where, count, bytes);
                ref r = {0};
                for (size_t i = 0; i < count; i++) {
                    size_t n = (size_t)snprintf(buf, sizeof buf, "e%zu", i);
                    tl_push(l, where, buf, n);
                    ref_insert(&r, where == TL_HEAD ? 0 : r.n, buf, n);
                }
                check_equal(l, &r, "reserved pushes");
                if (count == 49 && fills[fi] == -2) /* one exact chunk: no growth copies, little slack */
                    cr_assert(zmalloc_used() - before <= sizeof(void *) * 4 + 48 + 40 + bytes + count + 16,
                              "%zu bytes for %zu elements", zmalloc_used() - before, count);
                tl_free(l);
                ref_free(&r);
            }
        }
    }
}

Test(t_list, tidy_after_deleting_most_elements_gives_memory_back) {
    set_fill(-2);
    size_t before = zmalloc_used();
    tlist *l = tl_new();
    ref r = {0};
    char buf[32];
    for (int i = 0; i < 50000; i++) {
        size_t n = (size_t)snprintf(buf, sizeof buf, "item-%d", i % 10);
        tl_push(l, TL_TAIL, buf, n);
        ref_insert(&r, r.n, buf, n);
    }
    size_t full = zmalloc_used() - before;
    size_t chunks = tl_chunks(l);
    tl_needle nd;
    tl_needle_init(&nd, "item-3", 6);
    tl_iter it;
    tl_iter_init(&it, l, 0, TL_TAIL);
    size_t at = 0;
    while (tl_iter_next(&it, NULL)) { /* keep only "item-3" */
        if (tl_iter_eq(&it, &nd)) {
            at++;
            continue;
        }
        tl_iter_delete(&it);
        ref_delete(&r, at);
    }
    tl_tidy(l);
    check_equal(l, &r, "tidy");
    size_t after = zmalloc_used() - before;
    cr_assert(after * 5 < full, "%zu bytes after keeping 10%% (was %zu)", after, full);
    cr_assert(tl_chunks(l) * 4 < chunks, "%zu chunks (was %zu)", tl_chunks(l), chunks); /* merged up to half full */
    tl_free(l);
    ref_free(&r);
}
