/* rdb_value.c - values in Redis's RDB encoding (see rdb_value.h).
 *
 * ferry's in-memory forms are its own (t_list.c chunks, listpack.c,
 * intset.c), so saving re-encodes each value into the bytes Redis keeps
 * (rdb_enc.c builds Redis listpacks and intsets) and loading decodes any
 * of Redis's forms element by element into ferry's structures, through
 * the same insert paths the commands use, so a loaded value ends up in the
 * encoding the current thresholds give it. Every read goes through the
 * bounds-checked reader (rdb_io.c) and the validating iterators of
 * rdb_enc.c: a malformed payload is an error, never an over-read.
 */
#include "rdb_value.h"
#include "config.h"
#include "db.h"
#include "evict.h"
#include "rdb_enc.h"
#include "rdb_stream.h"
#include "server.h"
#include "t_hash.h"
#include "t_list.h"
#include "t_set.h"
#include "t_zset.h"
#include "util.h"
#include "zmalloc.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QL_NODE_PLAIN 1
#define QL_NODE_PACKED 2
#define QL_SIZE_SAFETY_LIMIT 8192

/* ---- saving -------------------------------------------------------------- */

static void save_string(rdbw *w, const dnode *n) {
    long long v;
    if (n->enc == ENC_INT && str_to_ll(dn_val(n), dn_vlen(n), &v)) rdbw_string_ll(w, v);
    else rdbw_string(w, dn_val(n), dn_vlen(n));
}

static void put_listpack(rdbw *w, rlp_builder *b) {
    size_t len;
    unsigned char *lp = rlp_finish(b, &len);
    rdbw_string(w, lp, len);
    zfree(lp);
}

/* Redis 7.0's quicklist rule for appending an element of sz bytes to a node
 * of node_bytes bytes and count elements, so nodes split where Redis's do. */
static int node_takes(size_t node_bytes, size_t count, size_t sz) {
    int fill = (int)srv.cfg.list_max_listpack_size;
    static const size_t levels[] = {4096, 8192, 16384, 32768, 65536};
    size_t overhead = (sz < 254 ? 1 : 5) + (sz < 64 ? 1 : sz < 16384 ? 2 : 5);
    size_t new_sz = node_bytes + sz + overhead;
    if (fill < 0 && (size_t)(-fill) <= 5) return new_sz <= levels[-fill - 1];
    if (fill < 0 || new_sz > QL_SIZE_SAFETY_LIMIT) return 0;
    return (long)count < fill;
}

typedef struct list_nodes {
    rdbw body;                  /* the nodes, after their count */
    rlp_builder b;
    uint64_t nodes;
} list_nodes;

static void flush_node(list_nodes *ln) {
    if (!ln->b.count) return;
    rdbw_u8(&ln->body, QL_NODE_PACKED);
    put_listpack(&ln->body, &ln->b);
    ln->nodes++;
}

static void save_list(rdbw *w, const dnode *n) {
    tlist *l = dn_ptr(n);
    list_nodes ln;
    rdbw_init(&ln.body, w->compress);
    rlp_init(&ln.b);
    ln.nodes = 0;
    tl_iter it;
    tl_elem e;
    tl_iter_init(&it, l, 0, TL_TAIL);
    while (tl_iter_next(&it, &e)) {
        if (ln.b.count && !node_takes(rlp_bytes(&ln.b), ln.b.count, e.len)) flush_node(&ln);
        rlp_append(&ln.b, e.p, e.len);
    }
    flush_node(&ln);
    zfree(rlp_finish(&ln.b, &(size_t){0}));
    rdbw_len(w, ln.nodes);
    rdbw_raw(w, ln.body.buf, ln.body.len);
    rdbw_free(&ln.body);
}

static void save_intset(rdbw *w, fset *s) {
    size_t n = fset_size(s), k = 0, len;
    int64_t *v = zmalloc(sizeof *v * (n ? n : 1));
    fset_iter it;
    fset_member m;
    fset_iter_init(&it, s);
    while (fset_iter_next(&it, &m)) v[k++] = m.v;
    fset_iter_end(&it);
    unsigned char *is = rintset_build(v, k, &len);
    rdbw_string(w, is, len);
    zfree(is);
    zfree(v);
}

