/* cmd_zset_pop.c - sorted-set commands that take elements out or sample
 * them: ZPOPMIN, ZPOPMAX, ZMPOP, their blocking forms BZPOPMIN, BZPOPMAX,
 * BZMPOP (through blocking.h), ZRANDMEMBER and ZSCAN.
 *
 * Reply shapes follow Redis 7.0.15 exactly: ZPOP* without COUNT is a flat
 * [member, score] in both protocols, with COUNT in RESP3 an array of pairs;
 * BZPOP* a flat [key, member, score]; Z*MPOP [key, [[member, score] ...]]
 * and a null array when nothing could be popped.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "blocking.h"
#include "cmd_zset.h"
#include "frand.h"
#include "notify.h"
#include "propagate.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

/* ---- popping ------------------------------------------------------------ */

enum { POP_MIN = 0, POP_MAX = 1 };

/* How the popped elements are framed. */
enum { SHAPE_FLAT, SHAPE_NESTED, SHAPE_KEY_FLAT, SHAPE_KEY_NESTED };

/* Pop up to count elements from the set at key (n/zs) and reply them.
 * "zpopmin"/"zpopmax" is raised where Redis 7.0 raises it: after the reply's
 * header, before the first element; "del" after the last. */
static void pop_from(client *c, span key, dnode *n, zset *zs, int where, long long count, int shape) {
    unsigned long len = zset_len(zs);
    long long k = count > (long long)len ? (long long)len : count;
    switch (shape) {
    case SHAPE_FLAT: reply_array(c, 2 * k); break;
    case SHAPE_NESTED: reply_array(c, k); break;
    case SHAPE_KEY_FLAT:
        reply_array(c, 2 * k + 1);
        reply_bulk(c, key.p, key.len);
        break;
    default:
        reply_array(c, 2);
        reply_bulk(c, key.p, key.len);
        reply_array(c, k);
    }
    int nested = shape == SHAPE_NESTED || shape == SHAPE_KEY_NESTED;
    for (long long i = 0; i < k; i++) {
        zs_iter it;
        zs_iter_rank(&it, zs, 0, where == POP_MAX);
        size_t mlen;
        const char *m = zs_iter_member(&it, &mlen);
        zelem e = {m, mlen, zs_iter_score_of(&it)};
        if (i == 0) notify_key(NOTIFY_ZSET, where == POP_MAX ? "zpopmax" : "zpopmin", c->db->id, key);
        if (nested) reply_zelem_pair(c, &e);
        else {
            reply_bulk(c, e.m, e.len);
            reply_double(c, e.score);
        }
        if (where == POP_MAX) zset_del_rank(zs, len - 1 - (unsigned long)i, len - 1 - (unsigned long)i);
        else zset_del_rank(zs, 0, 0);
    }
    zkey_written(c, key, n, zs, k, NULL);
}

/* The first key of keys[0..nkeys) holding a non-empty set: 1 (with *idx,
 * *n, *zs set), 0 if none, -1 after a WRONGTYPE reply. */
static int first_nonempty(client *c, const span *keys, long long nkeys, long long *idx, dnode **n, zset **zs) {
    for (long long j = 0; j < nkeys; j++) {
        int r = zkey_lookup(c, keys[j], 1, n, zs);
        if (r < 0) return -1;
        if (r > 0 && zset_len(*zs)) {
            *idx = j;
            return 1;
        }
    }
    return 0;
}

/* ZPOPMIN / ZPOPMAX key [count] */
static void zpop_generic(client *c, int where) {
    long long count = -1;
    if (c->argc > 3) {
        reply_err_syntax(c);
        return;
    }
    if (c->argc == 3 && (!str_to_ll(c->argv[2].p, c->argv[2].len, &count) || count < 0)) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    dnode *n;
    zset *zs;
    int r = zkey_lookup(c, c->argv[1], 1, &n, &zs);
    if (r < 0) return;
    if (r == 0 || count == 0) {
        reply_array(c, 0);
        return;
    }
    int shape = c->resp > 2 && count != -1 ? SHAPE_NESTED : SHAPE_FLAT;
    pop_from(c, c->argv[1], n, zs, where, count == -1 ? 1 : count, shape);
}

void cmd_zpopmin(client *c) { zpop_generic(c, POP_MIN); }
void cmd_zpopmax(client *c) { zpop_generic(c, POP_MAX); }

/* The blocking pop: serve from the first key holding a sorted set, or
 * block. When blocking.c re-runs the command because a key was signalled,
 * only that key is looked at, and a key of another type leaves the client
 * blocked (Redis 7.0 serves the ready key). timeout_idx: argv index of the
 * timeout; count -1: BZPOP* (flat reply). */
