/* test_stream_lp.c - Criterion unit tests for a stream as Redis's bytes:
 * blocks rendered as Redis listpack nodes and read back
 * (src/keyspace/t_stream_lp.c), and the whole value in the RDB / DUMP
 * encoding (src/persist/rdb_stream.c).
 *
 * Why: RDB files and RESTORE payloads are untrusted, and a stream's are
 * the most structured of any type (nodes whose IDs are deltas against a
 * key, counts that must agree, PELs that reference each other). So:
 *  - every node of streams built under every node limit survives block ->
 *    listpack -> block byte for byte, and the stream reads the same;
 *  - every truncation and many byte flips of real nodes are refused or
 *    give a stream that is consistent (it renders and reloads identically),
 *    and nodes broken on purpose (counts, flags, IDs, lp-counts) are refused;
 *  - payloads redis-server 7.0.15 wrote (DUMP, footer dropped) load and
 *    save back byte for byte, and streams built here save to the same bytes;
 *  - types 15 and 21 load with the counters Redis 7.0 derives;
 *  - every inconsistency the loader must catch is refused, and every
 *    truncation of a payload fails cleanly (no leak under ASan).
 */
#include "stream_testkit.h"

#include "db.h"
#include "rdb_io.h"
#include "rdb_stream.h"
#include "rdb_value.h"

/* ---- nodes: listpack round trips ------------------------------------------- */

static const stream_limits LIMITS[] = {{0, 0}, {0, 1}, {0, 3}, {0, 100}, {1, 0}, {150, 0}, {1024, 10}};
#define NLIMITS (sizeof LIMITS / sizeof LIMITS[0])

static stream *build(tlist *ref, size_t n, const stream_limits *lim, unsigned del_every) {
    static tk_gen g;
    g.maxval = 60;
    g.tmpl = (int)frand_below(4);
    stream *s = stream_new();
    sid last = {frand_below(2) ? 0 : frand64() >> 2, 0};
    for (size_t i = 0; i < n; i++) {
        last = tk_next_id(last);
        size_t nf = tk_entry(&g);
        stream_append(s, last, g.fv, nf, lim);
        tl_add(ref, last, g.fv, nf, 0);
        if (del_every && frand_below(del_every) == 0 && ref->n) {
            tent *t = &ref->v[frand_below(ref->n)];
            cr_assert_eq(stream_delete(s, t->id), !t->deleted);
            t->deleted = 1;
        }
    }
    return s;
}

/* A copy of s made node by node through the listpacks; each re-renders the same. */
static stream *through_listpacks(const stream *s) {
    stream *c = stream_new();
    for (size_t i = 0; i < stream_block_count(s); i++) {
        sid master, m2;
        size_t len, len2;
        unsigned char *lp = stream_block_listpack(s, i, &master, &len);
        cr_assert_eq(stream_add_listpack(c, master, lp, len), 0, "node %zu refused", i);
        cr_assert_eq(stream_add_listpack(c, master, lp, len), -1, "a node must come after the previous one");
        unsigned char *back = stream_block_listpack(c, i, &m2, &len2);
        cr_assert(!sid_cmp(master, m2) && len == len2 && !memcmp(lp, back, len), "node %zu changed", i);
        zfree(lp);
        zfree(back);
    }
    c->last_id = s->last_id;
    c->entries_added = s->entries_added;
    c->max_deleted_id = s->max_deleted_id;
    stream_loaded(c);
    return c;
}

Test(stream_lp, every_node_round_trips) {
    for (size_t l = 0; l < NLIMITS; l++) {
        for (unsigned del = 0; del <= 3; del += 3) {
            frand_seed(10 * l + del);
            tlist ref = {0};
            stream *s = build(&ref, 400, &LIMITS[l], del);
            stream *c = through_listpacks(s);
            cr_assert_eq(c->length, s->length);
            tk_check(c, &ref);
            stream_free(c);
            stream_free(s);
            tl_free(&ref);
        }
    }
}

