/* cmd_hash.c - the hash commands: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL,
 * HKEYS, HVALS, HDEL, HEXISTS, HLEN, HSTRLEN, HINCRBY, HINCRBYFLOAT,
 * HRANDFIELD and HSCAN, and the `hash_commands` table.
 *
 * The value type and its two encodings live in t_hash.c; this file parses
 * arguments, looks keys up the way Redis 7.0 does (reads count keyspace
 * hits/misses, writes do not), keeps the keyspace node's encoding in step
 * with the hash (OBJECT ENCODING), deletes a hash that becomes empty, and
 * replies byte for byte as Redis does, RESP2 and RESP3.
 */
#include <limits.h>
#include <math.h>
#include <string.h>
#include "client.h"
#include "command.h"
#include "db.h"
#include "multi.h"
#include "notify.h"
#include "propagate.h"
#include "reply.h"
#include "server.h"
#include "t_hash.h"
#include "util.h"
#include "zmalloc.h"

/* ---- lookups ------------------------------------------------------------ */

static span key_arg(client *c) { return c->argv[1]; }

/* The hash at argv[1] for a read: counts a hit or miss. Returns 0 after
 * replying WRONGTYPE; else 1 with *h NULL when the key does not exist. */
static int read_hash(client *c, hashobj **h) {
    span k = key_arg(c);
    dnode *n = db_lookup_read(c->db, k.p, k.len);
    *h = NULL;
    if (!n) return 1;
    if (n->type != OBJ_HASH) {
        reply_err_wrongtype(c);
        return 0;
    }
    *h = dn_ptr(n);
    return 1;
}

/* The keyspace node of the hash at argv[1] for a write (no stats). Returns
 * 0 after replying WRONGTYPE; else 1 with *n NULL when the key is absent. */
static int write_node(client *c, dnode **n) {
    span k = key_arg(c);
    *n = db_lookup_write(c->db, k.p, k.len);
    if (*n && (*n)->type != OBJ_HASH) {
        reply_err_wrongtype(c);
        return 0;
    }
    return 1;
}

/* The node of argv[1], creating an empty hash there if absent. */
static dnode *node_or_create(client *c, dnode *n) {
    if (n) return n;
    span k = key_arg(c);
    return db_add_ptr(c->db, k.p, k.len, OBJ_HASH, ENC_LISTPACK, hash_new(), -1);
}

/* After a write: OBJECT ENCODING follows the hash, WATCHers are told, and
 * the dirty counter moves by `changes` (Redis counts HSET per pair, HDEL
 * per field). */
static void written(client *c, dnode *n, long long changes) {
    if (n) n->enc = ((hashobj *)dn_ptr(n))->enc;
    touch_watched_key(c->db, key_arg(c).p, key_arg(c).len);
    srv.dirty += changes;
}

static void reply_hstr(client *c, hstr s) { reply_bulk(c, s.p, s.len); }

static void notify_hash(client *c, const char *event) { notify_key(NOTIFY_HASH, event, c->db->id, key_arg(c)); }

/* ---- HSET HMSET HSETNX ------------------------------------------------------ */

static void hset_generic(client *c, int is_hmset) {
    if (c->argc % 2) {
        reply_err_arity(c);
        return;
    }
    dnode *n;
    if (!write_node(c, &n)) return;
    n = node_or_create(c, n);
    hashobj *h = dn_ptr(n);
    size_t longest = 0, total = 0;
    for (int i = 2; i < c->argc; i++) {
        if (c->argv[i].len > longest) longest = c->argv[i].len;
        total += c->argv[i].len;
    }
    hash_prepare_write(h, longest, total);
    long long created = 0;
    for (int i = 2; i < c->argc; i += 2)
        created += hash_set(h, c->argv[i].p, c->argv[i].len, c->argv[i + 1].p, c->argv[i + 1].len);
    if (is_hmset) reply_ok(c);
    else reply_int(c, created);
    written(c, n, (c->argc - 2) / 2);
    notify_hash(c, "hset");
}

static void cmd_hset(client *c) { hset_generic(c, 0); }
static void cmd_hmset(client *c) { hset_generic(c, 1); }

