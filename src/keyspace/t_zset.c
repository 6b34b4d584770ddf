/* t_zset.c - the sorted-set value in its two forms (see t_zset.h): the
 * listpack form for small sets, the skiplist form (zskiplist.c) beyond the
 * zset-max-listpack-* thresholds, and operations that hide the difference
 * from the commands (add, delete, ranks, ranges, iteration).
 *
 * Listpack form: entries alternate member, score-text, in (score, member)
 * order. Lookups are linear, which for at most a few hundred short entries
 * costs less than hashing. Scores are parsed on demand.
 */
#include "t_zset.h"
#include "db.h"
#include "listpack.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- score text ----------------------------------------------------------- */

size_t zset_score_str(char *buf, double d) {
    /* integers within +-LLONG_MAX/2 print as integers (-0 as "0") */
    if (d >= (double)(-LLONG_MAX / 2) && d <= (double)(LLONG_MAX / 2)) {
        long long ll = (long long)d;
        if ((double)ll == d) return ll_to_str(buf, ll);
    }
    return d_to_str(buf, 32, d);
}

static double parse_score(const char *s, size_t len) {
    long long ll;
    if (len <= 20 && str_to_ll(s, len, &ll)) return (double)ll;
    char buf[64];
    if (len >= sizeof buf) len = sizeof buf - 1; /* never: we wrote it */
    memcpy(buf, s, len);
    buf[len] = '\0';
    return strtod(buf, NULL);
}

/* ---- listpack helpers -------------------------------------------------- */

static double lp_score_at(const unsigned char *lp, size_t member_off) {
    size_t len;
    const char *s = lp_get(lp, lp_next(lp, member_off), &len);
    return parse_score(s, len);
}

/* Offset of the member entry, LP_NONE if absent. */
static size_t lp_find_member(const unsigned char *lp, const char *m, size_t len) {
    size_t first = lp_first(lp);
    if (first == LP_NONE) return LP_NONE;
    return lp_find(lp, first, m, len, 1);
}

/* Is the element at off after (score, m) in order? */
static int lp_after(const unsigned char *lp, size_t off, double score, const char *m, size_t len) {
    double s = lp_score_at(lp, off);
    if (s != score) return s > score;
    size_t elen;
    const char *e = lp_get(lp, off, &elen);
    return zmember_cmp(e, elen, m, len) > 0;
}

static unsigned char *lp_insert_sorted(unsigned char *lp, double score, const char *m, size_t len) {
    char sbuf[32];
    size_t slen = zset_score_str(sbuf, score);
    size_t off = lp_first(lp);
    while (off != LP_NONE && !lp_after(lp, off, score, m, len)) off = lp_next(lp, lp_next(lp, off));
    if (off == LP_NONE) {
        lp = lp_append(lp, m, len);
        return lp_append(lp, sbuf, slen);
    }
    lp = lp_insert(lp, off, m, len);
    return lp_insert(lp, lp_next(lp, off), sbuf, slen);
}

/* ---- create / free / dup / mem -------------------------------------------- */

static int lp_allowed(size_t n, size_t maxlen) {
    return srv.cfg.zset_max_listpack_entries > 0 && n <= (size_t)srv.cfg.zset_max_listpack_entries &&
           maxlen <= (size_t)srv.cfg.zset_max_listpack_value;
}

zset *zset_new(size_t n, size_t maxlen) {
    zset *zs = zmalloc(sizeof *zs);
    zs->lp = NULL;
    zs->zsl = NULL;
    if (lp_allowed(n, maxlen)) zs->lp = lp_new();
    else zs->zsl = zsl_new();
    return zs;
}

zset *zset_new_for_add(size_t first_len) {
    zset *zs = zmalloc(sizeof *zs);
    zs->lp = NULL;
    zs->zsl = NULL;
    if (srv.cfg.zset_max_listpack_entries == 0 || first_len > (size_t)srv.cfg.zset_max_listpack_value)
        zs->zsl = zsl_new();
    else
        zs->lp = lp_new();
    return zs;
}

void zset_free(zset *zs) {
    if (!zs) return;
    if (zs->lp) lp_free(zs->lp);
    if (zs->zsl) zsl_free(zs->zsl);
    zfree(zs);
}

