/* cmd_string.c - the string commands: GET/SET and their variants (SETNX,
 * SETEX, PSETEX, GETSET, GETDEL, GETEX), MGET/MSET/MSETNX, APPEND, STRLEN,
 * GETRANGE/SUBSTR, SETRANGE, the INCR/DECR family and INCRBYFLOAT (LCS: cmd_lcs.c).
 *
 * Replies and error texts follow Redis 7.0 byte for byte. Values live inline
 * in the keyspace node; n->enc records the encoding OBJECT ENCODING reports,
 * chosen as Redis does: "int" for canonical integers, "embstr" up to 44
 * bytes, "raw" beyond, and always "raw" after APPEND/SETRANGE edits.
 *
 * GET, plain SET and INCR are the hot path: a single lookup, no allocation
 * besides the node, and INCR rewrites the digits in place when it can.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "client.h"
#include "command.h"
#include "aside.h"
#include "db.h"
#include "evict.h"
#include "multi.h"
#include "notify.h"
#include "propagate.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

/* ---- helpers ----------------------------------------------------------- */

/* Redis compares option names as C strings, so an argument with an embedded
 * NUL matches on the part before it. */
static int opt_is(span s, const char *lit) {
    const char *z = memchr(s.p, 0, s.len);
    span t = { s.p, z ? (size_t)(z - s.p) : s.len };
    return span_eq_nocase(t, lit);
}

static void written(db *d, span key) {
    touch_watched_key(d, key.p, key.len);
    srv.dirty++;
}

static void notify_string(client *c, const char *event, span key) {
    notify_key(NOTIFY_STRING, event, c->db->id, key);
}

static void notify_generic(client *c, const char *event, span key) {
    notify_key(NOTIFY_GENERIC, event, c->db->id, key);
}

/* Store key = val (dropping any TTL unless expire_ms != -1) with the
 * encoding Redis would give the argument. */
/* A big value read into a block shaped for this key (io/aside.h) becomes
 * the key's node without a copy when adopt is set; c->argv still reads it
 * there. Not for MSET: `MSET k v k v` would free the first node while its
 * argument is still to be propagated. */
static dnode *store_as(client *c, span key, span val, int64_t expire_ms, int adopt) {
    void *blk = adopt && val.len >= ASIDE_MIN
                    ? client_take_block(c, val.p, db_string_block_head(key.len, val.len, expire_ms >= 0))
                    : NULL;
    dnode *n = blk ? db_set_string_block(c->db, key.p, key.len, blk, val.len, expire_ms)
                   : db_set_string(c->db, key.p, key.len, val.p, val.len, expire_ms);
    n->enc = db_string_enc(val.p, val.len);
    written(c->db, key);
    return n;
}

static dnode *store(client *c, span key, span val, int64_t expire_ms) { return store_as(c, key, val, expire_ms, 1); }

static void invalid_expire(client *c, const char *cmd) {
    reply_errorf(c, "ERR invalid expire time in '%s' command", cmd);
}

/* An expire argument to absolute unix ms. unit_s: the value is in seconds;
 * relative: add the current time. Replies and returns 0 on error. */
static int expire_arg(client *c, span s, int unit_s, int relative, const char *cmd, int64_t *out) {
    long long v;
    if (!str_to_ll(s.p, s.len, &v)) {
        reply_err_notint(c);
        return 0;
    }
    if (v <= 0 || (unit_s && v > LLONG_MAX / 1000)) goto bad;
    if (unit_s) v *= 1000;
    if (relative && __builtin_add_overflow(v, (long long)srv.now_ms, &v)) goto bad;
    *out = v;
    return 1;
bad:
    invalid_expire(c, cmd);
    return 0;
}

static int string_or_wrongtype(client *c, const dnode *n) {
    if (n->type == OBJ_STRING) return 1;
    reply_err_wrongtype(c);
    return 0;
}

