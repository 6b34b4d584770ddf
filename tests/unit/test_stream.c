/* test_stream.c - Criterion unit tests for the stream value's entries
 * (src/keyspace/t_stream.c): appending, iterating both ways, ranges,
 * deletion, trimming and where blocks split.
 *
 * Why: XADD, XRANGE, XDEL and XTRIM sit directly on this code, and RDB
 * files and DUMP payloads must carry the nodes redis-server would have
 * (t_stream.c's essay). Each test drives a stream and a plain reference
 * list with the same random operations (IDs that jump past 2^63, values
 * at the integer-encoding edges, field sets that match the block's master
 * or not) and compares everything, under every node limit from one entry
 * per block to unlimited. The blocks are looked at through their Redis
 * listpacks (stream_testkit.h), and trimming is checked against Redis
 * 7.0's streamTrim run on that model. Group and PEL tests are in
 * test_stream_cg.c, listpack and RDB round trips in test_stream_lp.c.
 */
#include "stream_testkit.h"

static const stream_limits LIMITS[] = {
    {0, 0}, {0, 1}, {0, 2}, {0, 7}, {0, 100}, {1, 0}, {200, 0}, {1024, 5}, {4096, 100},
};
#define NLIMITS (sizeof LIMITS / sizeof LIMITS[0])

/* Appends one random entry to s and ref. */
static sid add_one(stream *s, tlist *ref, tk_gen *g, sid last, const stream_limits *lim) {
    sid id = tk_next_id(last);
    size_t nf = tk_entry(g);
    stream_append(s, id, g->fv, nf, lim);
    tl_add(ref, id, g->fv, nf, 0);
    return id;
}

/* Deletes a random reference entry (live or not) from both. */
static void delete_one(stream *s, tlist *ref) {
    if (!ref->n) return;
    tent *t = &ref->v[frand_below(ref->n)];
    cr_assert_eq(stream_delete(s, t->id), !t->deleted);
    t->deleted = 1;
}

/* A stream of n random entries, about one in `del_every` deleted as it grows. */
static stream *build(tlist *ref, size_t n, const stream_limits *lim, unsigned del_every, size_t maxval) {
    static tk_gen g;
    g.maxval = maxval;
    g.tmpl = (int)frand_below(4);
    stream *s = stream_new();
    sid last = {frand_below(2) ? 0 : frand64() >> 2, 0};
    for (size_t i = 0; i < n; i++) {
        last = add_one(s, ref, &g, last, lim);
        if (del_every && frand_below(del_every) == 0) delete_one(s, ref);
    }
    return s;
}

Test(stream, append_iterate_every_limit) {
    for (size_t l = 0; l < NLIMITS; l++) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            frand_seed(seed * 100 + l);
            tlist ref = {0};
            static tk_gen g;
            g.maxval = 40;
            g.tmpl = (int)seed % 4;
            stream *s = stream_new();
            sid last = SID_MIN;
            for (int i = 0; i < 700; i++) {
                last = add_one(s, &ref, &g, last, &LIMITS[l]);
                if (frand_below(8) == 0) delete_one(s, &ref);
                if (i % 97 == 0) tk_check(s, &ref);
            }
            tk_check(s, &ref);
            cr_assert(!sid_cmp(s->last_id, last));
            cr_assert_eq(s->entries_added, 700);
            tmodel m;
            tk_model(s, &m);
            tk_model_check(&m, &ref);
            for (size_t i = 0; LIMITS[l].max_entries && i < m.n; i++)
                cr_assert_leq((long long)m.v[i].e.n, LIMITS[l].max_entries);
            cr_assert_eq(stream_block_count(s), m.n);
            tk_model_free(&m);
            stream_free(s);
            tl_free(&ref);
        }
    }
}

/* Redis's streamAppendItem: a new node when the tail's listpack bytes plus
 * the new entry's field and value bytes reach stream-node-max-bytes (0 or
 * more than 1 GB: 1 GB), or its entries, deleted ones included, reach
 * stream-node-max-entries. */
static int expect_split(const stream *s, const span *fv, size_t nf, const stream_limits *lim) {
    size_t n = stream_block_count(s);
    if (!n) return 1;
    sid master;
    size_t len;
    unsigned char *lp = stream_block_listpack(s, n - 1, &master, &len);
    rlp_iter it;
    renc_elem e1, e2;
    cr_assert_eq(rlp_iter_init(&it, lp, len), 0);
    cr_assert_eq(rlp_next(&it, &e1), 1);
    cr_assert_eq(rlp_next(&it, &e2), 1);
    zfree(lp);
    size_t tot = 0, maxb = lim->max_bytes && lim->max_bytes <= SB_LISTPACK_MAX ? lim->max_bytes : SB_LISTPACK_MAX;
    for (size_t i = 0; i < 2 * nf; i++) tot += fv[i].len;
    if (len + tot >= maxb) return 1;
    return lim->max_entries && e1.v + e2.v >= lim->max_entries;
}