zset *zset_dup(const zset *zs) {
    zset *d = zmalloc(sizeof *d);
    d->lp = NULL;
    d->zsl = NULL;
    if (zs->lp) {
        size_t n = lp_bytes(zs->lp);
        d->lp = zmalloc(n);
        memcpy(d->lp, zs->lp, n);
    } else {
        d->zsl = zsl_new();
        for (dnode *x = zsl_first(zs->zsl); x; x = zsn_next(x))
            zsl_insert(d->zsl, zsn_score(x), zsn_member(x), zsn_len(x));
    }
    return d;
}

size_t zset_mem(const zset *zs) {
    size_t m = zmalloc_size((void *)zs);
    return m + (zs->lp ? zmalloc_size(zs->lp) : zsl_mem(zs->zsl));
}

static void hook_free(void *p) { zset_free(p); }
static void *hook_dup(const void *p) { return zset_dup(p); }
static size_t hook_mem(const void *p) { return zset_mem(p); }

void zset_register_type(void) { db_register_type(OBJ_ZSET, hook_free, hook_dup, hook_mem); }

int zset_enc(const zset *zs) { return zs->lp ? ENC_LISTPACK : ENC_SKIPLIST; }

unsigned long zset_len(const zset *zs) { return zs->lp ? lp_count(zs->lp) / 2 : zs->zsl->length; }

void zset_convert_to_skiplist(zset *zs) {
    if (!zs->lp) return;
    zskiplist *zsl = zsl_new();
    for (size_t off = lp_first(zs->lp); off != LP_NONE; off = lp_next(zs->lp, lp_next(zs->lp, off))) {
        size_t len;
        const char *m = lp_get(zs->lp, off, &len);
        zsl_insert(zsl, lp_score_at(zs->lp, off), m, len);
    }
    lp_free(zs->lp);
    zs->lp = NULL;
    zs->zsl = zsl;
}

void zset_maybe_to_listpack(zset *zs, size_t maxlen) {
    if (zs->lp || !lp_allowed(zs->zsl->length, maxlen)) return;
    unsigned char *lp = lp_new();
    char sbuf[32];
    for (dnode *x = zsl_first(zs->zsl); x; x = zsn_next(x)) {
        lp = lp_append(lp, zsn_member(x), zsn_len(x));
        lp = lp_append(lp, sbuf, zset_score_str(sbuf, zsn_score(x)));
    }
    zsl_free(zs->zsl);
    zs->zsl = NULL;
    zs->lp = lp;
}

/* ---- members ------------------------------------------------------------ */

int zset_score(const zset *zs, const char *m, size_t len, double *score) {
    if (zs->lp) {
        size_t off = lp_find_member(zs->lp, m, len);
        if (off == LP_NONE) return 0;
        *score = lp_score_at(zs->lp, off);
        return 1;
    }
    dnode *x = zsl_find(zs->zsl, m, len);
    if (!x) return 0;
    *score = zsn_score(x);
    return 1;
}

/* The ZADD decision for an existing member: the new score, or NOP (returns
 * 0 with *out set) / NaN (returns -1). */
static int existing_update(int flags, double cur, double *score, int *out) {
    if (flags & ZADD_NX) {
        *out |= ZADD_OUT_NOP;
        return 0;
    }
    if (flags & ZADD_INCR) {
        *score += cur;
        if (isnan(*score)) return -1;
    }
    if (((flags & ZADD_LT) && *score >= cur) || ((flags & ZADD_GT) && *score <= cur)) {
        *out |= ZADD_OUT_NOP;
        return 0;
    }
    return 1;
}

