/* cmd_hll.c - the HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG
 * (GETREG, DECODE, ENCODING, TODENSE) and PFSELFTEST, over string values
 * whose bytes are Redis's HLL format (the representation is the pure code
 * in src/keyspace/hll.c).
 *
 * Why here and not a value type: in Redis an HLL is a string (TYPE says
 * "string", GET returns the sketch, RDB and DUMP carry it as a string), so
 * the commands read and rewrite the string's bytes in the keyspace node.
 * They follow Redis 7.0's pfadd/pfcount/pfmerge/pfdebugCommand step by
 * step, because the observable side effects depend on the order:
 *  - a string that is not an HLL (no "HYLL", bad encoding, a dense one of
 *    the wrong length, an integer) is WRONGTYPE with its own text; a
 *    damaged sparse one is INVALIDOBJ, found only when it is walked, and
 *    what PFADD changed before finding it stays (unsignalled), as in Redis;
 *  - the value is "unshared" (OBJECT ENCODING raw) by every command that
 *    may write it, PFCOUNT of one key included;
 *  - PFCOUNT of one key writes the cached cardinality back when it was
 *    stale: that is a write (dirty, WATCH, tracking, propagated as the
 *    PFCOUNT itself) although PFCOUNT is flagged readonly in 7.0;
 *  - PFMERGE raises "pfadd" (not "pfmerge"), and PFDEBUG GETREG / TODENSE
 *    convert a sparse value in place and count as a write without
 *    signalling the key.
 * Sparse values are edited in a scratch buffer (they grow by a few bytes
 * per register set and may be promoted to 12304 bytes midway) and written
 * back once; dense ones are edited in place.
 */
#include <string.h>
#include <time.h>

#include "client.h"
#include "command.h"
#include "db.h"
#include "hll.h"
#include "multi.h"
#include "notify.h"
#include "reply.h"
#include "sbuf.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

static const char invalid_hll_err[] = "INVALIDOBJ Corrupted HLL object detected";

/* the scratch buffer a sparse value is edited in, and a dense target */
static uint8_t *wbuf;
static size_t wcap;
static uint8_t densetmp[HLL_DENSE_SIZE];
static uint8_t maxregs[HLL_REGISTERS];

static uint8_t *wreserve(size_t need) {
    if (need > wcap) {
        wbuf = zrealloc(wbuf, need);
        wcap = need;
    }
    return wbuf;
}

/* Give a scratch buffer grown for an unusually long (damaged or
 * CONFIG-enlarged) sparse value back after the command. */
static void wrelease(void) {
    if (wcap > 4 * HLL_DENSE_SIZE) {
        zfree(wbuf);
        wbuf = NULL;
        wcap = 0;
    }
}

/* The value in the scratch buffer (len bytes) with its length: copy of n's. */
static size_t wload(const dnode *n) {
    size_t len = dn_vlen(n);
    memcpy(wreserve(len + HLL_SPARSE_SLACK), dn_val(n), len);
    return len;
}

/* Store the scratch buffer as key's value: a new key when n is NULL, else
 * n's bytes replaced (TTL kept). Returns the node. */
static dnode *wstore(client *c, span key, dnode *n, size_t len) {
    if (!n) {
        n = db_set_string(c->db, key.p, key.len, (const char *)wbuf, len, -1);
    } else {
        if (dn_vlen(n) != len) n = db_resize_value(c->db, n, len);
        memcpy(dn_val(n), wbuf, len);
    }
    n->enc = ENC_RAW;
    return n;
}

/* Redis's isHLLObjectOrReply. */
static int hll_or_reply(client *c, const dnode *n) {
    if (n->type != OBJ_STRING) {
        reply_err_wrongtype(c);
        return 0;
    }
    if (n->enc == ENC_INT || !hll_header_ok((const uint8_t *)dn_val(n), dn_vlen(n))) {
        reply_error(c, "WRONGTYPE Key is not a valid HyperLogLog string value.");
        return 0;
    }
    return 1;
}

