/* cmd_list.c - the list commands: LPUSH/RPUSH(X), LPOP/RPOP, LLEN, LRANGE,
 * LINDEX, LSET, LINSERT, LREM, LTRIM, LPOS, LMOVE/RPOPLPUSH, LMPOP and the
 * blocking BLPOP/BRPOP/BLMOVE/BRPOPLPUSH/BLMPOP.
 *
 * Replies, error texts and the order in which arguments and keys are
 * checked follow Redis 7.0 byte for byte. Values are t_list.h lists stored
 * as OBJ_LIST keys; OBJECT ENCODING says "quicklist" for every list, as
 * Redis 7.0 does. A list that becomes empty is deleted; a list key that is
 * created signals blocked clients (blocking.h), as Redis's dbAdd does.
 *
 * Blocking commands that find nothing call block_for_keys(); when a key is
 * signalled they are run again, and then look at the signalled key only
 * (blocking_serving_key), keeping the client blocked if it holds no list.
 */
#include <limits.h>
#include <string.h>
#include "blocking.h"
#include "client.h"
#include "command.h"
#include "db.h"
#include "multi.h"
#include "notify.h"
#include "propagate.h"
#include "reply.h"
#include "server.h"
#include "t_list.h"
#include "util.h"
#include "zmalloc.h"

#define LIST_MAX_ITEM_SIZE ((1ull << 32) - 1024)

/* ---- helpers ----------------------------------------------------------- */

/* Redis compares option words as C strings: an embedded NUL ends them. */
static int opt_is(span s, const char *lit) {
    const char *z = memchr(s.p, 0, s.len);
    span t = {s.p, z ? (size_t)(z - s.p) : s.len};
    return span_eq_nocase(t, lit);
}

static int span_same(span a, span b) { return a.len == b.len && memcmp(a.p, b.p, a.len) == 0; }

static tlist *list_of(const dnode *n) { return dn_ptr(n); }

static void written(client *c, span key, long long dirty) {
    touch_watched_key(c->db, key.p, key.len);
    srv.dirty += dirty;
}

/* The list at key for writing: 1 found, 0 missing, -1 wrong type (replied). */
static int lookup_list(client *c, span key, int read, dnode **out) {
    dnode *n = read ? db_lookup_read(c->db, key.p, key.len) : db_lookup_write(c->db, key.p, key.len);
    *out = n;
    if (!n) return 0;
    if (n->type != OBJ_LIST) {
        reply_err_wrongtype(c);
        return -1;
    }
    return 1;
}

static tlist *create_list(client *c, span key, tlist *l) {
    db_add_ptr(c->db, key.p, key.len, OBJ_LIST, ENC_QUICKLIST, l, -1);
    signal_key_ready(c->db, key.p, key.len);
    return l;
}

static void notify_list(client *c, const char *event, span key) {
    notify_key(NOTIFY_LIST, event, c->db->id, key);
}

static const char *push_event(int where) { return where == TL_HEAD ? "lpush" : "rpush"; }

static void delete_if_empty(client *c, span key, tlist *l) {
    if (tl_len(l) != 0) return;
    db_delete(c->db, key.p, key.len);
    notify_key(NOTIFY_GENERIC, "del", c->db->id, key);
}

/* After elements were popped from one end: "lpop"/"rpop", then "del" if
 * the list is now empty (Redis's listElementsRemoved). */
static void popped(client *c, span key, tlist *l, int where) {
    notify_list(c, where == TL_HEAD ? "lpop" : "rpop", key);
    delete_if_empty(c, key, l);
}

static int get_ll(client *c, span s, long long *v) {
    if (str_to_ll(s.p, s.len, v)) return 1;
    reply_err_notint(c);
    return 0;
}

/* LEFT / RIGHT -> TL_HEAD / TL_TAIL; syntax error otherwise. */
static int get_where(client *c, span s, int *where) {
    if (opt_is(s, "left")) *where = TL_HEAD;
    else if (opt_is(s, "right")) *where = TL_TAIL;
    else {
        reply_err_syntax(c);
        return 0;
    }
    return 1;
}

