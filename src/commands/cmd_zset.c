/* cmd_zset.c - the sorted-set commands that add, remove, look up and read
 * ranges: ZADD, ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD, ZCOUNT, ZLEXCOUNT,
 * ZRANGE and its older forms (ZREVRANGE, Z[REV]RANGEBYSCORE,
 * Z[REV]RANGEBYLEX), ZRANGESTORE, ZRANK, ZREVRANK and ZREMRANGEBY*; plus
 * the helpers the other sorted-set command files share (cmd_zset.h).
 *
 * Option parsing, its order of checks and every error text follow Redis
 * 7.0.15; so do the small quirks that are visible in replies (strtod-style
 * range bounds, LIMIT with negative offsets, ...). The command table of the
 * whole group is at the end of this file.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blocking.h"
#include "cmd_zset.h"
#include "multi.h"
#include "notify.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

/* ---- shared helpers --------------------------------------------------------- */

int zopt_is(span s, const char *lit) {
    const char *z = memchr(s.p, 0, s.len);
    span t = {s.p, z ? (size_t)(z - s.p) : s.len};
    return span_eq_nocase(t, lit);
}

int zkey_lookup(client *c, span key, int write, dnode **n, zset **zs) {
    dnode *x = write ? db_lookup_write(c->db, key.p, key.len) : db_lookup_read(c->db, key.p, key.len);
    if (!x) return 0;
    if (x->type != OBJ_ZSET) {
        reply_err_wrongtype(c);
        return -1;
    }
    if (n) *n = x;
    *zs = zset_of(x);
    return 1;
}

void zkey_written(client *c, span key, dnode *n, zset *zs, long long changes, const char *event) {
    if (event) notify_key(NOTIFY_ZSET, event, c->db->id, key);
    if (zset_len(zs) == 0) {
        db_delete(c->db, key.p, key.len);
        notify_key(NOTIFY_GENERIC, "del", c->db->id, key);
    } else {
        n->enc = (uint8_t)zset_enc(zs);
    }
    touch_watched_key(c->db, key.p, key.len);
    srv.dirty += changes;
}

void zkey_store(client *c, span dst, zset *zs, const char *event) {
    unsigned long n = zs ? zset_len(zs) : 0;
    if (n) {
        db_set_ptr(c->db, dst.p, dst.len, OBJ_ZSET, zset_enc(zs), zs);
        signal_key_ready(c->db, dst.p, dst.len);
        touch_watched_key(c->db, dst.p, dst.len);
        srv.dirty++;
        reply_int(c, (long long)n);
        notify_key(NOTIFY_ZSET, event, c->db->id, dst);
        return;
    }
    zset_free(zs);
    int existed = db_delete_stored(c->db, dst.p, dst.len);
    if (existed) {
        touch_watched_key(c->db, dst.p, dst.len);
        srv.dirty++;
    }
    reply_int(c, 0);
    if (existed) notify_key(NOTIFY_GENERIC, "del", c->db->id, dst);
}

void zelems_init(zelems *a) {
    a->v = a->inl;
    a->n = 0;
    a->cap = sizeof a->inl / sizeof a->inl[0];
}

