/* zskiplist.c - the skiplist form of a sorted set (see zskiplist.h): a
 * skiplist with span counts (p = 1/4, at most 32 levels) whose nodes are
 * also the nodes of the member index, so each member is one allocation.
 *
 * The algorithms are the classic ones (Pugh's skiplist with Redis's spans):
 * a search records, per level, the last node before the target (update[])
 * and the rank reached there (rank[]); links and spans are then patched
 * level by level. A score change that keeps the node's place is done in
 * place; otherwise the node is unlinked and relinked with its own levels,
 * so the index never has to be touched for ZINCRBY.
 */
#include "zskiplist.h"
#include "frand.h"
#include "zmalloc.h"
#include <string.h>

/* ---- node field access (unaligned, see zskiplist.h) ----------------------- */

static inline void set_score(dnode *n, double d) { memcpy(dn_val(n), &d, sizeof d); }
static inline void set_prev(dnode *n, dnode *p) { memcpy((char *)n - 16, &p, 8); }
static inline void set_fwd(dnode *n, int lvl, dnode *p) { memcpy(zsn_level_at(n, lvl), &p, 8); }
static inline unsigned long span(const dnode *n, int lvl) {
    if (lvl == 0) return 1;
    uint32_t s;
    memcpy(&s, zsn_level_at(n, lvl) + 8, 4);
    return s;
}
static inline void set_span(dnode *n, int lvl, unsigned long s) {
    if (lvl == 0) return;
    uint32_t v = (uint32_t)s;
    memcpy(zsn_level_at(n, lvl) + 8, &v, 4);
}

/* Bytes in front of the dnode header for a node of `levels` levels. */
static size_t front_size(int levels) { return (16 + 12 * (size_t)(levels - 1) + 7) & ~(size_t)7; }
static void *node_base(const dnode *n) { return (char *)n - front_size(zsn_levels(n)); }

static dnode *node_new(zskiplist *zsl, int levels, double score, const char *m, size_t len) {
    size_t front = front_size(levels);
    char *base = zmalloc(front + dn_size((uint32_t)len, sizeof(double), 0));
    dnode *n = (dnode *)(base + front);
    dn_init(n, (uint32_t)len, sizeof(double), 0);
    n->lru = (uint32_t)levels;
    memcpy(dn_key(n), m, len);
    set_score(n, score);
    set_prev(n, NULL);
    for (int i = 0; i < levels; i++) {
        set_fwd(n, i, NULL);
        set_span(n, i, 0);
    }
    if (zsl) zsl->node_bytes += zmalloc_size(base);
    return n;
}

static void node_free(zskiplist *zsl, dnode *n) {
    void *base = node_base(n);
    zsl->node_bytes -= zmalloc_size(base);
    zfree(base);
}

static int random_level(void) {
    uint64_t r = frand64();
    int lvl = 1;
    while ((r & 3) == 0 && lvl < ZSL_MAXLEVEL) {
        lvl++;
        r >>= 2;
    }
    return lvl;
}

/* Is node f before (score, m) in (score, member) order? */
static inline int before(const dnode *f, double score, const char *m, size_t len) {
    double s = zsn_score(f);
    return s < score || (s == score && zmember_cmp(zsn_member(f), zsn_len(f), m, len) < 0);
}

/* ---- lex ranges ---------------------------------------------------------- */

int zlex_gte_min(const char *m, size_t len, const zlex_range *r) {
    switch (r->min.kind) {
    case ZLEX_NEG_INF: return 1;
    case ZLEX_POS_INF: return 0;
    case ZLEX_EXCL: return zmember_cmp(m, len, r->min.p, r->min.len) > 0;
    default: return zmember_cmp(m, len, r->min.p, r->min.len) >= 0;
    }
}

int zlex_lte_max(const char *m, size_t len, const zlex_range *r) {
    switch (r->max.kind) {
    case ZLEX_NEG_INF: return 0;
    case ZLEX_POS_INF: return 1;
    case ZLEX_EXCL: return zmember_cmp(m, len, r->max.p, r->max.len) < 0;
    default: return zmember_cmp(m, len, r->max.p, r->max.len) <= 0;
    }
}