static int elements_fit(client *c, int from) {
    for (int j = from; j < c->argc; j++) {
        if (c->argv[j].len > LIST_MAX_ITEM_SIZE) {
            reply_error(c, "ERR Element too large");
            return 0;
        }
    }
    return 1;
}

static void reply_elem(client *c, const tl_elem *e) { reply_bulk(c, e->p, e->len); }

/* Reply n elements from one end, in pop order, then remove them. */
static void pop_range_reply(client *c, tlist *l, int where, size_t n) {
    tl_iter it;
    tl_elem e;
    reply_array(c, (long)n);
    tl_iter_init(&it, l, where == TL_HEAD ? 0 : tl_len(l) - 1, where == TL_HEAD ? TL_TAIL : TL_HEAD);
    for (size_t i = 0; i < n && tl_iter_next(&it, &e); i++) reply_elem(c, &e);
    tl_pop_n(l, where, n);
}

/* ---- push ------------------------------------------------------------------ */

static void push_generic(client *c, int where, int xx) {
    if (!elements_fit(c, 2)) return;
    span key = c->argv[1];
    dnode *n;
    int r = lookup_list(c, key, 0, &n);
    if (r < 0) return;
    tlist *l;
    if (r == 0) {
        if (xx) {
            reply_int(c, 0);
            return;
        }
        size_t bytes = 0;
        for (int j = 2; j < c->argc; j++) bytes += c->argv[j].len;
        l = create_list(c, key, tl_new_reserved(where, (size_t)(c->argc - 2), bytes));
    } else {
        l = list_of(n);
    }
    for (int j = 2; j < c->argc; j++) tl_push(l, where, c->argv[j].p, c->argv[j].len);
    reply_int(c, (long long)tl_len(l));
    written(c, key, c->argc - 2);
    notify_list(c, push_event(where), key);
}

static void cmd_lpush(client *c) { push_generic(c, TL_HEAD, 0); }
static void cmd_rpush(client *c) { push_generic(c, TL_TAIL, 0); }
static void cmd_lpushx(client *c) { push_generic(c, TL_HEAD, 1); }
static void cmd_rpushx(client *c) { push_generic(c, TL_TAIL, 1); }

/* ---- pop ------------------------------------------------------------------------ */

static void pop_generic(client *c, int where) {
    long long count = 0;
    int hascount = c->argc == 3;
    if (c->argc > 3) {
        reply_errorf(c, "ERR wrong number of arguments for '%s' command", c->cmd->fullname);
        return;
    }
    if (hascount && (!str_to_ll(c->argv[2].p, c->argv[2].len, &count) || count < 0)) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    span key = c->argv[1];
    dnode *n;
    int r = lookup_list(c, key, 0, &n);
    if (r < 0) return;
    if (r == 0) {
        if (hascount) reply_null_array(c);
        else reply_null(c);
        return;
    }
    tlist *l = list_of(n);
    if (hascount && count == 0) {
        reply_array(c, 0);
        return;
    }
    if (!hascount) {
        tl_elem e;
        tl_peek(l, where, &e);
        reply_elem(c, &e);
        tl_pop_n(l, where, 1);
        count = 1;
    } else {
        if ((unsigned long long)count > tl_len(l)) count = (long long)tl_len(l);
        pop_range_reply(c, l, where, (size_t)count);
    }
    popped(c, key, l, where);
    written(c, key, count);
}

static void cmd_lpop(client *c) { pop_generic(c, TL_HEAD); }
static void cmd_rpop(client *c) { pop_generic(c, TL_TAIL); }

/* ---- read commands ---------------------------------------------------------------- */

static void cmd_llen(client *c) {
    dnode *n;
    int r = lookup_list(c, c->argv[1], 1, &n);
    if (r < 0) return;
    reply_int(c, r ? (long long)tl_len(list_of(n)) : 0);
}

/* Redis's start/end clamping; 0 if the range is empty. */
static int clamp_range(long long len, long long *start, long long *end) {
    if (*start < 0) *start += len;
    if (*end < 0) *end += len;
    if (*start < 0) *start = 0;
    if (*start > *end || *start >= len) return 0;
    if (*end >= len) *end = len - 1;
    return 1;
}