void zelems_push(zelems *a, const char *m, size_t len, double score) {
    if (a->n == a->cap) {
        size_t cap = a->cap * 2;
        zelem *v = zmalloc(cap * sizeof *v);
        memcpy(v, a->v, a->n * sizeof *v);
        if (a->v != a->inl) zfree(a->v);
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = (zelem){m, len, score};
}

void zelems_free(zelems *a) {
    if (a->v != a->inl) zfree(a->v);
    zelems_init(a);
}

void reply_zelem_pair(client *c, const zelem *e) {
    reply_array(c, 2);
    reply_bulk(c, e->m, e->len);
    reply_double(c, e->score);
}

void reply_zelems(client *c, const zelem *v, size_t n, int withscores) {
    if (withscores && c->resp >= 3) {
        reply_array(c, (long)n);
        for (size_t i = 0; i < n; i++) reply_zelem_pair(c, &v[i]);
        return;
    }
    reply_array(c, (long)(withscores ? 2 * n : n));
    for (size_t i = 0; i < n; i++) {
        reply_bulk(c, v[i].m, v[i].len);
        if (withscores) reply_double(c, v[i].score);
    }
}

/* A bound as Redis parses it: strtod over the C string (so leading spaces,
 * hex, "" and a NUL cut are all accepted), NaN refused. */
static int parse_bound(span s, double *v, int *ex) {
    char buf[256], *eptr;
    size_t len = strnlen(s.p, s.len);
    char *str = len < sizeof buf ? buf : zmalloc(len + 1);
    memcpy(str, s.p, len);
    str[len] = '\0';
    *ex = str[0] == '(';
    *v = strtod(str + *ex, &eptr);
    int ok = eptr[0] == '\0' && !isnan(*v);
    if (str != buf) zfree(str);
    return ok;
}

int zparse_score_range(span min, span max, zscore_range *r) {
    return parse_bound(min, &r->min, &r->minex) && parse_bound(max, &r->max, &r->maxex);
}

static int parse_lex_bound(span s, zlex_bound *b) {
    char c0 = s.len ? s.p[0] : '\0';
    b->p = s.p + 1;
    b->len = s.len ? s.len - 1 : 0;
    switch (c0) {
    case '+':
    case '-':
        if (s.len > 1 && s.p[1] != '\0') return 0;
        b->kind = c0 == '+' ? ZLEX_POS_INF : ZLEX_NEG_INF;
        return 1;
    case '(': b->kind = ZLEX_EXCL; return 1;
    case '[': b->kind = ZLEX_INCL; return 1;
    default: return 0;
    }
}

int zparse_lex_range(span min, span max, zlex_range *r) {
    return parse_lex_bound(min, &r->min) && parse_lex_bound(max, &r->max);
}

static int get_long(client *c, span s, long long *v) {
    if (str_to_ll(s.p, s.len, v)) return 1;
    reply_err_notint(c);
    return 0;
}

/* ---- ZADD / ZINCRBY ----------------------------------------------------- */

/* Parse ZADD options from argv[2..]; *first gets the first score index. */
static int zadd_options(client *c, int *flags, int *ch, int *first) {
    int j = 2, f = 0;
    *ch = 0;
    for (; j < c->argc; j++) {
        span o = c->argv[j];
        if (zopt_is(o, "nx")) f |= ZADD_NX;
        else if (zopt_is(o, "xx")) f |= ZADD_XX;
        else if (zopt_is(o, "ch")) *ch = 1;
        else if (zopt_is(o, "incr")) f |= ZADD_INCR;
        else if (zopt_is(o, "gt")) f |= ZADD_GT;
        else if (zopt_is(o, "lt")) f |= ZADD_LT;
        else break;
    }
    int elements = c->argc - j;
    if (elements % 2 || !elements) {
        reply_err_syntax(c);
        return 0;
    }
    if ((f & ZADD_NX) && (f & ZADD_XX)) {
        reply_error(c, "ERR XX and NX options at the same time are not compatible");
        return 0;
    }
    if (((f & ZADD_GT) && (f & ZADD_NX)) || ((f & ZADD_LT) && (f & ZADD_NX)) || ((f & ZADD_GT) && (f & ZADD_LT))) {
        reply_error(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return 0;
    }
    if ((f & ZADD_INCR) && elements > 2) {
        reply_error(c, "ERR INCR option supports a single increment-element pair");
        return 0;
    }
    *flags = f;
    *first = j;
    return 1;
}

static void zadd_generic(client *c, int flags, int ch, int first) {
    span key = c->argv[1];
    int elements = (c->argc - first) / 2;
    double stack[16], *scores = elements <= 16 ? stack : zmalloc(sizeof(double) * (size_t)elements);
    long long added = 0, updated = 0, processed = 0;
    double score = 0;
    dnode *n = NULL;
    zset *zs = NULL;
    for (int i = 0; i < elements; i++) {
        span s = c->argv[first + 2 * i];
        if (!str_to_d(s.p, s.len, &scores[i])) {
            reply_err_notfloat(c);
            goto done;
        }
    }
    int r = zkey_lookup(c, key, 1, &n, &zs);
    if (r < 0) goto done;
    if (r == 0) {
        if (flags & ZADD_XX) goto reply;
        zs = zset_new_for_add(c->argv[first + 1].len);
        n = db_add_ptr(c->db, key.p, key.len, OBJ_ZSET, zset_enc(zs), zs, -1);
    }
    for (int i = 0; i < elements; i++) {
        span m = c->argv[first + 2 * i + 1];
        int out;
        double newscore;
        if (!zset_add(zs, scores[i], m.p, m.len, flags, &out, &newscore)) {
            reply_error(c, "ERR resulting score is not a number (NaN)");
            goto written;
        }
        if (out & ZADD_OUT_ADDED) added++;
        if (out & ZADD_OUT_UPDATED) updated++;
        if (!(out & ZADD_OUT_NOP)) {
            processed++;
            score = newscore;
        }
    }
reply:
    if (flags & ZADD_INCR) {
        if (processed) reply_double(c, score);
        else reply_null(c);
    } else {
        reply_int(c, ch ? added + updated : added);
    }
written:
    if (zs && (added || updated || zset_len(zs) == 0)) {
        zkey_written(c, key, n, zs, added + updated,
                     !added && !updated ? NULL : (flags & ZADD_INCR) ? "zincr" : "zadd");
        if (added) signal_key_ready(c->db, key.p, key.len);
    }
done:
    if (scores != stack) zfree(scores);
}

static void cmd_zadd(client *c) {
    int flags, ch, first;
    if (zadd_options(c, &flags, &ch, &first)) zadd_generic(c, flags, ch, first);
}

static void cmd_zincrby(client *c) { zadd_generic(c, ZADD_INCR, 0, 2); }

/* ---- ZREM / ZSCORE / ZMSCORE / ZCARD -------------------------------------- */

static void cmd_zrem(client *c) {
    dnode *n;
    zset *zs;
    int r = zkey_lookup(c, c->argv[1], 1, &n, &zs);
    if (r <= 0) {
        if (r == 0) reply_int(c, 0);
        return;
    }
    long long deleted = 0;
    for (int j = 2; j < c->argc && zset_len(zs); j++) deleted += zset_del(zs, c->argv[j].p, c->argv[j].len);
    if (deleted) zkey_written(c, c->argv[1], n, zs, deleted, "zrem");
    reply_int(c, deleted);
}

static void cmd_zscore(client *c) {
    zset *zs;
    double s;
    int r = zkey_lookup(c, c->argv[1], 0, NULL, &zs);
    if (r < 0) return;
    if (r == 0 || !zset_score(zs, c->argv[2].p, c->argv[2].len, &s)) reply_null(c);
    else reply_double(c, s);
}

static void cmd_zmscore(client *c) {
    zset *zs = NULL;
    double s;
    if (zkey_lookup(c, c->argv[1], 0, NULL, &zs) < 0) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        if (zs && zset_score(zs, c->argv[j].p, c->argv[j].len, &s)) reply_double(c, s);
        else reply_null(c);
    }
}

static void cmd_zcard(client *c) {
    zset *zs;
    int r = zkey_lookup(c, c->argv[1], 0, NULL, &zs);
    if (r >= 0) reply_int(c, r ? (long long)zset_len(zs) : 0);
}

/* ---- ZCOUNT / ZLEXCOUNT --------------------------------------------------- */

static void cmd_zcount(client *c) {
    zscore_range sr;
    zset *zs;
    if (!zparse_score_range(c->argv[2], c->argv[3], &sr)) {
        reply_error(c, "ERR min or max is not a float");
        return;
    }
    int r = zkey_lookup(c, c->argv[1], 0, NULL, &zs);
    if (r >= 0) reply_int(c, r ? (long long)zset_count_score(zs, &sr) : 0);
}

static void cmd_zlexcount(client *c) {
    zlex_range lr;
    zset *zs;
    if (!zparse_lex_range(c->argv[2], c->argv[3], &lr)) {
        reply_error(c, "ERR min or max not valid string range item");
        return;
    }
    int r = zkey_lookup(c, c->argv[1], 0, NULL, &zs);
    if (r >= 0) reply_int(c, r ? (long long)zset_count_lex(zs, &lr) : 0);
}

/* ---- ZRANK / ZREVRANK ------------------------------------------------------ */

/* ZRANK|ZREVRANK key member [WITHSCORE] (WITHSCORE is Redis 7.2's): the
 * rank, or with WITHSCORE [rank, score]; a missing member or key is a
 * null, a null array with WITHSCORE. */
static void rank_generic(client *c, int rev) {
    int withscore = c->argc == 4;
    if (c->argc > 4) {
        reply_err_arity(c);
        return;
    }
    if (withscore && !span_eq_nocase(c->argv[3], "withscore")) {
        reply_err_syntax(c);
        return;
    }
    zset *zs;
    int r = zkey_lookup(c, c->argv[1], 0, NULL, &zs);
    if (r < 0) return;
    long rank = r ? zset_rank(zs, c->argv[2].p, c->argv[2].len, rev) : -1;
    if (rank < 0) {
        if (withscore) reply_null_array(c);
        else reply_null(c);
        return;
    }
    if (!withscore) {
        reply_int(c, rank);
        return;
    }
    double score = 0;
    zset_score(zs, c->argv[2].p, c->argv[2].len, &score);
    reply_array(c, 2);
    reply_int(c, rank);
    reply_double(c, score);
}

static void cmd_zrank(client *c) { rank_generic(c, 0); }
static void cmd_zrevrank(client *c) { rank_generic(c, 1); }

/* ---- ZRANGE and its forms --------------------------------------------------- */

enum { ZR_AUTO, ZR_RANK, ZR_SCORE, ZR_LEX };
enum { ZD_AUTO, ZD_FWD, ZD_REV };

typedef struct zrange_req {
    int type, dir;
    int withscores;
    long long start, end;       /* ZR_RANK */
    long long offset, limit;    /* ZR_SCORE / ZR_LEX; limit -1: none */
    zscore_range sr;
    zlex_range lr;
} zrange_req;

/* Options after <src> <min> <max> (argv[first+3..]). */
static int zrange_options(client *c, int first, int store, zrange_req *q) {
    for (int j = first + 3; j < c->argc; j++) {
        span o = c->argv[j];
        int left = c->argc - j - 1;
        if (!store && zopt_is(o, "withscores")) {
            q->withscores = 1;
        } else if (zopt_is(o, "limit") && left >= 2) {
            if (!get_long(c, c->argv[j + 1], &q->offset) || !get_long(c, c->argv[j + 2], &q->limit)) return 0;
            j += 2;
        } else if (q->dir == ZD_AUTO && zopt_is(o, "rev")) {
            q->dir = ZD_REV;
        } else if (q->type == ZR_AUTO && zopt_is(o, "bylex")) {
            q->type = ZR_LEX;
        } else if (q->type == ZR_AUTO && zopt_is(o, "byscore")) {
            q->type = ZR_SCORE;
        } else {
            reply_err_syntax(c);
            return 0;
        }
    }
    return 1;
}

static int zrange_parse(client *c, int first, int store, zrange_req *q) {
    q->withscores = 0;
    q->offset = 0;
    q->limit = -1;
    if (!zrange_options(c, first, store, q)) return 0;
    if (q->dir == ZD_AUTO) q->dir = ZD_FWD;
    if (q->type == ZR_AUTO) q->type = ZR_RANK;
    if (q->limit != -1 && q->type == ZR_RANK) {
        reply_error(c, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return 0;
    }
    if (q->withscores && q->type == ZR_LEX) {
        reply_error(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return 0;
    }
    span lo = c->argv[first + 1], hi = c->argv[first + 2];
    if (q->dir == ZD_REV && q->type != ZR_RANK) { /* given as max min */
        span t = lo;
        lo = hi;
        hi = t;
    }
    if (q->type == ZR_RANK) return get_long(c, lo, &q->start) && get_long(c, hi, &q->end);
    if (q->type == ZR_SCORE && !zparse_score_range(lo, hi, &q->sr)) {
        reply_error(c, "ERR min or max is not a float");
        return 0;
    }
    if (q->type == ZR_LEX && !zparse_lex_range(lo, hi, &q->lr)) {
        reply_error(c, "ERR min or max not valid string range item");
        return 0;
    }
    return 1;
}

static void collect_rank(const zset *zs, const zrange_req *q, zelems *out) {
    long long len = (long long)zset_len(zs), start = q->start, end = q->end;
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (start > end || start >= len) return;
    if (end >= len) end = len - 1;
    zs_iter it;
    zs_iter_rank(&it, zs, (unsigned long)start, q->dir == ZD_REV);
    for (long long k = start; k <= end && zs_iter_valid(&it); k++, zs_iter_next(&it)) {
        size_t mlen;
        const char *m = zs_iter_member(&it, &mlen);
        zelems_push(out, m, mlen, zs_iter_score_of(&it));
    }
}

/* Is the iterator's element still inside the range on the far side? */
static int range_continues(const zs_iter *it, const zrange_req *q) {
    if (q->type == ZR_SCORE) {
        double s = zs_iter_score_of(it);
        return it->rev ? zscore_gte_min(s, &q->sr) : zscore_lte_max(s, &q->sr);
    }
    size_t len;
    const char *m = zs_iter_member(it, &len);
    return it->rev ? zlex_gte_min(m, len, &q->lr) : zlex_lte_max(m, len, &q->lr);
}

static void collect_range(const zset *zs, const zrange_req *q, zelems *out) {
    if (q->offset > 0 && q->offset >= (long long)zset_len(zs)) return;
    zs_iter it;
    int rev = q->dir == ZD_REV;
    if (q->type == ZR_SCORE) zs_iter_score(&it, zs, &q->sr, rev);
    else zs_iter_lex(&it, zs, &q->lr, rev);
    /* a negative offset walks past the end, as in Redis */
    if (q->offset < 0) return;
    zs_iter_skip(&it, (unsigned long)q->offset);
    for (long long lim = q->limit; zs_iter_valid(&it) && lim; lim--, zs_iter_next(&it)) {
        if (!range_continues(&it, q)) break;
        size_t mlen;
        const char *m = zs_iter_member(&it, &mlen);
        zelems_push(out, m, mlen, zs_iter_score_of(&it));
    }
}

/* A set holding the collected elements, in the form their size calls for. */
static zset *zset_from_elems(const zelems *a) {
    size_t maxlen = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].len > maxlen) maxlen = a->v[i].len;
    zset *zs = zset_new(a->n, maxlen);
    for (size_t i = 0; i < a->n; i++) zset_insert_new(zs, a->v[i].score, a->v[i].m, a->v[i].len);
    return zs;
}

/* ZRANGE family: `first` is the index of <src>; store: ZRANGESTORE with
 * the destination at argv[1]. */
static void zrange_generic(client *c, int first, int store, int type, int dir) {
    zrange_req q = {.type = type, .dir = dir};
    if (!zrange_parse(c, first, store, &q)) return;
    zset *zs;
    int r = zkey_lookup(c, c->argv[first], 0, NULL, &zs);
    if (r < 0) return;
    zelems out;
    zelems_init(&out);
    if (r) {
        if (q.type == ZR_RANK) collect_rank(zs, &q, &out);
        else collect_range(zs, &q, &out);
    }
    if (store) zkey_store(c, c->argv[1], out.n ? zset_from_elems(&out) : NULL, "zrangestore");
    else reply_zelems(c, out.v, out.n, q.withscores);
    zelems_free(&out);
}

static void cmd_zrange(client *c) { zrange_generic(c, 1, 0, ZR_AUTO, ZD_AUTO); }
static void cmd_zrangestore(client *c) { zrange_generic(c, 2, 1, ZR_AUTO, ZD_AUTO); }
static void cmd_zrevrange(client *c) { zrange_generic(c, 1, 0, ZR_RANK, ZD_REV); }
static void cmd_zrangebyscore(client *c) { zrange_generic(c, 1, 0, ZR_SCORE, ZD_FWD); }
static void cmd_zrevrangebyscore(client *c) { zrange_generic(c, 1, 0, ZR_SCORE, ZD_REV); }
static void cmd_zrangebylex(client *c) { zrange_generic(c, 1, 0, ZR_LEX, ZD_FWD); }
static void cmd_zrevrangebylex(client *c) { zrange_generic(c, 1, 0, ZR_LEX, ZD_REV); }

/* ---- ZREMRANGEBY* ----------------------------------------------------------- */

static void zremrange_generic(client *c, int type) {
    zrange_req q = {.type = type};
    span lo = c->argv[2], hi = c->argv[3];
    if (type == ZR_RANK && (!get_long(c, lo, &q.start) || !get_long(c, hi, &q.end))) return;
    if (type == ZR_SCORE && !zparse_score_range(lo, hi, &q.sr)) {
        reply_error(c, "ERR min or max is not a float");
        return;
    }
    if (type == ZR_LEX && !zparse_lex_range(lo, hi, &q.lr)) {
        reply_error(c, "ERR min or max not valid string range item");
        return;
    }
    dnode *n;
    zset *zs;
    int r = zkey_lookup(c, c->argv[1], 1, &n, &zs);
    if (r <= 0) {
        if (r == 0) reply_int(c, 0);
        return;
    }
    unsigned long deleted = 0;
    if (type == ZR_RANK) {
        long long len = (long long)zset_len(zs), start = q.start, end = q.end;
        if (start < 0) start += len;
        if (end < 0) end += len;
        if (start < 0) start = 0;
        if (start > end || start >= len) {
            reply_int(c, 0);
            return;
        }
        if (end >= len) end = len - 1;
        deleted = zset_del_rank(zs, (unsigned long)start, (unsigned long)end);
    } else if (type == ZR_SCORE) {
        deleted = zset_del_score(zs, &q.sr);
    } else {
        deleted = zset_del_lex(zs, &q.lr);
    }
    static const char *const events[] = {[ZR_RANK] = "zremrangebyrank", [ZR_SCORE] = "zremrangebyscore",
                                         [ZR_LEX] = "zremrangebylex"};
    if (deleted) zkey_written(c, c->argv[1], n, zs, (long long)deleted, events[type]);
    reply_int(c, (long long)deleted);
}

static void cmd_zremrangebyrank(client *c) { zremrange_generic(c, ZR_RANK); }
static void cmd_zremrangebyscore(client *c) { zremrange_generic(c, ZR_SCORE); }
static void cmd_zremrangebylex(client *c) { zremrange_generic(c, ZR_LEX); }

/* ---- the command table ------------------------------------------------------ */

static command zset_commands[] = {
    CMD("zadd", cmd_zadd, -4, .flags = CMD_WRITE | CMD_DENYOOM | CMD_FAST, .acl = "write sortedset fast",
        CMD_KEYS(1, 1, 1),
        .summary = "Add one or more members to a sorted set, or update its score if it already exists",
        .since = "1.2.0",
        .complexity = "O(log(N)) for each item added, where N is the number of elements in the sorted set."),
    CMD("zincrby", cmd_zincrby, 4, .flags = CMD_WRITE | CMD_DENYOOM | CMD_FAST, .acl = "write sortedset fast",
        CMD_KEYS(1, 1, 1), .summary = "Increment the score of a member in a sorted set", .since = "1.2.0",
        .complexity = "O(log(N)) where N is the number of elements in the sorted set."),
    CMD("zrem", cmd_zrem, -3, .flags = CMD_WRITE | CMD_FAST, .acl = "write sortedset fast", CMD_KEYS(1, 1, 1),
        .summary = "Remove one or more members from a sorted set", .since = "1.2.0",
        .complexity = "O(M*log(N)) with N being the number of elements in the sorted set and M the number of "
            "elements to be removed."),
    CMD("zscore", cmd_zscore, 3, .flags = CMD_READONLY | CMD_FAST, .acl = "read sortedset fast", CMD_KEYS(1, 1, 1),
        .summary = "Get the score associated with the given member in a sorted set", .since = "1.2.0",
        .complexity = "O(1)"),
    CMD("zmscore", cmd_zmscore, -3, .flags = CMD_READONLY | CMD_FAST, .acl = "read sortedset fast", CMD_KEYS(1, 1, 1),
        .summary = "Get the score associated with the given members in a sorted set", .since = "6.2.0",
        .complexity = "O(N) where N is the number of members being requested."),
    CMD("zcard", cmd_zcard, 2, .flags = CMD_READONLY | CMD_FAST, .acl = "read sortedset fast", CMD_KEYS(1, 1, 1),
        .summary = "Get the number of members in a sorted set", .since = "1.2.0", .complexity = "O(1)"),
    CMD("zcount", cmd_zcount, 4, .flags = CMD_READONLY | CMD_FAST, .acl = "read sortedset fast", CMD_KEYS(1, 1, 1),
        .summary = "Count the members in a sorted set with scores within the given values", .since = "2.0.0",
        .complexity = "O(log(N)) with N being the number of elements in the sorted set."),
    CMD("zlexcount", cmd_zlexcount, 4, .flags = CMD_READONLY | CMD_FAST, .acl = "read sortedset fast",
        CMD_KEYS(1, 1, 1),
        .summary = "Count the number of members in a sorted set between a given lexicographical range",
        .since = "2.8.9", .complexity = "O(log(N)) with N being the number of elements in the sorted set."),
    CMD("zrange", cmd_zrange, -4, .flags = CMD_READONLY, .acl = "read sortedset slow", CMD_KEYS(1, 1, 1),
        .summary = "Return a range of members in a sorted set", .since = "1.2.0",
        .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements returned."),
    CMD("zrangestore", cmd_zrangestore, -5, .flags = CMD_WRITE | CMD_DENYOOM, .acl = "write sortedset slow",
        CMD_KEYS(1, 2, 1), .summary = "Store a range of members from sorted set into another key", .since = "6.2.0",
        .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements stored into the destination key."),
    CMD("zrangebyscore", cmd_zrangebyscore, -4, .flags = CMD_READONLY, .acl = "read sortedset slow", CMD_KEYS(1, 1, 1),
        .summary = "Return a range of members in a sorted set, by score", .since = "1.0.5",
        .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), "
            "you can consider it O(log(N))."),
    CMD("zrevrangebyscore", cmd_zrevrangebyscore, -4, .flags = CMD_READONLY, .acl = "read sortedset slow",
        CMD_KEYS(1, 1, 1),
        .summary = "Return a range of members in a sorted set, by score, with scores ordered from high to low",
        .since = "2.2.0",
        .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), "
            "you can consider it O(log(N))."),
    CMD("zrangebylex", cmd_zrangebylex, -4, .flags = CMD_READONLY, .acl = "read sortedset slow", CMD_KEYS(1, 1, 1),
        .summary = "Return a range of members in a sorted set, by lexicographical range", .since = "2.8.9",
        .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), "
            "you can consider it O(log(N))."),
    CMD("zrevrangebylex", cmd_zrevrangebylex, -4, .flags = CMD_READONLY, .acl = "read sortedset slow",
        CMD_KEYS(1, 1, 1),
        .summary = "Return a range of members in a sorted set, by lexicographical range, ordered from higher "
            "to lower strings.", .since = "2.8.9",
        .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), "
            "you can consider it O(log(N))."),
    CMD("zrevrange", cmd_zrevrange, -4, .flags = CMD_READONLY, .acl = "read sortedset slow", CMD_KEYS(1, 1, 1),
        .summary = "Return a range of members in a sorted set, by index, with scores ordered from high to low",
        .since = "1.2.0",
        .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements returned."),
    /* arity -3: Redis 7.2's optional WITHSCORE (7.0 has 3) */
    CMD("zrank", cmd_zrank, -3, .flags = CMD_READONLY | CMD_FAST, .acl = "read sortedset fast", CMD_KEYS(1, 1, 1),
        .summary = "Determine the index of a member in a sorted set", .since = "2.0.0", .complexity = "O(log(N))"),
    CMD("zrevrank", cmd_zrevrank, -3, .flags = CMD_READONLY | CMD_FAST, .acl = "read sortedset fast", CMD_KEYS(1, 1, 1),
        .summary = "Determine the index of a member in a sorted set, with scores ordered from high to low",
        .since = "2.0.0", .complexity = "O(log(N))"),
    CMD("zremrangebyscore", cmd_zremrangebyscore, 4, .flags = CMD_WRITE, .acl = "write sortedset slow",
        CMD_KEYS(1, 1, 1), .summary = "Remove all members in a sorted set within the given scores", .since = "1.2.0",
        .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements removed by the operation."),
    CMD("zremrangebyrank", cmd_zremrangebyrank, 4, .flags = CMD_WRITE, .acl = "write sortedset slow",
        CMD_KEYS(1, 1, 1), .summary = "Remove all members in a sorted set within the given indexes", .since = "2.0.0",
        .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements removed by the operation."),
    CMD("zremrangebylex", cmd_zremrangebylex, 4, .flags = CMD_WRITE, .acl = "write sortedset slow", CMD_KEYS(1, 1, 1),
        .summary = "Remove all members in a sorted set between the given lexicographical range", .since = "2.8.9",
        .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements removed by the operation."),
    CMD("zpopmin", cmd_zpopmin, -2, .flags = CMD_WRITE | CMD_FAST, .acl = "write sortedset fast", CMD_KEYS(1, 1, 1),
        .summary = "Remove and return members with the lowest scores in a sorted set", .since = "5.0.0",
        .complexity = "O(log(N)*M) with N being the number of elements in the sorted set, and M being the "
            "number of elements popped."),
    CMD("zpopmax", cmd_zpopmax, -2, .flags = CMD_WRITE | CMD_FAST, .acl = "write sortedset fast", CMD_KEYS(1, 1, 1),
        .summary = "Remove and return members with the highest scores in a sorted set", .since = "5.0.0",
        .complexity = "O(log(N)*M) with N being the number of elements in the sorted set, and M being the "
            "number of elements popped."),
    CMD("bzpopmin", cmd_bzpopmin, -3, .flags = CMD_WRITE | CMD_NOSCRIPT | CMD_BLOCKING | CMD_FAST,
        .acl = "write sortedset fast blocking", CMD_KEYS(1, -2, 1),
        .summary = "Remove and return the member with the lowest score from one or more sorted sets, or block "
            "until one is available", .since = "5.0.0",
        .complexity = "O(log(N)) with N being the number of elements in the sorted set."),
    CMD("bzpopmax", cmd_bzpopmax, -3, .flags = CMD_WRITE | CMD_NOSCRIPT | CMD_BLOCKING | CMD_FAST,
        .acl = "write sortedset fast blocking", CMD_KEYS(1, -2, 1),
        .summary = "Remove and return the member with the highest score from one or more sorted sets, or "
            "block until one is available", .since = "5.0.0",
        .complexity = "O(log(N)) with N being the number of elements in the sorted set."),
    CMD("zmpop", cmd_zmpop, -4, .flags = CMD_WRITE | CMD_MOVABLE_KEYS, .acl = "write sortedset slow",
        .summary = "Remove and return members with scores in a sorted set", .since = "7.0.0",
        .complexity = "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of "
            "elements in the sorted set, and M being the number of elements popped."),
    CMD("bzmpop", cmd_bzmpop, -5, .flags = CMD_WRITE | CMD_BLOCKING | CMD_MOVABLE_KEYS,
        .acl = "write sortedset slow blocking",
        .summary = "Remove and return members with scores in a sorted set or block until one is available",
        .since = "7.0.0",
        .complexity = "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of "
            "elements in the sorted set, and M being the number of elements popped."),
    CMD("zrandmember", cmd_zrandmember, -2, .flags = CMD_READONLY, .acl = "read sortedset slow", CMD_KEYS(1, 1, 1),
        .summary = "Get one or multiple random elements from a sorted set", .since = "6.2.0",
        .complexity = "O(N) where N is the number of elements returned"),
    CMD("zunionstore", cmd_zunionstore, -4, .flags = CMD_WRITE | CMD_DENYOOM | CMD_MOVABLE_KEYS,
        .acl = "write sortedset slow", CMD_KEYS(1, 1, 1),
        .summary = "Add multiple sorted sets and store the resulting sorted set in a new key", .since = "2.0.0",
        .complexity = "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M "
            "being the number of elements in the resulting sorted set."),
    CMD("zinterstore", cmd_zinterstore, -4, .flags = CMD_WRITE | CMD_DENYOOM | CMD_MOVABLE_KEYS,
        .acl = "write sortedset slow", CMD_KEYS(1, 1, 1),
        .summary = "Intersect multiple sorted sets and store the resulting sorted set in a new key", .since = "2.0.0",
        .complexity = "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "
            "number of input sorted sets and M being the number of elements in the resulting sorted set."),
    CMD("zdiffstore", cmd_zdiffstore, -4, .flags = CMD_WRITE | CMD_DENYOOM | CMD_MOVABLE_KEYS,
        .acl = "write sortedset slow", CMD_KEYS(1, 1, 1),
        .summary = "Subtract multiple sorted sets and store the resulting sorted set in a new key", .since = "6.2.0",
        .complexity = "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, "
            "N is the size of the first set, and K is the size of the result set."),
    CMD("zunion", cmd_zunion, -3, .flags = CMD_READONLY | CMD_MOVABLE_KEYS, .acl = "read sortedset slow",
        .summary = "Add multiple sorted sets", .since = "6.2.0",
        .complexity = "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M "
            "being the number of elements in the resulting sorted set."),
    CMD("zinter", cmd_zinter, -3, .flags = CMD_READONLY | CMD_MOVABLE_KEYS, .acl = "read sortedset slow",
        .summary = "Intersect multiple sorted sets", .since = "6.2.0",
        .complexity = "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "
            "number of input sorted sets and M being the number of elements in the resulting sorted set."),
    CMD("zdiff", cmd_zdiff, -3, .flags = CMD_READONLY | CMD_MOVABLE_KEYS, .acl = "read sortedset slow",
        .summary = "Subtract multiple sorted sets", .since = "6.2.0",
        .complexity = "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, "
            "N is the size of the first set, and K is the size of the result set."),
    CMD("zintercard", cmd_zintercard, -3, .flags = CMD_READONLY | CMD_MOVABLE_KEYS, .acl = "read sortedset slow",
        .summary = "Intersect multiple sorted sets and return the cardinality of the result", .since = "7.0.0",
        .complexity = "O(N*K) worst case with N being the smallest input sorted set, K being the number of "
            "input sorted sets."),
    CMD("zscan", cmd_zscan, -3, .flags = CMD_READONLY, .acl = "read sortedset slow", CMD_KEYS(1, 1, 1),
        .summary = "Incrementally iterate sorted sets elements and associated scores", .since = "2.8.0",
        .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
            "the cursor to return back to 0. N is the number of elements inside the collection.."),
    {0},
};
const command_group zset_group = {"sorted-set", zset_commands};
