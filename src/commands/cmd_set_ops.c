/* cmd_set_ops.c - set algebra: SINTER, SINTERCARD, SINTERSTORE, SUNION,
 * SUNIONSTORE, SDIFF, SDIFFSTORE.
 *
 * The results are built the way Redis 7.0 builds them, because that is
 * what clients observe: SINTER replies in the iteration order of the
 * smallest set; SUNION and SDIFF collect into a fresh set (intset until a
 * non-integer arrives or it outgrows set-max-intset-entries) and reply in
 * its order, so all-integer results come out ascending; the STORE forms
 * store that fresh set, so OBJECT ENCODING of the destination matches,
 * including SDIFF's choice between its two algorithms (iterate the first
 * set, or copy it and subtract), which decides the destination's encoding.
 * Missing keys are empty sets; any key of another type is WRONGTYPE, even
 * after a missing one. */
#include <stdlib.h>
#include <string.h>
#include "client.h"
#include "cmd_set.h"
#include "db.h"
#include "notify.h"
#include "reply.h"
#include "server.h"
#include "t_set.h"
#include "util.h"
#include "zmalloc.h"

/* The sets named by keys[0..n): NULL for missing keys; *missing counts
 * them. Returns NULL after replying WRONGTYPE. The caller frees. Read
 * lookups (hits and misses counted) even for the STORE forms, as Redis. */
static fset **lookup_sets(client *c, const span *keys, int n, int *missing) {
    fset **sets = zmalloc(sizeof(fset *) * (size_t)n);
    *missing = 0;
    for (int j = 0; j < n; j++) {
        dnode *nd;
        if (set_lookup(c, keys[j], 0, &nd) < 0) {
            zfree(sets);
            return NULL;
        }
        sets[j] = nd ? set_of(nd) : NULL;
        if (!nd) (*missing)++;
    }
    return sets;
}

/* Store `result` at dst (replacing any value and TTL) and raise `event`,
 * or delete dst when the result is empty ("del"); reply with the result's
 * size. Redis replies before the event, except for an intersection with a
 * missing key (del_first), which deletes before replying. */
static void store_result(client *c, span dst, fset *result, const char *event, int del_first) {
    db *d = c->db;
    size_t size = fset_size(result);
    if (size) {
        db_set_ptr(d, dst.p, dst.len, OBJ_SET, fset_encoding(result), result);
        set_written(d, dst, 1);
        reply_int(c, (long long)size);
        notify_key(NOTIFY_SET, event, d->id, dst);
        return;
    }
    fset_free(result);
    int existed = db_delete_stored(d, dst.p, dst.len);
    if (existed) set_written(d, dst, 1);
    if (!del_first) reply_int(c, 0);
    if (existed) notify_key(NOTIFY_GENERIC, "del", d->id, dst);
    if (del_first) reply_int(c, 0);
}

/* ---- intersection ---------------------------------------------------------- */

enum { OUT_REPLY, OUT_STORE, OUT_CARD };

typedef struct by_size {
    fset *s;
    size_t size;
    int index;
} by_size;

static int cmp_by_size(const void *a, const void *b) {
    const by_size *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    return x->index - y->index; /* stable */
}

/* Whether m (from the smallest set, sorted[0]) is in every other set. */
static int in_all(const by_size *sorted, int n, const fset_member *m) {
    for (int j = 1; j < n; j++) {
        if (sorted[j].s == sorted[0].s) continue; /* the same key twice */
        if (!fset_contains_member(sorted[j].s, m)) return 0;
    }
    return 1;
}

/* keys[0..n) all exist and are sets. out: reply the members, store them at
 * dst, or reply their count (stopping at limit when limit > 0). */
static void inter_sets(client *c, fset **sets, int n, int out, span dst, long long limit) {
    by_size *sorted = zmalloc(sizeof *sorted * (size_t)n);
    for (int j = 0; j < n; j++) sorted[j] = (by_size){sets[j], fset_size(sets[j]), j};
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_by_size);

    elemvec found = {0};
    fset *result = out == OUT_STORE ? fset_new_intset() : NULL;
    long long card = 0;
    fset_iter it;
    fset_member m;
    fset_iter_init(&it, sorted[0].s);
    while (fset_iter_next(&it, &m)) {
        if (!in_all(sorted, n, &m)) continue;
        if (out == OUT_REPLY) elemvec_push(&found, &m);
        else if (out == OUT_STORE) fset_add_member(&result, &m);
        else if (++card == limit) break;
    }
    fset_iter_end(&it);
    zfree(sorted);

    if (out == OUT_CARD) {
        reply_int(c, card);
    } else if (out == OUT_STORE) {
        store_result(c, dst, result, "sinterstore", 0);
    } else {
        reply_set(c, (long)found.n);
        for (size_t i = 0; i < found.n; i++) reply_elem(c, &found.a[i]);
    }
    elemvec_free(&found);
}