static void save_set(rdbw *w, const dnode *n) {
    fset *s = dn_ptr(n);
    if (fset_encoding(s) == ENC_INTSET) {
        save_intset(w, s);
        return;
    }
    rdbw_len(w, fset_size(s));
    fset_iter it;
    fset_member m;
    fset_iter_init(&it, s);
    while (fset_iter_next(&it, &m)) rdbw_string(w, m.p, m.len);
    fset_iter_end(&it);
}

static void hash_to_listpack(void *ud, hstr f, hstr v) {
    rlp_append(ud, f.p, f.len);
    rlp_append(ud, v.p, v.len);
}

static void hash_to_entries(void *ud, hstr f, hstr v) {
    rdbw_string(ud, f.p, f.len);
    rdbw_string(ud, v.p, v.len);
}

static void save_hash(rdbw *w, const dnode *n) {
    hashobj *h = dn_ptr(n);
    if (h->enc == ENC_LISTPACK) {
        rlp_builder b;
        rlp_init(&b);
        hash_foreach(h, hash_to_listpack, &b);
        put_listpack(w, &b);
        return;
    }
    rdbw_len(w, hash_len(h));
    hash_foreach(h, hash_to_entries, w);
}

/* Listpack sorted sets hold member, score text, ... in score order; a
 * skiplist set is saved from the highest score down, as Redis does (its
 * loader then inserts at the head). */
static void save_zset(rdbw *w, const dnode *n) {
    zset *zs = dn_ptr(n);
    int lp = zset_enc(zs) == ENC_LISTPACK;
    rlp_builder b;
    rlp_init(&b);
    if (!lp) rdbw_len(w, zset_len(zs));
    zs_iter it;
    for (zs_iter_rank(&it, zs, 0, !lp); zs_iter_valid(&it); zs_iter_next(&it)) {
        size_t len;
        const char *m = zs_iter_member(&it, &len);
        double score = zs_iter_score_of(&it);
        if (!lp) {
            rdbw_string(w, m, len);
            rdbw_double_bin(w, score);
            continue;
        }
        char buf[32];
        rlp_append(&b, m, len);
        rlp_append(&b, buf, zset_score_str(buf, score));
    }
    if (lp) put_listpack(w, &b);
    else zfree(rlp_finish(&b, &(size_t){0}));
}

unsigned rdb_value_type(const dnode *n) {
    switch (n->type) {
    case OBJ_LIST: return RDB_TYPE_LIST_QUICKLIST_2;
    case OBJ_SET: return fset_encoding(dn_ptr(n)) == ENC_INTSET ? RDB_TYPE_SET_INTSET : RDB_TYPE_SET;
    case OBJ_HASH: return ((hashobj *)dn_ptr(n))->enc == ENC_LISTPACK ? RDB_TYPE_HASH_LISTPACK : RDB_TYPE_HASH;
    case OBJ_ZSET: return zset_enc(dn_ptr(n)) == ENC_LISTPACK ? RDB_TYPE_ZSET_LISTPACK : RDB_TYPE_ZSET_2;
    case OBJ_STREAM: return RDB_TYPE_STREAM_LISTPACKS_2;
    default: return RDB_TYPE_STRING;
    }
}

void rdb_save_payload(rdbw *w, const dnode *n) {
    switch (n->type) {
    case OBJ_STRING: save_string(w, n); break;
    case OBJ_LIST: save_list(w, n); break;
    case OBJ_SET: save_set(w, n); break;
    case OBJ_HASH: save_hash(w, n); break;
    case OBJ_ZSET: save_zset(w, n); break;
    case OBJ_STREAM: rdb_save_stream(w, dn_ptr(n)); break;
    }
}

/* ---- loading: elements --------------------------------------------------- */

/* An element of a compact encoding as bytes (integers as decimal text in buf). */
static const char *elem_bytes(const renc_elem *e, char *buf, size_t *len) {
    if (!e->is_int) {
        *len = e->len;
        return (const char *)e->p;
    }
    *len = ll_to_str(buf, e->v);
    return buf;
}

/* The elements of one embedded encoding, handed to a sink one by one. */
typedef struct sink {
    int (*put)(struct sink *s, const char *p, size_t len); /* 0 = reject (duplicate ...) */
    void *obj;
    int blob;                   /* from one listpack / ziplist: only the count decides the form, as Redis loads them */
    char *held;
    size_t held_len;
    const char *why;            /* the reason put rejected */
} sink;