static void cmd_lrange(client *c) {
    long long start, end;
    if (!get_ll(c, c->argv[2], &start) || !get_ll(c, c->argv[3], &end)) return;
    dnode *n;
    int r = lookup_list(c, c->argv[1], 1, &n);
    if (r < 0) return;
    if (r == 0) {
        reply_array(c, 0);
        return;
    }
    tlist *l = list_of(n);
    if (!clamp_range((long long)tl_len(l), &start, &end)) {
        reply_array(c, 0);
        return;
    }
    long long cnt = end - start + 1;
    tl_iter it;
    tl_elem e;
    reply_array(c, (long)cnt);
    tl_iter_init(&it, l, (size_t)start, TL_TAIL);
    for (long long i = 0; i < cnt && tl_iter_next(&it, &e); i++) reply_elem(c, &e);
}

static void cmd_lindex(client *c) {
    dnode *n;
    int r = lookup_list(c, c->argv[1], 1, &n);
    if (r < 0) return;
    if (r == 0) {
        reply_null(c);
        return;
    }
    long long index;
    if (!get_ll(c, c->argv[2], &index)) return;
    tl_elem e;
    if (tl_index(list_of(n), index, &e)) reply_elem(c, &e);
    else reply_null(c);
}

/* ---- in-place edits ---------------------------------------------------------------- */

static void cmd_lset(client *c) {
    if (!elements_fit(c, 3)) return;
    span key = c->argv[1];
    dnode *n;
    int r = lookup_list(c, key, 0, &n);
    if (r < 0) return;
    if (r == 0) {
        reply_error(c, "ERR no such key");
        return;
    }
    long long index;
    if (!get_ll(c, c->argv[2], &index)) return;
    if (!tl_set(list_of(n), index, c->argv[3].p, c->argv[3].len)) {
        reply_error(c, "ERR index out of range");
        return;
    }
    reply_ok(c);
    written(c, key, 1);
    notify_list(c, "lset", key);
}

static void cmd_linsert(client *c) {
    int after;
    if (opt_is(c->argv[2], "after")) after = 1;
    else if (opt_is(c->argv[2], "before")) after = 0;
    else {
        reply_err_syntax(c);
        return;
    }
    if (!elements_fit(c, 4)) return;
    span key = c->argv[1];
    dnode *n;
    int r = lookup_list(c, key, 0, &n);
    if (r <= 0) {
        if (r == 0) reply_int(c, 0);
        return;
    }
    tlist *l = list_of(n);
    tl_needle pivot;
    tl_needle_init(&pivot, c->argv[3].p, c->argv[3].len);
    tl_iter it;
    tl_iter_init(&it, l, 0, TL_TAIL);
    while (tl_iter_next(&it, NULL)) {
        if (tl_iter_eq(&it, &pivot)) {
            tl_iter_insert(&it, after, c->argv[4].p, c->argv[4].len);
            written(c, key, 1);
            notify_list(c, "linsert", key);
            reply_int(c, (long long)tl_len(l));
            return;
        }
    }
    reply_int(c, -1);
}

static void cmd_lrem(client *c) {
    long long toremove;
    if (!get_ll(c, c->argv[2], &toremove)) return;
    span key = c->argv[1];
    dnode *n;
    int r = lookup_list(c, key, 0, &n);
    if (r <= 0) {
        if (r == 0) reply_int(c, 0);
        return;
    }
    tlist *l = list_of(n);
    int dir = toremove < 0 ? TL_HEAD : TL_TAIL;
    /* |LLONG_MIN| does not fit: Redis's negation wraps and never matches a count */
    unsigned long long limit = toremove < 0 ? 0ULL - (unsigned long long)toremove : (unsigned long long)toremove;
    if (toremove == LLONG_MIN) limit = 0;
    tl_needle nd;
    tl_needle_init(&nd, c->argv[3].p, c->argv[3].len);
    tl_iter it;
    tl_iter_init(&it, l, dir == TL_TAIL ? 0 : tl_len(l) - 1, dir);
    long long removed = 0;
    while (tl_iter_next(&it, NULL)) {
        if (!tl_iter_eq(&it, &nd)) continue;
        tl_iter_delete(&it);
        removed++;
        if (limit && (unsigned long long)removed == limit) break;
    }
    if (removed) {
        written(c, key, removed);
        tl_tidy(l);
        notify_list(c, "lrem", key);
    }
    delete_if_empty(c, key, l);
    reply_int(c, removed);
}

