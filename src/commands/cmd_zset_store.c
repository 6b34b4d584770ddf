/* cmd_zset_store.c - sorted-set algebra: ZUNION, ZINTER, ZDIFF, their
 * STORE forms and ZINTERCARD. Inputs may be sorted sets or plain sets
 * (score 1, through the reader the set module registers, see t_zset.h);
 * missing keys are empty inputs.
 *
 * As in Redis 7.0.15: inputs are ordered by size (stable) before union and
 * intersection, so scores are aggregated in the same order and sums round
 * the same way; a weight times a score that is NaN (0 * inf) counts as 0, and
 * so does a NaN sum (inf + -inf). Results are built whole and stored in the
 * form their size calls for (listpack or skiplist).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cmd_zset.h"
#include "dict.h"
#include "reply.h"
#include "t_set.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

enum { OP_UNION, OP_INTER, OP_DIFF };
enum { AGG_SUM, AGG_MIN, AGG_MAX };

typedef struct zsrc {
    zset *zs;               /* sorted-set input */
    fset *set;              /* plain-set input (members score 1) */
    double weight;
    unsigned long len;      /* 0 for a missing key */
    int pos;                /* argument order (stable sort) */
} zsrc;

/* ---- inputs ---------------------------------------------------------------- */

static int src_find(const zsrc *s, const char *m, size_t len, double *score) {
    if (s->zs) return zset_score(s->zs, m, len, score);
    if (s->set && fset_contains(s->set, m, len)) {
        *score = 1.0;
        return 1;
    }
    return 0;
}

typedef void elem_fn(void *ud, const char *m, size_t len, double score);

static void src_foreach(const zsrc *s, elem_fn *fn, void *ud) {
    if (s->zs) {
        zs_iter it;
        for (zs_iter_rank(&it, s->zs, 0, 0); zs_iter_valid(&it); zs_iter_next(&it)) {
            size_t len;
            const char *m = zs_iter_member(&it, &len);
            fn(ud, m, len, zs_iter_score_of(&it));
        }
    } else if (s->set) {
        fset_iter it;
        fset_member m;
        fset_iter_init(&it, s->set);
        while (fset_iter_next(&it, &m)) fn(ud, m.p, m.len, 1.0);
        fset_iter_end(&it);
    }
}

static int by_len(const void *a, const void *b) {
    const zsrc *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->pos - y->pos;
}

/* Look up the numkeys inputs (WRONGTYPE for anything but sets and sorted
 * sets). Read lookups (keyspace hits/misses) even for the STORE forms, as
 * Redis 7.0. Returns 0 after replying. */
static int load_sources(client *c, int first, long long n, zsrc *src) {
    for (long long i = 0; i < n; i++) {
        span k = c->argv[first + i];
        dnode *x = db_lookup_read(c->db, k.p, k.len);
        src[i] = (zsrc){NULL, NULL, 1.0, 0, (int)i};
        if (!x) continue;
        if (x->type == OBJ_ZSET) {
            src[i].zs = zset_of(x);
            src[i].len = zset_len(src[i].zs);
        } else if (x->type == OBJ_SET) {
            src[i].set = dn_ptr(x);
            src[i].len = (unsigned long)fset_size(src[i].set);
        } else {
            reply_err_wrongtype(c);
            return 0;
        }
    }
    return 1;
}

/* ---- the operations ----------------------------------------------------- */

static void aggregate(double *acc, double v, int agg) {
    if (agg == AGG_SUM) {
        *acc += v;
        if (isnan(*acc)) *acc = 0.0;
    } else if (agg == AGG_MIN) {
        if (v < *acc) *acc = v;
    } else if (v > *acc) {
        *acc = v;
    }
}

static double weighted(double score, double w) {
    double v = score * w;
    return isnan(v) ? 0.0 : v;
}

/* The result under construction: a skiplist-form set (members are copied
 * in as they come; set inputs hand over transient bytes), moved to the
 * listpack form at the end if its size allows, as Redis does. */
typedef struct zbuild {
    zset *zs;
    size_t maxlen;
} zbuild;

static void zbuild_init(zbuild *b) {
    b->zs = zset_new(SIZE_MAX, 0);
    b->maxlen = 0;
}