enum { ENC_LP, ENC_ZL };

static int feed_encoded(rdbr *r, int kind, const unsigned char *p, size_t len, sink *s) {
    rlp_iter li;
    rzl_iter zi;
    /* the whole encoding first, header count included, as Redis's integrity check */
    long long count = kind == ENC_LP ? rlp_validate(p, len) : rzl_validate(p, len);
    int st = count < 0 ? -1 : kind == ENC_LP ? rlp_iter_init(&li, p, len) : rzl_iter_init(&zi, p, len);
    if (st < 0) return rdbr_fail(r, kind == ENC_LP ? "invalid listpack" : "invalid ziplist");
    renc_elem e;
    char buf[24];
    while ((st = kind == ENC_LP ? rlp_next(&li, &e) : rzl_next(&zi, &e)) == 1) {
        size_t n;
        const char *b = elem_bytes(&e, buf, &n);
        if (!s->put(s, b, n)) return rdbr_fail(r, s->why);
    }
    if (st < 0) return rdbr_fail(r, kind == ENC_LP ? "invalid listpack entry" : "invalid ziplist entry");
    return 1;
}

/* An RDB string holding a listpack or ziplist, fed to s. */
static int feed_string_encoded(rdbr *r, int kind, sink *s) {
    rdb_str str;
    if (!rdbr_string(r, &str)) return 0;
    int ok = feed_encoded(r, kind, (const unsigned char *)str.p, str.len, s);
    rdb_str_free(&str);
    return ok;
}

/* count plain RDB strings fed to s */
static int feed_strings(rdbr *r, uint64_t count, sink *s) {
    for (uint64_t i = 0; i < count && rdbr_ok(r); i++) {
        rdb_str str;
        if (!rdbr_string(r, &str)) return 0;
        int ok = s->put(s, str.p, str.len);
        rdb_str_free(&str);
        if (!ok) return rdbr_fail(r, s->why);
    }
    return rdbr_ok(r);
}

/* Pairs: hold the first, hand both to put2 on the second. */
static int hold_or_pair(sink *s, const char *p, size_t len, int (*put2)(sink *, const char *, size_t)) {
    if (!s->held) {
        s->held = zmalloc(len ? len : 1);
        memcpy(s->held, p, len);
        s->held_len = len;
        return 1;
    }
    int ok = put2(s, p, len);
    zfree(s->held);
    s->held = NULL;
    return ok;
}

/* ---- loading: sinks per type ----------------------------------------------- */

static int list_put(sink *s, const char *p, size_t len) {
    tl_push(s->obj, TL_TAIL, p, len);
    return 1;
}

static int set_put(sink *s, const char *p, size_t len) {
    fset *set = s->obj;
    if (!set) set = fset_new_for(p, len);
    int added = fset_add(&set, p, len);
    s->obj = set;
    s->why = "duplicate set member";
    return added;
}

static int hash_put2(sink *s, const char *v, size_t vlen) {
    s->why = "duplicate hash field";
    hashobj *h = s->obj;
    if (s->blob) return hash_set_keep_form(h, s->held, s->held_len, v, vlen);
    hash_prepare_write(h, s->held_len > vlen ? s->held_len : vlen, s->held_len + vlen);
    return hash_set(h, s->held, s->held_len, v, vlen);
}
static int hash_put(sink *s, const char *p, size_t len) { return hold_or_pair(s, p, len, hash_put2); }

static int parse_score(const char *p, size_t len, double *d) {
    char buf[64];
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, p, len);
    buf[len] = '\0';
    char *end;
    *d = strtod(buf, &end);
    return end == buf + len && !isnan(*d);
}

static int zset_put_scored(sink *s, double score) {
    zset *zs = s->obj;
    double old;
    s->why = "duplicate sorted set member";
    if (zset_score(zs, s->held, s->held_len, &old)) return 0;
    if (zset_enc(zs) == ENC_LISTPACK && (zset_len(zs) + 1 > (unsigned long)srv.cfg.zset_max_listpack_entries ||
                                         (!s->blob && s->held_len > (size_t)srv.cfg.zset_max_listpack_value)))
        zset_convert_to_skiplist(zs);
    zset_insert_new(zs, score, s->held, s->held_len);
    return 1;
}