static void bpop_generic(client *c, const span *keys, long long nkeys, int where, int timeout_idx, long long count) {
    int64_t deadline;
    if (!blocking_parse_timeout(c, c->argv[timeout_idx], &deadline)) return;
    span ready;
    int serving = blocking_serving_key(c, &ready);
    for (long long j = 0; j < nkeys; j++) {
        span key = keys[j];
        if (serving && (key.len != ready.len || memcmp(key.p, ready.p, key.len) != 0)) continue;
        dnode *n = db_lookup_write(c->db, key.p, key.len);
        if (!n) continue;
        if (n->type != OBJ_ZSET) {
            if (serving) break;
            reply_err_wrongtype(c);
            return;
        }
        int shape = count == -1 ? SHAPE_KEY_FLAT : SHAPE_KEY_NESTED;
        char num[24];
        span effect[3] = {where == POP_MIN ? (span){"ZPOPMIN", 7} : (span){"ZPOPMAX", 7}, key,
                          {num, ll_to_str(num, count == -1 ? 1 : count)}};
        prop_rewrite(c, 3, effect); /* a served blocking pop, as the plain pop */
        pop_from(c, key, n, zset_of(n), where, count == -1 ? 1 : count, shape);
        return;
    }
    if (!serving && !blocking_allowed(c)) {
        reply_null_array(c);
        return;
    }
    block_for_keys(c, keys, (int)nkeys, deadline, BLOCK_NULL_ARRAY);
}

void cmd_bzpopmin(client *c) { bpop_generic(c, c->argv + 1, c->argc - 2, POP_MIN, c->argc - 1, -1); }
void cmd_bzpopmax(client *c) { bpop_generic(c, c->argv + 1, c->argc - 2, POP_MAX, c->argc - 1, -1); }