static void cmd_hsetnx(client *c) {
    dnode *n;
    hstr v;
    span f = c->argv[2], val = c->argv[3];
    if (!write_node(c, &n)) return;
    if (n && hash_get(dn_ptr(n), f.p, f.len, &v)) {
        reply_int(c, 0);
        return;
    }
    n = node_or_create(c, n);
    hashobj *h = dn_ptr(n);
    hash_prepare_write(h, f.len > val.len ? f.len : val.len, f.len + val.len);
    hash_set(h, f.p, f.len, val.p, val.len);
    reply_int(c, 1);
    written(c, n, 1);
    notify_hash(c, "hset");
}

/* ---- single-field reads ----------------------------------------------------- */

static void reply_field(client *c, hashobj *h, span f) {
    hstr v;
    if (h && hash_get(h, f.p, f.len, &v)) reply_hstr(c, v);
    else reply_null(c);
}

static void cmd_hget(client *c) {
    hashobj *h;
    if (read_hash(c, &h)) reply_field(c, h, c->argv[2]);
}

static void cmd_hmget(client *c) {
    hashobj *h;
    if (!read_hash(c, &h)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) reply_field(c, h, c->argv[i]);
}

static void cmd_hexists(client *c) {
    hashobj *h;
    hstr v;
    if (read_hash(c, &h)) reply_int(c, h && hash_get(h, c->argv[2].p, c->argv[2].len, &v));
}

static void cmd_hstrlen(client *c) {
    hashobj *h;
    hstr v;
    if (!read_hash(c, &h)) return;
    reply_int(c, h && hash_get(h, c->argv[2].p, c->argv[2].len, &v) ? (long long)v.len : 0);
}

static void cmd_hlen(client *c) {
    hashobj *h;
    if (read_hash(c, &h)) reply_int(c, h ? (long long)hash_len(h) : 0);
}

/* ---- HDEL --------------------------------------------------------------- */

static void cmd_hdel(client *c) {
    dnode *n;
    if (!write_node(c, &n)) return;
    if (!n) {
        reply_int(c, 0);
        return;
    }
    hashobj *h = dn_ptr(n);
    long long deleted = 0;
    int removed = 0;
    for (int i = 2; i < c->argc; i++) {
        if (!hash_del(h, c->argv[i].p, c->argv[i].len)) continue;
        deleted++;
        if (hash_len(h) == 0) {
            db_delete(c->db, key_arg(c).p, key_arg(c).len);
            removed = 1;
            break;
        }
    }
    if (deleted) {
        written(c, removed ? NULL : n, deleted);
        notify_hash(c, "hdel");
        if (removed) notify_key(NOTIFY_GENERIC, "del", c->db->id, key_arg(c));
    }
    reply_int(c, deleted);
}

/* ---- HINCRBY HINCRBYFLOAT -------------------------------------------------- */

/* Store the new value of argv[2] (creating the key if needed). */
static void store_field(client *c, dnode *n, const char *v, size_t vlen) {
    n = node_or_create(c, n);
    hash_set(dn_ptr(n), c->argv[2].p, c->argv[2].len, v, vlen);
    written(c, n, 1);
}

static void cmd_hincrby(client *c) {
    long long incr, value = 0;
    dnode *n;
    hstr old;
    if (!str_to_ll(c->argv[3].p, c->argv[3].len, &incr)) {
        reply_err_notint(c);
        return;
    }
    if (!write_node(c, &n)) return;
    if (n && hash_get(dn_ptr(n), c->argv[2].p, c->argv[2].len, &old) &&
        !str_to_ll(old.p, old.len, &value)) {
        reply_error(c, "ERR hash value is not an integer");
        return;
    }
    if (__builtin_add_overflow(value, incr, &value)) {
        reply_error(c, "ERR increment or decrement would overflow");
        return;
    }
    char buf[24];
    store_field(c, n, buf, ll_to_str(buf, value));
    reply_int(c, value);
    notify_hash(c, "hincrby");
}

static void cmd_hincrbyfloat(client *c) {
    long double incr, value = 0;
    dnode *n;
    hstr old;
    if (!str_to_ld(c->argv[3].p, c->argv[3].len, &incr)) {
        reply_err_notfloat(c);
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        reply_error(c, "ERR value is NaN or Infinity");
        return;
    }
    if (!write_node(c, &n)) return;
    if (n && hash_get(dn_ptr(n), c->argv[2].p, c->argv[2].len, &old) &&
        !str_to_ld(old.p, old.len, &value)) {
        reply_error(c, "ERR hash value is not a float");
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        reply_error(c, "ERR increment would produce NaN or Infinity");
        return;
    }
    char buf[5 * 1024 + 64];
    size_t len = ld_to_str_human(buf, sizeof buf, value);
    store_field(c, n, buf, len);
    reply_bulk(c, buf, len);
    notify_hash(c, "hincrbyfloat");
    span effect[4] = {{"HSET", 4}, c->argv[1], c->argv[2], {buf, len}};
    prop_rewrite(c, 4, effect);
}