/* A corrupted node: refused, or accepted as a consistent block. */
static void try_node(const unsigned char *lp, size_t len, sid master) {
    unsigned char *copy = malloc(len ? len : 1); /* exact size: ASan sees any over-read */
    memcpy(copy, lp, len);
    stream *c = stream_new();
    if (stream_add_listpack(c, master, copy, len) == 0) {
        tmodel m;
        tk_model(c, &m); /* checks structure, counts, order */
        tk_model_free(&m);
        stream *again = through_listpacks(c);
        stream_free(again);
    }
    stream_free(c);
    free(copy);
}

Test(stream_lp, truncated_and_flipped_nodes) {
    frand_seed(5);
    tlist ref = {0};
    stream *s = build(&ref, 60, &(stream_limits){0, 6}, 3);
    for (size_t i = 0; i < stream_block_count(s) && i < 6; i++) {
        sid master;
        size_t len;
        unsigned char *lp = stream_block_listpack(s, i, &master, &len);
        for (size_t cut = 0; cut < len; cut++) {
            try_node(lp, cut, master);
            if (cut >= 7) { /* and with a header that agrees with the cut */
                unsigned char *h = malloc(cut);
                memcpy(h, lp, cut);
                h[0] = (unsigned char)cut, h[1] = (unsigned char)(cut >> 8), h[2] = h[3] = 0;
                h[cut - 1] = 0xFF;
                try_node(h, cut, master);
                free(h);
            }
        }
        static const unsigned char masks[] = {0x01, 0x02, 0x10, 0x80, 0xFF};
        for (size_t pos = 0; pos < len; pos++) {
            for (size_t k = 0; k < sizeof masks; k++) {
                lp[pos] ^= masks[k];
                try_node(lp, len, master);
                lp[pos] ^= masks[k];
            }
        }
        zfree(lp);
    }
    stream_free(s);
    tl_free(&ref);
}

/* A node written element by element: `spec` is a list of integers and
 * strings ("s:text"), so tests can write what Redis never would. */
static int node_from(const char *const *spec, size_t n, sid master, stream *into) {
    rlp_builder b;
    rlp_init(&b);
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(spec[i], "s:", 2)) rlp_append(&b, spec[i] + 2, strlen(spec[i] + 2));
        else rlp_append_int(&b, strtoll(spec[i], NULL, 10));
    }
    size_t len;
    unsigned char *lp = rlp_finish(&b, &len);
    int r = stream_add_listpack(into, master, lp, len);
    zfree(lp);
    return r;
}

#define NODE(...) ((const char *const[]){__VA_ARGS__}), (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static int one_node(const char *const *spec, size_t n) {
    stream *s = stream_new();
    int r = node_from(spec, n, (sid){10, 5}, s);
    if (r == 0) {
        tmodel m;
        tk_model(s, &m);
        tk_model_free(&m);
    }
    stream_free(s);
    return r;
}