Test(stream, blocks_split_where_redis_splits_nodes) {
    static const stream_limits more[] = {{60, 0}, {100, 3}, {300, 0}, {700, 20}, {5000, 0}};
    for (size_t l = 0; l < NLIMITS + 5; l++) {
        const stream_limits *lim = l < NLIMITS ? &LIMITS[l] : &more[l - NLIMITS];
        frand_seed(7000 + l);
        tlist ref = {0};
        static tk_gen g;
        g.maxval = l % 2 ? 120 : 10;
        g.tmpl = (int)(l % 4);
        stream *s = stream_new();
        sid last = SID_MIN;
        for (int i = 0; i < 500; i++) {
            sid id = tk_next_id(last);
            size_t nf = tk_entry(&g), before = stream_block_count(s);
            int split = expect_split(s, g.fv, nf, lim);
            stream_append(s, id, g.fv, nf, lim);
            tl_add(&ref, id, g.fv, nf, 0);
            cr_assert_eq(stream_block_count(s), before + (size_t)split, "limit %zu entry %d", l, i);
            last = id;
            if (frand_below(6) == 0) delete_one(s, &ref);
        }
        tk_check(s, &ref);
        stream_free(s);
        tl_free(&ref);
    }
}

/* Candidate range bounds: the edges, entry IDs (deleted ones too), their
 * neighbours, and the block masters. */
static sid pick_bound(const tlist *ref, const tmodel *m) {
    unsigned r = (unsigned)frand_below(10);
    if (r == 0) return SID_MIN;
    if (r == 1) return SID_MAX;
    if (r == 2 && m->n) return m->v[frand_below(m->n)].master;
    if (!ref->n) return SID_MIN;
    sid id = ref->v[frand_below(ref->n)].id;
    if (r == 3) sid_incr(&id);
    if (r == 4) sid_decr(&id);
    return id;
}

static void check_range(const stream *s, const tlist *ref, sid a, sid b, int rev) {
    stream_iter it;
    sentry e;
    stream_iter_init(&it, s, a, b, rev);
    for (size_t k = 0; k < ref->n; k++) {
        const tent *t = &ref->v[rev ? ref->n - 1 - k : k];
        if (t->deleted || sid_cmp(t->id, a) < 0 || sid_cmp(t->id, b) > 0) continue;
        cr_assert(stream_iter_next(&it, &e), "range misses an entry");
        cr_assert(entry_matches(&e, t), "range entry differs");
    }
    cr_assert(!stream_iter_next(&it, &e), "range has an extra entry");
    cr_assert(!stream_iter_next(&it, &e));
    stream_iter_end(&it);
}

Test(stream, ranges_inside_outside_and_between_blocks) {
    for (size_t l = 0; l < NLIMITS; l++) {
        frand_seed(300 + l);
        tlist ref = {0};
        stream *s = build(&ref, 400, &LIMITS[l], 4, 30);
        tmodel m;
        tk_model(s, &m);
        for (int q = 0; q < 400; q++) {
            sid a = pick_bound(&ref, &m), b = q % 5 == 0 ? a : pick_bound(&ref, &m);
            if (q % 3 && sid_cmp(a, b) > 0) {
                sid t = a;
                a = b;
                b = t;
            }
            check_range(s, &ref, a, b, q & 1);
            long i = tl_find(&ref, a);
            cr_assert_eq(stream_has(s, a), i >= 0 && !ref.v[i].deleted);
        }
        tk_model_free(&m);
        stream_free(s);
        tl_free(&ref);
    }
}

/* The node holding id in m, or -1. */
static long node_of(const tmodel *m, sid id) {
    for (size_t i = 0; i < m->n; i++)
        if (tl_find(&m->v[i].e, id) >= 0) return (long)i;
    return -1;
}