static int check_len(client *c, long long cur, long long add) {
    long long total;
    if (__builtin_add_overflow(cur, add, &total) || total > srv.cfg.proto_max_bulk_len) {
        reply_error(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return 0;
    }
    return 1;
}

/* ---- GET / SET and friends ---------------------------------------------- */

static void cmd_get(client *c) {
    dnode *n = db_lookup_read(c->db, c->argv[1].p, c->argv[1].len);
    if (!n) {
        reply_null(c);
        return;
    }
    if (string_or_wrongtype(c, n)) reply_bulk_value(c, n);
}

/* SET/GETEX option flags */
#define SF_NX      0x001
#define SF_XX      0x002
#define SF_GET     0x004
#define SF_KEEPTTL 0x008
#define SF_PERSIST 0x010
#define SF_EX      0x020
#define SF_PX      0x040
#define SF_EXAT    0x080
#define SF_PXAT    0x100
#define SF_ANYEXP  (SF_EX | SF_PX | SF_EXAT | SF_PXAT)

static unsigned expire_opt(span s) {
    if (opt_is(s, "ex")) return SF_EX;
    if (opt_is(s, "px")) return SF_PX;
    if (opt_is(s, "exat")) return SF_EXAT;
    if (opt_is(s, "pxat")) return SF_PXAT;
    return 0;
}

/* Parse SET (is_set) or GETEX options from argv[first..]. An option that
 * conflicts with an earlier one is a syntax error, as in Redis. The expire
 * value's index goes to *expidx. Replies and returns 0 on error. */
static int parse_ext(client *c, int first, int is_set, unsigned *flags, int *expidx) {
    unsigned f = 0, bit;
    for (int j = first; j < c->argc; j++) {
        span o = c->argv[j];
        int has_next = j + 1 < c->argc;
        if (is_set && opt_is(o, "nx") && !(f & SF_XX)) f |= SF_NX;
        else if (is_set && opt_is(o, "xx") && !(f & SF_NX)) f |= SF_XX;
        else if (is_set && opt_is(o, "get")) f |= SF_GET;
        else if (is_set && opt_is(o, "keepttl") && !(f & (SF_PERSIST | SF_ANYEXP))) f |= SF_KEEPTTL;
        else if (!is_set && opt_is(o, "persist") && !(f & (SF_ANYEXP | SF_KEEPTTL))) f |= SF_PERSIST;
        else if ((bit = expire_opt(o)) && has_next &&
                 !(f & (SF_KEEPTTL | SF_PERSIST | (SF_ANYEXP & ~bit)))) {
            f |= bit;
            *expidx = ++j;
        } else {
            reply_err_syntax(c);
            return 0;
        }
    }
    *flags = f;
    return 1;
}

/* The expire option's value as absolute ms. */
static int ext_expire(client *c, unsigned f, int expidx, const char *cmd, int64_t *out) {
    return expire_arg(c, c->argv[expidx], (f & (SF_EX | SF_EXAT)) != 0, (f & (SF_EX | SF_PX)) != 0, cmd, out);
}

/* The common SET path. expire_ms: absolute ms or -1. Replies +OK / null
 * (SETNX: :1 / :0) unless SF_GET, which replies the old value. */
static void set_generic(client *c, unsigned f, span key, span val, int64_t expire_ms, int setnx) {
    dnode *old;
    if (f & SF_GET) {
        old = db_lookup_read(c->db, key.p, key.len);
        if (old && !string_or_wrongtype(c, old)) return;
        if (old) reply_bulk_value(c, old);
        else reply_null(c);
    } else if ((f & (SF_NX | SF_XX | SF_KEEPTTL)) || evict_lfu_active()) {
        old = db_lookup_write(c->db, key.p, key.len);
    } else {
        old = NULL; /* nothing depends on the old value: db_set_string finds it (one lookup, as SET k v) */
    }
    if (((f & SF_NX) && old) || ((f & SF_XX) && !old)) {
        if (setnx) reply_int(c, 0);
        else if (!(f & SF_GET)) reply_null(c);
        return;
    }
    if ((f & SF_KEEPTTL) && old) expire_ms = dn_expire(old);
    store(c, key, val, expire_ms);
    notify_string(c, "set", key);
    if (f & SF_ANYEXP) notify_generic(c, "expire", key);
    if (setnx) reply_int(c, 1);
    else if (!(f & SF_GET)) reply_ok(c);
}

static void cmd_set(client *c) {
    if (c->argc == 3 && !evict_lfu_active()) { /* hot path: no options, one lookup inside db_set_string;
                                                  * under LFU the write lookup below counts the access */
        store(c, c->argv[1], c->argv[2], -1);
        notify_string(c, "set", c->argv[1]);
        reply_ok(c);
        return;
    }
    unsigned f;
    int expidx = 0;
    int64_t when = -1;
    if (!parse_ext(c, 3, 1, &f, &expidx)) return;
    if ((f & SF_ANYEXP) && !ext_expire(c, f, expidx, "set", &when)) return;
    set_generic(c, f, c->argv[1], c->argv[2], when, 0);
}

static void cmd_setnx(client *c) {
    set_generic(c, SF_NX, c->argv[1], c->argv[2], -1, 1);
}

static void setex_generic(client *c, int unit_s, const char *cmd) {
    int64_t when;
    if (!expire_arg(c, c->argv[2], unit_s, 1, cmd, &when)) return;
    store(c, c->argv[1], c->argv[3], when);
    notify_string(c, "set", c->argv[1]);
    notify_generic(c, "expire", c->argv[1]);
    reply_ok(c);
}

static void cmd_setex(client *c) { setex_generic(c, 1, "setex"); }
static void cmd_psetex(client *c) { setex_generic(c, 0, "psetex"); }

/* Propagated as SET key value, as Redis 7 does (replicas and the AOF never see GETSET). */
static void cmd_getset(client *c) {
    long long dirty = srv.dirty;
    set_generic(c, SF_GET, c->argv[1], c->argv[2], -1, 0);
    if (srv.dirty != dirty) prop_rewrite(c, 3, (span[]){{"SET", 3}, c->argv[1], c->argv[2]});
}

/* Propagated as DEL (UNLINK under lazyfree-lazy-user-del), as Redis 7.0 does. */
static void cmd_getdel(client *c) {
    span k = c->argv[1];
    dnode *n = db_lookup_read(c->db, k.p, k.len);
    if (!n) {
        reply_null(c);
        return;
    }
    if (!string_or_wrongtype(c, n)) return;
    reply_bulk(c, dn_val(n), dn_vlen(n));
    db_delete(c->db, k.p, k.len);
    written(c->db, k);
    notify_generic(c, "del", k);
    span gone = srv.cfg.lazyfree_lazy_user_del ? (span){"UNLINK", 6} : (span){"DEL", 3};
    prop_rewrite(c, 2, (span[]){gone, k});
}

static void cmd_getex(client *c) {
    span k = c->argv[1];
    unsigned f;
    int expidx = 0;
    int64_t when = -1;
    if (!parse_ext(c, 2, 0, &f, &expidx)) return;
    dnode *n = db_lookup_read(c->db, k.p, k.len);
    if (!n) {
        reply_null(c);
        return;
    }
    if (!string_or_wrongtype(c, n)) return;
    if ((f & SF_ANYEXP) && !ext_expire(c, f, expidx, "getex", &when)) return;
    reply_bulk_value(c, n);
    const char *event;
    if ((f & (SF_EXAT | SF_PXAT)) && when <= srv.now_ms) {
        db_delete(c->db, k.p, k.len);
        event = "del";
    } else if (f & SF_ANYEXP) {
        db_set_expire(c->db, n, when);
        event = "expire";
    } else if ((f & SF_PERSIST) && dn_expire(n) != -1) {
        db_persist(c->db, n);
        event = "persist";
    } else {
        return;
    }
    written(c->db, k);
    notify_generic(c, event, k);
}

/* ---- multi-key ---------------------------------------------------------- */

static void cmd_mget(client *c) {
    reply_array(c, c->argc - 1);
    for (int j = 1; j < c->argc; j++) {
        dnode *n = db_lookup_read(c->db, c->argv[j].p, c->argv[j].len);
        if (n && n->type == OBJ_STRING) reply_bulk_value(c, n);
        else reply_null(c);
    }
}

static int mset_arity_ok(client *c, const char *cmd) {
    if (c->argc % 2 == 1) return 1;
    reply_errorf(c, "ERR wrong number of arguments for '%s' command", cmd);
    return 0;
}

static void mset_all(client *c) {
    for (int j = 1; j < c->argc; j += 2) {
        store_as(c, c->argv[j], c->argv[j + 1], -1, 0);
        notify_string(c, "set", c->argv[j]);
    }
}

static void cmd_mset(client *c) {
    if (!mset_arity_ok(c, "mset")) return;
    mset_all(c);
    reply_ok(c);
}

static void cmd_msetnx(client *c) {
    if (!mset_arity_ok(c, "msetnx")) return;
    for (int j = 1; j < c->argc; j += 2) {
        if (db_lookup_write(c->db, c->argv[j].p, c->argv[j].len)) {
            reply_int(c, 0);
            return;
        }
    }
    mset_all(c);
    reply_int(c, 1);
}

/* ---- editing ------------------------------------------------------------ */

static void cmd_append(client *c) {
    span k = c->argv[1], v = c->argv[2];
    dnode *n = db_lookup_write(c->db, k.p, k.len);
    if (!n) {
        store(c, k, v, -1);
        notify_string(c, "append", k);
        reply_int(c, (long long)v.len);
        return;
    }
    if (!string_or_wrongtype(c, n)) return;
    size_t olen = dn_vlen(n);
    if (!check_len(c, (long long)olen, (long long)v.len)) return;
    if (v.len) n = db_resize_value(c->db, n, olen + v.len);
    memcpy(dn_val(n) + olen, v.p, v.len);
    n->enc = ENC_RAW;
    written(c->db, k);
    notify_string(c, "append", k);
    reply_int(c, (long long)(olen + v.len));
}

static void cmd_strlen(client *c) {
    dnode *n = db_lookup_read(c->db, c->argv[1].p, c->argv[1].len);
    if (!n) {
        reply_int(c, 0);
        return;
    }
    if (string_or_wrongtype(c, n)) reply_int(c, dn_vlen(n));
}

static void cmd_getrange(client *c) {
    long long start, end;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &start) || !str_to_ll(c->argv[3].p, c->argv[3].len, &end)) {
        reply_err_notint(c);
        return;
    }
    dnode *n = db_lookup_read(c->db, c->argv[1].p, c->argv[1].len);
    if (!n) {
        reply_bulk(c, "", 0);
        return;
    }
    if (!string_or_wrongtype(c, n)) return;
    long long len = dn_vlen(n);
    if (start < 0 && end < 0 && start > end) {
        reply_bulk(c, "", 0);
        return;
    }
    if (start < 0) start = len + start < 0 ? 0 : len + start;
    if (end < 0) end = len + end < 0 ? 0 : len + end;
    if (end >= len) end = len - 1;
    if (len == 0 || start > end) reply_bulk(c, "", 0);
    else reply_bulk(c, dn_val(n) + start, (size_t)(end - start + 1));
}