Test(stream_lp, nodes_broken_on_purpose) {
    /* a good node: 2 live, 0 deleted, fields f g; entries 10-5 (same fields) and 12-0 (own field) */
    cr_assert_eq(one_node(NODE("2", "0", "2", "s:f", "s:g", "0", "2", "0", "0", "s:v", "s:w", "5", "0", "2", "-5",
                               "1", "s:h", "s:x", "6")), 0);
    /* tombstones only: Redis keeps such a node after an exact MINID trim */
    cr_assert_eq(one_node(NODE("0", "1", "1", "s:f", "0", "3", "0", "0", "s:v", "4")), 0);
    cr_assert_eq(one_node(NODE("0", "0", "1", "s:f", "0")), -1, "no entry at all");
    cr_assert_eq(one_node(NODE("2", "0", "1", "s:f", "0", "2", "0", "0", "s:v", "4")), -1, "live count too big");
    cr_assert_eq(one_node(NODE("1", "1", "1", "s:f", "0", "2", "0", "0", "s:v", "4")), -1, "deleted count wrong");
    cr_assert_eq(one_node(NODE("-1", "2", "1", "s:f", "0", "3", "0", "0", "s:v", "4")), -1, "negative count");
    cr_assert_eq(one_node(NODE("1", "0", "0", "0", "2", "0", "0", "4")), -1, "no master fields");
    cr_assert_eq(one_node(NODE("1", "0", "1", "s:f", "1", "2", "0", "0", "s:v", "4")), -1, "no zero terminator");
    cr_assert_eq(one_node(NODE("1", "0", "2", "s:f", "0", "2", "0", "0", "s:v", "4")), -1, "master count wrong");
    /* counts no listpack of these bytes could hold: refused before any allocation they would size */
    cr_assert_eq(one_node(NODE("1", "0", "999999", "s:f", "0", "2", "0", "0", "s:v", "4")), -1, "huge master count");
    cr_assert_eq(one_node(NODE("1", "0", "1", "s:f", "0", "0", "0", "0", "999999", "s:g", "s:v", "8")), -1,
                 "huge entry field count");
    cr_assert_eq(one_node(NODE("1", "0", "1", "s:f", "0", "6", "0", "0", "s:v", "4")), -1, "unknown flag");
    cr_assert_eq(one_node(NODE("1", "0", "1", "s:f", "0", "s:x", "0", "0", "s:v", "4")), -1, "flags as text");
    cr_assert_eq(one_node(NODE("1", "0", "1", "s:f", "0", "2", "0", "1", "s:v", "4")), -1, "first entry not the key");
    cr_assert_eq(one_node(NODE("1", "0", "1", "s:f", "0", "2", "0", "0", "s:v", "5")), -1, "lp-count wrong");
    cr_assert_eq(one_node(NODE("1", "0", "1", "s:f", "0", "2", "0", "0", "s:v")), -1, "lp-count missing");
    cr_assert_eq(one_node(NODE("1", "0", "1", "s:f", "0", "2", "0", "0", "s:v", "4", "7")), -1, "trailing element");
    cr_assert_eq(one_node(NODE("1", "0", "1", "s:f", "0", "0", "0", "0", "0", "4")), -1, "no fields");
    cr_assert_eq(one_node(NODE("2", "0", "1", "s:f", "0", "2", "0", "0", "s:v", "4", "2", "0", "0", "s:v", "4")), -1,
                 "same ID twice");
    cr_assert_eq(one_node(NODE("2", "0", "1", "s:f", "0", "2", "0", "0", "s:v", "4", "2", "-1", "0", "s:v", "4")), -1,
                 "ID going back");
    cr_assert_eq(one_node(NODE("1", "0", "1", "s:f", "0", "2", "0", "0", "s:v", "4", "1")), -1, "half an entry");
    /* a node's key (its first entry) must follow the previous node's key, as
     * in Redis's radix tree; a deleted entry may lie beyond the next key
     * (after XSETID below it Redis appends smaller IDs) */
    stream *s = stream_new();
    cr_assert_eq(node_from(NODE("1", "1", "1", "s:f", "0", "2", "0", "0", "s:v", "4", "3", "0", "9", "s:v", "4"),
                           (sid){10, 0}, s), 0);
    cr_assert_eq(node_from(NODE("1", "0", "1", "s:f", "0", "2", "0", "0", "s:v", "4"), (sid){10, 0}, s), -1);
    cr_assert_eq(node_from(NODE("1", "0", "1", "s:f", "0", "2", "0", "0", "s:v", "4"), (sid){9, 5}, s), -1);
    cr_assert_eq(node_from(NODE("1", "0", "1", "s:f", "0", "2", "0", "0", "s:v", "4"), (sid){10, 9}, s), 0);
    cr_assert_eq(s->length, 2);
    stream_free(s);
}

/* ---- whole payloads: Redis's bytes ------------------------------------------ */

static unsigned char *unhex(const char *h, size_t *len) {
    size_t n = strlen(h) / 2;
    unsigned char *b = malloc(n + 1);
    for (size_t i = 0; i < n; i++) sscanf(h + 2 * i, "%2hhx", &b[i]);
    *len = n;
    return b;
}

/* DUMP of redis-server 7.0.15 (type byte first, footer dropped):
 * A: XADD a 1-1 a b, 2-1 a c, 3-1 a d; XDEL a 3-1; XTRIM a MINID 3-1 (a
 *    node of tombstones; its listpack LZF-compressed);
 * B: XADD b 1-1 a b; XTRIM b MAXLEN 0 (no node left);
 * C: stream-node-max-entries 2, five entries with field sets that differ,
 *    one deleted; groups "123" (an integer-encoded name), g1 (alice, bob
 *    with a claimed entry delivered 5 times, carol), g2. */
