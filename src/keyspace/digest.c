/* digest.c - dataset and value fingerprints for DEBUG DIGEST (see digest.h).
 *
 * Two operations over a 20-byte state, as Redis's debug digests use them:
 * mix (the state becomes a hash of itself and the new bytes: order
 * matters) and xor (the hash of the bytes is xored in: order does not).
 * The hash is three CRC-64 lanes with different starting values, cut to
 * 20 bytes: not cryptographic, but deterministic and more than enough to
 * tell datasets apart in tests.
 */
#include "digest.h"
#include "crc64.h"
#include "db.h"
#include "t_hash.h"
#include "t_list.h"
#include "t_set.h"
#include "t_stream.h"
#include "t_zset.h"
#include <stdio.h>
#include <string.h>

static void hash20(const void *a, size_t alen, const void *b, size_t blen, unsigned char out[DIGEST_LEN]) {
    unsigned char lanes[24];
    for (int i = 0; i < 3; i++) {
        uint64_t c = crc64(0x9e3779b97f4a7c15ull * (uint64_t)(i + 1), a, alen);
        c = crc64(c, b, blen);
        memcpy(lanes + 8 * i, &c, 8);
    }
    memcpy(out, lanes, DIGEST_LEN);
}

static void mix(unsigned char d[DIGEST_LEN], const void *p, size_t n) { hash20(d, DIGEST_LEN, p, n, d); }

static void xor_in(unsigned char d[DIGEST_LEN], const unsigned char e[DIGEST_LEN]) {
    for (int i = 0; i < DIGEST_LEN; i++) d[i] ^= e[i];
}

static void xor_bytes(unsigned char d[DIGEST_LEN], const void *p, size_t n) {
    unsigned char e[DIGEST_LEN];
    hash20(p, n, "", 0, e);
    xor_in(d, e);
}

static void list_digest(const dnode *n, unsigned char d[DIGEST_LEN]) {
    tl_iter it;
    tl_elem e;
    tl_iter_init(&it, dn_ptr(n), 0, TL_TAIL);
    while (tl_iter_next(&it, &e)) mix(d, e.p, e.len);
}

static void set_digest(const dnode *n, unsigned char d[DIGEST_LEN]) {
    fset_iter it;
    fset_member m;
    fset_iter_init(&it, dn_ptr(n));
    while (fset_iter_next(&it, &m)) xor_bytes(d, m.p, m.len);
    fset_iter_end(&it);
}

static void pair_digest(unsigned char d[DIGEST_LEN], const void *a, size_t alen, const void *b, size_t blen) {
    unsigned char e[DIGEST_LEN] = {0};
    mix(e, a, alen);
    mix(e, b, blen);
    xor_in(d, e);
}

static void hash_pair(void *ud, hstr f, hstr v) { pair_digest(ud, f.p, f.len, v.p, v.len); }

static void zset_digest(const dnode *n, unsigned char d[DIGEST_LEN]) {
    zs_iter it;
    for (zs_iter_rank(&it, dn_ptr(n), 0, 0); zs_iter_valid(&it); zs_iter_next(&it)) {
        size_t len;
        const char *m = zs_iter_member(&it, &len);
        char score[40];
        int sl = snprintf(score, sizeof score, "%.17g", zs_iter_score_of(&it));
        pair_digest(d, m, len, score, (size_t)sl);
    }
}

static void mix_id(unsigned char d[DIGEST_LEN], sid id) {
    char buf[48];
    mix(d, buf, sid_fmt(id, buf));
}

static void mix_u64(unsigned char d[DIGEST_LEN], uint64_t v) { mix(d, &v, sizeof v); }

/* A PEL in ID order: IDs, and for the group's the delivery data and owner. */
static void pel_digest(unsigned char d[DIGEST_LEN], const sidmap *pel, int nacks) {
    for (sidmap_node *x = sidmap_first(pel); x; x = sidmap_next(x)) {
        mix_id(d, sidmap_id(x));
        if (!nacks) continue;
        const snack *k = sidmap_val(x);
        mix_u64(d, (uint64_t)k->delivery_time);
        mix_u64(d, k->delivery_count);
        mix(d, k->consumer->name, k->consumer->nlen);
    }
}

static void group_digest(unsigned char d[DIGEST_LEN], const sgroup *g) {
    mix(d, g->name, g->nlen);
    mix_id(d, g->last_id);
    mix_u64(d, (uint64_t)g->entries_read);
    pel_digest(d, &g->pel, 1);
    for (size_t i = 0; i < g->nconsumers; i++) {
        const sconsumer *c = g->consumers[i];
        mix(d, c->name, c->nlen);
        mix_u64(d, (uint64_t)c->seen_time);
        pel_digest(d, &c->pel, 0);
    }
}

/* Entries in order (ID, fields and values), the counters, then the
 * groups: everything DUMP carries but the node boundaries. */
static void stream_digest(const dnode *n, unsigned char d[DIGEST_LEN]) {
    const stream *s = dn_ptr(n);
    stream_iter it;
    sentry e;
    stream_iter_init(&it, s, SID_MIN, SID_MAX, 0);
    while (stream_iter_next(&it, &e)) {
        mix_id(d, e.id);
        for (size_t i = 0; i < 2 * e.nf; i++) mix(d, e.fv[i].p, e.fv[i].len);
    }
    stream_iter_end(&it);
    mix_u64(d, s->length);
    mix_id(d, s->last_id);
    mix_id(d, s->first_id);
    mix_id(d, s->max_deleted_id);
    mix_u64(d, s->entries_added);
    for (size_t i = 0; i < s->ngroups; i++) group_digest(d, s->groups[i]);
}

void digest_value(const dnode *n, unsigned char out[DIGEST_LEN]) {
    memset(out, 0, DIGEST_LEN);
    mix(out, (const char[]){(char)('0' + n->type)}, 1);
    switch (n->type) {
    case OBJ_STRING: mix(out, dn_val(n), dn_vlen(n)); break;
    case OBJ_LIST: list_digest(n, out); break;
    case OBJ_SET: set_digest(n, out); break;
    case OBJ_HASH: hash_foreach(dn_ptr(n), hash_pair, out); break;
    case OBJ_ZSET: zset_digest(n, out); break;
    case OBJ_STREAM: stream_digest(n, out); break;
    }
}

typedef struct ds_walk {
    unsigned char *acc;
    int dbid;
} ds_walk;

static void key_digest(void *ud, dnode *n) {
    ds_walk *w = ud;
    if (db_is_expired(n)) return;
    unsigned char k[DIGEST_LEN] = {0}, v[DIGEST_LEN];
    mix(k, &w->dbid, sizeof w->dbid);
    mix(k, dn_key(n), dn_klen(n));
    digest_value(n, v);
    mix(k, v, DIGEST_LEN);
    int64_t exp = dn_expire(n);
    if (exp >= 0) mix(k, &exp, sizeof exp);
    xor_in(w->acc, k);
}

void digest_dataset(unsigned char out[DIGEST_LEN]) {
    memset(out, 0, DIGEST_LEN);
    for (int i = 0; i < db_count(); i++) {
        ds_walk w = {out, i};
        dict_foreach(&db_get(i)->keys, key_digest, &w);
    }
}

void digest_hex(const unsigned char d[DIGEST_LEN], char buf[2 * DIGEST_LEN + 1]) {
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < DIGEST_LEN; i++) {
        buf[2 * i] = hex[d[i] >> 4];
        buf[2 * i + 1] = hex[d[i] & 15];
    }
    buf[2 * DIGEST_LEN] = '\0';
}