int zlex_range_empty(const zlex_range *r) {
    if (r->min.kind == ZLEX_POS_INF || r->max.kind == ZLEX_NEG_INF) return 1;
    if (r->min.kind == ZLEX_NEG_INF || r->max.kind == ZLEX_POS_INF) return 0;
    int c = zmember_cmp(r->min.p, r->min.len, r->max.p, r->max.len);
    return c > 0 || (c == 0 && (r->min.kind == ZLEX_EXCL || r->max.kind == ZLEX_EXCL));
}

/* ---- create / free ------------------------------------------------------- */

zskiplist *zsl_new(void) {
    zskiplist *zsl = zmalloc(sizeof *zsl);
    zsl->node_bytes = 0;
    zsl->header = node_new(zsl, ZSL_MAXLEVEL, 0, "", 0);
    zsl->tail = NULL;
    zsl->length = 0;
    zsl->level = 1;
    dict_init(&zsl->index);
    return zsl;
}

static void free_dnode(dnode *n) { zfree(node_base(n)); }

void zsl_free(zskiplist *zsl) {
    dict_clear(&zsl->index, free_dnode); /* the index links every node once */
    zfree(node_base(zsl->header));
    zfree(zsl);
}

size_t zsl_mem(const zskiplist *zsl) {
    return zmalloc_size((void *)zsl) + zsl->node_bytes + dict_overhead(&zsl->index);
}

dnode *zsl_find(zskiplist *zsl, const char *m, size_t len) {
    return dict_find(&zsl->index, m, len);
}

/* ---- linking ------------------------------------------------------------- */

/* Link node x (score and levels set, links unset) at its place. */
static void link_node(zskiplist *zsl, dnode *x) {
    dnode *update[ZSL_MAXLEVEL];
    unsigned long rank[ZSL_MAXLEVEL];
    double score = zsn_score(x);
    const char *m = zsn_member(x);
    size_t len = zsn_len(x);
    dnode *p = zsl->header, *f;
    for (int i = zsl->level - 1; i >= 0; i--) {
        rank[i] = i == zsl->level - 1 ? 0 : rank[i + 1];
        while ((f = zsn_fwd(p, i)) && before(f, score, m, len)) {
            rank[i] += span(p, i);
            p = f;
        }
        update[i] = p;
    }
    int lvl = zsn_levels(x);
    if (lvl > zsl->level) {
        for (int i = zsl->level; i < lvl; i++) {
            rank[i] = 0;
            update[i] = zsl->header;
            set_span(zsl->header, i, zsl->length);
        }
        zsl->level = lvl;
    }
    for (int i = 0; i < lvl; i++) {
        set_fwd(x, i, zsn_fwd(update[i], i));
        set_fwd(update[i], i, x);
        set_span(x, i, span(update[i], i) - (rank[0] - rank[i]));
        set_span(update[i], i, rank[0] - rank[i] + 1);
    }
    for (int i = lvl; i < zsl->level; i++) set_span(update[i], i, span(update[i], i) + 1);
    set_prev(x, update[0] == zsl->header ? NULL : update[0]);
    if (zsn_next(x)) set_prev(zsn_next(x), x);
    else zsl->tail = x;
    zsl->length++;
}

/* Unlink x given the last node before it on every level. */
static void unlink_node(zskiplist *zsl, dnode *x, dnode **update) {
    for (int i = 0; i < zsl->level; i++) {
        if (zsn_fwd(update[i], i) == x) {
            set_span(update[i], i, span(update[i], i) + span(x, i) - 1);
            set_fwd(update[i], i, zsn_fwd(x, i));
        } else {
            set_span(update[i], i, span(update[i], i) - 1);
        }
    }
    if (zsn_next(x)) set_prev(zsn_next(x), zsn_prev(x));
    else zsl->tail = zsn_prev(x);
    while (zsl->level > 1 && zsn_fwd(zsl->header, zsl->level - 1) == NULL) zsl->level--;
    zsl->length--;
}

/* Fill update[] with the last node before x on every level. */
static void find_update(const zskiplist *zsl, const dnode *x, dnode **update) {
    double score = zsn_score(x);
    const char *m = zsn_member(x);
    size_t len = zsn_len(x);
    dnode *p = zsl->header, *f;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while ((f = zsn_fwd(p, i)) && f != x && before(f, score, m, len)) p = f;
        update[i] = p;
    }
}

dnode *zsl_insert(zskiplist *zsl, double score, const char *m, size_t len) {
    dnode *x = node_new(zsl, random_level(), score, m, len);
    link_node(zsl, x);
    dict_add(&zsl->index, x);
    return x;
}