static const char VEC_A[] = "13011000000000000000010000000000000001c32d330e33000000140000010301010181610240080000200103"
                            "816202046013200a0063600a0002400a0064200a00ff000301000003010300";
static const char VEC_B[] = "1300000101000000000100";
static const char VEC_C[] =
    "130310000000000000000500000000000000013434000000120002010001020182663103826632030001020100010001827631030c0105"
    "0102010001010182763203dff9020501ff100000000000000006000000000000000038380000001300010101010101817802000103010001"
    "000181790204010001010100010201826631038276330382663203f2a08601040801ff1000000000000000090000000000000009232300"
    "00000c0001010001020182663103826632030001020100010001800180010501ff040909050106000503c07b050281ffffffffffffffff00"
    "00026731070081ffffffffffffffff030000000000000005000000000000000173ac2318a2010000010000000000000005000000000000"
    "00020068e5cf8b010000050000000000000007000000000000000073ac2318a2010000010305616c69636573ac2318a20100000100000000"
    "00000005000000000000000103626f6273ac2318a20100000100000000000000050000000000000002056361726f6c73ac2318a201000001"
    "00000000000000070000000000000000026732090981ffffffffffffffff0000";

static stream *load_payload(const unsigned char *p, size_t len, unsigned t, const char **err) {
    rdbr r;
    stream *s;
    rdbr_init(&r, p, len);
    int ok = rdb_load_stream(&r, t, &s);
    cr_assert_eq(ok, rdbr_ok(&r));
    cr_assert_eq(ok, s != NULL);
    if (ok) cr_assert_eq(rdbr_left(&r), 0, "bytes left after the stream");
    if (err) *err = r.err;
    return s;
}

static void save_eq(const stream *s, const unsigned char *want, size_t len, int compress) {
    rdbw w;
    rdbw_init(&w, compress);
    rdb_save_stream(&w, s);
    cr_assert_eq(w.len, len, "saved %zu bytes, want %zu", w.len, len);
    cr_assert(!memcmp(w.buf, want, len), "saved bytes differ");
    rdbw_free(&w);
}

Test(stream_rdb, redis_payloads_load_and_save_byte_for_byte) {
    const char *vecs[] = {VEC_A, VEC_B, VEC_C};
    for (size_t i = 0; i < 3; i++) {
        size_t len;
        unsigned char *p = unhex(vecs[i], &len);
        cr_assert_eq(p[0], RDB_TYPE_STREAM_LISTPACKS_2);
        stream *s = load_payload(p + 1, len - 1, p[0], NULL);
        cr_assert(s, "vector %zu refused", i);
        save_eq(s, p + 1, len - 1, 1);
        stream_free(s);
        free(p);
    }
}

Test(stream_rdb, built_streams_save_as_redis_does) {
    stream_limits lim = {4096, 100};
    span ab[2] = {{"a", 1}, {"b", 1}}, ac[2] = {{"a", 1}, {"c", 1}}, ad[2] = {{"a", 1}, {"d", 1}};
    stream *a = stream_new();
    stream_append(a, (sid){1, 1}, ab, 1, &lim);
    stream_append(a, (sid){2, 1}, ac, 1, &lim);
    stream_append(a, (sid){3, 1}, ad, 1, &lim);
    stream_delete(a, (sid){3, 1});
    stream_trim(a, &(stream_trim_args){.strategy = STRIM_MINID, .minid = {3, 1}});
    stream *b = stream_new();
    stream_append(b, (sid){1, 1}, ab, 1, &lim);
    stream_trim(b, &(stream_trim_args){.strategy = STRIM_MAXLEN, .maxlen = 0});
    size_t la, lb;
    unsigned char *pa = unhex(VEC_A, &la), *pb = unhex(VEC_B, &lb);
    save_eq(a, pa + 1, la - 1, 1);
    save_eq(b, pb + 1, lb - 1, 1);
    free(pa);
    free(pb);
    stream_free(a);
    stream_free(b);
}

