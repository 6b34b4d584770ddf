/* t_zset.h - the sorted-set value, independent of its encoding.
 *
 * Two forms, as in Redis 7.0:
 *   listpack  member, score, member, score ... sorted by (score, member),
 *             while the set has at most zset-max-listpack-entries members of
 *             at most zset-max-listpack-value bytes. Scores are stored as
 *             text the way Redis 7.0 writes them (integers within
 *             +-LLONG_MAX/2 as integers, so -0 becomes "0"; others "%.17g"),
 *             which ZSCAN returns as is.
 *   skiplist  zskiplist.h: skiplist with spans + member index.
 * A set grows from listpack to skiplist when an insert would pass either
 * threshold and never goes back, except that results built whole (ZRANGESTORE,
 * Z*STORE) start in whichever form their final size calls for.
 *
 * The keyspace node's `enc` mirrors the form (ENC_LISTPACK / ENC_SKIPLIST);
 * callers refresh it with zset_enc() after a write.
 *
 * Positions: a zs_iter walks the elements in either direction from a
 * starting rank or range bound; member pointers it yields stay valid until
 * the set is modified.
 */
#ifndef FERRY_T_ZSET_H
#define FERRY_T_ZSET_H

#include <stddef.h>
#include <stdint.h>
#include "zskiplist.h"

typedef struct zset {
    unsigned char *lp;      /* listpack form, or NULL */
    zskiplist *zsl;         /* skiplist form, or NULL */
} zset;

/* Register the OBJ_ZSET hooks (free / dup / memory) with the keyspace. */
void zset_register_type(void);

/* An empty set in the form a result of `n` members, the longest `maxlen`
 * bytes, should have. */
zset *zset_new(size_t n, size_t maxlen);
/* An empty set as ZADD / ZINCRBY create it for their first member. */
zset *zset_new_for_add(size_t first_len);
void zset_free(zset *zs);
zset *zset_dup(const zset *zs);
size_t zset_mem(const zset *zs);
int zset_enc(const zset *zs);               /* ENC_LISTPACK or ENC_SKIPLIST */
unsigned long zset_len(const zset *zs);
void zset_convert_to_skiplist(zset *zs);
/* Listpack form if the size allows it (results built whole). */
void zset_maybe_to_listpack(zset *zs, size_t maxlen);

/* Listpack score text; buf needs 32 bytes. Returns the length. */
size_t zset_score_str(char *buf, double d);

/* ---- members ----------------------------------------------------------- */

int zset_score(const zset *zs, const char *m, size_t len, double *score);

/* zset_add flags (in) and results (out) */
#define ZADD_NX    0x01
#define ZADD_XX    0x02
#define ZADD_GT    0x04
#define ZADD_LT    0x08
#define ZADD_INCR  0x10
#define ZADD_OUT_ADDED   0x01
#define ZADD_OUT_UPDATED 0x02
#define ZADD_OUT_NOP     0x04
/* Add, update or increment (ZADD semantics). Returns 0 if the resulting
 * score would be NaN (nothing changed), else 1 with *out set and *newscore
 * the member's score afterwards (when not NOP). */
int zset_add(zset *zs, double score, const char *m, size_t len, int flags, int *out, double *newscore);
/* Insert a member known to be absent, in the set's current form, without
 * threshold checks (builders that chose the form up front). */
void zset_insert_new(zset *zs, double score, const char *m, size_t len);
int zset_del(zset *zs, const char *m, size_t len);
/* 0-based rank in ascending (rev: descending) order; -1 if absent. */
long zset_rank(const zset *zs, const char *m, size_t len, int rev);

/* ---- ranges ------------------------------------------------------------ */

unsigned long zset_count_score(const zset *zs, const zscore_range *r);
unsigned long zset_count_lex(const zset *zs, const zlex_range *r);
unsigned long zset_del_score(zset *zs, const zscore_range *r);
unsigned long zset_del_lex(zset *zs, const zlex_range *r);
/* 0-based inclusive ascending ranks, already clamped to the set. */
unsigned long zset_del_rank(zset *zs, unsigned long start, unsigned long end);

/* ---- iteration --------------------------------------------------------- */

typedef struct zs_iter {
    const zset *zs;
    int rev;                /* walk towards lower ranks */
    size_t off;             /* listpack: member entry, LP_NONE at the end */
    dnode *node;            /* skiplist: current node, NULL at the end */
} zs_iter;

/* Start at 0-based rank `rank` counted in the walking direction. */
void zs_iter_rank(zs_iter *it, const zset *zs, unsigned long rank, int rev);
/* Start at the first element inside the range in the walking direction
 * (the lowest for rev == 0, the highest for rev == 1). */
void zs_iter_score(zs_iter *it, const zset *zs, const zscore_range *r, int rev);
void zs_iter_lex(zs_iter *it, const zset *zs, const zlex_range *r, int rev);
static inline int zs_iter_valid(const zs_iter *it) { return it->zs->lp ? it->off != (size_t)-1 : it->node != NULL; }
void zs_iter_next(zs_iter *it);
/* Move n steps in the walking direction (O(log N) in the skiplist form). */
void zs_iter_skip(zs_iter *it, unsigned long n);
const char *zs_iter_member(const zs_iter *it, size_t *len);
double zs_iter_score_of(const zs_iter *it);

/* ---- random and scan ---------------------------------------------------- */

/* The element at 0-based ascending rank (O(log n) in the skiplist form). */
const char *zset_at(const zset *zs, unsigned long rank, size_t *len, double *score);

/* ZSCAN over the skiplist index: calls fn for the members of the bucket(s)
 * the cursor designates; returns the next cursor. */
typedef void zset_scan_fn(void *ud, const char *m, size_t len, double score);
unsigned long zset_scan(zset *zs, unsigned long cursor, zset_scan_fn *fn, void *ud);

/* ---- plain sets as inputs ------------------------------------------------ */


#endif