/* ---- HGETALL HKEYS HVALS ---------------------------------------------------- */

#define WANT_FIELD 1
#define WANT_VALUE 2

typedef struct emit_ctx { client *c; int what; } emit_ctx;

static void emit_pair(void *ud, hstr f, hstr v) {
    emit_ctx *e = ud;
    if (e->what & WANT_FIELD) reply_hstr(e->c, f);
    if (e->what & WANT_VALUE) reply_hstr(e->c, v);
}

static void getall_generic(client *c, int what) {
    hashobj *h;
    if (!read_hash(c, &h)) return;
    long len = h ? (long)hash_len(h) : 0;
    if (what == (WANT_FIELD | WANT_VALUE)) reply_map(c, len);
    else reply_array(c, len);
    if (!h) return;
    emit_ctx e = {c, what};
    hash_foreach(h, emit_pair, &e);
}

static void cmd_hgetall(client *c) { getall_generic(c, WANT_FIELD | WANT_VALUE); }
static void cmd_hkeys(client *c) { getall_generic(c, WANT_FIELD); }
static void cmd_hvals(client *c) { getall_generic(c, WANT_VALUE); }

/* ---- HRANDFIELD ------------------------------------------------------------- */

/* Output staged by a single HRANDFIELD with a huge negative count beyond
 * which the client is closed instead of letting the reply take all memory
 * (Redis keeps going until it runs out). */
#define RANDFIELD_MAX_OUT ((size_t)1 << 30)

typedef struct rand_ctx { client *c; int withvalues; } rand_ctx;

static void emit_random(void *ud, hstr f, hstr v) {
    rand_ctx *r = ud;
    if (r->withvalues && r->c->resp >= 3) reply_array(r->c, 2);
    reply_hstr(r->c, f);
    if (r->withvalues) reply_hstr(r->c, v);
}

static int replies_discarded(client *c) { return (c->flags & (CF_REPLY_OFF | CF_REPLY_SKIP)) != 0; }

/* count picks with repetition (negative COUNT). */
static void randfield_repeat(client *c, hash_sampler *s, unsigned long count, int withvalues) {
    rand_ctx r = {c, withvalues};
    if (replies_discarded(c)) return;
    for (unsigned long i = 0; i < count; i++) {
        hstr f, v;
        hash_sample(s, &f, &v);
        emit_random(&r, f, v);
        if ((i & 1023) == 1023 && ring_used(&c->out) > RANDFIELD_MAX_OUT) {
            server_log(LOG_WARNING_, "HRANDFIELD reply over %zu bytes: closing client id=%llu",
                       RANDFIELD_MAX_OUT, (unsigned long long)c->id);
            client_close_async(c);
            return;
        }
    }
}

static void randfield_count(client *c, long l, int withvalues) {
    hashobj *h;
    if (!read_hash(c, &h)) return;
    if (!h || l == 0) {
        reply_array(c, 0);
        return;
    }
    size_t size = hash_len(h);
    int uniq = l > 0;
    unsigned long count = uniq ? (unsigned long)l : (unsigned long)-l;
    unsigned long n = uniq && count > size ? size : count;
    reply_array(c, (long)(withvalues && c->resp == 2 ? n * 2 : n));
    rand_ctx r = {c, withvalues};
    if (uniq && count >= size) { /* the whole hash, in its order */
        hash_foreach(h, emit_random, &r);
        return;
    }
    hash_sampler s;
    hash_sampler_init(&s, h, count);
    if (uniq) hash_sample_distinct(&s, count, emit_random, &r);
    else randfield_repeat(c, &s, count, withvalues);
    hash_sampler_free(&s);
}