/* Raise register idx to cnt in the scratch value (*len bytes), promoting
 * it to dense when the sparse form cannot take it (Redis's hllSparseSet /
 * hllDenseSet). */
static int wset(size_t *len, unsigned idx, unsigned cnt) {
    if (wbuf[4] == HLL_DENSE) return hll_dense_set(wbuf, idx, cnt);
    wreserve(*len + HLL_SPARSE_SLACK);
    int r = hll_sparse_set(wbuf, len, wcap, idx, cnt, (size_t)srv.cfg.hll_sparse_max_bytes);
    if (r != HLL_PROMOTE) return r;
    if (hll_sparse_to_dense(wbuf, *len, densetmp) != 0) return HLL_CORRUPT;
    memcpy(wreserve(HLL_DENSE_SIZE), densetmp, HLL_DENSE_SIZE);
    *len = HLL_DENSE_SIZE;
    return hll_dense_set(wbuf, idx, cnt);
}

static void signal_key(client *c, span key) { touch_watched_key(c->db, key.p, key.len); }

/* ---- PFADD ----------------------------------------------------------------- */

static void cmd_pfadd(client *c) {
    span key = c->argv[1];
    dnode *n = db_lookup_write(c->db, key.p, key.len);
    long long updated = 0;
    int corrupt = 0;
    if (n && !hll_or_reply(c, n)) return;
    if (n && hll_encoding((const uint8_t *)dn_val(n)) == HLL_DENSE) { /* in place */
        n->enc = ENC_RAW;
        uint8_t *v = (uint8_t *)dn_val(n);
        for (int j = 2; j < c->argc; j++) {
            unsigned idx;
            int cnt = hll_pat_len(c->argv[j].p, c->argv[j].len, &idx);
            if (hll_dense_set(v, idx, (unsigned)cnt) == HLL_CHANGED) updated++;
        }
    } else {
        size_t len;
        if (n) {
            len = wload(n);
        } else {
            len = hll_init_sparse(wreserve(HLL_SPARSE_EMPTY_SIZE + HLL_SPARSE_SLACK));
            updated++;
        }
        for (int j = 2; j < c->argc; j++) {
            unsigned idx;
            int cnt = hll_pat_len(c->argv[j].p, c->argv[j].len, &idx);
            int r = wset(&len, idx, (unsigned)cnt);
            if (r == HLL_CORRUPT) {
                corrupt = 1;
                break;
            }
            if (r == HLL_CHANGED) updated++;
        }
        n = wstore(c, key, n, len); /* what changed before a damaged opcode stays, as in Redis */
        wrelease();
    }
    if (corrupt) {
        reply_error(c, invalid_hll_err);
        return;
    }
    if (updated) {
        hll_invalidate_cache((uint8_t *)dn_val(n));
        signal_key(c, key);
        notify_keyspace_event(NOTIFY_STRING, "pfadd", c->db->id, key.p, key.len);
        srv.dirty += updated;
    }
    reply_int(c, updated ? 1 : 0);
}

/* ---- PFCOUNT --------------------------------------------------------------- */

static void cmd_pfcount(client *c) {
    if (c->argc > 2) { /* the estimate of the union: registers merged into maxregs */
        memset(maxregs, 0, sizeof maxregs);
        for (int j = 1; j < c->argc; j++) {
            dnode *n = db_lookup_read(c->db, c->argv[j].p, c->argv[j].len);
            if (!n) continue;
            if (!hll_or_reply(c, n)) return;
            if (hll_merge(maxregs, (const uint8_t *)dn_val(n), dn_vlen(n)) != 0) {
                reply_error(c, invalid_hll_err);
                return;
            }
        }
        reply_int(c, (long long)hll_count_raw(maxregs));
        return;
    }
    span key = c->argv[1];
    dnode *n = db_lookup_read(c->db, key.p, key.len);
    if (!n) {
        reply_int(c, 0);
        return;
    }
    if (!hll_or_reply(c, n)) return;
    n->enc = ENC_RAW;
    uint8_t *v = (uint8_t *)dn_val(n);
    uint64_t card;
    if (hll_cache_valid(v)) {
        card = hll_cache_get(v);
    } else {
        int invalid = 0;
        card = hll_count(v, dn_vlen(n), &invalid);
        if (invalid) {
            reply_error(c, invalid_hll_err);
            return;
        }
        dn_prepare_change(n); /* a read lookup, but the cache is written in place */
        hll_cache_set(v, card); /* a write: Redis propagates the PFCOUNT */
        signal_key(c, key);
        srv.dirty++;
    }
    reply_int(c, (long long)card);
}

