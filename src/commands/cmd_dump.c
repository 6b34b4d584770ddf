/* cmd_dump.c - DUMP and RESTORE: one value in Redis's serialized form,
 * the RDB encoding of the value (rdb_value.c) followed by the RDB version
 * (2 bytes, little-endian) and the CRC-64 of everything before it.
 *
 * RESTORE payloads come from clients: the footer is checked first (a
 * version newer than ours or a wrong checksum is refused with Redis's
 * text), then the value is read with the bounds-checked loader and must
 * use the payload exactly; anything else is "Bad data format".
 */
#include "blocking.h"
#include "command.h"
#include "crc64.h"
#include "db.h"
#include "evict.h"
#include "multi.h"
#include "notify.h"
#include "rdb.h"
#include "rdb_io.h"
#include "rdb_value.h"
#include "propagate.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include <string.h>


static void cmd_dump(client *c) {
    dnode *n = db_lookup_read(c->db, c->argv[1].p, c->argv[1].len);
    if (!n) {
        reply_null(c);
        return;
    }
    rdbw w;
    rdbw_init(&w, rdb_current_options().compress);
    rdbw_u8(&w, rdb_value_type(n));
    rdb_save_payload(&w, n);
    rdb_payload_finish(&w);
    reply_bulk(c, (const char *)w.buf, w.len);
    rdbw_free(&w);
}


typedef struct restore_opts {
    int replace, absttl;
    long long ttl, idle, freq;  /* idle, freq: -1 when not given */
} restore_opts;

static int parse_opts(client *c, restore_opts *o) {
    memset(o, 0, sizeof *o);
    o->idle = o->freq = -1;
    for (int j = 4; j < c->argc; j++) {
        span a = c->argv[j];
        int more = j + 1 < c->argc;
        if (span_eq_nocase(a, "replace")) {
            o->replace = 1;
        } else if (span_eq_nocase(a, "absttl")) {
            o->absttl = 1;
        } else if (span_eq_nocase(a, "idletime") && more && o->freq < 0) {
            span v = c->argv[++j];
            if (!str_to_ll(v.p, v.len, &o->idle)) return reply_err_notint(c), 0;
            if (o->idle < 0) return reply_error(c, "ERR Invalid IDLETIME value, must be >= 0"), 0;
        } else if (span_eq_nocase(a, "freq") && more && o->idle < 0) {
            span v = c->argv[++j];
            if (!str_to_ll(v.p, v.len, &o->freq)) return reply_err_notint(c), 0;
            if (o->freq < 0 || o->freq > 255)
                return reply_error(c, "ERR Invalid FREQ value, must be >= 0 and <= 255"), 0;
        } else {
            return reply_err_syntax(c), 0;
        }
    }
    return 1;
}

/* Checked after the options and the BUSYKEY test, as Redis does. */
static int parse_ttl(client *c, restore_opts *o) {
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &o->ttl)) return reply_err_notint(c), 0;
    if (o->ttl < 0) return reply_error(c, "ERR Invalid TTL value, must be >= 0"), 0;
    return 1;
}

static int decode(client *c, rdb_value *v) {
    const unsigned char *p = (const unsigned char *)c->argv[3].p;
    size_t len = c->argv[3].len;
    if (!rdb_payload_ok(p, len)) {
        reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return 0;
    }
    rdbr r;
    rdbr_init(&r, p, len - RDB_PAYLOAD_FOOTER);
    unsigned t = rdbr_u8(&r);
    if (!rdbr_ok(&r) || !rdb_type_known(t) || !rdb_load_value(&r, t, v) || rdbr_left(&r) != 0) {
        rdb_value_free(v);
        reply_error(c, "ERR Bad data format");
        return 0;
    }
    return 1;
}

static void cmd_restore(client *c) {
    restore_opts o;
    rdb_value v;
    span key = c->argv[1];
    if (!parse_opts(c, &o)) return;
    if (!o.replace && db_lookup_write(c->db, key.p, key.len)) {
        reply_error(c, "BUSYKEY Target key name already exists.");
        return;
    }
    if (!parse_ttl(c, &o) || !decode(c, &v)) return;
    int64_t expire_ms = o.ttl ? (o.absttl ? o.ttl : srv.now_ms + o.ttl) : -1;
    int deleted = o.replace && db_delete_stored(c->db, key.p, key.len);
    if (expire_ms >= 0 && expire_ms < srv.now_ms) { /* already expired: nothing is created */
        rdb_value_free(&v);
        if (deleted) {
            touch_watched_key(c->db, key.p, key.len);
            srv.dirty++;
            notify_key(NOTIFY_GENERIC, "del", c->db->id, key);
        }
        span del[2] = {{"DEL", 3}, key};
        prop_rewrite(c, 2, del);
        reply_ok(c);
        return;
    }
    if (rdb_value_empty(&v)) {
        rdb_value_free(&v);
        reply_error(c, "ERR Bad data format");
        return;
    }
    dnode *n = rdb_value_store(c->db, key.p, key.len, &v, expire_ms);
    rdb_value_set_access(n, o.idle, (int)o.freq);
    if (n->type == OBJ_LIST || n->type == OBJ_ZSET || n->type == OBJ_STREAM) signal_key_ready(c->db, key.p, key.len);
    touch_watched_key(c->db, key.p, key.len);
    srv.dirty++;
    if (expire_ms >= 0 && !o.absttl) { /* a relative TTL travels as the absolute time it gave */
        char ms[24];
        span effect[6] = {{"RESTORE", 7}, key, {ms, ll_to_str(ms, expire_ms)}, c->argv[3], {"ABSTTL", 6},
                          {"REPLACE", 7}};
        prop_rewrite(c, 6, effect);
    }
    notify_key(NOTIFY_GENERIC, "restore", c->db->id, key);
    reply_ok(c);
}

#define RESTORE_CX                                                                                             \
    "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the "     \
    "number of Redis objects composing the value and M their average size. For small string values the time "  \
    "complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the "        \
    "complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N))."

static command dump_commands[] = {
    CMD("dump", cmd_dump, 2, .flags = CMD_READONLY, .acl = "keyspace read slow", CMD_KEYS(1, 1, 1),
        .summary = "Return a serialized version of the value stored at the specified key.", .since = "2.6.0",
        .complexity = "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of "
            "Redis objects composing the value and M their average size. For small string values the time "
            "complexity is thus O(1)+O(1*M) where M is small, so simply O(1)."),
    CMD("restore", cmd_restore, -4, .flags = CMD_WRITE | CMD_DENYOOM, .acl = "keyspace write slow dangerous",
        CMD_KEYS(1, 1, 1),
        .summary = "Create a key using the provided serialized value, previously obtained using DUMP.",
        .since = "2.6.0", .complexity = RESTORE_CX),
    /* what a cluster's MIGRATE sends after an -ASK redirect: RESTORE on a standalone server */
    CMD("restore-asking", cmd_restore, -4, .flags = CMD_WRITE | CMD_DENYOOM | CMD_ASKING,
        .acl = "keyspace write slow dangerous", CMD_KEYS(1, 1, 1),
        .group = "server", .summary = "An internal command for migrating keys in a cluster", .since = "3.0.0",
        .complexity = RESTORE_CX),
    {0},
};
const command_group dump_group = {"generic", dump_commands};