static int zset_put2(sink *s, const char *p, size_t len) {
    double d;
    s->why = "invalid sorted set score";
    return parse_score(p, len, &d) && zset_put_scored(s, d);
}
static int zset_put(sink *s, const char *p, size_t len) { return hold_or_pair(s, p, len, zset_put2); }

static void sink_init(sink *s, int (*put)(sink *, const char *, size_t), void *obj) {
    memset(s, 0, sizeof *s);
    s->put = put;
    s->obj = obj;
    s->why = "invalid element";
}

/* ---- loading: per RDB type ---------------------------------------------------- */

/* Size dict d for a collection declared to hold n elements, so loading
 * them never rehashes; bounded by the bytes left (two per element at
 * least), so a hostile count reserves no more than the file's size. */
static void reserve_elements(rdbr *r, dict *d, uint64_t n) {
    uint64_t most = rdbr_left(r) / 2;
    dict_reserve(d, (size_t)(n < most ? n : most));
}

static int load_quicklist(rdbr *r, unsigned t, sink *s) {
    uint64_t nodes = rdbr_count(r, 2);
    for (uint64_t i = 0; i < nodes && rdbr_ok(r); i++) {
        uint64_t container = t == RDB_TYPE_LIST_QUICKLIST_2 ? rdbr_len(r) : QL_NODE_PACKED;
        if (container == QL_NODE_PLAIN) {
            feed_strings(r, 1, s);
        } else if (container == QL_NODE_PACKED) {
            feed_string_encoded(r, t == RDB_TYPE_LIST_QUICKLIST_2 ? ENC_LP : ENC_ZL, s);
        } else {
            rdbr_fail(r, "unknown quicklist node container");
        }
    }
    return rdbr_ok(r);
}

static int load_list(rdbr *r, unsigned t, rdb_value *v) {
    sink s;
    sink_init(&s, list_put, tl_new());
    v->type = OBJ_LIST;
    v->enc = ENC_QUICKLIST;
    v->ptr = s.obj;
    if (t == RDB_TYPE_LIST) return feed_strings(r, rdbr_count(r, 1), &s);
    if (t == RDB_TYPE_LIST_ZIPLIST) return feed_string_encoded(r, ENC_ZL, &s);
    return load_quicklist(r, t, &s);
}

static int load_intset(rdbr *r, sink *s) {
    rdb_str str;
    if (!rdbr_string(r, &str)) return 0;
    long long n = rintset_validate((const unsigned char *)str.p, str.len);
    if (n < 0) rdbr_fail(r, "invalid intset");
    for (long long i = 0; i < n && rdbr_ok(r); i++) {
        char buf[24];
        if (!s->put(s, buf, ll_to_str(buf, rintset_get((const unsigned char *)str.p, (size_t)i))))
            rdbr_fail(r, s->why);
    }
    rdb_str_free(&str);
    return rdbr_ok(r);
}

/* RDB_TYPE_SET: past set-max-intset-entries the set is a hash table
 * whatever its members, so it is made one, sized, before they come. */
static int load_set_strings(rdbr *r, sink *s) {
    uint64_t n = rdbr_count(r, 1);
    if (rdbr_ok(r) && n > (uint64_t)srv.cfg.set_max_intset_entries) {
        s->obj = fset_new_ht();
        reserve_elements(r, fset_dict(s->obj), n);
    }
    return feed_strings(r, n, s);
}

static int load_set(rdbr *r, unsigned t, rdb_value *v) {
    sink s;
    sink_init(&s, set_put, NULL);
    int ok = t == RDB_TYPE_SET           ? load_set_strings(r, &s)
             : t == RDB_TYPE_SET_LISTPACK ? feed_string_encoded(r, ENC_LP, &s)
                                          : load_intset(r, &s);
    v->type = OBJ_SET;
    v->ptr = s.obj;
    v->enc = s.obj ? fset_encoding(s.obj) : ENC_INTSET;
    return ok;
}

static int load_zipmap(rdbr *r, sink *s) {
    rdb_str str;
    if (!rdbr_string(r, &str)) return 0;
    rzm_iter it;
    renc_elem f, val;
    int st = rzm_iter_init(&it, (const unsigned char *)str.p, str.len), pairs = 0;
    while (st >= 0 && (st = rzm_next(&it, &f, &val)) == 1) {
        pairs++;
        char b1[24], b2[24];
        size_t fl, vl;
        const char *fp = elem_bytes(&f, b1, &fl), *vp = elem_bytes(&val, b2, &vl);
        if (!s->put(s, fp, fl) || !s->put(s, vp, vl)) {
            rdbr_fail(r, s->why);
            break;
        }
    }
    if (st < 0 || (st == 0 && pairs == 0)) rdbr_fail(r, "invalid zipmap"); /* Redis refuses an empty one too */
    rdb_str_free(&str);
    return rdbr_ok(r);
}

