/* cmd_keys.c - the generic keyspace commands (Redis group "generic", plus
 * the db-wide DBSIZE/FLUSHDB/FLUSHALL/SWAPDB of group "server"): DEL, UNLINK,
 * EXISTS, TOUCH, TYPE, RENAME, RENAMENX, COPY, MOVE, KEYS, SCAN, RANDOMKEY,
 * OBJECT, and the `keys_commands` table (which also lists the expiry
 * commands implemented in cmd_expire.c).
 *
 * Values are moved and copied through db.h's node API (db_unlink_node,
 * db_insert_node, db_copy_node), so RENAME/MOVE/COPY work for every type the
 * type modules register. Replies and error texts follow Redis 7.0.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include "blocking.h"
#include "client.h"
#include "command.h"
#include "db.h"
#include "dict.h"
#include "evict.h"
#include "lazyfree.h"
#include "multi.h"
#include "notify.h"
#include "reply.h"
#include "propagate.h"
#include "server.h"
#include "tracking.h"
#include "util.h"
#include "zmalloc.h"

#include "cmd_expire.h"


/* ------------------------------------------------------------------ helpers */

/* A growable array of node pointers, with inline room for small results. */
typedef struct nvec {
    dnode **v;
    size_t n, cap;
    dnode *inl[64];
} nvec;

static void nvec_init(nvec *a) { a->v = a->inl; a->n = 0; a->cap = 64; }
static void nvec_free(nvec *a) { if (a->v != a->inl) zfree(a->v); }
static void nvec_push(nvec *a, dnode *n) {
    if (a->n == a->cap) {
        size_t ncap = a->cap * 2;
        if (a->v == a->inl) {
            a->v = zmalloc(ncap * sizeof *a->v);
            memcpy(a->v, a->inl, a->n * sizeof *a->v);
        } else {
            a->v = zrealloc(a->v, ncap * sizeof *a->v);
        }
        a->cap = ncap;
    }
    a->v[a->n++] = n;
}

/* Read lookup counting hits/misses without updating the access time
 * (Redis's LOOKUP_NOTOUCH): EXISTS, TYPE; a miss raises "keymiss". */
static dnode *lookup_notouch(client *c, const span *k) {
    return db_lookup_read_notouch(c->db, k->p, k->len, 1);
}

/* The same for OBJECT, whose misses raise nothing (LOOKUP_NONOTIFY). */
static dnode *lookup_object(client *c, const span *k) {
    return db_lookup_read_notouch(c->db, k->p, k->len, 0);
}

/* Delete an expired node through the lazy-expiry path (which counts it and
 * touches watchers); read: through a read lookup, which also counts (and
 * notifies) a miss. The key is copied first: the node is freed meanwhile. */
static void expire_node_now(db *d, dnode *n, int read) {
    char buf[256];
    size_t klen = dn_klen(n);
    char *k = klen <= sizeof buf ? buf : zmalloc(klen);
    memcpy(k, dn_key(n), klen);
    if (read) db_lookup_read_notouch(d, k, klen, 1); /* keeps it during CLIENT PAUSE */
    else if (!srv.client_pause) db_lookup_write(d, k, klen); /* CLIENT PAUSE: reported missing, kept */
    if (k != buf) zfree(k);
}

/* Parse a DB index as Redis's getIntFromObjectOrReply: not an integer ->
 * notint (or `msg`), outside int -> range text (or `msg`). */