static int add_lp(zset *zs, double score, const char *m, size_t len, int flags, int *out, double *newscore) {
    size_t off = lp_find_member(zs->lp, m, len);
    if (off != LP_NONE) {
        double cur = lp_score_at(zs->lp, off);
        int r = existing_update(flags, cur, &score, out);
        if (r <= 0) return r == 0;
        *newscore = score;
        if (score != cur) {
            char copy[64], *mc = len <= sizeof copy ? copy : zmalloc(len);
            memcpy(mc, m, len); /* m may point into the listpack */
            zs->lp = lp_delete(zs->lp, off, 2);
            zs->lp = lp_insert_sorted(zs->lp, score, mc, len);
            if (mc != copy) zfree(mc);
            *out |= ZADD_OUT_UPDATED;
        }
        return 1;
    }
    if (flags & ZADD_XX) {
        *out |= ZADD_OUT_NOP;
        return 1;
    }
    if (lp_count(zs->lp) / 2 + 1 > (size_t)srv.cfg.zset_max_listpack_entries ||
        len > (size_t)srv.cfg.zset_max_listpack_value) {
        zset_convert_to_skiplist(zs);
        zsl_insert(zs->zsl, score, m, len);
    } else {
        zs->lp = lp_insert_sorted(zs->lp, score, m, len);
    }
    *newscore = score;
    *out |= ZADD_OUT_ADDED;
    return 1;
}

static int add_sl(zset *zs, double score, const char *m, size_t len, int flags, int *out, double *newscore) {
    dnode *x = zsl_find(zs->zsl, m, len);
    if (x) {
        double cur = zsn_score(x);
        int r = existing_update(flags, cur, &score, out);
        if (r <= 0) return r == 0;
        *newscore = score;
        if (score != cur) {
            zsl_update_score(zs->zsl, x, score);
            *out |= ZADD_OUT_UPDATED;
        }
        return 1;
    }
    if (flags & ZADD_XX) {
        *out |= ZADD_OUT_NOP;
        return 1;
    }
    zsl_insert(zs->zsl, score, m, len);
    *newscore = score;
    *out |= ZADD_OUT_ADDED;
    return 1;
}

int zset_add(zset *zs, double score, const char *m, size_t len, int flags, int *out, double *newscore) {
    *out = 0;
    if (isnan(score)) return 0;
    return zs->lp ? add_lp(zs, score, m, len, flags, out, newscore)
                  : add_sl(zs, score, m, len, flags, out, newscore);
}

void zset_insert_new(zset *zs, double score, const char *m, size_t len) {
    if (zs->lp) zs->lp = lp_insert_sorted(zs->lp, score, m, len);
    else zsl_insert(zs->zsl, score, m, len);
}

int zset_del(zset *zs, const char *m, size_t len) {
    if (zs->lp) {
        size_t off = lp_find_member(zs->lp, m, len);
        if (off == LP_NONE) return 0;
        zs->lp = lp_delete(zs->lp, off, 2);
        return 1;
    }
    dnode *x = zsl_find(zs->zsl, m, len);
    if (!x) return 0;
    zsl_delete(zs->zsl, x);
    return 1;
}

long zset_rank(const zset *zs, const char *m, size_t len, int rev) {
    unsigned long n = zset_len(zs), rank;
    if (zs->lp) {
        size_t off = lp_find_member(zs->lp, m, len);
        if (off == LP_NONE) return -1;
        rank = 0;
        for (size_t o = lp_first(zs->lp); o != off; o = lp_next(zs->lp, lp_next(zs->lp, o))) rank++;
    } else {
        dnode *x = zsl_find(zs->zsl, m, len);
        if (!x) return -1;
        rank = zsl_rank(zs->zsl, x) - 1;
    }
    return (long)(rev ? n - 1 - rank : rank);
}

/* ---- iteration ------------------------------------------------------------ */

static size_t lp_step(const unsigned char *lp, size_t off, int rev) {
    if (rev) {
        size_t p = lp_prev(lp, off);
        return p == LP_NONE ? LP_NONE : lp_prev(lp, p);
    }
    size_t s = lp_next(lp, off);
    return s == LP_NONE ? LP_NONE : lp_next(lp, s);
}

void zs_iter_next(zs_iter *it) {
    if (it->zs->lp) it->off = lp_step(it->zs->lp, it->off, it->rev);
    else it->node = it->rev ? zsn_prev(it->node) : zsn_next(it->node);
}

void zs_iter_skip(zs_iter *it, unsigned long n) {
    if (!n || !zs_iter_valid(it)) return;
    if (it->zs->lp) {
        while (n-- && it->off != LP_NONE) zs_iter_next(it);
        return;
    }
    const zskiplist *zsl = it->zs->zsl;
    unsigned long rank = zsl_rank(zsl, it->node); /* 1-based, ascending */
    if (it->rev) it->node = n < rank ? zsl_by_rank(zsl, rank - n) : NULL;
    else it->node = n <= zsl->length - rank ? zsl_by_rank(zsl, rank + n) : NULL;
}