Test(stream, delete_marks_and_removes_whole_blocks) {
    for (size_t l = 0; l < NLIMITS; l++) {
        frand_seed(500 + l);
        tlist ref = {0};
        stream *s = build(&ref, 300, &LIMITS[l], 0, 20);
        sid maxdel = SID_MIN;
        for (int q = 0; q < 400 && s->length; q++) {
            tmodel m;
            tk_model(s, &m);
            sid id = ref.v[frand_below(ref.n)].id;
            if (q % 7 == 0) sid_incr(&id); /* mostly not an entry */
            long i = tl_find(&ref, id), nd = node_of(&m, id);
            int live = i >= 0 && !ref.v[i].deleted;
            size_t blocks = stream_block_count(s);
            cr_assert_eq(stream_delete(s, id), live);
            if (live) {
                ref.v[i].deleted = 1;
                if (sid_cmp(id, maxdel) > 0) maxdel = id;
                cr_assert_eq(stream_block_count(s), blocks - (m.v[nd].live == 1), "a block's last entry takes the block");
            } else {
                cr_assert_eq(stream_block_count(s), blocks);
            }
            cr_assert(!sid_cmp(s->max_deleted_id, maxdel));
            tk_model_free(&m);
            if (q % 50 == 0) tk_check(s, &ref);
        }
        tk_check(s, &ref);
        tmodel m;
        tk_model(s, &m);
        tk_model_check(&m, &ref);
        for (size_t i = 0; i < m.n; i++) cr_assert_gt(m.v[i].live, 0, "deletion left an empty block");
        tk_model_free(&m);
        stream_free(s);
        tl_free(&ref);
    }
}

Test(stream, delete_everything_then_append) {
    stream_limits lim = {0, 3};
    stream *s = stream_new();
    span fv[2] = {{"f", 1}, {"v", 1}};
    for (uint64_t i = 1; i <= 10; i++) stream_append(s, (sid){i, 0}, fv, 1, &lim);
    for (uint64_t i = 10; i >= 1; i--) cr_assert(stream_delete(s, (sid){i, 0}));
    cr_assert_eq(s->length, 0);
    cr_assert_eq(stream_block_count(s), 0);
    cr_assert(sid_is_zero(s->first_id));
    cr_assert(!sid_cmp(s->max_deleted_id, ((sid){10, 0})));
    cr_assert(!sid_cmp(s->last_id, ((sid){10, 0})));
    cr_assert(!stream_delete(s, (sid){3, 0}));
    stream_append(s, (sid){11, 0}, fv, 1, &lim);
    cr_assert(!sid_cmp(s->first_id, ((sid){11, 0})));
    cr_assert_eq(s->entries_added, 11);
    tlist ref = {0};
    tl_add(&ref, (sid){11, 0}, fv, 1, 0);
    tk_check(s, &ref);
    tl_free(&ref);
    stream_free(s);
}

/* ---- trimming ------------------------------------------------------------ */

/* Redis 7.0's streamTrim over the model: whole nodes from the front while
 * allowed (limit) and wanted, then, unless approximate, entries of the
 * first remaining node marked deleted. */
static long long ref_trim(tmodel *m, uint64_t *length, const stream_trim_args *a) {
    long long deleted = 0;
    size_t gone = 0;
    while (gone < m->n) {
        if (a->strategy == STRIM_MAXLEN && *length <= (uint64_t)a->maxlen) break;
        tnode *nd = &m->v[gone];
        long long entries = nd->live;
        if (a->limit && deleted + entries > a->limit) break;
        int remove = a->strategy == STRIM_MAXLEN ? *length - (uint64_t)entries >= (uint64_t)a->maxlen
                                                 : sid_cmp(nd->e.v[nd->e.n - 1].id, a->minid) < 0;
        if (remove) {
            *length -= (uint64_t)entries;
            deleted += entries;
            tl_free(&nd->e);
            gone++;
            continue;
        }
        if (a->approx) break;
        for (size_t k = 0; k < nd->e.n; k++) {
            tent *t = &nd->e.v[k];
            if (a->strategy == STRIM_MAXLEN ? *length <= (uint64_t)a->maxlen : sid_cmp(t->id, a->minid) >= 0) break;
            if (t->deleted) continue;
            t->deleted = 1;
            nd->live--;
            nd->deleted++;
            deleted++;
            (*length)--;
        }
        break;
    }
    memmove(m->v, m->v + gone, (m->n - gone) * sizeof *m->v);
    m->n -= gone;
    return deleted;
}

/* Entries gone from the model, or tombstones in it, are deleted in ref. */
static void sync_ref(tlist *ref, const tmodel *m) {
    for (size_t i = 0; i < ref->n; i++) {
        long nd = node_of(m, ref->v[i].id);
        if (nd < 0 || m->v[nd].e.v[tl_find(&m->v[nd].e, ref->v[i].id)].deleted) ref->v[i].deleted = 1;
    }
}

