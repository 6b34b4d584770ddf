/* test_stream_cg.c - Criterion unit tests for a stream's consumer groups
 * (src/keyspace/t_stream_cg.c): the ID-ordered skiplist (sidmap) behind
 * every PEL, groups and consumers in name order, and the pending-entry
 * operations XREADGROUP, XCLAIM, XACK and XGROUP DELCONSUMER use.
 *
 * Why: a PEL record is shared by the group's PEL and its owner's, so one
 * missed unlink is a use-after-free much later (XPENDING, a reload); and
 * XPENDING / XAUTOCLAIM walk the skiplist from a seek in both directions.
 * The skiplist is driven against a sorted array with random puts, deletes,
 * seeks and walks; the group operations against a small reference (owner
 * and delivery data per pending ID), with the cross-links checked whole
 * after every step. Runs under ASan in `make SANITIZE=...`.
 */
#include "stream_testkit.h"

/* ---- sidmap against a sorted array -------------------------------------- */

typedef struct rmap {
    sid id[4096];
    long val[4096];
    size_t n;
} rmap;

static long rmap_lower(const rmap *r, sid id) { /* first index with id >= */
    long lo = 0, hi = (long)r->n;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (sid_cmp(r->id[mid], id) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static sid rand_sid(int small) {
    if (small) return (sid){frand_below(40), frand_below(4)};
    return (sid){frand64() >> frand_below(64), frand64() >> frand_below(64)};
}

static void check_walks(const sidmap *m, const rmap *r) {
    cr_assert_eq(m->len, r->n);
    size_t i = 0;
    for (sidmap_node *n = sidmap_first(m); n; n = sidmap_next(n), i++) {
        cr_assert(!sid_cmp(sidmap_id(n), r->id[i]));
        cr_assert_eq((long)(intptr_t)sidmap_val(n), r->val[i]);
    }
    cr_assert_eq(i, r->n);
    for (sidmap_node *n = sidmap_last(m); n; n = sidmap_prev(n)) {
        cr_assert(i > 0);
        cr_assert(!sid_cmp(sidmap_id(n), r->id[--i]));
    }
    cr_assert_eq(i, 0);
}

Test(stream_cg, sidmap_against_sorted_array) {
    for (int small = 0; small <= 1; small++) {
        frand_seed(42 + (uint64_t)small);
        sidmap m;
        sidmap_init(&m);
        static rmap r;
        r.n = 0;
        for (int op = 0; op < 20000; op++) {
            sid id = rand_sid(small);
            long at = rmap_lower(&r, id);
            int present = at < (long)r.n && !sid_cmp(r.id[at], id);
            unsigned k = (unsigned)frand_below(10);
            if (k < 4 && r.n < 4096) {
                long v = op + 1;
                cr_assert_eq(sidmap_put(&m, id, (void *)(intptr_t)v), !present);
                if (!present) {
                    memmove(r.id + at + 1, r.id + at, (r.n - (size_t)at) * sizeof r.id[0]);
                    memmove(r.val + at + 1, r.val + at, (r.n - (size_t)at) * sizeof r.val[0]);
                    r.id[at] = id;
                    r.val[at] = v;
                    r.n++;
                }
            } else if (k < 7) {
                if (r.n && frand_below(2)) { /* delete an existing one */
                    at = (long)frand_below(r.n);
                    id = r.id[at];
                    present = 1;
                }
                void *v = sidmap_del(&m, id);
                cr_assert_eq((long)(intptr_t)v, present ? r.val[at] : 0);
                if (present) {
                    memmove(r.id + at, r.id + at + 1, (r.n - (size_t)at - 1) * sizeof r.id[0]);
                    memmove(r.val + at, r.val + at + 1, (r.n - (size_t)at - 1) * sizeof r.val[0]);
                    r.n--;
                }
            } else {
                sidmap_node *f = sidmap_seek(&m, id), *b = sidmap_seek_rev(&m, id);
                cr_assert_eq(f != NULL, at < (long)r.n);
                if (f) cr_assert(!sid_cmp(sidmap_id(f), r.id[at]));
                long bi = present ? at : at - 1;
                cr_assert_eq(b != NULL, bi >= 0);
                if (b) cr_assert(!sid_cmp(sidmap_id(b), r.id[bi]));
                cr_assert_eq((long)(intptr_t)sidmap_get(&m, id), present ? r.val[at] : 0);
            }
            if (op % 1000 == 0) check_walks(&m, &r);
        }
        check_walks(&m, &r);
        sidmap_node *e = sidmap_seek(&m, SID_MAX);
        cr_assert(!e || !sid_cmp(sidmap_id(e), SID_MAX));
        sidmap_free(&m, NULL);
    }
}

/* ---- groups and consumers in name order ------------------------------------ */

Test(stream_cg, groups_in_radix_tree_name_order) {
    stream *s = stream_new();
    const char *names[] = {"b", "a", "ab", "", "a\0b", "\xff", "abc", "aa"};
    size_t lens[] = {1, 1, 2, 0, 3, 1, 3, 2};
    for (size_t i = 0; i < 8; i++) {
        sgroup *g = stream_group_create(s, names[i], lens[i], (sid){i, 0}, (long long)i - 1);
        cr_assert(g);
        cr_assert_null(stream_group_create(s, names[i], lens[i], SID_MIN, 0), "duplicate group");
    }
    const char *want[] = {"", "a", "a\0b", "aa", "ab", "abc", "b", "\xff"};
    size_t wlen[] = {0, 1, 3, 2, 2, 3, 1, 1};
    cr_assert_eq(s->ngroups, 8);
    for (size_t i = 0; i < 8; i++) {
        cr_assert_eq(s->groups[i]->nlen, wlen[i]);
        cr_assert(!memcmp(s->groups[i]->name, want[i], wlen[i]));
        cr_assert_eq(stream_group_find(s, want[i], wlen[i]), s->groups[i]);
    }
    cr_assert_null(stream_group_find(s, "a\0", 2));
    cr_assert(stream_group_destroy(s, "ab", 2));
    cr_assert(!stream_group_destroy(s, "ab", 2));
    cr_assert_null(stream_group_find(s, "ab", 2));
    cr_assert_eq(s->ngroups, 7);
    sgroup *g = stream_group_find(s, "a", 1);
    for (int i = 0; i < 200; i++) {
        char n[8];
        size_t nl = (size_t)snprintf(n, sizeof n, "c%03d", (i * 37) % 200);
        cr_assert(stream_consumer_create(g, n, nl, i));
        cr_assert_null(stream_consumer_create(g, n, nl, i));
    }
    for (size_t i = 1; i < g->nconsumers; i++)
        cr_assert_lt(memcmp(g->consumers[i - 1]->name, g->consumers[i]->name, 4), 0);
    cr_assert(stream_consumer_find(g, "c123", 4));
    cr_assert_null(stream_consumer_find(g, "c12", 3));
    stream_free(s);
}

/* ---- pending entries against a reference ------------------------------------ */

#define NC 6
#define NIDS 300

typedef struct pref {
    int owner[NIDS];            /* consumer index, -1: not pending */
    uint64_t count[NIDS];
    int64_t when[NIDS];
} pref;

static sid pid(int i) { return (sid){1000 + (uint64_t)i / 3, (uint64_t)i % 3}; }

/* The group PEL is the reference; every record sits in its owner's PEL,
 * and every consumer PEL entry is the group's record. */
static void check_pel(const sgroup *g, sconsumer *const *cs, const pref *r) {
    size_t pending = 0, in_consumers = 0;
    for (int i = 0; i < NIDS; i++) {
        snack *k = sidmap_get(&g->pel, pid(i));
        cr_assert_eq(k != NULL, r->owner[i] >= 0, "id %d", i);
        if (!k) continue;
        pending++;
        cr_assert_eq(k->consumer, cs[r->owner[i]]);
        cr_assert_eq(k->delivery_count, r->count[i]);
        cr_assert_eq(k->delivery_time, r->when[i]);
        cr_assert_eq(sidmap_get(&cs[r->owner[i]]->pel, pid(i)), k);
    }
    cr_assert_eq(g->pel.len, pending);
    for (size_t c = 0; c < g->nconsumers; c++) {
        const sconsumer *x = g->consumers[c];
        in_consumers += x->pel.len;
        for (sidmap_node *n = sidmap_first(&x->pel); n; n = sidmap_next(n)) {
            const snack *k = sidmap_val(n);
            cr_assert_eq(k->consumer, x);
            cr_assert_eq(sidmap_get(&g->pel, sidmap_id(n)), k);
        }
    }
    cr_assert_eq(in_consumers, pending);
}

static void pel_step(sgroup *g, sconsumer **cs, pref *r, int op) {
    int i = (int)frand_below(NIDS), c = (int)frand_below(NC);
    unsigned k = (unsigned)frand_below(10);
    if (k < 4) { /* XREADGROUP delivers */
        snack *n = stream_pel_add(g, cs[c], pid(i), op);
        cr_assert_eq(n != NULL, r->owner[i] < 0);
        if (n) r->owner[i] = c, r->count[i] = 1, r->when[i] = op;
    } else if (k < 6) { /* XCLAIM */
        snack *n = sidmap_get(&g->pel, pid(i));
        if (!n) return;
        stream_pel_move(g, n, pid(i), cs[c]);
        n->delivery_count++;
        n->delivery_time = op;
        r->owner[i] = c, r->count[i]++, r->when[i] = op;
    } else if (k < 9) { /* XACK */
        cr_assert_eq(stream_pel_ack(g, pid(i)), r->owner[i] >= 0);
        r->owner[i] = -1;
    } else if (frand_below(8) == 0) { /* XGROUP DELCONSUMER, then it comes back */
        size_t had = 0;
        for (int j = 0; j < NIDS; j++) had += r->owner[j] == c;
        char name[4] = {'c', (char)('0' + c), 0, 0};
        cr_assert_eq(stream_consumer_delete(g, cs[c]), had);
        for (int j = 0; j < NIDS; j++)
            if (r->owner[j] == c) r->owner[j] = -1;
        cr_assert_null(stream_consumer_find(g, name, 2));
        cs[c] = stream_consumer_create(g, name, 2, op);
    }
}

Test(stream_cg, pel_add_move_ack_delete_consumer) {
    frand_seed(77);
    stream *s = stream_new();
    sgroup *g = stream_group_create(s, "grp", 3, SID_MIN, 0);
    sconsumer *cs[NC];
    for (int c = 0; c < NC; c++) {
        char name[3] = {'c', (char)('0' + c), 0};
        cs[c] = stream_consumer_create(g, name, 2, c);
    }
    static pref r;
    for (int i = 0; i < NIDS; i++) r.owner[i] = -1;
    for (int op = 0; op < 6000; op++) {
        pel_step(g, cs, &r, op);
        if (op % 200 == 0) check_pel(g, cs, &r);
    }
    check_pel(g, cs, &r);
    stream *d = stream_dup(s); /* the copy has the same PELs and its own records */
    sgroup *dg = stream_group_find(d, "grp", 3);
    sconsumer *dcs[NC];
    for (int c = 0; c < NC; c++) dcs[c] = stream_consumer_find(dg, cs[c]->name, cs[c]->nlen);
    check_pel(dg, dcs, &r);
    for (int c = 0; c < NC; c++) cr_assert_eq(dcs[c]->seen_time, cs[c]->seen_time);
    cr_assert_neq(sidmap_first(&dg->pel) ? sidmap_val(sidmap_first(&dg->pel)) : NULL,
                  sidmap_first(&g->pel) ? sidmap_val(sidmap_first(&g->pel)) : (void *)1);
    stream_free(s);
    check_pel(dg, dcs, &r);
    cr_assert(stream_group_destroy(d, "grp", 3));
    stream_free(d);
}

Test(stream_cg, memory_grows_with_groups_and_pel) {
    stream *s = stream_new();
    size_t m0 = stream_mem(s);
    sgroup *g = stream_group_create(s, "g", 1, SID_MIN, SCG_INVALID_ENTRIES_READ);
    size_t m1 = stream_mem(s);
    sconsumer *c = stream_consumer_create(g, "alice", 5, 0);
    for (uint64_t i = 1; i <= 100; i++) cr_assert(stream_pel_add(g, c, (sid){i, 0}, 0));
    size_t m2 = stream_mem(s);
    cr_assert(m0 < m1 && m1 < m2);
    cr_assert_eq(stream_consumer_delete(g, c), 100);
    cr_assert_eq(g->pel.len, 0);
    cr_assert_lt(stream_mem(s), m2);
    stream_free(s);
}