/* ---- whole payloads: this test's own writer, to break them on purpose ------- */

typedef struct knobs {
    unsigned t;                 /* 15, 19 or 21 */
    size_t key_len;             /* of node keys: 16 */
    int swap_nodes;             /* the first two nodes in the wrong order */
    int length_delta;
    int last_below;             /* last ID one below the last live entry */
    int first_wrong;            /* first ID one above the first entry */
    int added_below;            /* entries-added below the length */
    int dup_group, dup_consumer, dup_gpel, dup_cpel;
    int orphan;                 /* a group PEL entry nobody owns */
    int stranger;               /* a consumer PEL ID missing from the group PEL */
    int twice;                  /* an ID in two consumers' PELs */
} knobs;

static void w_id(rdbw *w, sid id) {
    rdbw_len(w, id.ms);
    rdbw_len(w, id.seq);
}

static void w_raw(rdbw *w, sid id) {
    unsigned char b[16];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(id.ms >> (56 - 8 * i)), b[8 + i] = (unsigned char)(id.seq >> (56 - 8 * i));
    rdbw_raw(w, b, 16);
}

static void w_nodes(rdbw *w, const stream *s, const knobs *k) {
    size_t n = stream_block_count(s);
    rdbw_len(w, n);
    for (size_t j = 0; j < n; j++) {
        size_t i = k->swap_nodes && j < 2 ? 1 - j : j, len;
        sid master;
        unsigned char *lp = stream_block_listpack(s, i, &master, &len), key[32] = {0};
        for (int b = 0; b < 8; b++) key[b] = (unsigned char)(master.ms >> (56 - 8 * b)), key[8 + b] = (unsigned char)(master.seq >> (56 - 8 * b));
        rdbw_string(w, key, k->key_len);
        rdbw_string(w, lp, len);
        zfree(lp);
    }
}

static void w_meta(rdbw *w, const stream *s, const knobs *k) {
    rdbw_len(w, s->length + (uint64_t)(int64_t)k->length_delta);
    sid last = s->last_id, first = s->first_id;
    if (k->last_below) stream_last_live_id(s, &last), sid_decr(&last);
    if (k->first_wrong) sid_incr(&first);
    w_id(w, last);
    if (k->t == RDB_TYPE_STREAM_LISTPACKS) return;
    w_id(w, first);
    w_id(w, s->max_deleted_id);
    rdbw_len(w, k->added_below ? s->length - 1 : s->entries_added);
}

static void w_group_pel(rdbw *w, const sgroup *g, const knobs *k) {
    rdbw_len(w, g->pel.len + (size_t)k->dup_gpel + (size_t)k->orphan);
    for (sidmap_node *n = sidmap_first(&g->pel); n; n = sidmap_next(n)) {
        const snack *x = sidmap_val(n);
        for (int rep = 0; rep <= (k->dup_gpel && n == sidmap_first(&g->pel)); rep++) {
            w_raw(w, sidmap_id(n));
            rdbw_u64_le(w, (uint64_t)x->delivery_time);
            rdbw_len(w, x->delivery_count);
        }
    }
    if (k->orphan) w_raw(w, SID_MAX), rdbw_u64_le(w, 1), rdbw_len(w, 1);
}

static void w_consumer(rdbw *w, const sconsumer *c, const sgroup *g, const knobs *k, int first) {
    rdbw_string(w, c->name, c->nlen);
    rdbw_u64_le(w, (uint64_t)c->seen_time);
    if (k->t == RDB_TYPE_STREAM_LISTPACKS_3) rdbw_u64_le(w, 12345);
    int dup = k->dup_cpel && first, extra = (k->stranger && first) + (k->twice && !first);
    rdbw_len(w, c->pel.len + (size_t)dup + (size_t)extra);
    for (sidmap_node *n = sidmap_first(&c->pel); n; n = sidmap_next(n)) {
        w_raw(w, sidmap_id(n));
        if (dup && n == sidmap_first(&c->pel)) w_raw(w, sidmap_id(n));
    }
    if (k->stranger && first) w_raw(w, (sid){UINT64_MAX, 7});
    if (k->twice && !first) w_raw(w, sidmap_id(sidmap_first(&g->consumers[0]->pel)));
}