static void cmd_ltrim(client *c) {
    long long start, end;
    if (!get_ll(c, c->argv[2], &start) || !get_ll(c, c->argv[3], &end)) return;
    span key = c->argv[1];
    dnode *n;
    int r = lookup_list(c, key, 0, &n);
    if (r <= 0) {
        if (r == 0) reply_ok(c);
        return;
    }
    tlist *l = list_of(n);
    long long len = (long long)tl_len(l), ltrim, rtrim;
    if (!clamp_range(len, &start, &end)) {
        ltrim = len;
        rtrim = 0;
    } else {
        ltrim = start;
        rtrim = len - end - 1;
    }
    tl_pop_n(l, TL_HEAD, (size_t)ltrim);
    tl_pop_n(l, TL_TAIL, (size_t)rtrim);
    notify_list(c, "ltrim", key);
    delete_if_empty(c, key, l);
    written(c, key, ltrim + rtrim);
    reply_ok(c);
}

/* ---- LPOS ---------------------------------------------------------------------------- */

#define RANK_ZERO_ERR                                                                                             \
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to "      \
    "start from the end of the list"

typedef struct lpos_opts {
    long long rank, count, maxlen; /* count -1: not given */
} lpos_opts;

static int nonneg_opt(client *c, span s, long long *v, const char *err) {
    if (!str_to_ll(s.p, s.len, v) || *v < 0) {
        reply_error(c, err);
        return 0;
    }
    return 1;
}

static int lpos_parse(client *c, lpos_opts *o) {
    o->rank = 1;
    o->count = -1;
    o->maxlen = 0;
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (opt_is(c->argv[j], "rank") && more) {
            if (!get_ll(c, c->argv[++j], &o->rank)) return 0;
            if (o->rank == 0) {
                reply_error(c, RANK_ZERO_ERR);
                return 0;
            }
        } else if (opt_is(c->argv[j], "count") && more) {
            if (!nonneg_opt(c, c->argv[++j], &o->count, "ERR COUNT can't be negative")) return 0;
        } else if (opt_is(c->argv[j], "maxlen") && more) {
            if (!nonneg_opt(c, c->argv[++j], &o->maxlen, "ERR MAXLEN can't be negative")) return 0;
        } else {
            reply_err_syntax(c);
            return 0;
        }
    }
    return 1;
}

/* Has the scan reached the number of matches COUNT asks for? Redis computes
 * matches-rank+1 in wrapping arithmetic (rank LLONG_MIN never gets there). */
static int lpos_enough(long long matches, long long rank, long long count) {
    long long got = (long long)((unsigned long long)matches - (unsigned long long)rank + 1ULL);
    return count && got >= count;
}

static void cmd_lpos(client *c) {
    lpos_opts o;
    if (!lpos_parse(c, &o)) return;
    int dir = TL_TAIL;
    long long rank = o.rank;
    if (rank < 0) {
        rank = (long long)(0ULL - (unsigned long long)rank); /* LLONG_MIN stays negative, as in Redis */
        dir = TL_HEAD;
    }
    dnode *n;
    int r = lookup_list(c, c->argv[1], 1, &n);
    if (r < 0) return;
    if (r == 0) {
        if (o.count != -1) reply_array(c, 0);
        else reply_null(c);
        return;
    }
    tlist *l = list_of(n);
    long long len = (long long)tl_len(l), index = 0, matches = 0, found = -1, nfound = 0;
    tl_needle nd;
    tl_needle_init(&nd, c->argv[2].p, c->argv[2].len);
    tl_iter it;
    tl_iter_init(&it, l, dir == TL_TAIL ? 0 : (size_t)len - 1, dir);
    long long *hits = NULL;
    size_t hcap = 0;
    while ((o.maxlen == 0 || index < o.maxlen) && tl_iter_next(&it, NULL)) {
        if (tl_iter_eq(&it, &nd)) {
            matches++;
            long long pos = dir == TL_TAIL ? index : len - index - 1;
            if (matches >= rank) {
                if (o.count == -1) {
                    found = pos;
                    break;
                }
                if ((size_t)nfound == hcap) {
                    hcap = hcap ? hcap * 2 : 16;
                    hits = zrealloc(hits, hcap * sizeof *hits);
                }
                hits[nfound++] = pos;
                if (lpos_enough(matches, rank, o.count)) break;
            }
        }
        index++;
    }
    if (o.count == -1) {
        if (found >= 0) reply_int(c, found);
        else reply_null(c);
        return;
    }
    reply_array(c, (long)nfound);
    for (long long i = 0; i < nfound; i++) reply_int(c, hits[i]);
    zfree(hits);
}

