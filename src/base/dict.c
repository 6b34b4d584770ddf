/* dict.c - power-of-two chained hash table with incremental rehashing and a
 * resize-safe SCAN cursor (see dict.h for the design). */
#include "dict.h"
#include "frand.h"
#include "zmalloc.h"
#include <string.h>
#include <time.h>

/* ---- SipHash-1-3 (64-bit output), keyed per process ------------------- */

static uint64_t sip_k0 = 0x0706050403020100ull, sip_k1 = 0x0f0e0d0c0b0a0908ull;

void dict_set_seed(const uint8_t seed[16]) {
    memcpy(&sip_k0, seed, 8);
    memcpy(&sip_k1, seed + 8, 8);
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                              \
    do {                                                                      \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);             \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);             \
    } while (0)

uint64_t dict_hash(const char *key, size_t len) {
    const unsigned char *in = (const unsigned char *)key;
    uint64_t v0 = 0x736f6d6570736575ull ^ sip_k0, v1 = 0x646f72616e646f6dull ^ sip_k1;
    uint64_t v2 = 0x6c7967656e657261ull ^ sip_k0, v3 = 0x7465646279746573ull ^ sip_k1;
    const unsigned char *end = in + (len & ~(size_t)7);
    for (; in != end; in += 8) {
        uint64_t m;
        memcpy(&m, in, 8);          /* little-endian hosts; see below */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        m = __builtin_bswap64(m);
#endif
        v3 ^= m; SIPROUND; v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    switch (len & 7) {
    case 7: b |= (uint64_t)in[6] << 48; /* fall through */
    case 6: b |= (uint64_t)in[5] << 40; /* fall through */
    case 5: b |= (uint64_t)in[4] << 32; /* fall through */
    case 4: b |= (uint64_t)in[3] << 24; /* fall through */
    case 3: b |= (uint64_t)in[2] << 16; /* fall through */
    case 2: b |= (uint64_t)in[1] << 8;  /* fall through */
    case 1: b |= (uint64_t)in[0]; break;
    case 0: break;
    }
    v3 ^= b; SIPROUND; v0 ^= b;
    v2 ^= 0xff;
    SIPROUND; SIPROUND; SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- table management -------------------------------------------------- */

void dict_init(dict *d) {
    memset(d, 0, sizeof *d);
    d->rehash_idx = -1;
}

static inline int key_eq(const dnode *n, const char *key, size_t klen) {
    return dn_klen(n) == klen && memcmp(dn_key(n), key, klen) == 0;
}

static void free_chain(dnode *n, void (*free_fn)(dnode *)) {
    while (n) {
        dnode *next = n->next;
        if (free_fn) free_fn(n);
        n = next;
    }
}

void dict_clear(dict *d, void (*free_fn)(dnode *)) {
    for (int t = 0; t < 2; t++) {
        if (!d->table[t]) continue;
        size_t size = hashsize(d->bits[t]);
        for (size_t i = 0; i < size; i++) free_chain(d->table[t][i], free_fn);
        zfree(d->table[t]);
    }
    dict_init(d);
}

static void start_rehash(dict *d, unsigned bits) {
    d->table[1] = zcalloc(hashsize(bits) * sizeof(dnode *));
    d->bits[1] = (uint8_t)bits;
    d->used[1] = 0;
    d->rehash_idx = 0;
}

static void finish_rehash(dict *d) {
    zfree(d->table[0]);
    d->table[0] = d->table[1];
    d->bits[0] = d->bits[1];
    d->used[0] = d->used[1];
    d->table[1] = NULL;
    d->bits[1] = 0;
    d->used[1] = 0;
    d->rehash_idx = -1;
}

int dict_rehash(dict *d, int n) {
    if (d->rehash_idx == -1) return 0;
    size_t size0 = hashsize(d->bits[0]);
    size_t mask1 = hashmask(d->bits[1]);
    int empty_visits = n * 10;
    while (n-- && d->used[0] != 0) {
        while (d->table[0][d->rehash_idx] == NULL) {
            d->rehash_idx++;
            if (--empty_visits == 0) return 1;
        }
        dnode *e = d->table[0][d->rehash_idx];
        while (e) {
            dnode *next = e->next;
            size_t idx = dict_hash(dn_key(e), dn_klen(e)) & mask1;
            e->next = d->table[1][idx];
            d->table[1][idx] = e;
            d->used[0]--;
            d->used[1]++;
            e = next;
        }
        d->table[0][d->rehash_idx] = NULL;
        d->rehash_idx++;
    }
    (void)size0;
    if (d->used[0] == 0) {
        finish_rehash(d);
        return 0;
    }
    return 1;
}

static int64_t mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

long dict_rehash_us(dict *d, long us) {
    if (d->pause_rehash) return 0;
    int64_t start = mono_us();
    long moved = 0;
    while (dict_rehash(d, 100)) {
        moved += 100;
        if (mono_us() - start >= us) break;
    }
    return moved;
}

static inline void rehash_step(dict *d) {
    if (d->rehash_idx != -1 && d->pause_rehash == 0) dict_rehash(d, DICT_REHASH_STEP);
}

dict_expand_veto_fn *dict_expand_veto;

static void maybe_expand(dict *d) {
    if (d->rehash_idx != -1) return;
    if (!d->table[0]) {
        d->table[0] = zcalloc(hashsize(DICT_MIN_BITS) * sizeof(dnode *));
        d->bits[0] = DICT_MIN_BITS;
        return;
    }
    /* grow at load factor 2 (chains average 1.5 nodes): 4-5 B/key less than
     * at 1 for ~5% of pipelined GET throughput at 100k keys (issue #3) */
    if (d->used[0] >= 2 * hashsize(d->bits[0]) && !d->pause_rehash) {
        size_t load = d->used[0] / hashsize(d->bits[0]);
        if (dict_expand_veto && dict_expand_veto(hashsize(d->bits[0] + 1u) * sizeof(dnode *), load)) return;
        start_rehash(d, d->bits[0] + 1u);
    }
}

void dict_reserve(dict *d, size_t n) {
    if (dict_size(d) != 0 || d->rehash_idx != -1) return;
    unsigned bits = DICT_MIN_BITS;
    while (bits < 40 && 2 * hashsize(bits) <= n) bits++; /* the size growth at load factor 2 reaches */
    if (d->table[0] && bits <= d->bits[0]) return;
    if (dict_expand_veto && dict_expand_veto(hashsize(bits) * sizeof(dnode *), 0)) return;
    zfree(d->table[0]);
    d->table[0] = zcalloc(hashsize(bits) * sizeof(dnode *));
    d->bits[0] = (uint8_t)bits;
}

void dict_maybe_shrink(dict *d) {
    if (d->rehash_idx != -1 || !d->table[0] || d->pause_rehash) return;
    size_t size = hashsize(d->bits[0]);
    size_t used = d->used[0];
    if (size <= hashsize(DICT_MIN_BITS) || used * 8 >= size) return;
    unsigned bits = DICT_MIN_BITS;
    while (hashsize(bits) < used) bits++;
    if (bits >= d->bits[0]) return;
    start_rehash(d, bits);
}

static dnode **find_link_h(dict *d, const char *key, size_t klen, int *table, uint64_t h) {
    rehash_step(d);
    for (int t = 0; t < 2; t++) {
        if (!d->table[t]) break;
        size_t idx = h & hashmask(d->bits[t]);
        if (t == 0 && d->rehash_idx != -1 && (long)idx < d->rehash_idx) continue;
        dnode **link = &d->table[t][idx];
        while (*link) {
            if (key_eq(*link, key, klen)) {
                *table = t;
                return link;
            }
            link = &(*link)->next;
        }
    }
    return NULL;
}

static dnode **find_link(dict *d, const char *key, size_t klen, int *table) {
    if (dict_size(d) == 0) return NULL;
    return find_link_h(d, key, klen, table, dict_hash(key, klen));
}

dnode **dict_find_link_h(dict *d, const char *key, size_t klen, uint64_t *hash) {
    int t;
    *hash = dict_hash(key, klen);
    if (dict_size(d) == 0) return NULL;
    return find_link_h(d, key, klen, &t, *hash);
}

dnode **dict_find_link_hashed(dict *d, const char *key, size_t klen, uint64_t hash) {
    int t;
    if (dict_size(d) == 0) return NULL;
    return find_link_h(d, key, klen, &t, hash);
}

dnode **dict_find_link(dict *d, const char *key, size_t klen) {
    int t;
    return find_link(d, key, klen, &t);
}

dnode *dict_find(dict *d, const char *key, size_t klen) {
    int t;
    dnode **l = find_link(d, key, klen, &t);
    return l ? *l : NULL;
}

void dict_add(dict *d, dnode *n) { dict_add_h(d, n, dict_hash(dn_key(n), dn_klen(n))); }

void dict_add_h(dict *d, dnode *n, uint64_t hash) {
    rehash_step(d);
    maybe_expand(d);
    int t = d->rehash_idx != -1 ? 1 : 0;
    size_t idx = hash & hashmask(d->bits[t]);
    n->next = d->table[t][idx];
    d->table[t][idx] = n;
    d->used[t]++;
}

/* ---- batched insertion (see dict.h) ------------------------------------- */

void dict_batch_init(dict_batch *b, dict *d) {
    b->d = d;
    b->head = b->count = 0;
}

/* The table can take every queued node and one more without growing. */
static int batch_room(const dict *d, unsigned queued) {
    return d->table[0] && d->rehash_idx == -1 && d->used[0] + queued + 1 < 2 * hashsize(d->bits[0]);
}

/* Insert n after the duplicate check; n if it is a duplicate. */
static dnode *batch_insert(dict *d, dnode *n, uint64_t h) {
    int t;
    if (!batch_room(d, 0)) {
        if (find_link_h(d, dn_key(n), dn_klen(n), &t, h)) return n;
        dict_add_h(d, n, h);
        return NULL;
    }
    dnode **slot = &d->table[0][h & hashmask(d->bits[0])];
    for (dnode *e = *slot; e; e = e->next)
        if (key_eq(e, dn_key(n), dn_klen(n))) return n;
    n->next = *slot;
    *slot = n;
    d->used[0]++;
    return NULL;
}

static dnode *batch_pop(dict_batch *b, size_t *dup_tag) {
    unsigned i = b->head;
    b->head = (b->head + 1) % DICT_BATCH;
    b->count--;
    dnode *dup = batch_insert(b->d, b->q[i].n, b->q[i].h);
    if (dup) *dup_tag = b->q[i].tag;
    return dup;
}

dnode *dict_batch_flush(dict_batch *b, size_t *dup_tag) {
    while (b->count) {
        dnode *dup = batch_pop(b, dup_tag);
        if (dup) return dup;
    }
    return NULL;
}

dnode *dict_batch_add(dict_batch *b, dnode *n, uint64_t h, size_t tag, size_t *dup_tag) {
    dict *d = b->d;
    dnode *dup = b->count == DICT_BATCH ? batch_pop(b, dup_tag) : NULL;
    unsigned i = (b->head + b->count) % DICT_BATCH;
    b->q[i].n = n;
    b->q[i].h = h;
    b->q[i].tag = tag;
    b->count++;
    if (!batch_room(d, b->count)) { /* the table must grow: one at a time */
        while (!dup && b->count) dup = batch_pop(b, dup_tag);
        return dup;
    }
    size_t mask = hashmask(d->bits[0]);
    __builtin_prefetch(&d->table[0][h & mask]);
    /* a third of a batch back, the bucket is in cache: fetch the chain's
     * first node; two thirds back, that node is: fetch the second */
    if (b->count > DICT_BATCH / 3) {
        unsigned m = (b->head + b->count - 1 - DICT_BATCH / 3) % DICT_BATCH;
        dnode *first = d->table[0][b->q[m].h & mask];
        if (first) __builtin_prefetch(first);
    }
    if (b->count > 2 * DICT_BATCH / 3) {
        unsigned m = (b->head + b->count - 1 - 2 * DICT_BATCH / 3) % DICT_BATCH;
        dnode *first = d->table[0][b->q[m].h & mask];
        if (first && first->next) __builtin_prefetch(first->next);
    }
    return dup;
}

dnode *dict_unlink(dict *d, const char *key, size_t klen) {
    int t;
    dnode **l = find_link(d, key, klen, &t);
    if (!l) return NULL;
    dnode *n = *l;
    *l = n->next;
    d->used[t]--;
    n->next = NULL;
    return n;
}

/* ---- scan -------------------------------------------------------------- */

static inline unsigned long rev_bits(unsigned long v) {
    uint64_t x = (uint64_t)v;
    x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
    x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((x & 0x0F0F0F0F0F0F0F0Full) << 4);
    return (unsigned long)__builtin_bswap64(x);
}

static inline unsigned long rev_increment(unsigned long v, unsigned long mask) {
    v |= ~mask;
    v = rev_bits(v);
    v++;
    return rev_bits(v);
}

static void scan_bucket(dnode *n, dict_scan_fn *fn, void *ud) {
    while (n) {
        dnode *next = n->next;
        fn(ud, n);
        n = next;
    }
}

unsigned long dict_scan(dict *d, unsigned long v, dict_scan_fn *fn, void *ud) {
    if (dict_size(d) == 0) return 0;
    d->pause_rehash++;
    if (d->rehash_idx == -1) {
        unsigned long m0 = hashmask(d->bits[0]);
        scan_bucket(d->table[0][v & m0], fn, ud);
        v = rev_increment(v, m0);
    } else {
        int small = d->bits[0] <= d->bits[1] ? 0 : 1, big = 1 - small;
        unsigned long m0 = hashmask(d->bits[small]), m1 = hashmask(d->bits[big]);
        scan_bucket(d->table[small][v & m0], fn, ud);
        do {
            scan_bucket(d->table[big][v & m1], fn, ud);
            v = rev_increment(v, m1);
        } while (v & (m0 ^ m1));
    }
    d->pause_rehash--;
    return v;
}

void dict_foreach(dict *d, dict_scan_fn *fn, void *ud) {
    d->pause_rehash++;
    for (int t = 0; t < 2; t++) {
        if (!d->table[t]) continue;
        size_t size = hashsize(d->bits[t]);
        for (size_t i = 0; i < size; i++) scan_bucket(d->table[t][i], fn, ud);
    }
    d->pause_rehash--;
}

/* A bucket chosen at random (NULL if empty). */
static dnode *random_bucket(dict *d) {
    if (d->rehash_idx != -1) {
        size_t s0 = hashsize(d->bits[0]), s1 = hashsize(d->bits[1]);
        size_t span = s0 - (size_t)d->rehash_idx + s1;
        size_t i = (size_t)d->rehash_idx + frand_below(span);
        return i < s0 ? d->table[0][i] : d->table[1][i - s0];
    }
    return d->table[0][frand64() & hashmask(d->bits[0])];
}

/* Uniform over the nodes: a random bucket whose chain has L nodes is kept
 * with probability L / DICT_FAIR_CHAIN (rejection sampling), then a node of
 * the chain is picked uniformly, so every node has the same chance however
 * long its chain (exactly, for chains up to DICT_FAIR_CHAIN long). At load
 * factors 1-2 this takes 4-8 bucket probes. */
#define DICT_FAIR_CHAIN 8
dnode *dict_random(dict *d) {
    if (dict_size(d) == 0) return NULL;
    rehash_step(d);
    dnode *head = NULL;
    size_t len = 0;
    for (int tries = 0; tries < 1000 && !head; tries++) {
        head = random_bucket(d);
        if (!head) continue;
        len = 0;
        for (dnode *n = head; n; n = n->next) len++;
        if (len < DICT_FAIR_CHAIN && frand_below(DICT_FAIR_CHAIN) >= len) head = NULL;
    }
    if (!head) { /* very sparse: walk from a random point */
        for (int t = 0; t < 2 && !head; t++) {
            if (!d->table[t]) continue;
            size_t size = hashsize(d->bits[t]), start = frand_below(size);
            for (size_t k = 0; k < size && !head; k++) head = d->table[t][(start + k) & (size - 1)];
        }
        len = 0;
        for (dnode *n = head; n; n = n->next) len++;
    }
    size_t pick = frand_below(len);
    while (pick--) head = head->next;
    return head;
}

size_t dict_sample(dict *d, dnode **out, size_t count, size_t max_buckets) {
    if (dict_size(d) == 0 || count == 0) return 0;
    int tables = d->rehash_idx != -1 ? 2 : 1;
    size_t mask = hashmask(d->bits[0]);
    if (tables == 2 && d->bits[1] > d->bits[0]) mask = hashmask(d->bits[1]);
    size_t i = frand64() & mask, stored = 0, emptylen = 0;
    while (stored < count && max_buckets--) {
        for (int t = 0; t < tables; t++) {
            /* while rehashing, table 0 below rehash_idx is empty: skip it, or,
             * when table 1 is smaller (shrink), go on from rehash_idx */
            if (tables == 2 && t == 0 && i < (size_t)d->rehash_idx) {
                if (i >= hashsize(d->bits[1])) i = (size_t)d->rehash_idx;
                else continue;
            }
            if (i >= hashsize(d->bits[t])) continue;
            dnode *n = d->table[t][i];
            if (!n) {
                if (++emptylen >= 5 && emptylen > count) {
                    i = frand64() & mask;
                    emptylen = 0;
                }
                continue;
            }
            emptylen = 0;
            for (; n; n = n->next) {
                out[stored++] = n;
                if (stored == count) return stored;
            }
        }
        i = (i + 1) & mask;
    }
    return stored;
}

size_t dict_overhead(const dict *d) {
    return dict_buckets(d) * sizeof(dnode *);
}