const char *zs_iter_member(const zs_iter *it, size_t *len) {
    if (it->zs->lp) return lp_get(it->zs->lp, it->off, len);
    *len = zsn_len(it->node);
    return zsn_member(it->node);
}

double zs_iter_score_of(const zs_iter *it) {
    return it->zs->lp ? lp_score_at(it->zs->lp, it->off) : zsn_score(it->node);
}

static void iter_init(zs_iter *it, const zset *zs, int rev) {
    it->zs = zs;
    it->rev = rev;
    it->off = LP_NONE;
    it->node = NULL;
}

void zs_iter_rank(zs_iter *it, const zset *zs, unsigned long rank, int rev) {
    iter_init(it, zs, rev);
    unsigned long n = zset_len(zs);
    if (rank >= n) return;
    unsigned long asc = rev ? n - 1 - rank : rank;
    if (zs->lp) it->off = lp_seek(zs->lp, (long)(2 * asc));
    else it->node = zsl_by_rank(zs->zsl, asc + 1);
}

/* Could the listpack hold elements of the range (as Redis checks before
 * searching: not empty, last >= min, first <= max)? */
static int lp_may_hold_score(const unsigned char *lp, const zscore_range *r) {
    size_t first = lp_first(lp);
    if (zscore_range_empty(r) || first == LP_NONE) return 0;
    return zscore_gte_min(lp_score_at(lp, lp_prev(lp, lp_last(lp))), r) && zscore_lte_max(lp_score_at(lp, first), r);
}

static int lp_may_hold_lex(const unsigned char *lp, const zlex_range *r) {
    size_t first = lp_first(lp), len;
    if (zlex_range_empty(r) || first == LP_NONE) return 0;
    const char *m = lp_get(lp, lp_prev(lp, lp_last(lp)), &len);
    if (!zlex_gte_min(m, len, r)) return 0;
    m = lp_get(lp, first, &len);
    return zlex_lte_max(m, len, r);
}

void zs_iter_score(zs_iter *it, const zset *zs, const zscore_range *r, int rev) {
    iter_init(it, zs, rev);
    if (zs->zsl) {
        it->node = rev ? zsl_last_in_score(zs->zsl, r) : zsl_first_in_score(zs->zsl, r);
        return;
    }
    const unsigned char *lp = zs->lp;
    if (!lp_may_hold_score(lp, r)) return;
    size_t off = rev ? lp_last(lp) : lp_first(lp);
    if (off != LP_NONE && rev) off = lp_prev(lp, off);
    for (; off != LP_NONE; off = lp_step(lp, off, rev)) {
        double s = lp_score_at(lp, off);
        if (rev ? !zscore_lte_max(s, r) : !zscore_gte_min(s, r)) continue;
        if (zscore_in_range(s, r)) it->off = off;
        return;
    }
}

void zs_iter_lex(zs_iter *it, const zset *zs, const zlex_range *r, int rev) {
    iter_init(it, zs, rev);
    if (zs->zsl) {
        it->node = rev ? zsl_last_in_lex(zs->zsl, r) : zsl_first_in_lex(zs->zsl, r);
        return;
    }
    const unsigned char *lp = zs->lp;
    if (!lp_may_hold_lex(lp, r)) return;
    size_t off = rev ? lp_last(lp) : lp_first(lp);
    if (off != LP_NONE && rev) off = lp_prev(lp, off);
    for (; off != LP_NONE; off = lp_step(lp, off, rev)) {
        size_t len;
        const char *m = lp_get(lp, off, &len);
        if (rev ? !zlex_lte_max(m, len, r) : !zlex_gte_min(m, len, r)) continue;
        if (zlex_in_range(m, len, r)) it->off = off;
        return;
    }
}

/* ---- ranges ------------------------------------------------------------- */

unsigned long zset_count_score(const zset *zs, const zscore_range *r) {
    if (zs->zsl) {
        dnode *f = zsl_first_in_score(zs->zsl, r);
        if (!f) return 0;
        dnode *l = zsl_last_in_score(zs->zsl, r);
        return zsl_rank(zs->zsl, l) - zsl_rank(zs->zsl, f) + 1;
    }
    unsigned long n = 0;
    zs_iter it;
    for (zs_iter_score(&it, zs, r, 0); zs_iter_valid(&it) && zscore_lte_max(zs_iter_score_of(&it), r);
         zs_iter_next(&it))
        n++;
    return n;
}