static void inter_generic(client *c, const span *keys, int n, int out, span dst, long long limit) {
    int missing;
    fset **sets = lookup_sets(c, keys, n, &missing);
    if (!sets) return;
    if (missing) { /* an empty set: empty intersection */
        if (out == OUT_STORE) store_result(c, dst, fset_new_intset(), "sinterstore", 1);
        else if (out == OUT_CARD) reply_int(c, 0);
        else reply_set(c, 0);
    } else {
        inter_sets(c, sets, n, out, dst, limit);
    }
    zfree(sets);
}

void cmd_sinter(client *c) {
    span none = {0};
    inter_generic(c, c->argv + 1, c->argc - 1, OUT_REPLY, none, 0);
}

void cmd_sinterstore(client *c) {
    inter_generic(c, c->argv + 2, c->argc - 2, OUT_STORE, c->argv[1], 0);
}

void cmd_sintercard(client *c) {
    long long numkeys, limit = 0;
    if (!str_to_ll(c->argv[1].p, c->argv[1].len, &numkeys) || numkeys < 1) {
        reply_error(c, "ERR numkeys should be greater than 0");
        return;
    }
    if (numkeys > c->argc - 2) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < c->argc; j++) {
        if (span_eq_nocase(c->argv[j], "limit") && j + 1 < c->argc) {
            j++;
            if (!str_to_ll(c->argv[j].p, c->argv[j].len, &limit) || limit < 0) {
                reply_error(c, "ERR LIMIT can't be negative");
                return;
            }
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    span none = {0};
    inter_generic(c, c->argv + 2, (int)numkeys, OUT_CARD, none, limit);
}

/* ---- union and difference ------------------------------------------------- */

static void add_all(fset **result, fset *s) {
    fset_iter it;
    fset_member m;
    fset_iter_init(&it, s);
    while (fset_iter_next(&it, &m)) fset_add_member(result, &m);
    fset_iter_end(&it);
}

static fset *union_of(fset **sets, int n) {
    fset *result = fset_new_intset();
    for (int j = 0; j < n; j++)
        if (sets[j]) add_all(&result, sets[j]);
    return result;
}

/* Members of sets[0] found in no other set: walk sets[0] and probe. */
static fset *diff_by_probing(fset **sets, int n) {
    fset *result = fset_new_intset();
    fset_iter it;
    fset_member m;
    fset_iter_init(&it, sets[0]);
    while (fset_iter_next(&it, &m)) {
        int j;
        for (j = 1; j < n; j++) {
            if (!sets[j]) continue;
            if (sets[j] == sets[0] || fset_contains_member(sets[j], &m)) break;
        }
        if (j == n) fset_add_member(&result, &m);
    }
    fset_iter_end(&it);
    return result;
}

/* The same by copying sets[0] and removing every other set's members. */
static fset *diff_by_removing(fset **sets, int n) {
    fset *result = fset_new_intset();
    add_all(&result, sets[0]);
    for (int j = 1; j < n && fset_size(result) > 0; j++) {
        if (!sets[j]) continue;
        fset_iter it;
        fset_member m;
        fset_iter_init(&it, sets[j]);
        while (fset_iter_next(&it, &m)) fset_remove(&result, m.p, m.len);
        fset_iter_end(&it);
    }
    return result;
}

/* Redis's cost model: probing costs |first| per existing set, halved (it
 * stops early on common members); removing costs the sum of the sizes. */
static fset *diff_of(fset **sets, int n) {
    if (!sets[0]) return fset_new_intset();
    unsigned long long probe = 0, remove = 0;
    for (int j = 0; j < n; j++) {
        if (!sets[j]) continue;
        probe += fset_size(sets[0]);
        remove += fset_size(sets[j]);
    }
    return probe / 2 <= remove ? diff_by_probing(sets, n) : diff_by_removing(sets, n);
}

static void union_diff_generic(client *c, const span *keys, int n, int is_union, const span *dst) {
    int missing;
    fset **sets = lookup_sets(c, keys, n, &missing);
    if (!sets) return;
    fset *result = is_union ? union_of(sets, n) : diff_of(sets, n);
    zfree(sets);
    if (dst) {
        store_result(c, *dst, result, is_union ? "sunionstore" : "sdiffstore", 0);
        return;
    }
    fset_iter it;
    fset_member m;
    reply_set(c, (long)fset_size(result));
    fset_iter_init(&it, result);
    while (fset_iter_next(&it, &m)) reply_member(c, &m);
    fset_iter_end(&it);
    fset_free(result);
}

void cmd_sunion(client *c) { union_diff_generic(c, c->argv + 1, c->argc - 1, 1, NULL); }
void cmd_sunionstore(client *c) { union_diff_generic(c, c->argv + 2, c->argc - 2, 1, &c->argv[1]); }
void cmd_sdiff(client *c) { union_diff_generic(c, c->argv + 1, c->argc - 1, 0, NULL); }
void cmd_sdiffstore(client *c) { union_diff_generic(c, c->argv + 2, c->argc - 2, 0, &c->argv[1]); }