static void model_eq(const tmodel *a, const tmodel *b) {
    cr_assert_eq(a->n, b->n, "block counts differ");
    for (size_t i = 0; i < a->n; i++) {
        const tnode *x = &a->v[i], *y = &b->v[i];
        cr_assert(!sid_cmp(x->master, y->master));
        cr_assert_eq(x->live, y->live);
        cr_assert_eq(x->deleted, y->deleted);
        cr_assert_eq(x->e.n, y->e.n);
        for (size_t k = 0; k < x->e.n; k++) {
            cr_assert(!sid_cmp(x->e.v[k].id, y->e.v[k].id));
            cr_assert_eq(x->e.v[k].deleted, y->e.v[k].deleted);
        }
    }
}

static stream_trim_args pick_trim(const tlist *ref, const tmodel *m, uint64_t len, const stream_limits *lim) {
    stream_trim_args a = {0};
    a.strategy = frand_below(2) ? STRIM_MAXLEN : STRIM_MINID;
    a.approx = (int)frand_below(2);
    static const long long fixed[] = {0, 1, 2, 5};
    unsigned r = (unsigned)frand_below(6);
    a.maxlen = r < 4 ? fixed[r] : (long long)frand_below(len + 10);
    a.minid = pick_bound(ref, m);
    if (a.approx) {
        long long opts[] = {0, 1, lim->max_entries, (long long)frand_below(len + 1), 100 * lim->max_entries};
        a.limit = opts[frand_below(5)];
    }
    return a;
}

Test(stream, trim_maxlen_minid_exact_and_approximate) {
    for (int round = 0; round < 400; round++) {
        frand_seed(9000 + (uint64_t)round);
        const stream_limits *lim = &LIMITS[frand_below(NLIMITS)];
        tlist ref = {0};
        stream *s = build(&ref, 20 + frand_below(200), lim, (unsigned)frand_below(5), 15);
        tmodel want, got;
        tk_model(s, &want);
        for (int step = 0; step < 3; step++) {
            stream_trim_args a = pick_trim(&ref, &want, s->length, lim);
            uint64_t len = s->length;
            long long n_want = ref_trim(&want, &len, &a);
            cr_assert_eq(stream_trim(s, &a), n_want, "round %d strategy %d approx %d", round, a.strategy, a.approx);
            cr_assert_eq(s->length, len);
            tk_model(s, &got);
            model_eq(&got, &want);
            tk_model_free(&got);
            sync_ref(&ref, &want);
            tk_check(s, &ref);
        }
        tk_model_free(&want);
        stream_free(s);
        tl_free(&ref);
    }
}

Test(stream, trim_can_leave_a_block_of_tombstones) {
    /* Redis 7.0 too: XADD 1-1 2-1 3-1, XDEL 3-1, XTRIM MINID 3-1 keeps the
     * node (its last entry, deleted, is not below 3-1) with no live entry. */
    stream_limits lim = {0, 100};
    stream *s = stream_new();
    span fv[2] = {{"a", 1}, {"b", 1}};
    for (uint64_t i = 1; i <= 3; i++) stream_append(s, (sid){i, 1}, fv, 1, &lim);
    cr_assert(stream_delete(s, (sid){3, 1}));
    stream_trim_args a = {.strategy = STRIM_MINID, .minid = {3, 1}};
    cr_assert_eq(stream_trim(s, &a), 2);
    cr_assert_eq(s->length, 0);
    cr_assert_eq(stream_block_count(s), 1);
    cr_assert(sid_is_zero(s->first_id));
    tlist ref = {0};
    tk_check(s, &ref);
    stream_append(s, (sid){4, 0}, fv, 1, &lim); /* appends to that block */
    cr_assert_eq(stream_block_count(s), 1);
    tl_add(&ref, (sid){4, 0}, fv, 1, 0);
    tk_check(s, &ref);
    tl_free(&ref);
    stream_free(s);
}

/* ---- copies, edges, counters ------------------------------------------------ */