/* Unlink from the skiplist and the index and free. */
static void remove_node(zskiplist *zsl, dnode *x, dnode **update) {
    unlink_node(zsl, x, update);
    dict_unlink(&zsl->index, zsn_member(x), zsn_len(x));
    node_free(zsl, x);
}

void zsl_delete(zskiplist *zsl, dnode *n) {
    dnode *update[ZSL_MAXLEVEL];
    find_update(zsl, n, update);
    remove_node(zsl, n, update);
    dict_maybe_shrink(&zsl->index);
}

dnode *zsl_update_score(zskiplist *zsl, dnode *n, double score) {
    dnode *prev = zsn_prev(n), *next = zsn_next(n);
    const char *m = zsn_member(n);
    size_t len = zsn_len(n);
    if ((!prev || before(prev, score, m, len)) && (!next || !before(next, score, m, len))) {
        set_score(n, score); /* the order does not change */
        return n;
    }
    dnode *update[ZSL_MAXLEVEL];
    find_update(zsl, n, update);
    unlink_node(zsl, n, update);
    set_score(n, score);
    link_node(zsl, n);
    return n;
}

/* ---- ranks ---------------------------------------------------------------- */

unsigned long zsl_rank(const zskiplist *zsl, const dnode *n) {
    double score = zsn_score(n);
    const char *m = zsn_member(n);
    size_t len = zsn_len(n);
    unsigned long rank = 0;
    dnode *p = zsl->header, *f;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while ((f = zsn_fwd(p, i)) && (f == n || before(f, score, m, len))) {
            rank += span(p, i);
            p = f;
            if (p == n) return rank;
        }
    }
    return 0;
}

dnode *zsl_by_rank(const zskiplist *zsl, unsigned long rank) {
    if (rank == 0 || rank > zsl->length) return NULL;
    unsigned long traversed = 0;
    dnode *p = zsl->header, *f;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while ((f = zsn_fwd(p, i)) && traversed + span(p, i) <= rank) {
            traversed += span(p, i);
            p = f;
        }
        if (traversed == rank) return p;
    }
    return NULL;
}

/* ---- ranges --------------------------------------------------------------- */

/* Could the list hold elements of the range (not empty, last >= min,
 * first <= max)? */
static int may_hold_score(const zskiplist *zsl, const zscore_range *r) {
    if (zscore_range_empty(r) || !zsl->tail) return 0;
    return zscore_gte_min(zsn_score(zsl->tail), r) && zscore_lte_max(zsn_score(zsl_first(zsl)), r);
}

static int may_hold_lex(const zskiplist *zsl, const zlex_range *r) {
    const dnode *t = zsl->tail, *h = zsl_first(zsl);
    if (zlex_range_empty(r) || !t) return 0;
    return zlex_gte_min(zsn_member(t), zsn_len(t), r) && zlex_lte_max(zsn_member(h), zsn_len(h), r);
}

dnode *zsl_first_in_score(const zskiplist *zsl, const zscore_range *r) {
    if (!may_hold_score(zsl, r)) return NULL;
    dnode *p = zsl->header, *f;
    for (int i = zsl->level - 1; i >= 0; i--)
        while ((f = zsn_fwd(p, i)) && !zscore_gte_min(zsn_score(f), r)) p = f;
    p = zsn_next(p);
    return p && zscore_lte_max(zsn_score(p), r) ? p : NULL;
}

dnode *zsl_last_in_score(const zskiplist *zsl, const zscore_range *r) {
    if (!may_hold_score(zsl, r)) return NULL;
    dnode *p = zsl->header, *f;
    for (int i = zsl->level - 1; i >= 0; i--)
        while ((f = zsn_fwd(p, i)) && zscore_lte_max(zsn_score(f), r)) p = f;
    return p != zsl->header && zscore_gte_min(zsn_score(p), r) ? p : NULL;
}

dnode *zsl_first_in_lex(const zskiplist *zsl, const zlex_range *r) {
    if (!may_hold_lex(zsl, r)) return NULL;
    dnode *p = zsl->header, *f;
    for (int i = zsl->level - 1; i >= 0; i--)
        while ((f = zsn_fwd(p, i)) && !zlex_gte_min(zsn_member(f), zsn_len(f), r)) p = f;
    p = zsn_next(p);
    return p && zlex_lte_max(zsn_member(p), zsn_len(p), r) ? p : NULL;
}