static int load_hash(rdbr *r, unsigned t, rdb_value *v) {
    sink s;
    sink_init(&s, hash_put, hash_new());
    s.blob = t == RDB_TYPE_HASH_ZIPLIST || t == RDB_TYPE_HASH_LISTPACK;
    v->type = OBJ_HASH;
    v->ptr = s.obj;
    int ok;
    if (t == RDB_TYPE_HASH) {
        uint64_t n = rdbr_count(r, 2);
        if (rdbr_ok(r) && n > (uint64_t)srv.cfg.hash_max_listpack_entries) { /* its form whatever the sizes */
            hash_convert_to_ht(s.obj);
            reserve_elements(r, ((hashobj *)s.obj)->u.ht, n);
        }
        ok = feed_strings(r, n * 2, &s);
    }
    else if (t == RDB_TYPE_HASH_ZIPMAP) ok = load_zipmap(r, &s);
    else ok = feed_string_encoded(r, t == RDB_TYPE_HASH_LISTPACK ? ENC_LP : ENC_ZL, &s);
    zfree(s.held);
    if (ok && s.held) ok = rdbr_fail(r, "hash field without a value");
    v->enc = ((hashobj *)v->ptr)->enc;
    return ok;
}

/* RDB_TYPE_ZSET / ZSET_2: member and score entries, read into a list
 * first so the set takes the form its size calls for, as Redis converts
 * after loading. */
static int load_zset_entries(rdbr *r, unsigned t, sink *s) {
    uint64_t n = rdbr_count(r, 2);
    zset *zs = s->obj;
    if (rdbr_ok(r) && n > (uint64_t)srv.cfg.zset_max_listpack_entries) { /* its form whatever the sizes */
        zset_convert_to_skiplist(zs);
        reserve_elements(r, &zs->zsl->index, n);
    }
    for (uint64_t i = 0; i < n && rdbr_ok(r); i++) {
        rdb_str m;
        if (!rdbr_string(r, &m)) break;
        double d = t == RDB_TYPE_ZSET_2 ? rdbr_double_bin(r) : rdbr_double_text(r);
        if (rdbr_ok(r) && isnan(d)) rdbr_fail(r, "NaN sorted set score");
        if (rdbr_ok(r)) {
            s->held = (char *)m.p;
            s->held_len = m.len;
            if (!zset_put_scored(s, d)) rdbr_fail(r, s->why);
            s->held = NULL;
        }
        rdb_str_free(&m);
    }
    return rdbr_ok(r);
}

static int load_zset(rdbr *r, unsigned t, rdb_value *v) {
    sink s;
    /* a listpack until the set outgrows the thresholds (zset_put_scored),
     * the form ZADD would have given it */
    sink_init(&s, zset_put, zset_new(1, 1));
    s.blob = t == RDB_TYPE_ZSET_ZIPLIST || t == RDB_TYPE_ZSET_LISTPACK;
    v->type = OBJ_ZSET;
    v->ptr = s.obj;
    int ok;
    if (t == RDB_TYPE_ZSET || t == RDB_TYPE_ZSET_2) ok = load_zset_entries(r, t, &s);
    else ok = feed_string_encoded(r, t == RDB_TYPE_ZSET_LISTPACK ? ENC_LP : ENC_ZL, &s);
    zfree(s.held);
    if (ok && s.held) ok = rdbr_fail(r, "sorted set member without a score");
    v->enc = zset_enc(v->ptr);
    return ok;
}

int rdb_type_known(unsigned t) {
    return t <= RDB_TYPE_ZSET_2 || (t >= RDB_TYPE_HASH_ZIPMAP && t <= RDB_TYPE_STREAM_LISTPACKS_3);
}