static void cmd_hrandfield(client *c) {
    if (c->argc >= 3) {
        long long l;
        if (!str_to_ll(c->argv[2].p, c->argv[2].len, &l)) {
            reply_err_notint(c);
            return;
        }
        if (l < -LONG_MAX) {
            reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and "
                           "9223372036854775807");
            return;
        }
        if (c->argc > 4 || (c->argc == 4 && !span_eq_nocase(c->argv[3], "withvalues"))) {
            reply_err_syntax(c);
            return;
        }
        int withvalues = c->argc == 4;
        if (withvalues && (l < -LONG_MAX / 2 || l > LONG_MAX / 2)) {
            reply_error(c, "ERR value is out of range");
            return;
        }
        randfield_count(c, (long)l, withvalues);
        return;
    }
    hashobj *h;
    if (!read_hash(c, &h)) return;
    if (!h) {
        reply_null(c);
        return;
    }
    hash_sampler s;
    hstr f, v;
    hash_sampler_init(&s, h, 1);
    hash_sample(&s, &f, &v);
    reply_hstr(c, f);
    hash_sampler_free(&s);
}

/* ---- HSCAN ------------------------------------------------------------------ */

/* HSCAN's options: COUNT and MATCH (TYPE is SCAN's only, NOVALUES came
 * after 7.0: both are syntax errors here). */
typedef struct scan_opts {
    long long count;                /* default 10 */
    span pat;
    int use_pat;                    /* 0 for no MATCH or MATCH "*" */
} scan_opts;

/* Parses argv[3..]; replies the error and returns 0 if invalid. */
static int parse_scan_opts(client *c, scan_opts *o) {
    o->count = 10;
    o->use_pat = 0;
    for (int i = 3; i < c->argc; i += 2) {
        int more = i + 1 < c->argc;
        span a = c->argv[i];
        if (span_eq_nocase(a, "count") && more) {
            if (!str_to_ll(c->argv[i + 1].p, c->argv[i + 1].len, &o->count)) {
                reply_err_notint(c);
                return 0;
            }
            if (o->count < 1) {
                reply_err_syntax(c);
                return 0;
            }
        } else if (span_eq_nocase(a, "match") && more) {
            o->pat = c->argv[i + 1];
            o->use_pat = !(o->pat.len == 1 && o->pat.p[0] == '*');
        } else {
            reply_err_syntax(c);
            return 0;
        }
    }
    return 1;
}

/* Field/value pairs collected by one HSCAN call (pointers into the hash,
 * which does not change before the reply is written). */
typedef struct pairvec {
    hstr *v;
    size_t n, cap;
    size_t seen;                    /* fields visited, matching MATCH or not */
    const scan_opts *o;
} pairvec;

