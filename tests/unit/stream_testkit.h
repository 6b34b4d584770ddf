/* stream_testkit.h - helpers shared by the stream unit tests
 * (test_stream.c, test_stream_cg.c, test_stream_lp.c): random IDs and
 * field sets that hit the encodings' edges, a reference list of entries,
 * and a second, independent reader of a stream's blocks.
 *
 * Why an independent reader: the stream's own decoder (sb_decode) is what
 * is under test, so the tests look at the blocks through the Redis
 * listpacks they render (stream_block_listpack) parsed with the rdb_enc
 * iterator into a plain model (nodes of entries with their flags). The
 * listpack writer is checked byte for byte against redis-server elsewhere
 * (test_rdb_enc.c, and DUMP in tests/integration/test_stream_persist.py).
 */
#ifndef FERRY_STREAM_TESTKIT_H
#define FERRY_STREAM_TESTKIT_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frand.h"
#include "rdb_enc.h"
#include "t_stream.h"
#include "t_stream_block.h"
#include "util.h"
#include "zmalloc.h"

/* ---- entries as the tests hold them -------------------------------------- */

typedef struct tent {
    sid id;
    int deleted;
    size_t nf;
    span *fv;                   /* 2 * nf, each p malloc'd */
} tent;

typedef struct tlist {
    tent *v;
    size_t n, cap;
} tlist;

static inline span tk_dup(const char *p, size_t len) {
    char *c = malloc(len ? len : 1);
    if (len) memcpy(c, p, len);
    return (span){c, len};
}

static inline void tl_add(tlist *l, sid id, const span *fv, size_t nf, int deleted) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    tent *t = &l->v[l->n++];
    t->id = id;
    t->deleted = deleted;
    t->nf = nf;
    t->fv = malloc((2 * nf + 1) * sizeof *t->fv);
    for (size_t i = 0; i < 2 * nf; i++) t->fv[i] = tk_dup(fv[i].p, fv[i].len);
}

static inline void tent_free(tent *t) {
    for (size_t i = 0; i < 2 * t->nf; i++) free((void *)t->fv[i].p);
    free(t->fv);
}

static inline void tl_remove(tlist *l, size_t i) {
    tent_free(&l->v[i]);
    memmove(l->v + i, l->v + i + 1, (l->n - i - 1) * sizeof *l->v);
    l->n--;
}