/* ---- LMOVE ------------------------------------------------------------------------------ */

/* Pop from src (a non-empty list) and push to dst; reply the element. */
static void move_one(client *c, dnode *sn, span src, span dst, int wf, int wt) {
    dnode *dn = db_lookup_write(c->db, dst.p, dst.len);
    if (dn && dn->type != OBJ_LIST) {
        reply_err_wrongtype(c);
        return;
    }
    tlist *sl = list_of(sn);
    tl_elem e;
    tl_peek(sl, wf, &e);
    char small[128];
    char *val = e.len <= sizeof small ? small : zmalloc(e.len);
    size_t vlen = e.len;
    memcpy(val, e.p, vlen);
    tl_pop_n(sl, wf, 1);
    tlist *dl = dn ? list_of(dn) : create_list(c, dst, tl_new());
    touch_watched_key(c->db, dst.p, dst.len);
    tl_push(dl, wt, val, vlen);
    notify_list(c, push_event(wt), dst);
    reply_bulk(c, val, vlen);
    if (val != small) zfree(val);
    popped(c, src, sl, wf);
    written(c, src, 1);
}

static void lmove_generic(client *c, span src, span dst, int wf, int wt) {
    dnode *sn;
    int r = lookup_list(c, src, 0, &sn);
    if (r < 0) return;
    if (r == 0) {
        reply_null(c);
        return;
    }
    move_one(c, sn, src, dst, wf, wt);
}

static void cmd_lmove(client *c) {
    int wf, wt;
    if (!get_where(c, c->argv[3], &wf) || !get_where(c, c->argv[4], &wt)) return;
    lmove_generic(c, c->argv[1], c->argv[2], wf, wt);
}

static void cmd_rpoplpush(client *c) { lmove_generic(c, c->argv[1], c->argv[2], TL_TAIL, TL_HEAD); }

/* ---- LMPOP ---------------------------------------------------------------------------------- */

typedef struct mpop_args {
    long long numkeys, count;
    int first_key;
    int where;
} mpop_args;

/* numkeys at argv[idx], the keys, LEFT|RIGHT, [COUNT n]. */
static int mpop_parse(client *c, int idx, mpop_args *a) {
    if (!str_to_ll(c->argv[idx].p, c->argv[idx].len, &a->numkeys) || a->numkeys < 1) {
        reply_error(c, "ERR numkeys should be greater than 0");
        return 0;
    }
    if (a->numkeys >= c->argc - idx - 1) {
        reply_err_syntax(c);
        return 0;
    }
    int where_idx = idx + (int)a->numkeys + 1;
    if (!get_where(c, c->argv[where_idx], &a->where)) return 0;
    a->first_key = idx + 1;
    a->count = -1;
    for (int j = where_idx + 1; j < c->argc; j++) {
        if (a->count == -1 && opt_is(c->argv[j], "count") && j + 1 < c->argc) {
            j++;
            if (!str_to_ll(c->argv[j].p, c->argv[j].len, &a->count) || a->count < 1) {
                reply_error(c, "ERR count should be greater than 0");
                return 0;
            }
        } else {
            reply_err_syntax(c);
            return 0;
        }
    }
    if (a->count == -1) a->count = 1;
    return 1;
}

/* [key, [elements]] popped from the non-empty list at key. */
static void mpop_reply(client *c, span key, tlist *l, int where, long long count) {
    size_t n = (unsigned long long)count > tl_len(l) ? tl_len(l) : (size_t)count;
    reply_array(c, 2);
    reply_bulk_span(c, key);
    pop_range_reply(c, l, where, n);
    popped(c, key, l, where);
    written(c, key, (long long)n);
}

