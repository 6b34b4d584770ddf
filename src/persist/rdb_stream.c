/* rdb_stream.c - streams in Redis's RDB encoding (see rdb_stream.h).
 *
 * Why a file of its own: a stream is the one value whose payload is a
 * structure of several parts (nodes, metadata, groups, PELs, consumers)
 * with references between them, so loading it is a small validator in
 * itself. The nodes go through t_stream_lp.c (each listpack rendered from
 * or read into a block, fully validated there); everything else is read
 * here with the bounds-checked reader (rdb_io.h), whose first error
 * sticks, so each part is read whole and checked once.
 *
 * Redis facts this follows (rdbSaveObject / rdbLoadObject, Redis 7.0):
 *  - node keys and PEL IDs are the 128-bit ID big-endian (ms, then seq);
 *  - IDs in the metadata are two lengths (ms, seq); entries-read is a
 *    length holding the long long (-1, "unknown", is 2^64 - 1);
 *  - delivery and seen times are 8-byte little-endian milliseconds;
 *  - the group PEL carries the delivery data, a consumer's PEL only IDs,
 *    each of which must be in the group PEL;
 *  - type 15 has no first ID, greatest deleted ID, entries-added or
 *    entries-read: Redis 7.0 takes entries-added = length, no tombstone,
 *    the first live entry as first ID (2^64-1-2^64-1 when there is none),
 *    and estimates each group's entries-read from its last ID;
 *  - type 21 (Redis 7.2) adds a consumer active-time after seen-time.
 */
#include "rdb_stream.h"

#include <string.h>

#include "rdb_value.h"
#include "t_stream.h"
#include "zmalloc.h"

#define RAW_ID_LEN 16

static void id_to_raw(unsigned char *p, sid id) {
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(id.ms >> (56 - 8 * i));
        p[8 + i] = (unsigned char)(id.seq >> (56 - 8 * i));
    }
}

static sid id_from_raw(const unsigned char *p) {
    sid id = {0, 0};
    for (int i = 0; i < 8; i++) {
        id.ms = id.ms << 8 | p[i];
        id.seq = id.seq << 8 | p[8 + i];
    }
    return id;
}

/* ---- saving ---------------------------------------------------------------- */

static void save_id(rdbw *w, sid id) {
    rdbw_len(w, id.ms);
    rdbw_len(w, id.seq);
}

static void save_raw_id(rdbw *w, sid id) {
    unsigned char raw[RAW_ID_LEN];
    id_to_raw(raw, id);
    rdbw_raw(w, raw, sizeof raw);
}

static void save_nodes(rdbw *w, const stream *s) {
    size_t n = stream_block_count(s);
    rdbw_len(w, n);
    for (size_t i = 0; i < n; i++) {
        sid master;
        size_t len;
        unsigned char *lp = stream_block_listpack(s, i, &master, &len);
        unsigned char key[RAW_ID_LEN];
        id_to_raw(key, master);
        rdbw_string(w, key, sizeof key);
        rdbw_string(w, lp, len);
        zfree(lp);
    }
}

/* A PEL: count, then per entry the raw ID and, for the group's, the
 * delivery time and count. */
static void save_pel(rdbw *w, const sidmap *pel, int nacks) {
    rdbw_len(w, pel->len);
    for (sidmap_node *n = sidmap_first(pel); n; n = sidmap_next(n)) {
        save_raw_id(w, sidmap_id(n));
        if (!nacks) continue;
        const snack *k = sidmap_val(n);
        rdbw_u64_le(w, (uint64_t)k->delivery_time);
        rdbw_len(w, k->delivery_count);
    }
}

static void save_group(rdbw *w, const sgroup *g) {
    rdbw_string(w, g->name, g->nlen);
    save_id(w, g->last_id);
    rdbw_len(w, (uint64_t)g->entries_read);
    save_pel(w, &g->pel, 1);
    rdbw_len(w, g->nconsumers);
    for (size_t i = 0; i < g->nconsumers; i++) {
        const sconsumer *c = g->consumers[i];
        rdbw_string(w, c->name, c->nlen);
        rdbw_u64_le(w, (uint64_t)c->seen_time);
        save_pel(w, &c->pel, 0);
    }
}