static void zbuild_add(zbuild *b, const char *m, size_t len, double score) {
    zset_insert_new(b->zs, score, m, len);
    if (len > b->maxlen) b->maxlen = len;
}

/* The finished set, NULL if empty. */
static zset *zbuild_done(zbuild *b) {
    if (zset_len(b->zs) == 0) {
        zset_free(b->zs);
        return NULL;
    }
    zset_maybe_to_listpack(b->zs, b->maxlen);
    return b->zs;
}

/* Union accumulator: member -> score in a temporary table (dnode value =
 * the double). */
typedef struct union_ctx {
    dict acc;
    double weight;
    int agg;
} union_ctx;

static void union_add(void *ud, const char *m, size_t len, double score) {
    union_ctx *u = ud;
    double v = weighted(score, u->weight);
    uint64_t h;
    dnode **l = dict_find_link_h(&u->acc, m, len, &h);
    if (l) {
        double cur;
        memcpy(&cur, dn_val(*l), sizeof cur);
        aggregate(&cur, v, u->agg);
        memcpy(dn_val(*l), &cur, sizeof cur);
        return;
    }
    dnode *n = dn_new((uint32_t)len, sizeof v, 0);
    memcpy(dn_key(n), m, len);
    memcpy(dn_val(n), &v, sizeof v);
    dict_add_h(&u->acc, n, h);
}

static void acc_to_result(void *ud, dnode *n) {
    double v;
    memcpy(&v, dn_val(n), sizeof v);
    zbuild_add(ud, dn_key(n), dn_klen(n), v);
}

static void free_acc_node(dnode *n) { dn_free(n); }

typedef struct inter_ctx {
    const zsrc *src;
    long long n;
    int agg;
    long long limit;        /* ZINTERCARD: stop at this many (0: no limit) */
    unsigned long found;
    struct zbuild *out;     /* NULL: count only */
} inter_ctx;

static void inter_visit(void *ud, const char *m, size_t len, double score) {
    inter_ctx *x = ud;
    if (x->limit && x->found >= (unsigned long)x->limit) return;
    double acc = weighted(score, x->src[0].weight), v;
    for (long long j = 1; j < x->n; j++) {
        if (!src_find(&x->src[j], m, len, &v)) return;
        aggregate(&acc, weighted(v, x->src[j].weight), x->agg);
    }
    x->found++;
    if (x->out) zbuild_add(x->out, m, len, acc);
}

typedef struct diff_ctx {
    const zsrc *src;
    long long n;
    struct zbuild *out;
} diff_ctx;

static void diff_visit(void *ud, const char *m, size_t len, double score) {
    diff_ctx *x = ud;
    double v;
    for (long long j = 1; j < x->n; j++)
        if (x->src[j].len && src_find(&x->src[j], m, len, &v)) return;
    zbuild_add(x->out, m, len, score);
}

/* ---- argument parsing ------------------------------------------------------- */

typedef struct setop_req {
    int op, agg, withscores, card_only;
    long long limit;
} setop_req;

static int parse_options(client *c, int j, int store, setop_req *q, zsrc *src, long long n) {
    while (j < c->argc) {
        int left = c->argc - j;
        span o = c->argv[j];
        if (q->op != OP_DIFF && !q->card_only && left >= n + 1 && zopt_is(o, "weights")) {
            j++;
            for (long long i = 0; i < n; i++, j++)
                if (!str_to_d(c->argv[j].p, c->argv[j].len, &src[i].weight)) {
                    reply_error(c, "ERR weight value is not a float");
                    return 0;
                }
        } else if (q->op != OP_DIFF && !q->card_only && left >= 2 && zopt_is(o, "aggregate")) {
            span a = c->argv[j + 1];
            if (zopt_is(a, "sum")) q->agg = AGG_SUM;
            else if (zopt_is(a, "min")) q->agg = AGG_MIN;
            else if (zopt_is(a, "max")) q->agg = AGG_MAX;
            else {
                reply_err_syntax(c);
                return 0;
            }
            j += 2;
        } else if (!store && !q->card_only && zopt_is(o, "withscores")) {
            q->withscores = 1;
            j++;
        } else if (q->card_only && left >= 2 && zopt_is(o, "limit")) {
            span l = c->argv[j + 1];
            if (!str_to_ll(l.p, l.len, &q->limit) || q->limit < 0) {
                reply_error(c, "ERR LIMIT can't be negative");
                return 0;
            }
            j += 2;
        } else {
            reply_err_syntax(c);
            return 0;
        }
    }
    return 1;
}