static int parse_db_int(client *c, span s, int *out, const char *msg) {
    long long v;
    if (!str_to_ll(s.p, s.len, &v)) {
        if (msg) reply_error(c, msg);
        else reply_err_notint(c);
        return -1;
    }
    if (v < INT_MIN || v > INT_MAX) {
        if (msg) reply_error(c, msg);
        else reply_error(c, "ERR value is out of range, value must between -2147483648 and 2147483647");
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int db_index_valid(int id) { return id >= 0 && id < db_count(); }

static int span_same(span a, span b) { return a.len == b.len && memcmp(a.p, b.p, a.len) == 0; }

/* ---------------------------------------------------- DEL UNLINK EXISTS ... */

/* lazy: UNLINK always, DEL under lazyfree-lazy-user-del (lazyfree.h) */
static void del_generic(client *c, int why) {
    db *d = c->db;
    long long deleted = 0;
    for (int j = 1; j < c->argc; j++) {
        span k = c->argv[j];
        if (!db_lookup_write(d, k.p, k.len)) continue;   /* expires lazily */
        if (db_delete_lazy(d, k.p, k.len, why)) {
            touch_watched_key(d, k.p, k.len);
            srv.dirty++;
            deleted++;
            notify_key(NOTIFY_GENERIC, "del", d->id, k);
        }
    }
    reply_int(c, deleted);
}

static void cmd_del(client *c) { del_generic(c, LAZY_USER_DEL); }
static void cmd_unlink(client *c) { del_generic(c, LAZY_ALWAYS); }

static void cmd_exists(client *c) {
    long long count = 0;
    for (int j = 1; j < c->argc; j++)
        if (lookup_notouch(c, &c->argv[j])) count++;
    reply_int(c, count);
}

static void cmd_touch(client *c) {
    long long count = 0;
    for (int j = 1; j < c->argc; j++)
        if (db_lookup_read(c->db, c->argv[j].p, c->argv[j].len)) count++;
    reply_int(c, count);
}

static void cmd_type(client *c) {
    dnode *n = lookup_notouch(c, &c->argv[1]);
    reply_status(c, n ? obj_type_name(n->type) : "none");
}

/* ------------------------------------------------------- RENAME COPY MOVE */

static void rename_generic(client *c, int nx) {
    db *d = c->db;
    span src = c->argv[1], dst = c->argv[2];
    if (!db_lookup_write(d, src.p, src.len)) {
        reply_error(c, "ERR no such key");
        return;
    }
    if (span_same(src, dst)) {              /* exists: nothing to do */
        if (nx) reply_int(c, 0);
        else reply_ok(c);
        return;
    }
    if (db_lookup_write(d, dst.p, dst.len)) {
        if (nx) { reply_int(c, 0); return; }
        db_delete(d, dst.p, dst.len);
    }
    dnode *n = db_unlink_node(d, src.p, src.len);
    n = db_insert_node(d, n, dst.p, dst.len);   /* keeps value, expiry, lru */
    if (n->type == OBJ_LIST || n->type == OBJ_ZSET || n->type == OBJ_STREAM) signal_key_ready(d, dst.p, dst.len);
    touch_watched_key(d, src.p, src.len);
    touch_watched_key(d, dst.p, dst.len);
    srv.dirty++;
    notify_key(NOTIFY_GENERIC, "rename_from", d->id, src);
    notify_key(NOTIFY_GENERIC, "rename_to", d->id, dst);
    if (nx) reply_int(c, 1);
    else reply_ok(c);
}

static void cmd_rename(client *c) { rename_generic(c, 0); }
static void cmd_renamenx(client *c) { rename_generic(c, 1); }

static void cmd_copy(client *c) {
    db *src = c->db, *dst = c->db;
    int replace = 0;
    for (int j = 3; j < c->argc; j++) {
        if (span_eq_nocase(c->argv[j], "replace")) {
            replace = 1;
        } else if (span_eq_nocase(c->argv[j], "db") && j + 1 < c->argc) {
            int id;
            if (parse_db_int(c, c->argv[j + 1], &id, NULL) < 0) return;
            if (!db_index_valid(id)) {
                reply_error(c, "ERR DB index is out of range");
                return;
            }
            dst = db_get(id);
            j++;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (srv.cluster_mode && (src->id != 0 || dst->id != 0)) {
        reply_error(c, "ERR Copying to another database is not allowed in cluster mode");
        return;
    }
    span key = c->argv[1], newkey = c->argv[2];
    if (src == dst && span_same(key, newkey)) {
        reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    dnode *n = db_lookup_read(src, key.p, key.len);
    if (!n) { reply_int(c, 0); return; }
    int del = 0;
    if (db_lookup_write(dst, newkey.p, newkey.len)) {
        if (!replace) { reply_int(c, 0); return; }
        del = 1;
    }
    int64_t exp = dn_expire(n);
    dnode *copy = db_copy_node(n, newkey.p, newkey.len);
    if (del) db_delete(dst, newkey.p, newkey.len);
    copy = db_insert_node(dst, copy, newkey.p, newkey.len);
    if (dn_expire(copy) != exp)
        copy = exp == -1 ? db_persist(dst, copy) : db_set_expire(dst, copy, exp);
    evict_stamp_new(copy);                         /* a new object */
    if (copy->type == OBJ_LIST || copy->type == OBJ_ZSET || copy->type == OBJ_STREAM) signal_key_ready(dst, newkey.p, newkey.len);
    if (copy->type == OBJ_STRING && copy->enc == ENC_INT) copy->flags |= DN_NOSHARE;
    touch_watched_key(dst, newkey.p, newkey.len);
    srv.dirty++;
    notify_key(NOTIFY_GENERIC, "copy_to", dst->id, newkey);
    reply_int(c, 1);
}

static void cmd_move(client *c) {
    db *src = c->db;
    int id;
    if (srv.cluster_mode) {
        reply_error(c, "ERR MOVE is not allowed in cluster mode");
        return;
    }
    if (parse_db_int(c, c->argv[2], &id, NULL) < 0) return;
    if (!db_index_valid(id)) {
        reply_error(c, "ERR DB index is out of range");
        return;
    }
    db *dst = db_get(id);
    if (dst == src) {
        reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    span k = c->argv[1];
    if (!db_lookup_write(src, k.p, k.len) || db_lookup_write(dst, k.p, k.len)) {
        reply_int(c, 0);
        return;
    }
    dnode *n = db_unlink_node(src, k.p, k.len);
    n = db_insert_node(dst, n, k.p, k.len);
    if (n->type == OBJ_LIST || n->type == OBJ_ZSET || n->type == OBJ_STREAM) signal_key_ready(dst, k.p, k.len);
    touch_watched_key(src, k.p, k.len);
    touch_watched_key(dst, k.p, k.len);
    srv.dirty++;
    notify_key(NOTIFY_GENERIC, "move_from", src->id, k);
    notify_key(NOTIFY_GENERIC, "move_to", dst->id, k);
    reply_int(c, 1);
}

/* ------------------------------------------------------------ KEYS SCAN */

typedef struct keys_ctx {
    nvec *out;
    span pat;
    int all;
} keys_ctx;

static void keys_cb(void *ud, dnode *n) {
    keys_ctx *k = ud;
    if (!k->all && !glob_match(k->pat.p, k->pat.len, dn_key(n), dn_klen(n), 0)) return;
    if (db_is_expired(n)) return;       /* skipped, left to expiry */
    nvec_push(k->out, n);
}

static void reply_nodes(client *c, const nvec *a) {
    reply_array(c, (long)a->n);
    for (size_t i = 0; i < a->n; i++) reply_bulk(c, dn_key(a->v[i]), dn_klen(a->v[i]));
}

static void cmd_keys(client *c) {
    nvec a;
    nvec_init(&a);
    keys_ctx k = { &a, c->argv[1], c->argv[1].len == 1 && c->argv[1].p[0] == '*' };
    dict_foreach(&c->db->keys, keys_cb, &k);
    reply_nodes(c, &a);
    nvec_free(&a);
}

static void scan_cb(void *ud, dnode *n) { nvec_push(ud, n); }

typedef struct scan_opts {
    long long count;
    span pat, type;
    int use_pat, use_type;
} scan_opts;

static int parse_scan_opts(client *c, scan_opts *o) {
    o->count = 10;
    o->use_pat = o->use_type = 0;
    for (int i = 2; i < c->argc; i += 2) {
        int more = i + 1 < c->argc;
        span a = c->argv[i];
        if (span_eq_nocase(a, "count") && more) {
            if (!str_to_ll(c->argv[i + 1].p, c->argv[i + 1].len, &o->count)) {
                reply_err_notint(c);
                return -1;
            }
            if (o->count < 1) { reply_err_syntax(c); return -1; }
        } else if (span_eq_nocase(a, "match") && more) {
            o->pat = c->argv[i + 1];
            o->use_pat = !(o->pat.len == 1 && o->pat.p[0] == '*');
        } else if (span_eq_nocase(a, "type") && more) {
            o->type = c->argv[i + 1];
            o->use_type = 1;
        } else {
            reply_err_syntax(c);
            return -1;
        }
    }
    return 0;
}

/* Whether a collected node is filtered out (deleting it if expired). */
static int scan_filtered(db *d, const scan_opts *o, dnode *n) {
    if (o->use_pat && !glob_match(o->pat.p, o->pat.len, dn_key(n), dn_klen(n), 0)) return 1;
    if (db_is_expired(n)) {
        expire_node_now(d, n, o->use_type); /* TYPE: Redis's type check is a read lookup */
        return 1;
    }
    if (o->use_type) {
        srv.stats.keyspace_hits++;
        if (!span_eq_nocase(o->type, obj_type_name(n->type))) return 1;
    }
    return 0;
}

static void cmd_scan(client *c) {
    unsigned long cursor;
    scan_opts o;
    if (!str_to_scan_cursor(c->argv[1].p, c->argv[1].len, &cursor)) {
        reply_error(c, "ERR invalid cursor");
        return;
    }
    if (parse_scan_opts(c, &o) < 0) return;

    db *d = c->db;
    nvec a;
    nvec_init(&a);
    /* Visit buckets until COUNT keys are collected, giving up after
     * 10*COUNT buckets so sparse tables still return promptly. */
    long long maxiter = o.count > LLONG_MAX / 10 ? LLONG_MAX : o.count * 10;
    do {
        cursor = dict_scan(&d->keys, cursor, scan_cb, &a);
    } while (cursor && maxiter-- && a.n < (unsigned long long)o.count);

    size_t kept = 0;
    for (size_t i = 0; i < a.n; i++)
        if (!scan_filtered(d, &o, a.v[i])) a.v[kept++] = a.v[i];
    a.n = kept;

    char buf[24];
    reply_array(c, 2);
    reply_bulk(c, buf, ull_to_str(buf, cursor));
    reply_nodes(c, &a);
    nvec_free(&a);
}

static void cmd_randomkey(client *c) {
    db *d = c->db;
    for (int tries = 0;; tries++) {
        dnode *n = dict_random(&d->keys);
        if (!n) { reply_null(c); return; }
        if (db_is_expired(n) && tries < 1000) {
            expire_node_now(d, n, 0);
            continue;
        }
        reply_bulk(c, dn_key(n), dn_klen(n));
        return;
    }
}

/* -------------------------------------------------- DBSIZE FLUSH SWAPDB */

static void cmd_dbsize(client *c) { reply_int(c, (long long)dict_size(&c->db->keys)); }

/* [ASYNC|SYNC]: 1 for ASYNC (the old keys are freed by lazyfree.c's thread),
 * 0 for SYNC, lazyfree-lazy-user-flush without either; -1 after a syntax error. */
static int parse_flush_flags(client *c) {
    if (c->argc == 1) return lazyfree_user_flush_default();
    if (c->argc == 2 && span_eq_nocase(c->argv[1], "sync")) return 0;
    if (c->argc == 2 && span_eq_nocase(c->argv[1], "async")) return 1;
    reply_err_syntax(c);
    return -1;
}

static long long flush_one(db *d, int async) {
    long long n = (long long)dict_size(&d->keys);
    if (async) db_flush_async(d);
    else db_flush(d);
    return n;
}

static void cmd_flushdb(client *c) {
    int async = parse_flush_flags(c);
    if (async < 0) return;
    touch_all_watched_keys(c->db);          /* before: it checks what exists */
    tracking_invalidate_all();
    srv.dirty += flush_one(c->db, async);
    blocking_signal_db(c->db);
    prop_rewrite(c, c->argc, c->argv); /* propagated even when the db was empty, as Redis 7 forces it */
    reply_ok(c);
}

static void cmd_flushall(client *c) {
    int async = parse_flush_flags(c);
    if (async < 0) return;
    touch_all_watched_keys(NULL);
    tracking_invalidate_all();
    for (int i = 0; i < db_count(); i++) srv.dirty += flush_one(db_get(i), async);
    blocking_signal_db(NULL);
    srv.dirty++;
    if (command_flushall_done) command_flushall_done(); /* may save, which resets srv.dirty, as Redis's */
    prop_force();
    reply_ok(c);
}

static void cmd_swapdb(client *c) {
    int a, b;
    if (srv.cluster_mode) {
        reply_error(c, "ERR SWAPDB is not allowed in cluster mode");
        return;
    }
    if (parse_db_int(c, c->argv[1], &a, "ERR invalid first DB index") < 0) return;
    if (parse_db_int(c, c->argv[2], &b, "ERR invalid second DB index") < 0) return;
    if (!db_index_valid(a) || !db_index_valid(b)) {
        reply_error(c, "ERR DB index is out of range");
        return;
    }
    if (a != b) {
        db *da = db_get(a), *dbb = db_get(b);
        /* Watchers of a key that exists on either side before or after. */
        touch_watched_keys_replaced(da, dbb);
        touch_watched_keys_replaced(dbb, da);
        db_swap(da, dbb);
        blocking_signal_db(da);
        blocking_signal_db(dbb);
    }
    srv.dirty++;
    reply_ok(c);
}

/* ---------------------------------------------------------------- OBJECT */

static const char *const object_help[] = {
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
    NULL,
};

static void cmd_object_help(client *c) { reply_help(c, object_help); }

/* Only reached if dispatch hands an unknown subcommand to the container. */
static void cmd_object(client *c) {
    span s = c->argv[1];
    reply_errorf(c, "ERR unknown subcommand '%.*s'. Try OBJECT HELP.",
                 (int)(s.len > 128 ? 128 : s.len), s.p);
}

static void cmd_object_encoding(client *c) {
    dnode *n = lookup_object(c, &c->argv[2]);
    if (!n) { reply_null(c); return; }
    reply_bulk_cstr(c, obj_enc_name(n));
}

static void cmd_object_freq(client *c) {
    dnode *n = lookup_object(c, &c->argv[2]);
    if (!n) { reply_null(c); return; }
    if (!evict_lfu_active()) {
        reply_error(c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. "
                       "Please note that when switching between policies at runtime LRU and LFU "
                       "data will take some time to adjust.");
        return;
    }
    reply_int(c, evict_lfu_get(n));   /* decayed, not changed */
}

static void cmd_object_idletime(client *c) {
    dnode *n = lookup_object(c, &c->argv[2]);
    if (!n) { reply_null(c); return; }
    if (evict_lfu_active()) {
        reply_error(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. "
                       "Please note that when switching between policies at runtime LRU and LFU "
                       "data will take some time to adjust.");
        return;
    }
    /* same clock as the stamps (evict.h), modulo 2^24 as Redis */
    long long idle = (long long)evict_lru_idle(n);
    reply_int(c, idle < 0 ? 0 : idle);
}

/* Redis shares the integers 0..9999 (refcount INT_MAX) unless maxmemory is
 * set with an LRU/LFU policy; every other value has refcount 1. */
static void cmd_object_refcount(client *c) {
    dnode *n = lookup_object(c, &c->argv[2]);
    if (!n) { reply_null(c); return; }
    long long v;
    if (n->type == OBJ_STRING && n->enc == ENC_INT && !(n->flags & DN_NOSHARE) &&
        str_to_ll(dn_val(n), dn_vlen(n), &v) &&
        v >= 0 && v < 10000 && (srv.cfg.maxmemory == 0 || !evict_policy_is_lru_or_lfu(srv.cfg.maxmemory_policy)))
        reply_int(c, INT_MAX);
    else
        reply_int(c, 1);
}

/* ----------------------------------------------------------------- table */

static command object_subcmds[] = {
    CMD("help", cmd_object_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "keyspace slow",
        .summary = "Show helpful text about the different subcommands", .since = "6.2.0", .complexity = "O(1)"),
    CMD("freq", cmd_object_freq, 3, .flags = CMD_READONLY, .acl = "keyspace read slow", CMD_KEYS(2, 2, 1),
        .summary = "Get the logarithmic access frequency counter of a Redis object", .since = "4.0.0",
        .complexity = "O(1)"),
    CMD("encoding", cmd_object_encoding, 3, .flags = CMD_READONLY, .acl = "keyspace read slow", CMD_KEYS(2, 2, 1),
        .summary = "Inspect the internal encoding of a Redis object", .since = "2.2.3", .complexity = "O(1)"),
    CMD("idletime", cmd_object_idletime, 3, .flags = CMD_READONLY, .acl = "keyspace read slow", CMD_KEYS(2, 2, 1),
        .summary = "Get the time since a Redis object was last accessed", .since = "2.2.3", .complexity = "O(1)"),
    CMD("refcount", cmd_object_refcount, 3, .flags = CMD_READONLY, .acl = "keyspace read slow", CMD_KEYS(2, 2, 1),
        .summary = "Get the number of references to the value of the key", .since = "2.2.3", .complexity = "O(1)"),
    {0},
};

#define WF (CMD_WRITE | CMD_FAST)
#define RF (CMD_READONLY | CMD_FAST)
#define ACL_WF "keyspace write fast"
#define ACL_RF "keyspace read fast"
#define O1 "O(1)"
static command keys_commands[] = {
    CMD("del", cmd_del, -2, .flags = CMD_WRITE, .acl = "keyspace write slow", CMD_KEYS(1, -1, 1),
        .summary = "Delete a key", .since = "1.0.0",
        .complexity = "O(N) where N is the number of keys that will be removed. When a key to remove holds a "
            "value other than a string, the individual complexity for this key is O(M) where M is the number of "
            "elements in the list, set, sorted set or hash. Removing a single key that holds a string value is "
            "O(1)."),
    CMD("unlink", cmd_unlink, -2, .flags = WF, .acl = ACL_WF, CMD_KEYS(1, -1, 1),
        .summary = "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.",
        .since = "4.0.0",
        .complexity = "O(1) for each key removed regardless of its size. Then the command does O(N) work in a "
            "different thread in order to reclaim memory, where N is the number of allocations the deleted "
            "objects where composed of."),
    CMD("exists", cmd_exists, -2, .flags = RF, .acl = ACL_RF, CMD_KEYS(1, -1, 1),
        .summary = "Determine if a key exists", .since = "1.0.0",
        .complexity = "O(N) where N is the number of keys to check."),
    CMD("touch", cmd_touch, -2, .flags = RF, .acl = ACL_RF, CMD_KEYS(1, -1, 1),
        .summary = "Alters the last access time of a key(s). Returns the number of existing keys specified.",
        .since = "3.2.1", .complexity = "O(N) where N is the number of keys that will be touched."),
    CMD("expire", cmd_expire, -3, .flags = WF, .props = PROP_EFFECT_EXPIRE, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Set a key's time to live in seconds", .since = "1.0.0", .complexity = O1),
    CMD("pexpire", cmd_pexpire, -3, .flags = WF, .props = PROP_EFFECT_EXPIRE, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Set a key's time to live in milliseconds", .since = "2.6.0", .complexity = O1),
    CMD("expireat", cmd_expireat, -3, .flags = WF, .props = PROP_EFFECT_EXPIRE, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Set the expiration for a key as a UNIX timestamp", .since = "1.2.0", .complexity = O1),
    CMD("pexpireat", cmd_pexpireat, -3, .flags = WF, .props = PROP_EFFECT_EXPIRE, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Set the expiration for a key as a UNIX timestamp specified in milliseconds", .since = "2.6.0",
        .complexity = O1),
    CMD("ttl", cmd_ttl, 2, .flags = RF, .acl = ACL_RF, CMD_KEYS(1, 1, 1),
        .summary = "Get the time to live for a key in seconds", .since = "1.0.0", .complexity = O1),
    CMD("pttl", cmd_pttl, 2, .flags = RF, .acl = ACL_RF, CMD_KEYS(1, 1, 1),
        .summary = "Get the time to live for a key in milliseconds", .since = "2.6.0", .complexity = O1),
    CMD("expiretime", cmd_expiretime, 2, .flags = RF, .acl = ACL_RF, CMD_KEYS(1, 1, 1),
        .summary = "Get the expiration Unix timestamp for a key", .since = "7.0.0", .complexity = O1),
    CMD("pexpiretime", cmd_pexpiretime, 2, .flags = RF, .acl = ACL_RF, CMD_KEYS(1, 1, 1),
        .summary = "Get the expiration Unix timestamp for a key in milliseconds", .since = "7.0.0", .complexity = O1),
    CMD("persist", cmd_persist, 2, .flags = WF, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Remove the expiration from a key", .since = "2.2.0", .complexity = O1),
    CMD("type", cmd_type, 2, .flags = RF, .acl = ACL_RF, CMD_KEYS(1, 1, 1),
        .summary = "Determine the type stored at key", .since = "1.0.0", .complexity = O1),
    CMD("rename", cmd_rename, 3, .flags = CMD_WRITE, .acl = "keyspace write slow", CMD_KEYS(1, 2, 1),
        .summary = "Rename a key", .since = "1.0.0", .complexity = O1),
    CMD("renamenx", cmd_renamenx, 3, .flags = WF, .acl = ACL_WF, CMD_KEYS(1, 2, 1),
        .summary = "Rename a key, only if the new key does not exist", .since = "1.0.0", .complexity = O1),
    CMD("copy", cmd_copy, -3, .flags = CMD_WRITE | CMD_DENYOOM, .acl = "keyspace write slow", CMD_KEYS(1, 2, 1),
        .summary = "Copy a key", .since = "6.2.0",
        .complexity = "O(N) worst case for collections, where N is the number of nested items. O(1) for "
            "string values."),
    CMD("move", cmd_move, 3, .flags = WF, .acl = ACL_WF, CMD_KEYS(1, 1, 1),
        .summary = "Move a key to another database", .since = "1.0.0", .complexity = O1),
    CMD("keys", cmd_keys, 2, .flags = CMD_READONLY, .acl = "keyspace read slow dangerous",
        .summary = "Find all keys matching the given pattern", .since = "1.0.0",
        .complexity = "O(N) with N being the number of keys in the database, under the assumption that the "
            "key names in the database and the given pattern have limited length."),
    CMD("scan", cmd_scan, -2, .flags = CMD_READONLY, .acl = "keyspace read slow",
        .summary = "Incrementally iterate the keys space", .since = "2.8.0",
        .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
            "the cursor to return back to 0. N is the number of elements inside the collection."),
    CMD("randomkey", cmd_randomkey, 1, .flags = CMD_READONLY, .acl = "keyspace read slow",
        .summary = "Return a random key from the keyspace", .since = "1.0.0", .complexity = O1),
    CMD("dbsize", cmd_dbsize, 1, .flags = RF, .acl = ACL_RF, .group = "server",
        .summary = "Return the number of keys in the selected database", .since = "1.0.0", .complexity = O1),
    CMD("flushdb", cmd_flushdb, -1, .flags = CMD_WRITE, .acl = "keyspace write slow dangerous", .group = "server",
        .summary = "Remove all keys from the current database", .since = "1.0.0",
        .complexity = "O(N) where N is the number of keys in the selected database"),
    CMD("flushall", cmd_flushall, -1, .flags = CMD_WRITE, .acl = "keyspace write slow dangerous", .group = "server",
        .summary = "Remove all keys from all databases", .since = "1.0.0",
        .complexity = "O(N) where N is the total number of keys in all databases"),
    CMD("swapdb", cmd_swapdb, 3, .flags = WF, .acl = "keyspace write fast dangerous", .group = "server",
        .summary = "Swaps two Redis databases", .since = "4.0.0",
        .complexity = "O(N) where N is the count of clients watching or blocking on keys from both databases."),
    CMD("object", cmd_object, -2, .acl = "slow", .summary = "A container for object introspection commands",
        .since = "2.2.3", .complexity = "Depends on subcommand.", .subcmds = object_subcmds),
    {0},
};
const command_group keys_group = {"generic", keys_commands};
