/* digest.c - dataset and value fingerprints for DEBUG DIGEST (see digest.h).
 *
 * The numbers are redis-server 7.0's, so a ferry node and a Redis node
 * holding the same data report the same DEBUG DIGEST and DEBUG
 * DIGEST-VALUE (streams excepted, see below). Everything is built from two
 * operations on a 20-byte state, both using SHA-1 (sha1.c):
 *
 *   xor(d, bytes)  d ^= SHA1(bytes)                    order-free
 *   mix(d, bytes)  xor(d, bytes), then d = SHA1(d)     order matters
 *
 * A value's digest starts from the state it is given (zeros for DEBUG
 * DIGEST-VALUE, the key's digest for DEBUG DIGEST), mixes in its Redis
 * type number as a 32-bit big-endian integer, then its contents:
 *   string  mix(the bytes)
 *   list    mix(each element), head to tail
 *   set     xor(each member)
 *   hash    xor(e) per field, e = mix(mix(zeros, field), value)
 *   zset    xor(e) per member, e = mix(mix(zeros, member), score), the
 *           score printed with "%.17g" (whatever the encoding)
 * Integers (intset members, listpack integers) are digested as their
 * decimal text, so encodings never show. A key with an expiry, whatever its
 * time, then gets xor("!!expire!!").
 *
 * The dataset digest starts at zeros; for each database holding keys, in
 * order, it mixes in the database number (32-bit big-endian), then for each
 * key xors in the digest of: mix(zeros, key) continued by the value digest
 * above. Every key in the keyspace counts, logically expired ones too (as
 * in Redis). An empty dataset gives zeros.
 *
 * Streams: Redis digests a stream's radix-tree keys and listpack bytes,
 * which ferry does not store the same way, so a stream's digest is ferry's
 * own (its type number, 6 as in Redis, then the entries in order, the
 * counters and the consumer groups with their PELs): equal streams give
 * equal digests within ferry, but not Redis's numbers.
 */
#include "digest.h"
#include "db.h"
#include "sha1.h"
#include "t_hash.h"
#include "t_list.h"
#include "t_set.h"
#include "t_stream.h"
#include "t_zset.h"
#include <stdio.h>
#include <string.h>

/* Redis's type numbers (OBJ_STREAM is 6 there: 5 was its module type). */
static const uint32_t redis_type[OBJ_TYPES] = {
    [OBJ_STRING] = 0, [OBJ_LIST] = 1, [OBJ_SET] = 2, [OBJ_ZSET] = 3, [OBJ_HASH] = 4, [OBJ_STREAM] = 6,
};

static void xor_bytes(unsigned char d[DIGEST_LEN], const void *p, size_t n) {
    unsigned char h[DIGEST_LEN];
    sha1_ctx c;
    sha1_init(&c);
    sha1_update(&c, p, n);
    sha1_final(&c, h);
    for (int i = 0; i < DIGEST_LEN; i++) d[i] ^= h[i];
}

static void mix(unsigned char d[DIGEST_LEN], const void *p, size_t n) {
    sha1_ctx c;
    xor_bytes(d, p, n);
    sha1_init(&c);
    sha1_update(&c, d, DIGEST_LEN);
    sha1_final(&c, d);
}

static void mix_u32be(unsigned char d[DIGEST_LEN], uint32_t v) {
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    mix(d, b, sizeof b);
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

/* A hash field and its value, a zset member and its score: digested as a
 * pair, the pairs xored in order-free. */
static void pair_digest(unsigned char d[DIGEST_LEN], const void *a, size_t alen, const void *b, size_t blen) {
    unsigned char e[DIGEST_LEN] = {0};
    mix(e, a, alen);
    mix(e, b, blen);
    xor_bytes(d, e, DIGEST_LEN);
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

/* Type, contents and expiry marker of n's value, continuing from d. */
static void object_digest(const dnode *n, unsigned char d[DIGEST_LEN]) {
    mix_u32be(d, n->type < OBJ_TYPES ? redis_type[n->type] : n->type);
    switch (n->type) {
    case OBJ_STRING: mix(d, dn_val(n), dn_vlen(n)); break;
    case OBJ_LIST: list_digest(n, d); break;
    case OBJ_SET: set_digest(n, d); break;
    case OBJ_HASH: hash_foreach(dn_ptr(n), hash_pair, d); break;
    case OBJ_ZSET: zset_digest(n, d); break;
    case OBJ_STREAM: stream_digest(n, d); break;
    }
    if (dn_expire(n) >= 0) xor_bytes(d, "!!expire!!", 10);
}

void digest_value(const dnode *n, unsigned char out[DIGEST_LEN]) {
    memset(out, 0, DIGEST_LEN);
    object_digest(n, out);
}

/* Every key, logically expired or not: Redis walks its whole dict. */
static void key_digest(void *ud, dnode *n) {
    unsigned char *acc = ud;
    unsigned char k[DIGEST_LEN] = {0};
    mix(k, dn_key(n), dn_klen(n));
    object_digest(n, k);
    xor_bytes(acc, k, DIGEST_LEN);
}

void digest_dataset(unsigned char out[DIGEST_LEN]) {
    memset(out, 0, DIGEST_LEN);
    for (int i = 0; i < db_count(); i++) {
        db *d = db_get(i);
        if (dict_size(&d->keys) == 0) continue;
        mix_u32be(out, (uint32_t)i);
        dict_foreach(&d->keys, key_digest, out);
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