static void collect_pair(void *ud, hstr f, hstr v) {
    pairvec *a = ud;
    a->seen++;
    if (a->o->use_pat && !glob_match(a->o->pat.p, a->o->pat.len, f.p, f.len, 0)) return;
    if (a->n + 2 > a->cap) {
        a->cap = a->cap ? a->cap * 2 : 32;
        a->v = zrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = f;
    a->v[a->n++] = v;
}

static void cmd_hscan(client *c) {
    unsigned long cursor;
    hashobj *h;
    scan_opts o;
    if (!str_to_scan_cursor(c->argv[2].p, c->argv[2].len, &cursor)) {
        reply_error(c, "ERR invalid cursor");
        return;
    }
    if (!read_hash(c, &h)) return;
    if (!h) {
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        reply_array(c, 0);
        return;
    }
    if (!parse_scan_opts(c, &o)) return;
    pairvec a = {NULL, 0, 0, 0, &o};
    if (h->enc == ENC_LISTPACK) { /* small: everything in one call */
        hash_foreach(h, collect_pair, &a);
        cursor = 0;
    } else { /* buckets until COUNT fields were visited (MATCH filters after
              * counting), or 10*COUNT buckets, as Redis */
        long long maxiter = o.count > LLONG_MAX / 10 ? LLONG_MAX : o.count * 10;
        do {
            cursor = hash_scan_ht(h, cursor, collect_pair, &a);
        } while (cursor && maxiter-- && a.seen < (unsigned long long)o.count);
    }
    char buf[24];
    reply_array(c, 2);
    reply_bulk(c, buf, ull_to_str(buf, cursor));
    reply_array(c, (long)a.n);
    for (size_t i = 0; i < a.n; i++) reply_hstr(c, a.v[i]);
    zfree(a.v);
}

/* ---- table ------------------------------------------------------------------ */

#define RO_FAST (CMD_READONLY | CMD_FAST)
#define W_OOM_FAST (CMD_WRITE | CMD_DENYOOM | CMD_FAST)
#define W_FAST (CMD_WRITE | CMD_FAST)
#define ACL_RF "read hash fast"
#define ACL_RS "read hash slow"
#define ACL_WF "write hash fast"
#define O_N_HASH "O(N) where N is the size of the hash."

static command hash_commands[] = {
    CMD("hset", cmd_hset, -4, .flags = W_OOM_FAST, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Set the string value of a hash field", .since = "2.0.0",
        .complexity = "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the "
            "command is called with multiple field/value pairs."),
    CMD("hsetnx", cmd_hsetnx, 4, .flags = W_OOM_FAST, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Set the value of a hash field, only if the field does not exist", .since = "2.0.0",
        .complexity = "O(1)"),
    CMD("hmset", cmd_hmset, -4, .flags = W_OOM_FAST, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Set multiple hash fields to multiple values", .since = "2.0.0",
        .complexity = "O(N) where N is the number of fields being set."),
    CMD("hget", cmd_hget, 3, .flags = RO_FAST, .acl = ACL_RF, CMD_KEYS(1, 1, 1),
        .summary = "Get the value of a hash field", .since = "2.0.0", .complexity = "O(1)"),
    CMD("hmget", cmd_hmget, -3, .flags = RO_FAST, .acl = ACL_RF, CMD_KEYS(1, 1, 1),
        .summary = "Get the values of all the given hash fields", .since = "2.0.0",
        .complexity = "O(N) where N is the number of fields being requested."),
    CMD("hgetall", cmd_hgetall, 2, .flags = CMD_READONLY, .acl = ACL_RS, CMD_KEYS(1, 1, 1),
        .summary = "Get all the fields and values in a hash", .since = "2.0.0", .complexity = O_N_HASH),
    CMD("hdel", cmd_hdel, -3, .flags = W_FAST, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Delete one or more hash fields", .since = "2.0.0",
        .complexity = "O(N) where N is the number of fields to be removed."),
    CMD("hexists", cmd_hexists, 3, .flags = RO_FAST, .acl = ACL_RF, CMD_KEYS(1, 1, 1),
        .summary = "Determine if a hash field exists", .since = "2.0.0", .complexity = "O(1)"),
    CMD("hlen", cmd_hlen, 2, .flags = RO_FAST, .acl = ACL_RF, CMD_KEYS(1, 1, 1),
        .summary = "Get the number of fields in a hash", .since = "2.0.0", .complexity = "O(1)"),
    CMD("hkeys", cmd_hkeys, 2, .flags = CMD_READONLY, .acl = ACL_RS, CMD_KEYS(1, 1, 1),
        .summary = "Get all the fields in a hash", .since = "2.0.0", .complexity = O_N_HASH),
    CMD("hvals", cmd_hvals, 2, .flags = CMD_READONLY, .acl = ACL_RS, CMD_KEYS(1, 1, 1),
        .summary = "Get all the values in a hash", .since = "2.0.0", .complexity = O_N_HASH),
    CMD("hstrlen", cmd_hstrlen, 3, .flags = RO_FAST, .acl = ACL_RF, CMD_KEYS(1, 1, 1),
        .summary = "Get the length of the value of a hash field", .since = "3.2.0", .complexity = "O(1)"),
    CMD("hincrby", cmd_hincrby, 4, .flags = W_OOM_FAST, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Increment the integer value of a hash field by the given number", .since = "2.0.0",
        .complexity = "O(1)"),
    CMD("hincrbyfloat", cmd_hincrbyfloat, 4, .flags = W_OOM_FAST, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Increment the float value of a hash field by the given amount", .since = "2.6.0",
        .complexity = "O(1)"),
    CMD("hrandfield", cmd_hrandfield, -2, .flags = CMD_READONLY, .acl = ACL_RS, CMD_KEYS(1, 1, 1),
        .summary = "Get one or multiple random fields from a hash", .since = "6.2.0",
        .complexity = "O(N) where N is the number of fields returned"),
    CMD("hscan", cmd_hscan, -3, .flags = CMD_READONLY, .acl = ACL_RS, CMD_KEYS(1, 1, 1),
        .summary = "Incrementally iterate hash fields and associated values", .since = "2.8.0",
        .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
            "the cursor to return back to 0. N is the number of elements inside the collection.."),
    {0},
};
const command_group hash_group = {"hash", hash_commands};