Test(stream, dup_is_equal_and_independent) {
    for (size_t l = 0; l < NLIMITS; l++) {
        frand_seed(1200 + l);
        tlist ref = {0};
        stream *s = build(&ref, 250, &LIMITS[l], 5, 25);
        stream *d = stream_dup(s);
        tmodel a, b;
        tk_model(s, &a);
        tk_model(d, &b);
        model_eq(&a, &b);
        cr_assert(!sid_cmp(d->last_id, s->last_id) && !sid_cmp(d->first_id, s->first_id));
        cr_assert(!sid_cmp(d->max_deleted_id, s->max_deleted_id));
        cr_assert_eq(d->entries_added, s->entries_added);
        cr_assert_eq(d->length, s->length);
        cr_assert_eq(stream_mem(d) > 0, 1);
        static tk_gen g;
        g.maxval = 10;
        for (int i = 0; i < 50; i++) add_one(s, &ref, &g, s->last_id, &LIMITS[l]);
        stream_trim_args t = {.strategy = STRIM_MAXLEN, .maxlen = 10};
        stream_trim(s, &t);
        tk_model_free(&b);
        tk_model(d, &b);
        model_eq(&a, &b);
        tk_model_free(&a);
        tk_model_free(&b);
        stream_free(s);
        stream_free(d);
        tl_free(&ref);
    }
}

Test(stream, ids_at_the_edges_of_64_bits) {
    stream_limits lim = {0, 50};
    stream *s = stream_new();
    tlist ref = {0};
    span fv[2] = {{"f", 1}, {"-9223372036854775808", 20}};
    sid ids[] = {{0, 0}, {0, UINT64_MAX}, {1, 0}, {(1ull << 63) + 5, 0}, {UINT64_MAX - 1, UINT64_MAX},
                 {UINT64_MAX, 0}, {UINT64_MAX, UINT64_MAX - 1}, {UINT64_MAX, UINT64_MAX}};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        if (i == 0) continue; /* 0-0 is not a valid ID to add */
        stream_append(s, ids[i], fv, 1, &lim);
        tl_add(&ref, ids[i], fv, 1, 0);
    }
    tk_check(s, &ref);
    tmodel m;
    tk_model(s, &m);
    tk_model_check(&m, &ref);
    tk_model_free(&m);
    check_range(s, &ref, (sid){1ull << 63, 0}, SID_MAX, 1);
    check_range(s, &ref, (sid){0, 5}, (sid){UINT64_MAX, 0}, 0);
    cr_assert(stream_delete(s, SID_MAX));
    ref.v[ref.n - 1].deleted = 1;
    tk_check(s, &ref);
    tl_free(&ref);
    stream_free(s);
}

Test(stream, sid_text_and_steps) {
    char buf[48];
    cr_assert_str_eq((sid_fmt((sid){0, 0}, buf), buf), "0-0");
    cr_assert_str_eq((sid_fmt(SID_MAX, buf), buf), "18446744073709551615-18446744073709551615");
    sid a = {5, UINT64_MAX};
    cr_assert(sid_incr(&a) && a.ms == 6 && a.seq == 0);
    cr_assert(sid_decr(&a) && a.ms == 5 && a.seq == UINT64_MAX);
    sid z = SID_MIN, m = SID_MAX;
    cr_assert(!sid_decr(&z) && !sid_incr(&m));
}

/* Redis 7.0's streamEstimateDistanceFromFirstEverEntry and
 * streamRangeHasTombstones, on a few states. */
Test(stream, logical_counters_follow_redis) {
    stream_limits lim = {0, 100};
    stream *s = stream_new();
    span fv[2] = {{"f", 1}, {"v", 1}};
    cr_assert_eq(stream_estimate_distance(s, (sid){1, 0}), 0);
    for (uint64_t i = 1; i <= 5; i++) stream_append(s, (sid){i, 0}, fv, 1, &lim);
    cr_assert_eq(stream_estimate_distance(s, (sid){5, 0}), 5);
    cr_assert_eq(stream_estimate_distance(s, (sid){6, 0}), SCG_INVALID_ENTRIES_READ);
    cr_assert_eq(stream_estimate_distance(s, (sid){1, 0}), 1);
    cr_assert_eq(stream_estimate_distance(s, (sid){0, 5}), 0);
    cr_assert_eq(stream_estimate_distance(s, (sid){3, 0}), SCG_INVALID_ENTRIES_READ);
    cr_assert(!stream_range_has_tombstones(s, NULL, NULL));
    cr_assert(stream_delete(s, (sid){3, 0}));
    cr_assert(stream_range_has_tombstones(s, NULL, NULL));
    sid a = {4, 0};
    cr_assert(!stream_range_has_tombstones(s, &a, NULL));
    cr_assert(stream_delete(s, (sid){1, 0}));
    cr_assert_eq(stream_estimate_distance(s, (sid){2, 0}), SCG_INVALID_ENTRIES_READ);
    stream_trim_args t = {.strategy = STRIM_MAXLEN, .maxlen = 0};
    stream_trim(s, &t);
    cr_assert_eq(stream_estimate_distance(s, (sid){2, 0}), 5);
    stream_free(s);
}