/* [B]ZMPOP [timeout] numkeys key [key ...] MIN|MAX [COUNT count] */
static void zmpop_generic(client *c, int numkeys_idx, int blocking) {
    long long numkeys, count = -1;
    int where;
    span nk = c->argv[numkeys_idx];
    if (!str_to_ll(nk.p, nk.len, &numkeys) || numkeys < 1) {
        reply_error(c, "ERR numkeys should be greater than 0");
        return;
    }
    if (numkeys >= c->argc - numkeys_idx - 1) {
        reply_err_syntax(c);
        return;
    }
    int where_idx = numkeys_idx + (int)numkeys + 1;
    if (zopt_is(c->argv[where_idx], "min")) where = POP_MIN;
    else if (zopt_is(c->argv[where_idx], "max")) where = POP_MAX;
    else {
        reply_err_syntax(c);
        return;
    }
    for (int j = where_idx + 1; j < c->argc; j++) {
        if (count == -1 && zopt_is(c->argv[j], "count") && j + 1 < c->argc) {
            j++;
            if (!str_to_ll(c->argv[j].p, c->argv[j].len, &count) || count < 1) {
                reply_error(c, "ERR count should be greater than 0");
                return;
            }
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (count == -1) count = 1;
    const span *keys = c->argv + numkeys_idx + 1;
    if (blocking) {
        bpop_generic(c, keys, numkeys, where, 1, count);
        return;
    }
    long long idx;
    dnode *n;
    zset *zs;
    int r = first_nonempty(c, keys, numkeys, &idx, &n, &zs);
    if (r < 0) return;
    if (r == 0) reply_null_array(c);
    else pop_from(c, keys[idx], n, zs, where, count, SHAPE_KEY_NESTED);
}

void cmd_zmpop(client *c) { zmpop_generic(c, 1, 0); }
void cmd_bzmpop(client *c) { zmpop_generic(c, 2, 1); }

/* ---- ZRANDMEMBER ------------------------------------------------------------ */

static void reply_rand_elem(client *c, const zset *zs, unsigned long rank, int withscores) {
    zelem e;
    e.m = zset_at(zs, rank, &e.len, &e.score);
    if (withscores && c->resp > 2) {
        reply_zelem_pair(c, &e);
        return;
    }
    reply_bulk(c, e.m, e.len);
    if (withscores) reply_double(c, e.score);
}

static int cmp_ul(const void *a, const void *b) {
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return x < y ? -1 : x > y;
}

/* count distinct ranks out of size (count < size), in random order. */
static unsigned long *distinct_ranks(unsigned long count, unsigned long size) {
    unsigned long *v = zmalloc(sizeof *v * count);
    if (count * 3 > size) { /* dense: partial Fisher-Yates over all ranks */
        unsigned long *all = zmalloc(sizeof *all * size);
        for (unsigned long i = 0; i < size; i++) all[i] = i;
        for (unsigned long i = 0; i < count; i++) {
            unsigned long j = i + (unsigned long)frand_below(size - i), t = all[i];
            all[i] = all[j];
            all[j] = t;
            v[i] = all[i];
        }
        zfree(all);
        return v;
    }
    unsigned long have = 0; /* sparse: draw, sort, dedupe until enough */
    while (have < count) {
        for (unsigned long i = have; i < count; i++) v[i] = (unsigned long)frand_below(size);
        qsort(v, count, sizeof *v, cmp_ul);
        have = 0;
        for (unsigned long i = 0; i < count; i++)
            if (i == 0 || v[i] != v[have - 1]) v[have++] = v[i];
    }
    for (unsigned long i = count - 1; i > 0; i--) { /* shuffle the sorted picks */
        unsigned long j = (unsigned long)frand_below(i + 1), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    return v;
}

static void zrandmember_count(client *c, long long l, int withscores) {
    zset *zs;
    int r = zkey_lookup(c, c->argv[1], 0, NULL, &zs);
    if (r < 0) return;
    if (r == 0 || l == 0) {
        reply_array(c, 0);
        return;
    }
    unsigned long size = zset_len(zs), count = l < 0 ? (unsigned long)-l : (unsigned long)l;
    int pairs_flat = withscores && c->resp == 2;
    if (l < 0 || count == 1) { /* with repetitions */
        reply_array(c, (long)(pairs_flat ? count * 2 : count));
        for (unsigned long i = 0; i < count; i++) reply_rand_elem(c, zs, (unsigned long)frand_below(size), withscores);
        return;
    }
    if (count >= size) { /* the whole set */
        reply_array(c, (long)(pairs_flat ? size * 2 : size));
        for (unsigned long i = 0; i < size; i++) reply_rand_elem(c, zs, i, withscores);
        return;
    }
    unsigned long *ranks = distinct_ranks(count, size);
    reply_array(c, (long)(pairs_flat ? count * 2 : count));
    for (unsigned long i = 0; i < count; i++) reply_rand_elem(c, zs, ranks[i], withscores);
    zfree(ranks);
}

void cmd_zrandmember(client *c) {
    if (c->argc >= 3) {
        long long l;
        if (!str_to_ll(c->argv[2].p, c->argv[2].len, &l)) {
            reply_err_notint(c);
            return;
        }
        if (l < -LLONG_MAX) {
            reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and "
                           "9223372036854775807");
            return;
        }
        if (c->argc > 4 || (c->argc == 4 && !zopt_is(c->argv[3], "withscores"))) {
            reply_err_syntax(c);
            return;
        }
        if (c->argc == 4 && (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2)) {
            reply_error(c, "ERR value is out of range");
            return;
        }
        zrandmember_count(c, l, c->argc == 4);
        return;
    }
    zset *zs;
    int r = zkey_lookup(c, c->argv[1], 0, NULL, &zs);
    if (r < 0) return;
    if (r == 0) {
        reply_null(c);
        return;
    }
    reply_rand_elem(c, zs, (unsigned long)frand_below(zset_len(zs)), 0);
}

/* ---- ZSCAN ------------------------------------------------------------------ */

static void scan_collect(void *ud, const char *m, size_t len, double score) { zelems_push(ud, m, len, score); }

void cmd_zscan(client *c) {
    unsigned long cursor;
    if (!str_to_scan_cursor(c->argv[2].p, c->argv[2].len, &cursor)) {
        reply_error(c, "ERR invalid cursor");
        return;
    }
    zset *zs;
    int r = zkey_lookup(c, c->argv[1], 0, NULL, &zs);
    if (r < 0) return;
    if (r == 0) {
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        reply_array(c, 0);
        return;
    }
    long long count = 10;
    span pat = {NULL, 0};
    for (int i = 3; i < c->argc; i += 2) {
        int more = i + 1 < c->argc;
        if (zopt_is(c->argv[i], "count") && more) {
            if (!str_to_ll(c->argv[i + 1].p, c->argv[i + 1].len, &count)) {
                reply_err_notint(c);
                return;
            }
            if (count < 1) {
                reply_err_syntax(c);
                return;
            }
        } else if (zopt_is(c->argv[i], "match") && more) {
            pat = c->argv[i + 1];
            if (pat.len == 1 && pat.p[0] == '*') pat.p = NULL;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    zelems el;
    zelems_init(&el);
    if (zs->lp) { /* small form: everything at once */
        zs_iter it;
        for (zs_iter_rank(&it, zs, 0, 0); zs_iter_valid(&it); zs_iter_next(&it)) {
            size_t len;
            const char *m = zs_iter_member(&it, &len);
            zelems_push(&el, m, len, zs_iter_score_of(&it));
        }
        cursor = 0;
    } else {
        long long maxiter = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
        do {
            cursor = zset_scan(zs, cursor, scan_collect, &el);
        } while (cursor && maxiter-- && el.n < (unsigned long long)count);
    }
    size_t kept = 0;
    for (size_t i = 0; i < el.n; i++)
        if (!pat.p || glob_match(pat.p, pat.len, el.v[i].m, el.v[i].len, 0)) el.v[kept++] = el.v[i];
    char buf[32];
    reply_array(c, 2);
    reply_bulk(c, buf, ull_to_str(buf, cursor));
    reply_array(c, (long)(2 * kept));
    for (size_t i = 0; i < kept; i++) {
        reply_bulk(c, el.v[i].m, el.v[i].len);
        /* the small form returns the stored text, the large one %.17g */
        size_t n = zs->lp ? zset_score_str(buf, el.v[i].score) : d_to_str(buf, sizeof buf, el.v[i].score);
        reply_bulk(c, buf, n);
    }
    zelems_free(&el);
}