static zset *run_union(const zsrc *src, long long n, int agg) {
    union_ctx u;
    dict_init(&u.acc);
    u.agg = agg;
    for (long long i = 0; i < n; i++) {
        u.weight = src[i].weight;
        src_foreach(&src[i], union_add, &u);
    }
    zbuild b;
    zbuild_init(&b);
    dict_foreach(&u.acc, acc_to_result, &b);
    dict_clear(&u.acc, free_acc_node);
    return zbuild_done(&b);
}

/* Intersection; with count_only, *found gets the (limited) cardinality and
 * no set is built. */
static zset *run_inter(const zsrc *src, long long n, int agg, long long limit, int count_only, unsigned long *found) {
    zbuild b;
    zbuild_init(&b);
    inter_ctx x = {src, n, agg, count_only ? limit : 0, 0, count_only ? NULL : &b};
    if (src[0].len) src_foreach(&src[0], inter_visit, &x);
    *found = x.found;
    return zbuild_done(&b);
}

static zset *run_diff(const zsrc *src, long long n) {
    zbuild b;
    zbuild_init(&b);
    diff_ctx x = {src, n, &b};
    src_foreach(&src[0], diff_visit, &x);
    return zbuild_done(&b);
}

static void reply_result(client *c, const zset *res, int withscores) {
    zelems out;
    zelems_init(&out);
    if (res) {
        zs_iter it;
        for (zs_iter_rank(&it, res, 0, 0); zs_iter_valid(&it); zs_iter_next(&it)) {
            size_t len;
            const char *m = zs_iter_member(&it, &len);
            zelems_push(&out, m, len, zs_iter_score_of(&it));
        }
    }
    reply_zelems(c, out.v, out.n, withscores);
    zelems_free(&out);
}

/* numkeys at argv[nk_idx]; store: the destination is argv[1]. */
static void setop_generic(client *c, int nk_idx, int store, int op, int card_only, const char *name) {
    setop_req q = {op, AGG_SUM, 0, card_only, 0};
    long long n;
    span nk = c->argv[nk_idx];
    if (!str_to_ll(nk.p, nk.len, &n)) {
        reply_err_notint(c);
        return;
    }
    if (n < 1) {
        reply_errorf(c, "ERR at least 1 input key is needed for '%s' command", name);
        return;
    }
    if (n > c->argc - nk_idx - 1) {
        reply_err_syntax(c);
        return;
    }
    zsrc *src = zmalloc(sizeof *src * (size_t)n);
    if (!load_sources(c, nk_idx + 1, n, src) || !parse_options(c, nk_idx + 1 + (int)n, store, &q, src, n)) {
        zfree(src);
        return;
    }
    if (op != OP_DIFF) qsort(src, (size_t)n, sizeof *src, by_len);
    unsigned long found = 0;
    zset *res = op == OP_UNION ? run_union(src, n, q.agg)
              : op == OP_DIFF  ? run_diff(src, n)
                               : run_inter(src, n, q.agg, q.limit, card_only, &found);
    zfree(src);
    if (card_only) reply_int(c, (long long)found);
    else if (store) zkey_store(c, c->argv[1], res, name);
    else reply_result(c, res, q.withscores);
    if (!store) zset_free(res);
}

void cmd_zunionstore(client *c) { setop_generic(c, 2, 1, OP_UNION, 0, "zunionstore"); }
void cmd_zinterstore(client *c) { setop_generic(c, 2, 1, OP_INTER, 0, "zinterstore"); }
void cmd_zdiffstore(client *c) { setop_generic(c, 2, 1, OP_DIFF, 0, "zdiffstore"); }
void cmd_zunion(client *c) { setop_generic(c, 1, 0, OP_UNION, 0, "zunion"); }
void cmd_zinter(client *c) { setop_generic(c, 1, 0, OP_INTER, 0, "zinter"); }
void cmd_zdiff(client *c) { setop_generic(c, 1, 0, OP_DIFF, 0, "zdiff"); }
void cmd_zintercard(client *c) { setop_generic(c, 1, 0, OP_INTER, 1, "zintercard"); }