/* The knobs apply to the group with consumers (g1). */
static void w_groups(rdbw *w, const stream *s, const knobs *k) {
    rdbw_len(w, s->ngroups + (size_t)k->dup_group);
    knobs quiet = {.t = k->t};
    for (size_t i = 0; i < s->ngroups + (size_t)k->dup_group; i++) {
        const sgroup *g = s->groups[i < s->ngroups ? i : 0];
        const knobs *gk = g->nconsumers && i < s->ngroups ? k : &quiet;
        rdbw_string(w, g->name, g->nlen);
        w_id(w, g->last_id);
        if (k->t != RDB_TYPE_STREAM_LISTPACKS) rdbw_len(w, (uint64_t)g->entries_read);
        w_group_pel(w, g, gk);
        rdbw_len(w, g->nconsumers + (size_t)gk->dup_consumer);
        for (size_t c = 0; c < g->nconsumers; c++) w_consumer(w, g->consumers[c], g, gk, c == 0);
        if (gk->dup_consumer) w_consumer(w, g->consumers[1], g, &quiet, 0);
    }
}

static void w_payload(rdbw *w, const stream *s, const knobs *k) {
    rdbw_init(w, 0);
    w_nodes(w, s, k);
    w_meta(w, s, k);
    w_groups(w, s, k);
}

/* Several nodes, deleted entries, two groups with consumers and PELs. */
static stream *rich_stream(tlist *ref) {
    frand_seed(99);
    stream *s = build(ref, 120, &(stream_limits){0, 10}, 4);
    sgroup *g = stream_group_create(s, "g1", 2, ref->v[60].id, 61);
    stream_group_create(s, "0", 1, SID_MIN, SCG_INVALID_ENTRIES_READ);
    sconsumer *c[3] = {stream_consumer_create(g, "alice", 5, 1700000000000LL),
                       stream_consumer_create(g, "bob", 3, -5), stream_consumer_create(g, "carol", 5, 7)};
    for (int i = 0; i < 40; i++) {
        snack *n = stream_pel_add(g, c[i % 2], ref->v[i].id, 1700000000000LL + i);
        n->delivery_count = (uint64_t)i * 1000003;
    }
    (void)c[2];
    return s;
}

static knobs plain(unsigned t) { return (knobs){.t = t, .key_len = 16}; }

Test(stream_rdb, own_writer_agrees_and_round_trips) {
    tlist ref = {0};
    stream *s = rich_stream(&ref);
    rdbw w, w2;
    knobs k = plain(RDB_TYPE_STREAM_LISTPACKS_2);
    w_payload(&w, s, &k);
    save_eq(s, w.buf, w.len, 0);
    stream *l = load_payload(w.buf, w.len, k.t, NULL);
    cr_assert(l);
    tk_check(l, &ref);
    save_eq(l, w.buf, w.len, 0);
    k.t = RDB_TYPE_STREAM_LISTPACKS_3; /* 7.2: active-time dropped, the rest the same */
    w_payload(&w2, s, &k);
    stream *l3 = load_payload(w2.buf, w2.len, k.t, NULL);
    cr_assert(l3);
    save_eq(l3, w.buf, w.len, 0);
    stream_free(l3);
    stream_free(l);
    rdbw_free(&w);
    rdbw_free(&w2);
    stream_free(s);
    tl_free(&ref);
}