/* ---- PFMERGE --------------------------------------------------------------- */

static void cmd_pfmerge(client *c) {
    span dest = c->argv[1];
    int use_dense = 0;
    memset(maxregs, 0, sizeof maxregs);
    for (int j = 1; j < c->argc; j++) { /* the destination is a source too */
        dnode *n = db_lookup_read(c->db, c->argv[j].p, c->argv[j].len);
        if (!n) continue;
        if (!hll_or_reply(c, n)) return;
        const uint8_t *v = (const uint8_t *)dn_val(n);
        if (hll_encoding(v) == HLL_DENSE) use_dense = 1;
        if (hll_merge(maxregs, v, dn_vlen(n)) != 0) {
            reply_error(c, invalid_hll_err);
            return;
        }
    }
    dnode *n = db_lookup_write(c->db, dest.p, dest.len);
    size_t len = n ? wload(n) : hll_init_sparse(wreserve(HLL_SPARSE_EMPTY_SIZE + HLL_SPARSE_SLACK));
    if (use_dense && wbuf[4] == HLL_SPARSE) {
        if (hll_sparse_to_dense(wbuf, len, densetmp) != 0) {
            if (!n) wstore(c, dest, NULL, len); /* Redis added the new key first */
            wrelease();
            reply_error(c, invalid_hll_err);
            return;
        }
        memcpy(wreserve(HLL_DENSE_SIZE), densetmp, HLL_DENSE_SIZE);
        len = HLL_DENSE_SIZE;
    }
    for (unsigned j = 0; j < HLL_REGISTERS; j++)
        if (maxregs[j]) wset(&len, j, maxregs[j]); /* a damaged destination is left as it comes out, as in Redis */
    n = wstore(c, dest, n, len);
    wrelease();
    hll_invalidate_cache((uint8_t *)dn_val(n));
    signal_key(c, dest);
    notify_keyspace_event(NOTIFY_STRING, "pfadd", c->db->id, dest.p, dest.len); /* sic: Redis raises pfadd */
    srv.dirty++;
    reply_ok(c);
}

/* ---- PFDEBUG / PFSELFTEST ----------------------------------------------------- */

/* Redis compares the subcommand as a C string: up to an embedded NUL. */
static size_t cstr_len(span s) {
    const char *z = memchr(s.p, 0, s.len);
    return z ? (size_t)(z - s.p) : s.len;
}

static int sub_is(span s, const char *lit) {
    span t = {s.p, cstr_len(s)};
    return span_eq_nocase(t, lit);
}

/* Convert node n's sparse value to dense in place. 0 or -1 (damaged). */
static int node_to_dense(client *c, dnode **np) {
    dnode *n = *np;
    if (hll_sparse_to_dense((const uint8_t *)dn_val(n), dn_vlen(n), densetmp) != 0) return -1;
    n = db_resize_value(c->db, n, HLL_DENSE_SIZE);
    memcpy(dn_val(n), densetmp, HLL_DENSE_SIZE);
    *np = n;
    return 0;
}