const char *rdb_type_name(unsigned t) {
    switch (t) {
    case RDB_TYPE_MODULE: case RDB_TYPE_MODULE_2: return "module";
    case RDB_TYPE_STREAM_LISTPACKS: case RDB_TYPE_STREAM_LISTPACKS_2: case RDB_TYPE_STREAM_LISTPACKS_3:
        return "stream";
    default: return "unknown";
    }
}

int rdb_load_value(rdbr *r, unsigned t, rdb_value *v) {
    memset(v, 0, sizeof *v);
    switch (t) {
    case RDB_TYPE_STRING:
        v->type = OBJ_STRING;
        return rdbr_string(r, &v->str);
    case RDB_TYPE_LIST: case RDB_TYPE_LIST_ZIPLIST: case RDB_TYPE_LIST_QUICKLIST: case RDB_TYPE_LIST_QUICKLIST_2:
        return load_list(r, t, v);
    case RDB_TYPE_SET: case RDB_TYPE_SET_INTSET: case RDB_TYPE_SET_LISTPACK: return load_set(r, t, v);
    case RDB_TYPE_HASH: case RDB_TYPE_HASH_ZIPMAP: case RDB_TYPE_HASH_ZIPLIST: case RDB_TYPE_HASH_LISTPACK:
        return load_hash(r, t, v);
    case RDB_TYPE_ZSET: case RDB_TYPE_ZSET_2: case RDB_TYPE_ZSET_ZIPLIST: case RDB_TYPE_ZSET_LISTPACK:
        return load_zset(r, t, v);
    case RDB_TYPE_STREAM_LISTPACKS: case RDB_TYPE_STREAM_LISTPACKS_2: case RDB_TYPE_STREAM_LISTPACKS_3:
        v->type = OBJ_STREAM;
        v->enc = ENC_STREAM;
        return rdb_load_stream(r, t, (stream **)&v->ptr);
    default: return rdbr_fail(r, "value type ferry does not have");
    }
}

dnode *rdb_value_node(const char *key, size_t klen, rdb_value *v, int64_t expire_ms) {
    int str = v->type == OBJ_STRING;
    dnode *n = db_node_new(key, klen, str ? v->str.len : sizeof v->ptr, expire_ms);
    if (str) {
        memcpy(dn_val(n), v->str.p, v->str.len);
        n->enc = db_string_enc(v->str.p, v->str.len);
    } else {
        n->type = (uint8_t)v->type;
        n->enc = (uint8_t)v->enc;
        memcpy(dn_val(n), &v->ptr, sizeof v->ptr);
        v->ptr = NULL;
    }
    rdb_value_free(v);
    return n;
}

dnode *rdb_value_store(db *d, const char *key, size_t klen, rdb_value *v, int64_t expire_ms) {
    dnode *n = rdb_value_node(key, klen, v, expire_ms);
    return db_add_node(d, n); /* the node as stored: reshaped for a slot-indexed db */
}

void rdb_value_set_access(dnode *n, long long idle_secs, int freq) {
    int policy = srv.cfg.maxmemory_policy;
    if (evict_policy_is_lfu(policy)) {
        if (freq >= 0) dn_lfu_set(n, evict_lfu_minutes(), (unsigned)freq);
    } else if (evict_policy_is_lru_or_lfu(policy) && idle_secs >= 0) {
        n->lru = (uint32_t)((srv.lruclock - (uint64_t)idle_secs) & 0xFFFFFF);
    }
}

int rdb_value_empty(const rdb_value *v) {
    switch (v->type) {
    case OBJ_LIST: return !v->ptr || tl_len(v->ptr) == 0;
    case OBJ_SET: return !v->ptr || fset_size(v->ptr) == 0;
    case OBJ_HASH: return !v->ptr || hash_len(v->ptr) == 0;
    case OBJ_ZSET: return !v->ptr || zset_len(v->ptr) == 0;
    default: return 0;
    }
}

void rdb_value_free(rdb_value *v) {
    if (v->type == OBJ_STRING) rdb_str_free(&v->str);
    else if (v->ptr && v->type == OBJ_LIST) tl_free(v->ptr);
    else if (v->ptr && v->type == OBJ_SET) fset_free(v->ptr);
    else if (v->ptr && v->type == OBJ_HASH) hash_free(v->ptr);
    else if (v->ptr && v->type == OBJ_ZSET) zset_free(v->ptr);
    else if (v->ptr && v->type == OBJ_STREAM) stream_free(v->ptr);
    memset(v, 0, sizeof *v);
}