static void cmd_setrange(client *c) {
    span k = c->argv[1], v = c->argv[3];
    long long off;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &off)) {
        reply_err_notint(c);
        return;
    }
    if (off < 0) {
        reply_error(c, "ERR offset is out of range");
        return;
    }
    dnode *n = db_lookup_write(c->db, k.p, k.len);
    if (n && !string_or_wrongtype(c, n)) return;
    size_t olen = n ? dn_vlen(n) : 0;
    if (v.len == 0) { /* nothing to write: no key is created */
        reply_int(c, (long long)olen);
        return;
    }
    if (!check_len(c, off, (long long)v.len)) return;
    if (!n) n = db_set_string(c->db, k.p, k.len, "", 0, -1);
    size_t need = (size_t)off + v.len;
    if (need > olen) {
        n = db_resize_value(c->db, n, need);
        if ((size_t)off > olen) memset(dn_val(n) + olen, 0, (size_t)off - olen);
    }
    memcpy(dn_val(n) + off, v.p, v.len);
    n->enc = ENC_RAW;
    written(c->db, k);
    notify_string(c, "setrange", k);
    reply_int(c, dn_vlen(n));
}

/* ---- counters ----------------------------------------------------------- */

/* Write the digits of a counter into node n (resized only if the length
 * changes), or create the key; keeps any TTL. Raises `event`. */