dnode *zsl_last_in_lex(const zskiplist *zsl, const zlex_range *r) {
    if (!may_hold_lex(zsl, r)) return NULL;
    dnode *p = zsl->header, *f;
    for (int i = zsl->level - 1; i >= 0; i--)
        while ((f = zsn_fwd(p, i)) && zlex_lte_max(zsn_member(f), zsn_len(f), r)) p = f;
    return p != zsl->header && zlex_gte_min(zsn_member(p), zsn_len(p), r) ? p : NULL;
}

/* Delete nodes from x on (update[] set for x) while keep(x) holds. */
typedef int keep_fn(const dnode *x, const void *ud);
static unsigned long delete_run(zskiplist *zsl, dnode *x, dnode **update, keep_fn *keep, const void *ud) {
    unsigned long removed = 0;
    while (x && keep(x, ud)) {
        dnode *next = zsn_next(x);
        remove_node(zsl, x, update);
        removed++;
        x = next;
    }
    if (removed) dict_maybe_shrink(&zsl->index);
    return removed;
}

static int score_keep(const dnode *x, const void *ud) { return zscore_lte_max(zsn_score(x), ud); }
static int lex_keep(const dnode *x, const void *ud) { return zlex_lte_max(zsn_member(x), zsn_len(x), ud); }

unsigned long zsl_delete_score_range(zskiplist *zsl, const zscore_range *r) {
    dnode *update[ZSL_MAXLEVEL], *p = zsl->header, *f;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while ((f = zsn_fwd(p, i)) && !zscore_gte_min(zsn_score(f), r)) p = f;
        update[i] = p;
    }
    return delete_run(zsl, zsn_next(p), update, score_keep, r);
}

unsigned long zsl_delete_lex_range(zskiplist *zsl, const zlex_range *r) {
    if (zlex_range_empty(r)) return 0;
    dnode *update[ZSL_MAXLEVEL], *p = zsl->header, *f;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while ((f = zsn_fwd(p, i)) && !zlex_gte_min(zsn_member(f), zsn_len(f), r)) p = f;
        update[i] = p;
    }
    return delete_run(zsl, zsn_next(p), update, lex_keep, r);
}

unsigned long zsl_delete_rank_range(zskiplist *zsl, unsigned long start, unsigned long end) {
    dnode *update[ZSL_MAXLEVEL], *p = zsl->header, *f;
    unsigned long traversed = 0, removed = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while ((f = zsn_fwd(p, i)) && traversed + span(p, i) < start) {
            traversed += span(p, i);
            p = f;
        }
        update[i] = p;
    }
    traversed++;
    p = zsn_next(p);
    while (p && traversed <= end) {
        dnode *next = zsn_next(p);
        remove_node(zsl, p, update);
        removed++;
        traversed++;
        p = next;
    }
    if (removed) dict_maybe_shrink(&zsl->index);
    return removed;
}

/* ---- self check --------------------------------------------------------- */

int zsl_check(const zskiplist *zsl) {
    unsigned long n = 0;
    dnode *prev = NULL;
    for (dnode *x = zsl_first(zsl); x; x = zsn_next(x)) {
        if (zsn_prev(x) != prev) return 0;
        if (prev && !before(prev, zsn_score(x), zsn_member(x), zsn_len(x))) return 0;
        if (dict_find((dict *)&zsl->index, zsn_member(x), zsn_len(x)) != x) return 0;
        if (zsn_levels(x) < 1 || zsn_levels(x) > zsl->level) return 0;
        prev = x;
        n++;
    }
    if (n != zsl->length || zsl->tail != prev || dict_size(&zsl->index) != n) return 0;
    /* every level: a link of span s skips exactly s nodes of level 0 */
    for (int i = 1; i < zsl->level; i++) {
        for (dnode *x = zsl->header; zsn_fwd(x, i); x = zsn_fwd(x, i)) {
            dnode *f = zsn_fwd(x, i), *y = x;
            for (unsigned long s = span(x, i); s && y; s--) y = zsn_next(y);
            if (y != f || zsn_levels(f) <= i) return 0;
        }
    }
    for (int i = zsl->level; i < ZSL_MAXLEVEL; i++)
        if (zsn_fwd(zsl->header, i)) return 0;
    return 1;
}