static inline void tl_free(tlist *l) {
    for (size_t i = 0; i < l->n; i++) tent_free(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Index of id in l (ascending), or -1. */
static inline long tl_find(const tlist *l, sid id) {
    long lo = 0, hi = (long)l->n - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        int c = sid_cmp(l->v[mid].id, id);
        if (!c) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static inline int span_eq(span a, span b) { return a.len == b.len && (!a.len || !memcmp(a.p, b.p, a.len)); }

static inline int entry_matches(const sentry *e, const tent *t) {
    if (sid_cmp(e->id, t->id) || e->nf != t->nf) return 0;
    for (size_t i = 0; i < 2 * t->nf; i++)
        if (!span_eq(e->fv[i], t->fv[i])) return 0;
    return 1;
}

/* ---- random IDs and entries ------------------------------------------------ */

/* An ID greater than last: the same millisecond (+1 or a jump in seq), the
 * next ones, far ones (deltas past 2^63 too), sequence numbers near 2^64. */
static inline sid tk_next_id(sid last) {
    sid id = last;
    unsigned r = (unsigned)frand_below(12);
    if (r < 5 && last.seq < UINT64_MAX - 2000) {
        id.seq += 1 + frand_below(r < 3 ? 1 : 1000);
        return id;
    }
    uint64_t room = UINT64_MAX - last.ms;
    uint64_t jump = r < 9 ? 1 + frand_below(r < 7 ? 2 : 100000) : 1 + (frand64() >> (24 + frand_below(40)));
    if (room == 0) { /* the last millisecond: only seq can grow */
        cr_assert(last.seq < UINT64_MAX);
        id.seq += 1;
        return id;
    }
    id.ms += jump < room ? jump : room;
    id.seq = r == 11 ? UINT64_MAX - frand_below(3) : frand_below(r < 7 ? 3 : 1000000);
    return id;
}

/* Values that hit the element encodings: canonical integers (small, at the
 * int64 limits), near-integers that must stay strings, empty and binary. */
static const char *const tk_values[] = {
    "",  "0",  "1",  "-1",   "007", "-0", "+1", " 1", "1 ", "127", "128", "-4096", "4095",
    "9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551615",
    "12345678901234567890", "x", "hello world", "3.14", "1e5",
};
#define TK_NVALUES (sizeof tk_values / sizeof tk_values[0])

typedef struct tk_gen {
    char buf[40][512];
    span fv[40];
    size_t maxval;              /* longest random value */
    int tmpl;                   /* field set of the stream's "usual" entries */
} tk_gen;

static inline span tk_value(tk_gen *g, size_t slot) {
    char *b = g->buf[slot];
    unsigned r = (unsigned)frand_below(10);
    if (r < 4) {
        const char *v = tk_values[frand_below(TK_NVALUES)];
        size_t n = strlen(v);
        memcpy(b, v, n);
        if (n == 0 && frand_below(4) == 0) { /* a NUL byte */
            b[0] = 0;
            n = 1;
        }
        return (span){b, n};
    }
    if (r < 6) return (span){b, ll_to_str(b, (long long)(frand64() >> frand_below(64)) * (frand_below(2) ? 1 : -1))};
    size_t n = frand_below(g->maxval + 1);
    for (size_t i = 0; i < n; i++) b[i] = (char)(r == 9 ? frand64() : 'a' + frand_below(26));
    return (span){b, n};
}

/* Field names: one of a few fixed sets (so most entries share the block's
 * master fields) or random ones. */
static inline size_t tk_fields(tk_gen *g) {
    static const char *const sets[][4] = {{"a"}, {"temp", "hum"}, {"f1", "f2", "1", "-2"}, {"sensor-id", ""}};
    static const size_t nset[] = {1, 2, 4, 2};
    unsigned r = (unsigned)frand_below(10);
    int t = r < 7 ? g->tmpl : (int)frand_below(5);
    if (t < 4) {
        for (size_t i = 0; i < nset[t]; i++) g->fv[2 * i] = (span){sets[t][i], strlen(sets[t][i])};
        return nset[t];
    }
    size_t nf = 1 + frand_below(6);
    for (size_t i = 0; i < nf; i++) {
        char *b = g->buf[20 + i];
        b[0] = (char)('k' + i);
        g->fv[2 * i] = (span){b, 1 + frand_below(3)};
        if (g->fv[2 * i].len > 1) b[1] = b[2] = '_';
    }
    return nf;
}

/* A random entry into g->fv; returns its field count. */
static inline size_t tk_entry(tk_gen *g) {
    size_t nf = tk_fields(g);
    for (size_t i = 0; i < nf; i++) g->fv[2 * i + 1] = tk_value(g, i);
    return nf;
}

/* ---- the stream against the reference -------------------------------------- */

/* Live entries of ref, in order, equal the stream read both ways, and the
 * stream's counters agree. */
static inline void tk_check(const stream *s, const tlist *ref) {
    stream_iter it;
    sentry e;
    size_t live = 0;
    stream_iter_init(&it, s, SID_MIN, SID_MAX, 0);
    for (size_t i = 0; i < ref->n; i++) {
        if (ref->v[i].deleted) continue;
        live++;
        cr_assert(stream_iter_next(&it, &e), "entry %zu missing", i);
        cr_assert(entry_matches(&e, &ref->v[i]), "entry %zu differs", i);
    }
    cr_assert(!stream_iter_next(&it, &e));
    stream_iter_end(&it);
    cr_assert_eq(s->length, live);
    stream_iter_init(&it, s, SID_MIN, SID_MAX, 1);
    for (size_t i = ref->n; i-- > 0;) {
        if (ref->v[i].deleted) continue;
        cr_assert(stream_iter_next(&it, &e), "entry %zu missing backwards", i);
        cr_assert(entry_matches(&e, &ref->v[i]), "entry %zu differs backwards", i);
    }
    cr_assert(!stream_iter_next(&it, &e));
    stream_iter_end(&it);
    sid first, last;
    cr_assert_eq(stream_first_id(s, &first), live > 0);
    cr_assert_eq(stream_last_live_id(s, &last), live > 0);
    if (live) cr_assert(!sid_cmp(first, s->first_id));
    else cr_assert(sid_is_zero(s->first_id));
}

/* ---- the blocks, read through their Redis listpacks --------------------------- */

typedef struct tnode {
    sid master;
    int64_t live, deleted;
    size_t lp_bytes;
    tlist e;
} tnode;

typedef struct tmodel {
    tnode *v;
    size_t n;
} tmodel;

static inline int64_t tk_int(rlp_iter *it) {
    renc_elem el;
    cr_assert_eq(rlp_next(it, &el), 1);
    cr_assert(el.is_int, "an integer element is a string");
    return el.v;
}

static inline span tk_str(rlp_iter *it, char *buf) {
    renc_elem el;
    cr_assert_eq(rlp_next(it, &el), 1);
    if (el.is_int) return (span){buf, ll_to_str(buf, el.v)};
    return (span){(const char *)el.p, el.len};
}

#define TK_MAXF 64

/* One node's entries, from its listpack (the layout t_stream_lp.c
 * describes), checked as it is read: counts, flags, lp-counts, the first
 * entry at the master ID and live IDs ascending (a deleted entry may be out
 * of order after XSETID below it, as in Redis), SAMEFIELDS exactly when the
 * fields are the master's (as Redis sets it). */
static inline void tk_parse_node(tnode *nd, const unsigned char *lp, size_t len) {
    rlp_iter it;
    renc_elem el;
    int st;
    cr_assert_geq(rlp_validate(lp, len), 0);
    cr_assert_eq(rlp_iter_init(&it, lp, len), 0);
    nd->lp_bytes = len;
    nd->live = tk_int(&it);
    nd->deleted = tk_int(&it);
    int64_t mnf = tk_int(&it), live = 0, del = 0;
    sid last_live = {0, 0};
    cr_assert(mnf > 0 && mnf <= TK_MAXF);
    span mf[TK_MAXF], fv[2 * TK_MAXF];
    char mbuf[TK_MAXF][24], vbuf[2 * TK_MAXF][24];
    for (int64_t i = 0; i < mnf; i++) mf[i] = tk_str(&it, mbuf[i]);
    cr_assert_eq(tk_int(&it), 0);
    while ((st = rlp_next(&it, &el)) == 1) {
        cr_assert(el.is_int && el.v >= 0 && el.v <= 3, "bad flags");
        int64_t flags = el.v;
        sid id;
        id.ms = nd->master.ms + (uint64_t)tk_int(&it);
        id.seq = nd->master.seq + (uint64_t)tk_int(&it);
        int64_t nf = flags & SB_SAME ? mnf : tk_int(&it);
        cr_assert(nf > 0 && nf <= TK_MAXF);
        int same = nf == mnf;
        for (int64_t j = 0; j < nf; j++) {
            fv[2 * j] = flags & SB_SAME ? mf[j] : tk_str(&it, vbuf[2 * j]);
            fv[2 * j + 1] = tk_str(&it, vbuf[2 * j + 1]);
            if (same && !span_eq(fv[2 * j], mf[j])) same = 0;
        }
        cr_assert_eq(!!(flags & SB_SAME), same, "SAMEFIELDS flag wrong");
        cr_assert_eq(tk_int(&it), flags & SB_SAME ? nf + 3 : 2 * nf + 4, "bad lp-count");
        if (nd->e.n == 0) cr_assert(!sid_cmp(id, nd->master), "first entry is not the master ID");
        else if (!(flags & SB_DELETED) && live) cr_assert_gt(sid_cmp(id, last_live), 0, "live IDs not ascending");
        if (!(flags & SB_DELETED)) last_live = id;
        tl_add(&nd->e, id, fv, (size_t)nf, (int)(flags & SB_DELETED));
        if (flags & SB_DELETED) del++;
        else live++;
    }
    cr_assert_eq(st, 0);
    cr_assert_eq(live, nd->live);
    cr_assert_eq(del, nd->deleted);
    cr_assert_gt(nd->e.n, 0, "empty node");
}

static inline void tk_model_free(tmodel *m) {
    for (size_t i = 0; i < m->n; i++) tl_free(&m->v[i].e);
    free(m->v);
    memset(m, 0, sizeof *m);
}

/* Every block of s as its Redis listpack node. */
static inline void tk_model(const stream *s, tmodel *m) {
    m->n = stream_block_count(s);
    m->v = calloc(m->n + 1, sizeof *m->v);
    uint64_t live = 0;
    for (size_t i = 0; i < m->n; i++) {
        size_t len;
        unsigned char *lp = stream_block_listpack(s, i, &m->v[i].master, &len);
        cr_assert(lp);
        tk_parse_node(&m->v[i], lp, len);
        zfree(lp);
        live += (uint64_t)m->v[i].live;
        if (i) {
            const tlist *prev = &m->v[i - 1].e;
            cr_assert_gt(sid_cmp(m->v[i].master, prev->v[prev->n - 1].id), 0, "nodes overlap");
        }
    }
    cr_assert_eq(live, s->length);
}

/* The model holds exactly ref's live entries, and tombstones only where
 * ref has deleted entries (a whole removed node takes its tombstones). */
static inline void tk_model_check(const tmodel *m, const tlist *ref) {
    size_t r = 0;
    for (size_t i = 0; i < m->n; i++) {
        for (size_t k = 0; k < m->v[i].e.n; k++) {
            const tent *t = &m->v[i].e.v[k];
            while (r < ref->n && sid_cmp(ref->v[r].id, t->id) < 0) {
                cr_assert(ref->v[r].deleted, "live entry missing from the blocks");
                r++;
            }
            cr_assert(r < ref->n && !sid_cmp(ref->v[r].id, t->id), "entry not in the reference");
            cr_assert_eq(ref->v[r].deleted, t->deleted);
            cr_assert_eq(ref->v[r].nf, t->nf);
            for (size_t j = 0; j < 2 * t->nf; j++) cr_assert(span_eq(ref->v[r].fv[j], t->fv[j]));
            r++;
        }
    }
    for (; r < ref->n; r++) cr_assert(ref->v[r].deleted, "live entry missing from the blocks");
}

#endif