static dnode *put_value(client *c, dnode *n, const char *p, size_t len, uint8_t enc, const char *event) {
    span k = c->argv[1];
    if (n) {
        if (dn_vlen(n) != len) n = db_resize_value(c->db, n, len);
        memcpy(dn_val(n), p, len);
    } else {
        n = db_set_string(c->db, k.p, k.len, p, len, -1);
    }
    n->enc = enc;
    written(c->db, k);
    notify_string(c, event, k);
    return n;
}

static void incr_generic(client *c, long long incr) {
    dnode *n = db_lookup_write(c->db, c->argv[1].p, c->argv[1].len);
    long long v = 0;
    if (n) {
        if (!string_or_wrongtype(c, n)) return;
        if (!str_to_ll(dn_val(n), dn_vlen(n), &v)) {
            reply_err_notint(c);
            return;
        }
    }
    if (__builtin_add_overflow(v, incr, &v)) {
        reply_error(c, "ERR increment or decrement would overflow");
        return;
    }
    char buf[24];
    put_value(c, n, buf, ll_to_str(buf, v), ENC_INT, "incrby");
    reply_int(c, v);
}

static int incr_arg(client *c, long long *out) {
    if (str_to_ll(c->argv[2].p, c->argv[2].len, out)) return 1;
    reply_err_notint(c);
    return 0;
}