unsigned long zset_count_lex(const zset *zs, const zlex_range *r) {
    if (zs->zsl) {
        /* with unequal scores the last match may not exist: count to the end */
        dnode *f = zsl_first_in_lex(zs->zsl, r);
        if (!f) return 0;
        unsigned long n = zs->zsl->length - (zsl_rank(zs->zsl, f) - 1);
        dnode *l = zsl_last_in_lex(zs->zsl, r);
        if (l) n -= zs->zsl->length - zsl_rank(zs->zsl, l);
        return n;
    }
    unsigned long n = 0;
    zs_iter it;
    for (zs_iter_lex(&it, zs, r, 0); zs_iter_valid(&it); zs_iter_next(&it)) {
        size_t len;
        const char *m = zs_iter_member(&it, &len);
        if (!zlex_lte_max(m, len, r)) break;
        n++;
    }
    return n;
}

/* Listpack: delete the run of elements starting at the iterator's first
 * position for which in_range() holds. */
typedef int lp_in_range_fn(const unsigned char *lp, size_t off, const void *r);
static unsigned long lp_delete_run(zset *zs, size_t off, lp_in_range_fn *in_range, const void *r) {
    unsigned long n = 0;
    size_t end = off;
    while (end != LP_NONE && in_range(zs->lp, end, r)) {
        n++;
        end = lp_step(zs->lp, end, 0);
    }
    if (n) zs->lp = lp_delete(zs->lp, off, (uint32_t)(2 * n));
    return n;
}

static int lp_score_le_max(const unsigned char *lp, size_t off, const void *r) {
    return zscore_lte_max(lp_score_at(lp, off), r);
}

static int lp_lex_le_max(const unsigned char *lp, size_t off, const void *r) {
    size_t len;
    const char *m = lp_get(lp, off, &len);
    return zlex_lte_max(m, len, r);
}

unsigned long zset_del_score(zset *zs, const zscore_range *r) {
    if (zs->zsl) return zscore_range_empty(r) ? 0 : zsl_delete_score_range(zs->zsl, r);
    zs_iter it;
    zs_iter_score(&it, zs, r, 0);
    return zs_iter_valid(&it) ? lp_delete_run(zs, it.off, lp_score_le_max, r) : 0;
}

unsigned long zset_del_lex(zset *zs, const zlex_range *r) {
    if (zs->zsl) return zsl_delete_lex_range(zs->zsl, r);
    zs_iter it;
    zs_iter_lex(&it, zs, r, 0);
    return zs_iter_valid(&it) ? lp_delete_run(zs, it.off, lp_lex_le_max, r) : 0;
}

unsigned long zset_del_rank(zset *zs, unsigned long start, unsigned long end) {
    if (zs->zsl) return zsl_delete_rank_range(zs->zsl, start + 1, end + 1);
    size_t off = lp_seek(zs->lp, (long)(2 * start));
    if (off == LP_NONE) return 0;
    zs->lp = lp_delete(zs->lp, off, (uint32_t)(2 * (end - start + 1)));
    return end - start + 1;
}

/* ---- random access and scan -------------------------------------------- */

const char *zset_at(const zset *zs, unsigned long rank, size_t *len, double *score) {
    zs_iter it;
    zs_iter_rank(&it, zs, rank, 0);
    if (!zs_iter_valid(&it)) return NULL;
    *score = zs_iter_score_of(&it);
    return zs_iter_member(&it, len);
}

typedef struct scan_ctx {
    zset_scan_fn *fn;
    void *ud;
} scan_ctx;

static void scan_node(void *ud, dnode *n) {
    scan_ctx *s = ud;
    s->fn(s->ud, zsn_member(n), zsn_len(n), zsn_score(n));
}

unsigned long zset_scan(zset *zs, unsigned long cursor, zset_scan_fn *fn, void *ud) {
    scan_ctx s = {fn, ud};
    return dict_scan(&zs->zsl->index, cursor, scan_node, &s);
}