Test(stream_rdb, type_15_derives_counters_as_redis_7_0) {
    tlist ref = {0};
    stream *s = rich_stream(&ref);
    knobs k = plain(RDB_TYPE_STREAM_LISTPACKS);
    rdbw w;
    w_payload(&w, s, &k);
    stream *l = load_payload(w.buf, w.len, k.t, NULL);
    cr_assert(l);
    tk_check(l, &ref);
    cr_assert_eq(l->entries_added, l->length);
    cr_assert(sid_is_zero(l->max_deleted_id));
    cr_assert(!sid_cmp(l->first_id, s->first_id));
    sgroup *g = stream_group_find(l, "g1", 2);
    cr_assert_eq(g->entries_read, stream_estimate_distance(l, g->last_id));
    cr_assert_eq(stream_group_find(l, "0", 1)->entries_read, (long long)(l->entries_added - l->length));
    cr_assert_eq(g->pel.len, 40);
    stream_free(l);
    rdbw_free(&w);
    /* an empty one: no first entry, so 2^64-1-2^64-1 (redis-server 7.0.15 does the same) */
    stream *e = stream_new();
    e->last_id = (sid){5, 0};
    w_payload(&w, e, &k);
    l = load_payload(w.buf, w.len, k.t, NULL);
    cr_assert(l && !sid_cmp(l->first_id, SID_MAX) && l->entries_added == 0);
    stream_free(l);
    stream_free(e);
    rdbw_free(&w);
    stream_free(s);
    tl_free(&ref);
}

Test(stream_rdb, inconsistent_payloads_are_refused) {
    tlist ref = {0};
    stream *s = rich_stream(&ref);
    struct {
        knobs k;
        const char *why;
    } cases[] = {
        {{.key_len = 15}, "size of a stream ID"},     {{.key_len = 17}, "size of a stream ID"},
        {{.swap_nodes = 1}, "invalid stream node"},  {{.length_delta = 1}, "length"},
        {{.length_delta = -1}, "length"},            {{.last_below = 1}, "last ID"},
        {{.first_wrong = 1}, "first ID"},            {{.added_below = 1}, "entries-added"},
        {{.dup_group = 1}, "duplicate stream consumer group"},
        {{.dup_consumer = 1}, "duplicate stream consumer"},
        {{.dup_gpel = 1}, "duplicate entry"},        {{.dup_cpel = 1}, "owned twice"},
        {{.orphan = 1}, "without a consumer"},       {{.stranger = 1}, "not in the group PEL"},
        {{.twice = 1}, "owned twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        knobs k = cases[i].k;
        k.t = RDB_TYPE_STREAM_LISTPACKS_2;
        if (!k.key_len) k.key_len = 16;
        rdbw w;
        w_payload(&w, s, &k);
        const char *err;
        stream *l = load_payload(w.buf, w.len, k.t, &err);
        cr_assert_null(l, "case %zu loaded", i);
        cr_assert(err && strstr(err, cases[i].why), "case %zu: error \"%s\"", i, err ? err : "");
        rdbw_free(&w);
    }
    stream_free(s);
    tl_free(&ref);
}

Test(stream_rdb, every_truncation_fails_cleanly) {
    tlist ref = {0};
    stream *s = rich_stream(&ref);
    rdbw w;
    knobs k = plain(RDB_TYPE_STREAM_LISTPACKS_2);
    w_payload(&w, s, &k);
    for (size_t cut = 0; cut < w.len; cut++) {
        unsigned char *p = malloc(cut + 1);
        memcpy(p, w.buf, cut);
        cr_assert_null(load_payload(p, cut, k.t, NULL), "a %zu-byte prefix loaded", cut);
        free(p);
    }
    rdbw_free(&w);
    stream_free(s);
    tl_free(&ref);
}

Test(stream_rdb, through_rdb_value_and_its_type_byte) {
    size_t len;
    unsigned char *p = unhex(VEC_C, &len);
    for (unsigned t = 0; t < 32; t++) cr_assert_eq(rdb_type_known(t), t <= 5 || (t >= 9 && t <= 21), "type %u", t);
    rdbr r;
    rdb_value v;
    rdbr_init(&r, p + 1, len - 1);
    cr_assert(rdb_load_value(&r, p[0], &v));
    cr_assert_eq(v.type, OBJ_STREAM);
    cr_assert_eq(v.enc, ENC_STREAM);
    cr_assert_eq(((stream *)v.ptr)->length, 4);
    cr_assert(!rdb_value_empty(&v));
    rdb_value_free(&v);
    rdbr_init(&r, p + 1, len - 2);
    cr_assert(!rdb_load_value(&r, p[0], &v));
    rdb_value_free(&v);
    free(p);
}