static void cmd_pfdebug(client *c) {
    span sub = c->argv[1], key = c->argv[2];
    dnode *n = db_lookup_write(c->db, key.p, key.len);
    if (!n) {
        reply_error(c, "ERR The specified key does not exist");
        return;
    }
    if (!hll_or_reply(c, n)) return;
    n->enc = ENC_RAW;
    int sparse = hll_encoding((const uint8_t *)dn_val(n)) == HLL_SPARSE;
    if (sub_is(sub, "getreg")) {
        if (sparse) {
            if (node_to_dense(c, &n) != 0) {
                reply_error(c, invalid_hll_err);
                return;
            }
            srv.dirty++; /* the encoding changed: propagated */
        }
        const uint8_t *regs = (const uint8_t *)dn_val(n) + HLL_HDR_SIZE;
        reply_array(c, HLL_REGISTERS);
        for (unsigned j = 0; j < HLL_REGISTERS; j++) reply_int(c, hll_dense_get(regs, j));
    } else if (sub_is(sub, "decode")) {
        if (!sparse) {
            reply_error(c, "ERR HLL encoding is not sparse");
            return;
        }
        const uint8_t *v = (const uint8_t *)dn_val(n), *end = v + dn_vlen(n);
        size_t pos = HLL_HDR_SIZE, len = dn_vlen(n);
        sbuf b = {0};
        sb_reserve(&b, 64);
        while (pos < len) {
            hll_op op = hll_sparse_op(v + pos, end);
            if (op.kind == 'v') sb_addf(&b, "v:%u,%u ", op.value, op.runlen);
            else sb_addf(&b, "%c:%u ", op.kind, op.runlen);
            pos += op.size;
        }
        size_t out = b.len;
        while (out && b.p[out - 1] == ' ') out--;
        reply_bulk(c, b.p, out);
        sb_free(&b);
    } else if (sub_is(sub, "encoding")) {
        reply_status(c, sparse ? "sparse" : "dense");
    } else if (sub_is(sub, "todense")) {
        if (sparse) {
            if (node_to_dense(c, &n) != 0) {
                reply_error(c, invalid_hll_err);
                return;
            }
            srv.dirty++;
        }
        reply_int(c, sparse);
    } else {
        reply_errorf(c, "ERR Unknown PFDEBUG subcommand '%.*s'", (int)cstr_len(sub), sub.p);
    }
}

static void cmd_pfselftest(client *c) {
    char err[256];
    uint64_t seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)srv.now_ms;
    if (hll_selftest(err, sizeof err, (size_t)srv.cfg.hll_sparse_max_bytes, seed) != 0) reply_errorf(c, "ERR %s", err);
    else reply_ok(c);
}

/* ---- the table --------------------------------------------------------------- */

static command hll_commands[] = {
    CMD("pfadd", cmd_pfadd, -2, .flags = CMD_WRITE | CMD_DENYOOM | CMD_FAST, .acl = "write hyperloglog fast",
        CMD_KEYS(1, 1, 1), .summary = "Adds the specified elements to the specified HyperLogLog.", .since = "2.8.9",
        .complexity = "O(1) to add every element."),
    CMD("pfcount", cmd_pfcount, -2, .flags = CMD_READONLY, .run_argc = 2, .acl = "read hyperloglog slow", CMD_KEYS(1, -1, 1),
        .summary = "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
        .since = "2.8.9",
        .complexity = "O(1) with a very small average constant time when called with a single key. O(N) with N "
                      "being the number of keys, and much bigger constant times, when called with multiple keys."),
    CMD("pfmerge", cmd_pfmerge, -2, .flags = CMD_WRITE | CMD_DENYOOM, .acl = "write hyperloglog slow",
        CMD_KEYS(1, -1, 1), .summary = "Merge N different HyperLogLogs into a single one.", .since = "2.8.9",
        .complexity = "O(N) to merge N HyperLogLogs, but with high constant times."),
    CMD("pfdebug", cmd_pfdebug, 3, .flags = CMD_WRITE | CMD_DENYOOM | CMD_ADMIN,
        .acl = "write hyperloglog admin slow dangerous", CMD_KEYS(2, 2, 1),
        .summary = "Internal commands for debugging HyperLogLog values", .since = "2.8.9", .complexity = "N/A"),
    CMD("pfselftest", cmd_pfselftest, 1, .flags = CMD_ADMIN, .acl = "hyperloglog admin slow dangerous",
        .summary = "An internal command for testing HyperLogLog values", .since = "2.8.9", .complexity = "N/A"),
    {0},
};

const command_group hll_group = {"hyperloglog", hll_commands};