void rdb_save_stream(rdbw *w, const stream *s) {
    save_nodes(w, s);
    rdbw_len(w, s->length);
    save_id(w, s->last_id);
    save_id(w, s->first_id);
    save_id(w, s->max_deleted_id);
    rdbw_len(w, s->entries_added);
    rdbw_len(w, s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) save_group(w, s->groups[i]);
}

/* ---- loading: nodes and metadata -------------------------------------------- */

static sid load_id(rdbr *r) {
    sid id;
    id.ms = rdbr_len(r);
    id.seq = rdbr_len(r);
    return id;
}

static int load_raw_id(rdbr *r, sid *id) {
    const unsigned char *p = rdbr_bytes(r, RAW_ID_LEN);
    if (p) *id = id_from_raw(p);
    return p != NULL;
}

/* One node: its key (a 16-byte ID) and its listpack, appended to s. */
static int load_node(rdbr *r, stream *s) {
    rdb_str key, lp;
    if (!rdbr_string(r, &key)) return 0;
    if (key.len != RAW_ID_LEN) {
        rdb_str_free(&key);
        return rdbr_fail(r, "stream node key is not the size of a stream ID");
    }
    sid master = id_from_raw((const unsigned char *)key.p);
    rdb_str_free(&key);
    if (!rdbr_string(r, &lp)) return 0;
    int bad = stream_add_listpack(s, master, (const unsigned char *)lp.p, lp.len) < 0;
    rdb_str_free(&lp);
    if (bad) return rdbr_fail(r, "invalid stream node (listpack, IDs or counts)");
    return 1;
}

/* node key string (17 bytes) and listpack string (8 at least) */
#define NODE_MIN_BYTES 25

static int load_nodes(rdbr *r, stream *s) {
    uint64_t n = rdbr_count(r, NODE_MIN_BYTES);
    for (uint64_t i = 0; i < n && rdbr_ok(r); i++) load_node(r, s);
    return rdbr_ok(r);
}

/* Type 15 has no counters: Redis 7.0 derives them from the entries. */
static void derive_counters(stream *s) {
    s->entries_added = s->length;
    s->max_deleted_id = SID_MIN;
    if (!stream_first_id(s, &s->first_id)) s->first_id = SID_MAX;
}

/* Length, last ID and (type 19 on) first ID, greatest deleted ID, entries
 * added, checked against the nodes read. */
static int load_meta(rdbr *r, unsigned t, stream *s) {
    uint64_t length = rdbr_len(r);
    sid last = load_id(r), first = SID_MIN, maxdel = SID_MIN, live_last;
    uint64_t added = 0;
    if (t != RDB_TYPE_STREAM_LISTPACKS) {
        first = load_id(r);
        maxdel = load_id(r);
        added = rdbr_len(r);
    }
    if (!rdbr_ok(r)) return 0;
    if (length != s->length) return rdbr_fail(r, "stream length is not the number of its entries");
    /* XSETID may leave the last ID below a trailing deleted entry, never below a live one */
    if (stream_last_live_id(s, &live_last) && sid_cmp(last, live_last) < 0)
        return rdbr_fail(r, "stream last ID is smaller than its last entry");
    s->last_id = last;
    if (t == RDB_TYPE_STREAM_LISTPACKS) {
        derive_counters(s);
        return 1;
    }
    if (added < length) return rdbr_fail(r, "stream entries-added is smaller than its length");
    sid real_first;
    if (length && (!stream_first_id(s, &real_first) || sid_cmp(real_first, first) != 0))
        return rdbr_fail(r, "stream first ID is not its first entry");
    s->first_id = first;
    s->max_deleted_id = maxdel;
    s->entries_added = added;
    return 1;
}

/* ---- loading: consumer groups ---------------------------------------------- */

/* The group PEL: ID, delivery time, delivery count; owners come with the consumers. */
#define NACK_MIN_BYTES (RAW_ID_LEN + 8 + 1)

