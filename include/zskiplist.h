/* zskiplist.h - the large form of a sorted set: a skiplist ordered by
 * (score, member) with span counts, so rank lookups and rank ranges are
 * O(log n), plus a hash index member -> node for O(1) ZSCORE and updates.
 *
 * Memory: a member is ONE allocation. Each skiplist node is a dnode (the
 * hash table's intrusive node, see dict.h) whose key is the member bytes, so
 * the index links the skiplist nodes themselves and the member is stored
 * once; its 8-byte value is the score (unaligned), and the header's 24-bit
 * `lru` field, unused by the index, holds the level count. The links sit in
 * front of the header:
 *
 *     ... level i>=1: fwd (8) span (4) ... | backward | fwd[0] | dnode header | member | score
 *                                                              ^ node pointer
 *
 * padded at the front to a multiple of 8 so the header stays aligned. The
 * span of level 0 is always 1 and is not stored. Spans are 32-bit, so a
 * sorted set holds at most 2^32-1 members. A 13-byte member at one level
 * (3 in 4 nodes) is 16 + 16 + 13 + 8 = 53 bytes: one 64-byte malloc chunk.
 *
 * Ranges: score ranges (min/max with exclusive flags) and lex ranges
 * (min/max strings, exclusive flags, or -inf / +inf) as ZRANGEBYSCORE and
 * ZRANGEBYLEX define them.
 */
#ifndef FERRY_ZSKIPLIST_H
#define FERRY_ZSKIPLIST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "dict.h"

#define ZSL_MAXLEVEL 32

typedef struct zskiplist {
    dnode *header;          /* ZSL_MAXLEVEL levels, no member */
    dnode *tail;
    unsigned long length;
    int level;              /* levels in use, >= 1 */
    size_t node_bytes;      /* heap bytes of the nodes (for MEMORY USAGE) */
    dict index;             /* member -> node */
} zskiplist;

/* ---- score and lex ranges ---------------------------------------------- */

typedef struct zscore_range {
    double min, max;
    int minex, maxex;       /* exclusive bounds */
} zscore_range;

enum { ZLEX_INCL = 0, ZLEX_EXCL = 1, ZLEX_NEG_INF = 2, ZLEX_POS_INF = 3 };
typedef struct zlex_bound {
    const char *p;
    size_t len;
    int kind;               /* ZLEX_* */
} zlex_bound;
typedef struct zlex_range {
    zlex_bound min, max;
} zlex_range;

/* Member order within equal scores (and for lex ranges): memcmp on the
 * common prefix, then the shorter first. */
static inline int zmember_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    int r = memcmp(a, b, alen < blen ? alen : blen);
    if (r) return r;
    return alen < blen ? -1 : alen > blen;
}
static inline int zscore_gte_min(double v, const zscore_range *r) { return r->minex ? v > r->min : v >= r->min; }
static inline int zscore_lte_max(double v, const zscore_range *r) { return r->maxex ? v < r->max : v <= r->max; }
static inline int zscore_in_range(double v, const zscore_range *r) {
    return zscore_gte_min(v, r) && zscore_lte_max(v, r);
}
/* A range no element can be in (min > max, or min == max with an exclusive end). */
static inline int zscore_range_empty(const zscore_range *r) {
    return r->min > r->max || (r->min == r->max && (r->minex || r->maxex));
}
int zlex_gte_min(const char *m, size_t len, const zlex_range *r);
int zlex_lte_max(const char *m, size_t len, const zlex_range *r);
static inline int zlex_in_range(const char *m, size_t len, const zlex_range *r) {
    return zlex_gte_min(m, len, r) && zlex_lte_max(m, len, r);
}
int zlex_range_empty(const zlex_range *r);

/* ---- node access ---------------------------------------------------------- */

static inline const char *zsn_member(const dnode *n) { return dn_key(n); }
static inline size_t zsn_len(const dnode *n) { return dn_klen(n); }
static inline int zsn_levels(const dnode *n) { return (int)n->lru; }
static inline double zsn_score(const dnode *n) {
    double d;
    memcpy(&d, dn_val(n), sizeof d);
    return d;
}
static inline dnode *zsn_prev(const dnode *n) {
    dnode *p;
    memcpy(&p, (const char *)n - 16, sizeof p);
    return p;
}
/* Where the forward link of level lvl is stored (its span follows it). */
static inline char *zsn_level_at(const dnode *n, int lvl) {
    return (char *)n - (lvl ? 16 + 12 * (size_t)lvl : 8);
}
static inline dnode *zsn_fwd(const dnode *n, int lvl) {
    dnode *p;
    memcpy(&p, zsn_level_at(n, lvl), sizeof p);
    return p;
}
static inline dnode *zsn_next(const dnode *n) { return zsn_fwd(n, 0); }

/* ---- the skiplist ---------------------------------------------------------- */

zskiplist *zsl_new(void);
void zsl_free(zskiplist *zsl);
/* Heap bytes held (nodes, index buckets, the struct). */
size_t zsl_mem(const zskiplist *zsl);
static inline dnode *zsl_first(const zskiplist *zsl) { return zsn_next(zsl->header); }
static inline dnode *zsl_last(const zskiplist *zsl) { return zsl->tail; }

dnode *zsl_find(zskiplist *zsl, const char *m, size_t len);
/* Insert a member that is not present. Returns its node. */
dnode *zsl_insert(zskiplist *zsl, double score, const char *m, size_t len);
/* Remove the node (found by zsl_find or iteration) and free it. */
void zsl_delete(zskiplist *zsl, dnode *n);
/* Change a node's score; returns the node (which may have been replaced). */
dnode *zsl_update_score(zskiplist *zsl, dnode *n, double score);
/* 1-based rank of a node in ascending order. */
unsigned long zsl_rank(const zskiplist *zsl, const dnode *n);
/* The node at 1-based rank (NULL if out of range). */
dnode *zsl_by_rank(const zskiplist *zsl, unsigned long rank);

/* First / last node inside a range, NULL if none. */
dnode *zsl_first_in_score(const zskiplist *zsl, const zscore_range *r);
dnode *zsl_last_in_score(const zskiplist *zsl, const zscore_range *r);
dnode *zsl_first_in_lex(const zskiplist *zsl, const zlex_range *r);
dnode *zsl_last_in_lex(const zskiplist *zsl, const zlex_range *r);

/* Delete every node in the range; return how many. */
unsigned long zsl_delete_score_range(zskiplist *zsl, const zscore_range *r);
unsigned long zsl_delete_lex_range(zskiplist *zsl, const zlex_range *r);
/* Ranks are 1-based and inclusive. */
unsigned long zsl_delete_rank_range(zskiplist *zsl, unsigned long start, unsigned long end);

/* Check the structure (order, spans, backward links, index): 1 if sound.
 * O(n * levels); for tests. */
int zsl_check(const zskiplist *zsl);

#endif