static void cmd_incr(client *c) { incr_generic(c, 1); }
static void cmd_decr(client *c) { incr_generic(c, -1); }

static void cmd_incrby(client *c) {
    long long by;
    if (incr_arg(c, &by)) incr_generic(c, by);
}

static void cmd_decrby(client *c) {
    long long by;
    if (!incr_arg(c, &by)) return;
    if (by == LLONG_MIN) {
        reply_error(c, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, -by);
}

static void cmd_incrbyfloat(client *c) {
    dnode *n = db_lookup_write(c->db, c->argv[1].p, c->argv[1].len);
    long double v = 0, by;
    if (n && !string_or_wrongtype(c, n)) return;
    if ((n && !str_to_ld(dn_val(n), dn_vlen(n), &v)) || !str_to_ld(c->argv[2].p, c->argv[2].len, &by)) {
        reply_err_notfloat(c);
        return;
    }
    v += by;
    if (isnan(v) || isinf(v)) {
        reply_error(c, "ERR increment would produce NaN or Infinity");
        return;
    }
    char buf[5 * 1024 + 64];
    size_t len = ld_to_str_human(buf, sizeof buf, v);
    n = put_value(c, n, buf, len, len <= DB_EMBSTR_MAX ? ENC_EMBSTR : ENC_RAW, "incrbyfloat");
    span effect[4] = {{"SET", 3}, c->argv[1], {buf, len}, {"KEEPTTL", 7}}; /* as Redis: never a float sum again */
    prop_rewrite(c, 4, effect);
    reply_bulk(c, dn_val(n), dn_vlen(n));
}

/* ---- table -------------------------------------------------------------- */

#define RO_FAST (CMD_READONLY | CMD_FAST)
#define W_OOM (CMD_WRITE | CMD_DENYOOM)
#define W_OOM_FAST (CMD_WRITE | CMD_DENYOOM | CMD_FAST)
#define W_FAST (CMD_WRITE | CMD_FAST)
#define GETRANGE_O "O(N) where N is the length of the returned string. The complexity is ultimately " \
    "determined by the returned length, but because creating a substring from an existing string is " \
    "very cheap, it can be considered O(1) for small strings."

static command string_commands[] = {
    CMD("get", cmd_get, 2, .flags = RO_FAST, .acl = "read string fast", CMD_KEYS(1, 1, 1),
        .summary = "Get the value of a key", .since = "1.0.0", .complexity = "O(1)"),
    CMD("set", cmd_set, -3, .flags = W_OOM, .props = PROP_EFFECT_SET, .acl = "write string slow", CMD_KEYS(1, 1, 1),
        .summary = "Set the string value of a key", .since = "1.0.0", .complexity = "O(1)"),
    CMD("setnx", cmd_setnx, 3, .flags = W_OOM_FAST, .acl = "write string fast", CMD_KEYS(1, 1, 1),
        .summary = "Set the value of a key, only if the key does not exist", .since = "1.0.0", .complexity = "O(1)"),
    CMD("setex", cmd_setex, 4, .flags = W_OOM, .props = PROP_EFFECT_SET, .acl = "write string slow", CMD_KEYS(1, 1, 1),
        .summary = "Set the value and expiration of a key", .since = "2.0.0", .complexity = "O(1)"),
    CMD("psetex", cmd_psetex, 4, .flags = W_OOM, .props = PROP_EFFECT_SET, .acl = "write string slow", CMD_KEYS(1, 1, 1),
        .summary = "Set the value and expiration in milliseconds of a key", .since = "2.6.0", .complexity = "O(1)"),
    CMD("getset", cmd_getset, 3, .flags = W_OOM_FAST, .acl = "write string fast", CMD_KEYS(1, 1, 1),
        .summary = "Set the string value of a key and return its old value", .since = "1.0.0", .complexity = "O(1)"),
    CMD("getdel", cmd_getdel, 2, .flags = W_FAST, .acl = "write string fast", CMD_KEYS(1, 1, 1),
        .summary = "Get the value of a key and delete the key", .since = "6.2.0", .complexity = "O(1)"),
    CMD("getex", cmd_getex, -2, .flags = W_FAST, .props = PROP_EFFECT_EXPIRE, .acl = "write string fast", CMD_KEYS(1, 1, 1),
        .summary = "Get the value of a key and optionally set its expiration", .since = "6.2.0", .complexity = "O(1)"),
    CMD("mget", cmd_mget, -2, .flags = RO_FAST, .acl = "read string fast", CMD_KEYS(1, -1, 1),
        .summary = "Get the values of all the given keys", .since = "1.0.0",
        .complexity = "O(N) where N is the number of keys to retrieve."),
    CMD("mset", cmd_mset, -3, .flags = W_OOM, .acl = "write string slow", CMD_KEYS(1, -1, 2),
        .summary = "Set multiple keys to multiple values", .since = "1.0.1",
        .complexity = "O(N) where N is the number of keys to set."),
    CMD("msetnx", cmd_msetnx, -3, .flags = W_OOM, .acl = "write string slow", CMD_KEYS(1, -1, 2),
        .summary = "Set multiple keys to multiple values, only if none of the keys exist", .since = "1.0.1",
        .complexity = "O(N) where N is the number of keys to set."),
    CMD("append", cmd_append, 3, .flags = W_OOM_FAST, .acl = "write string fast", CMD_KEYS(1, 1, 1),
        .summary = "Append a value to a key", .since = "2.0.0",
        .complexity = "O(1). The amortized time complexity is O(1) assuming the appended value is small and "
            "the already present value is of any size, since the dynamic string library used by Redis will double "
            "the free space available on every reallocation."),
    CMD("strlen", cmd_strlen, 2, .flags = RO_FAST, .acl = "read string fast", CMD_KEYS(1, 1, 1),
        .summary = "Get the length of the value stored in a key", .since = "2.2.0", .complexity = "O(1)"),
    CMD("getrange", cmd_getrange, 4, .flags = CMD_READONLY, .acl = "read string slow", CMD_KEYS(1, 1, 1),
        .summary = "Get a substring of the string stored at a key", .since = "2.4.0", .complexity = GETRANGE_O),
    CMD("substr", cmd_getrange, 4, .flags = CMD_READONLY, .acl = "read string slow", CMD_KEYS(1, 1, 1),
        .summary = "Get a substring of the string stored at a key", .since = "1.0.0", .complexity = GETRANGE_O),
    CMD("setrange", cmd_setrange, 4, .flags = W_OOM, .acl = "write string slow", CMD_KEYS(1, 1, 1),
        .summary = "Overwrite part of a string at key starting at the specified offset", .since = "2.2.0",
        .complexity = "O(1), not counting the time taken to copy the new string in place. Usually, this "
            "string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being "
            "the length of the value argument."),
    CMD("incr", cmd_incr, 2, .flags = W_OOM_FAST, .acl = "write string fast", CMD_KEYS(1, 1, 1),
        .summary = "Increment the integer value of a key by one", .since = "1.0.0", .complexity = "O(1)"),
    CMD("decr", cmd_decr, 2, .flags = W_OOM_FAST, .acl = "write string fast", CMD_KEYS(1, 1, 1),
        .summary = "Decrement the integer value of a key by one", .since = "1.0.0", .complexity = "O(1)"),
    CMD("incrby", cmd_incrby, 3, .flags = W_OOM_FAST, .acl = "write string fast", CMD_KEYS(1, 1, 1),
        .summary = "Increment the integer value of a key by the given amount", .since = "1.0.0", .complexity = "O(1)"),
    CMD("decrby", cmd_decrby, 3, .flags = W_OOM_FAST, .acl = "write string fast", CMD_KEYS(1, 1, 1),
        .summary = "Decrement the integer value of a key by the given number", .since = "1.0.0", .complexity = "O(1)"),
    CMD("incrbyfloat", cmd_incrbyfloat, 3, .flags = W_OOM_FAST, .acl = "write string fast", CMD_KEYS(1, 1, 1),
        .summary = "Increment the float value of a key by the given amount", .since = "2.6.0", .complexity = "O(1)"),
    {0},
};
const command_group string_group = {"string", string_commands};