static int load_group_pel(rdbr *r, sgroup *g) {
    uint64_t n = rdbr_count(r, NACK_MIN_BYTES);
    for (uint64_t i = 0; i < n && rdbr_ok(r); i++) {
        sid id;
        if (!load_raw_id(r, &id)) break;
        int64_t when = (int64_t)rdbr_u64_le(r);
        uint64_t count = rdbr_len(r);
        if (!rdbr_ok(r)) break;
        snack *k = zmalloc(sizeof *k);
        k->delivery_time = when;
        k->delivery_count = count;
        k->consumer = NULL;
        if (!sidmap_put(&g->pel, id, k)) {
            zfree(k);
            return rdbr_fail(r, "duplicate entry in a stream group PEL");
        }
    }
    return rdbr_ok(r);
}

/* A consumer's PEL: IDs that must be pending in the group and not owned yet. */
static int load_consumer_pel(rdbr *r, sconsumer *c, sgroup *g) {
    uint64_t n = rdbr_count(r, RAW_ID_LEN);
    for (uint64_t i = 0; i < n && rdbr_ok(r); i++) {
        sid id;
        if (!load_raw_id(r, &id)) break;
        snack *k = sidmap_get(&g->pel, id);
        if (!k) return rdbr_fail(r, "stream consumer PEL entry not in the group PEL");
        if (k->consumer) return rdbr_fail(r, "stream PEL entry owned twice");
        k->consumer = c;
        sidmap_put(&c->pel, id, k);
    }
    return rdbr_ok(r);
}

/* name (1 byte), seen-time, PEL count */
#define CONSUMER_MIN_BYTES 10

static int load_consumers(rdbr *r, unsigned t, sgroup *g) {
    uint64_t n = rdbr_count(r, CONSUMER_MIN_BYTES);
    for (uint64_t i = 0; i < n && rdbr_ok(r); i++) {
        rdb_str name;
        if (!rdbr_string(r, &name)) break;
        int64_t seen = (int64_t)rdbr_u64_le(r);
        if (t == RDB_TYPE_STREAM_LISTPACKS_3) rdbr_u64_le(r); /* active-time: Redis 7.2's, not kept */
        sconsumer *c = rdbr_ok(r) ? stream_consumer_create(g, name.p, name.len, seen) : NULL;
        rdb_str_free(&name);
        if (!rdbr_ok(r)) break;
        if (!c) return rdbr_fail(r, "duplicate stream consumer");
        load_consumer_pel(r, c, g);
    }
    return rdbr_ok(r);
}

static int check_owned(rdbr *r, const sgroup *g) {
    for (sidmap_node *n = sidmap_first(&g->pel); n; n = sidmap_next(n))
        if (!((const snack *)sidmap_val(n))->consumer) return rdbr_fail(r, "stream group PEL entry without a consumer");
    return 1;
}

static int load_group(rdbr *r, unsigned t, stream *s) {
    rdb_str name;
    if (!rdbr_string(r, &name)) return 0;
    sid last = load_id(r);
    long long read = t == RDB_TYPE_STREAM_LISTPACKS ? stream_estimate_distance(s, last) : (long long)rdbr_len(r);
    sgroup *g = rdbr_ok(r) ? stream_group_create(s, name.p, name.len, last, read) : NULL;
    rdb_str_free(&name);
    if (!rdbr_ok(r)) return 0;
    if (!g) return rdbr_fail(r, "duplicate stream consumer group");
    return load_group_pel(r, g) && load_consumers(r, t, g) && check_owned(r, g);
}

/* name, last ID, PEL count, consumer count */
#define GROUP_MIN_BYTES 5

int rdb_load_stream(rdbr *r, unsigned t, stream **out) {
    stream *s = stream_new();
    *out = NULL;
    if (load_nodes(r, s) && load_meta(r, t, s)) {
        uint64_t n = rdbr_count(r, GROUP_MIN_BYTES);
        for (uint64_t i = 0; i < n && rdbr_ok(r); i++) load_group(r, t, s);
    }
    if (!rdbr_ok(r)) {
        stream_free(s);
        return 0;
    }
    *out = s;
    return 1;
}