static void cmd_lmpop(client *c) {
    mpop_args a;
    if (!mpop_parse(c, 1, &a)) return;
    for (long long j = 0; j < a.numkeys; j++) {
        span key = c->argv[a.first_key + j];
        dnode *n;
        int r = lookup_list(c, key, 0, &n);
        if (r < 0) return;
        if (r == 0) continue;
        mpop_reply(c, key, list_of(n), a.where, a.count);
        return;
    }
    reply_null_array(c);
}

/* ---- blocking ---------------------------------------------------------------------------------- */

/* A served blocking pop is propagated as the plain pop it made (n: its
 * count, 0 for none). */
static void pop_effect(client *c, span key, int where, size_t n) {
    char num[24];
    span argv[3] = {where == TL_HEAD ? (span){"LPOP", 4} : (span){"RPOP", 4}, key, {num, 0}};
    if (n) argv[2].len = ull_to_str(num, n);
    prop_rewrite(c, n ? 3 : 2, argv);
}

/* Pop from the first non-empty list among keys (or, when re-run for a ready
 * key, from that key only); else block. count -1: BLPOP's [key, element]
 * reply; else BLMPOP's [key, [elements]]. */
static void bpop_keys(client *c, span *keys, int nkeys, int where, long long count, int64_t deadline) {
    span ready;
    int serving = blocking_serving_key(c, &ready);
    for (int j = 0; j < nkeys; j++) {
        span key = keys[j];
        if (serving && !span_same(key, ready)) continue;
        dnode *n = db_lookup_write(c->db, key.p, key.len);
        if (!n) continue;
        if (n->type != OBJ_LIST) {
            if (serving) break; /* Redis 7.0 leaves it blocked */
            reply_err_wrongtype(c);
            return;
        }
        tlist *l = list_of(n);
        pop_effect(c, key, where, count == -1 ? 0 : (size_t)count > tl_len(l) ? tl_len(l) : (size_t)count);
        if (count != -1) {
            mpop_reply(c, key, l, where, count);
            return;
        }
        tl_elem e;
        tl_peek(l, where, &e);
        reply_array(c, 2);
        reply_bulk_span(c, key);
        reply_elem(c, &e);
        tl_pop_n(l, where, 1);
        popped(c, key, l, where);
        written(c, key, 1);
        return;
    }
    if (!serving && !blocking_allowed(c)) {
        reply_null_array(c);
        return;
    }
    block_for_keys(c, keys, nkeys, deadline, BLOCK_NULL_ARRAY);
}

static void bpop_generic(client *c, int where) {
    int64_t deadline;
    if (!blocking_parse_timeout(c, c->argv[c->argc - 1], &deadline)) return;
    bpop_keys(c, c->argv + 1, c->argc - 2, where, -1, deadline);
}

static void cmd_blpop(client *c) { bpop_generic(c, TL_HEAD); }
static void cmd_brpop(client *c) { bpop_generic(c, TL_TAIL); }

static void cmd_blmpop(client *c) {
    mpop_args a;
    if (!mpop_parse(c, 2, &a)) return;
    int64_t deadline;
    if (!blocking_parse_timeout(c, c->argv[1], &deadline)) return;
    bpop_keys(c, c->argv + a.first_key, (int)a.numkeys, a.where, a.count, deadline);
}

/* Served, BLMOVE is propagated as LMOVE and BRPOPLPUSH as RPOPLPUSH (Redis 7.0). */
static void blmove_generic(client *c, int wf, int wt, int64_t deadline, int as_rpoplpush) {
    span src = c->argv[1];
    int serving = blocking_serving_key(c, &(span){0});
    dnode *n = db_lookup_write(c->db, src.p, src.len);
    if (n && n->type == OBJ_LIST) {
        span side[2] = {{"LEFT", 4}, {"RIGHT", 5}};
        span effect[5] = {{"LMOVE", 5}, src, c->argv[2], side[wf == TL_HEAD ? 0 : 1], side[wt == TL_HEAD ? 0 : 1]};
        if (as_rpoplpush) prop_rewrite(c, 3, (span[]){{"RPOPLPUSH", 9}, src, c->argv[2]});
        else prop_rewrite(c, 5, effect);
        move_one(c, n, src, c->argv[2], wf, wt);
        return;
    }
    if (n && !serving) {
        reply_err_wrongtype(c);
        return;
    }
    if (!serving && !blocking_allowed(c)) {
        reply_null(c);
        return;
    }
    block_for_keys(c, &c->argv[1], 1, deadline, BLOCK_NULL_ARRAY);
}

static void cmd_blmove(client *c) {
    int wf, wt;
    int64_t deadline;
    if (!get_where(c, c->argv[3], &wf) || !get_where(c, c->argv[4], &wt)) return;
    if (!blocking_parse_timeout(c, c->argv[5], &deadline)) return;
    blmove_generic(c, wf, wt, deadline, 0);
}

static void cmd_brpoplpush(client *c) {
    int64_t deadline;
    if (!blocking_parse_timeout(c, c->argv[3], &deadline)) return;
    blmove_generic(c, TL_TAIL, TL_HEAD, deadline, 1);
}

/* ---- type hooks ---------------------------------------------------------------------------------- */


/* ---- table ---------------------------------------------------------------------------------------- */

#define W CMD_WRITE
#define WD (CMD_WRITE | CMD_DENYOOM)
#define WDF (CMD_WRITE | CMD_DENYOOM | CMD_FAST)
#define RO CMD_READONLY
#define PUSH_CX                                                                                                    \
    "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."
#define BLOCK_FL (CMD_WRITE | CMD_NOSCRIPT | CMD_BLOCKING)

static command list_commands[] = {
    CMD("blmove", cmd_blmove, 6, .flags = BLOCK_FL | CMD_DENYOOM, .acl = "write list slow blocking", CMD_KEYS(1, 2, 1),
        .summary = "Pop an element from a list, push it to another list and return it; or block until one is "
            "available", .since = "6.2.0", .complexity = "O(1)"),
    CMD("blmpop", cmd_blmpop, -5, .flags = CMD_WRITE | CMD_BLOCKING | CMD_MOVABLE_KEYS,
        .acl = "write list slow blocking", .summary = "Pop elements from a list, or block until one is available",
        .since = "7.0.0",
        .complexity = "O(N+M) where N is the number of provided keys and M is the number of elements returned."),
    CMD("blpop", cmd_blpop, -3, .flags = BLOCK_FL, .acl = "write list slow blocking", CMD_KEYS(1, -2, 1),
        .summary = "Remove and get the first element in a list, or block until one is available", .since = "2.0.0",
        .complexity = "O(N) where N is the number of provided keys."),
    CMD("brpop", cmd_brpop, -3, .flags = BLOCK_FL, .acl = "write list slow blocking", CMD_KEYS(1, -2, 1),
        .summary = "Remove and get the last element in a list, or block until one is available", .since = "2.0.0",
        .complexity = "O(N) where N is the number of provided keys."),
    CMD("brpoplpush", cmd_brpoplpush, 4, .flags = BLOCK_FL | CMD_DENYOOM, .acl = "write list slow blocking",
        CMD_KEYS(1, 2, 1),
        .summary = "Pop an element from a list, push it to another list and return it; or block until one is "
            "available", .since = "2.2.0", .complexity = "O(1)"),
    CMD("lindex", cmd_lindex, 3, .flags = RO, .acl = "read list slow", CMD_KEYS(1, 1, 1),
        .summary = "Get an element from a list by its index", .since = "1.0.0",
        .complexity = "O(N) where N is the number of elements to traverse to get to the element at index. "
            "This makes asking for the first or the last element of the list O(1)."),
    CMD("linsert", cmd_linsert, 5, .flags = WD, .acl = "write list slow", CMD_KEYS(1, 1, 1),
        .summary = "Insert an element before or after another element in a list", .since = "2.2.0",
        .complexity = "O(N) where N is the number of elements to traverse before seeing the value pivot. This "
            "means that inserting somewhere on the left end on the list (head) can be considered O(1) and "
            "inserting somewhere on the right end (tail) is O(N)."),
    CMD("llen", cmd_llen, 2, .flags = RO | CMD_FAST, .acl = "read list fast", CMD_KEYS(1, 1, 1),
        .summary = "Get the length of a list", .since = "1.0.0", .complexity = "O(1)"),
    CMD("lmove", cmd_lmove, 5, .flags = WD, .acl = "write list slow", CMD_KEYS(1, 2, 1),
        .summary = "Pop an element from a list, push it to another list and return it", .since = "6.2.0",
        .complexity = "O(1)"),
    CMD("lmpop", cmd_lmpop, -4, .flags = W | CMD_MOVABLE_KEYS, .acl = "write list slow",
        .summary = "Pop elements from a list", .since = "7.0.0",
        .complexity = "O(N+M) where N is the number of provided keys and M is the number of elements returned."),
    CMD("lpop", cmd_lpop, -2, .flags = W | CMD_FAST, .acl = "write list fast", CMD_KEYS(1, 1, 1),
        .summary = "Remove and get the first elements in a list", .since = "1.0.0",
        .complexity = "O(N) where N is the number of elements returned"),
    CMD("lpos", cmd_lpos, -3, .flags = RO, .acl = "read list slow", CMD_KEYS(1, 1, 1),
        .summary = "Return the index of matching elements on a list", .since = "6.0.6",
        .complexity = "O(N) where N is the number of elements in the list, for the average case. When "
            "searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, "
            "the command may run in constant time."),
    CMD("lpush", cmd_lpush, -3, .flags = WDF, .acl = "write list fast", CMD_KEYS(1, 1, 1),
        .summary = "Prepend one or multiple elements to a list", .since = "1.0.0", .complexity = PUSH_CX),
    CMD("lpushx", cmd_lpushx, -3, .flags = WDF, .acl = "write list fast", CMD_KEYS(1, 1, 1),
        .summary = "Prepend an element to a list, only if the list exists", .since = "2.2.0", .complexity = PUSH_CX),
    CMD("lrange", cmd_lrange, 4, .flags = RO, .acl = "read list slow", CMD_KEYS(1, 1, 1),
        .summary = "Get a range of elements from a list", .since = "1.0.0",
        .complexity = "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest "
            "end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range."),
    CMD("lrem", cmd_lrem, 4, .flags = W, .acl = "write list slow", CMD_KEYS(1, 1, 1),
        .summary = "Remove elements from a list", .since = "1.0.0",
        .complexity = "O(N+M) where N is the length of the list and M is the number of elements removed."),
    CMD("lset", cmd_lset, 4, .flags = WD, .acl = "write list slow", CMD_KEYS(1, 1, 1),
        .summary = "Set the value of an element in a list by its index", .since = "1.0.0",
        .complexity = "O(N) where N is the length of the list. Setting either the first or the last element "
            "of the list is O(1)."),
    CMD("ltrim", cmd_ltrim, 4, .flags = W, .acl = "write list slow", CMD_KEYS(1, 1, 1),
        .summary = "Trim a list to the specified range", .since = "1.0.0",
        .complexity = "O(N) where N is the number of elements to be removed by the operation."),
    CMD("rpop", cmd_rpop, -2, .flags = W | CMD_FAST, .acl = "write list fast", CMD_KEYS(1, 1, 1),
        .summary = "Remove and get the last elements in a list", .since = "1.0.0",
        .complexity = "O(N) where N is the number of elements returned"),
    CMD("rpoplpush", cmd_rpoplpush, 3, .flags = WD, .acl = "write list slow", CMD_KEYS(1, 2, 1),
        .summary = "Remove the last element in a list, prepend it to another list and return it", .since = "1.2.0",
        .complexity = "O(1)"),
    CMD("rpush", cmd_rpush, -3, .flags = WDF, .acl = "write list fast", CMD_KEYS(1, 1, 1),
        .summary = "Append one or multiple elements to a list", .since = "1.0.0", .complexity = PUSH_CX),
    CMD("rpushx", cmd_rpushx, -3, .flags = WDF, .acl = "write list fast", CMD_KEYS(1, 1, 1),
        .summary = "Append an element to a list, only if the list exists", .since = "2.2.0", .complexity = PUSH_CX),
    {0},
};
const command_group list_group = {"list", list_commands};
