/* dict.h - power-of-two chained hash table with incremental rehashing.
 *
 * The table is intrusive: it links dnode records, one allocation each: a
 * 16-byte header (chain link, short key and value lengths, type, encoding,
 * flags and a 24-bit LRU/LFU field), then the optional expiry, the optional
 * wide lengths (keys >= 255 or values >= 65535 bytes), the key bytes and the
 * value bytes. The same layout serves the keyspace (key -> typed value),
 * hash fields, set members and skiplist nodes. Nodes come from dnode.c's
 * slab (exact 8-byte classes): a 16-byte key with a 64-byte value costs 96
 * bytes, against 112 from malloc with a 24-byte header. The expiry slot is
 * 12 bytes: the int64 expiry (unix ms) and the uint32 position of the key
 * in its database's index of volatile keys (db.c), so that index can drop
 * or move an entry in O(1). A keyspace node of a slot-indexed database
 * (cluster mode, db_slots.c) carries DN_LINK_SLOT more bytes after its
 * value: the previous and next node of its hash slot's list. They sit at
 * the end so that finding a key (dn_key) costs the same with or without
 * them; this file only sizes and carries them along.
 *
 * Buckets grow at load factor 2 (and shrink below 1/8), so a table costs 4-8
 * bytes per key instead of 8-16.
 *
 * Growth and shrink are incremental, as in memcached's assoc.c: two tables,
 * and a cursor (rehash_idx) that moves a few buckets on every operation and a
 * bounded number of microseconds from the server's cron. No single call ever
 * moves more than DICT_REHASH_STEP buckets, so resizing a 10M-key table never
 * stalls a command. SCAN uses a reverse-binary cursor that visits every key
 * present for the whole scan at least once, across resizes.
 *
 * Hashing is SipHash-1-3 keyed per process (dict_set_seed).
 */
#ifndef FERRY_DICT_H
#define FERRY_DICT_H

#include <stddef.h>
#include <stdint.h>

#define hashsize(bits) ((size_t)1 << (bits))
#define hashmask(bits) (hashsize(bits) - 1)

#define DICT_MIN_BITS 2
#define DICT_REHASH_STEP 1          /* buckets moved per operation */

/* dnode flags */
#define DN_EXPIRE 0x01              /* the expiry slot is the first of data[] (DN_EXPIRE_SLOT bytes) */
#define DN_WIDE 0x02                /* key >= 255 or value >= 65535 bytes: uint32 klen, vlen follow [expiry] */
#define DN_PINNED 0x04              /* a client's unsent reply points into the value (io/outbuf.c):
                                     * call dn_prepare_change before writing it in place or freeing it */
#define DN_SLOTLINK 0x08            /* DN_LINK_SLOT bytes follow the value: the node's links in its hash slot's
                                     * list (db_slots.c); every reshape carries them to the new node */
#define DN_NOSHARE 0x80             /* COPY result: OBJECT REFCOUNT reports 1, not the shared-int count */
#define DN_SHAPE_FLAGS (DN_EXPIRE | DN_WIDE | DN_PINNED | DN_SLOTLINK) /* flags of this node's memory, not of its value */

#define DN_KLEN_SHORT_MAX 254       /* longest key held in klen8 */
#define DN_VLEN_SHORT_MAX 65534     /* longest value held in vlen16 */

#define DN_EXPIRE_SLOT 12           /* int64 expiry, uint32 volatile-index position */
#define DN_LINK_SLOT 16             /* DN_SLOTLINK: previous and next node pointers */

/* 16 bytes of header. `lru` is Redis's 24-bit field: the LRU clock in
 * seconds, or under an LFU policy 16 bits of minutes and an 8-bit counter
 * (evict.h); a skiplist node keeps its level count there. */
typedef struct dnode {
    struct dnode *next;
    uint8_t klen8;                  /* key length (short form) */
    uint8_t type : 4;               /* value type (keyspace: OBJ_*) */
    uint8_t enc : 4;                /* value encoding */
    uint16_t vlen16;                /* value length (short form) */
    uint32_t lru : 24;
    uint32_t flags : 8;             /* DN_* */
    char data[];                    /* [int64 expire] [uint32 klen, vlen if DN_WIDE] key value */
} dnode;
_Static_assert(sizeof(dnode) == 16, "dnode header is 16 bytes");

static inline size_t dn_expire_slot(unsigned flags) { return (flags & DN_EXPIRE) ? DN_EXPIRE_SLOT : 0; }
static inline size_t dn_slots(unsigned flags) { return dn_expire_slot(flags) + ((flags & DN_WIDE) ? 8 : 0); }
static inline int dn_needs_wide(size_t klen, size_t vlen) {
    return klen > DN_KLEN_SHORT_MAX || vlen > DN_VLEN_SHORT_MAX;
}
static inline uint32_t dn_klen(const dnode *n) {
    if (__builtin_expect(!(n->flags & DN_WIDE), 1)) return n->klen8;
    uint32_t v; __builtin_memcpy(&v, n->data + dn_expire_slot(n->flags), 4); return v;
}
static inline uint32_t dn_vlen(const dnode *n) {
    if (__builtin_expect(!(n->flags & DN_WIDE), 1)) return n->vlen16;
    uint32_t v; __builtin_memcpy(&v, n->data + dn_expire_slot(n->flags) + 4, 4); return v;
}
static inline char *dn_key(const dnode *n) { return (char *)n->data + dn_slots(n->flags); }
static inline char *dn_val(const dnode *n) { return dn_key(n) + dn_klen(n); }
static inline int64_t dn_expire(const dnode *n) {
    int64_t t; if (!(n->flags & DN_EXPIRE)) return -1;
    __builtin_memcpy(&t, n->data, 8); return t;
}
static inline void dn_set_expire_field(dnode *n, int64_t t) { __builtin_memcpy(n->data, &t, 8); }
/* Position in the volatile index (keyspace nodes with DN_EXPIRE only). */
static inline uint32_t dn_vidx(const dnode *n) { uint32_t i; __builtin_memcpy(&i, n->data + 8, 4); return i; }
static inline void dn_set_vidx(dnode *n, uint32_t i) { __builtin_memcpy(n->data + 8, &i, 4); }
static inline size_t dn_size(uint32_t klen, uint32_t vlen, int with_expire) {
    return sizeof(dnode) + (with_expire ? DN_EXPIRE_SLOT : 0) + (dn_needs_wide(klen, vlen) ? 8 : 0) + klen + vlen;
}
static inline size_t dn_link_slot(unsigned flags) { return (flags & DN_SLOTLINK) ? DN_LINK_SLOT : 0; }
static inline size_t dn_node_size(const dnode *n) {
    return dn_size(dn_klen(n), dn_vlen(n), n->flags & DN_EXPIRE) + dn_link_slot(n->flags);
}
/* The DN_LINK_SLOT bytes after the value (nodes with DN_SLOTLINK; unaligned). */
static inline char *dn_links(const dnode *n) { return dn_val(n) + dn_vlen(n); }

/* Pinned nodes (DN_PINNED). The layer that pins a node sets the hooks: the
 * first makes every reply pointing into n carry its own copy of the bytes
 * and clears the flag; the second does that for every pinned node, before
 * nodes are handed to another thread (lazy freeing). dn_free, and the
 * resizes that move a node, call the first for a pinned node. */
extern void (*dn_unpin_hook)(struct dnode *n);
extern void (*dn_unpin_all_hook)(void);
static inline void dn_prepare_change(struct dnode *n) {
    if (__builtin_expect(n->flags & DN_PINNED, 0)) dn_unpin_hook(n);
}

#define DN_SLAB_MAX 512             /* nodes up to this size come from slabs */

/* Node allocation (dnode.c): nodes up to DN_SLAB_MAX bytes come from slabs
 * of exact 8-byte size classes with no per-object header; larger ones from
 * zmalloc. All return zeroed headers with the lengths and expiry slot set;
 * the caller fills type/enc/lru/flags, key and value. */
dnode *dn_new(uint32_t klen, uint32_t vlen, int with_expire);
/* The same for a shape given as flags: DN_EXPIRE and/or DN_SLOTLINK (the
 * link bytes are left for the caller to fill). */
dnode *dn_new_shaped(uint32_t klen, uint32_t vlen, unsigned shape);
/* The header of a node the caller allocated itself (dn_size bytes at n,
 * DN_LINK_SLOT more with DN_SLOTLINK). */
void dn_init(dnode *n, uint32_t klen, uint32_t vlen, int with_expire);
void dn_init_shaped(dnode *n, uint32_t klen, uint32_t vlen, unsigned shape);
void dn_free(dnode *n);
/* Freeing nodes from a thread other than the event loop's (lazyfree.c):
 * the thread calls dn_remote_thread() once, then dn_remote_flush() after
 * each batch of frees; the event loop calls dn_remote_collect() now and then
 * to reuse what was handed over (see dnode.c). */
void dn_remote_thread(void);
void dn_remote_flush(void);
void dn_remote_collect(void);
/* Bytes the allocator holds for n (MEMORY USAGE). */
size_t dn_usable(const dnode *n);
/* The same node (header, expiry, key, the first min(old, new) value bytes,
 * links) with value length newvlen; n is freed unless returned. */
dnode *dn_resize_value(dnode *n, uint32_t newvlen);
/* The same node with the expiry slot added (with_expire) or removed. */
dnode *dn_with_expire_slot(dnode *n, int with_expire);
/* The same node (header, expiry, value) under another key; n is freed. */
dnode *dn_rekey(dnode *n, const char *key, uint32_t klen);
/* The same node with the link bytes (DN_SLOTLINK) added, contents
 * undefined, or removed; n is freed unless returned. */
dnode *dn_with_links(dnode *n, int with_links);

typedef struct dict {
    dnode **table[2];
    uint8_t bits[2];                /* table[i] has hashsize(bits[i]) buckets when non-NULL */
    size_t used[2];
    long rehash_idx;                /* -1: not rehashing; else next bucket of table[0] to move */
    int pause_rehash;               /* >0: no rehash steps (safe iteration) */
} dict;

void dict_set_seed(const uint8_t seed[16]);
/* Asked before a table grows (new table bytes, current load factor); a
 * non-zero answer postpones the growth (maxmemory: evict.c). */
typedef int dict_expand_veto_fn(size_t new_table_bytes, size_t load);
extern dict_expand_veto_fn *dict_expand_veto;
uint64_t dict_hash(const char *key, size_t len);

void dict_init(dict *d);
/* Free all nodes with free_fn (may be NULL) and release the tables. */
void dict_clear(dict *d, void (*free_fn)(dnode *));
static inline size_t dict_size(const dict *d) { return d->used[0] + d->used[1]; }
static inline size_t dict_buckets(const dict *d) {
    return (d->table[0] ? hashsize(d->bits[0]) : 0) + (d->table[1] ? hashsize(d->bits[1]) : 0);
}
static inline int dict_is_rehashing(const dict *d) { return d->rehash_idx != -1; }

dnode *dict_find(dict *d, const char *key, size_t klen);
/* Address of the link that points at the node with this key (NULL if absent).
 * Valid until the next dict call; lets callers replace a node after realloc:
 *   dnode **l = dict_find_link(d,k,n); *l = realloc(*l, bigger);        */
dnode **dict_find_link(dict *d, const char *key, size_t klen);
/* Insert a node whose key is not present. */
void dict_add(dict *d, dnode *n);
/* An empty dict sized for n nodes, so adding them never rehashes (a
 * loader that knows the count: RESIZEDB). No effect on a dict in use, or
 * when dict_expand_veto refuses the table. */
void dict_reserve(dict *d, size_t n);

/* Batched insertion of new nodes, for loaders. Adding a node to a table of
 * millions costs a cache miss on its bucket and one per chain node it
 * compares with, and one insert at a time waits for each in turn. A batch
 * holds the last DICT_BATCH nodes: a node's bucket is prefetched when it
 * is queued, the first node of its chain a third of a batch later, the
 * second two thirds later, and it is inserted (after the duplicate check) when it leaves the queue, by which
 * time both are in cache. Order is kept, so a key repeated in the input is
 * found by its second insertion. While the table would have to grow (no
 * dict_reserve, or more nodes than reserved) nodes go straight in through
 * dict_add_h. A duplicate is never inserted: it is handed back with its tag
 * (the caller's position in the input). */
#define DICT_BATCH 24
typedef struct dict_batch {
    dict *d;
    struct {
        dnode *n;
        uint64_t h;
        size_t tag;
    } q[DICT_BATCH];
    unsigned head, count;
} dict_batch;

void dict_batch_init(dict_batch *b, dict *d);
/* Queue n (hash h = dict_hash of its key). NULL, or a node found to be a
 * duplicate (not inserted; the caller frees it) with its tag in *dup_tag;
 * every other node is in the dict or still queued. */
dnode *dict_batch_add(dict_batch *b, dnode *n, uint64_t h, size_t tag, size_t *dup_tag);
/* Insert what is queued, stopping at a duplicate (returned as by
 * dict_batch_add; call again until NULL to drain the rest). */
dnode *dict_batch_flush(dict_batch *b, size_t *dup_tag);
/* Variants that reuse a hash the caller already computed (saves a SipHash
 * on insert-after-miss): dict_find_link_h stores the key's hash in *hash. */
dnode **dict_find_link_h(dict *d, const char *key, size_t klen, uint64_t *hash);
void dict_add_h(dict *d, dnode *n, uint64_t hash);
/* Variants for a hash computed earlier with dict_hash(key, klen) (the
 * batched executor hashes a window of pipelined keys ahead of execution). */
dnode **dict_find_link_hashed(dict *d, const char *key, size_t klen, uint64_t hash);
static inline dnode *dict_find_hashed(dict *d, const char *key, size_t klen, uint64_t hash) {
    if (d->rehash_idx == -1) { /* one table and no rehash step due: walk the chain here */
        if (!d->table[0]) return NULL;
        for (dnode *n = d->table[0][hash & hashmask(d->bits[0])]; n; n = n->next)
            if (dn_klen(n) == klen && __builtin_memcmp(dn_key(n), key, klen) == 0) return n;
        return NULL;
    }
    dnode **l = dict_find_link_hashed(d, key, klen, hash);
    return l ? *l : NULL;
}

/* Prefetch hints, no effect on contents: the bucket slot(s) a key with this
 * hash lives in (both tables while rehashing), then, once that line has
 * arrived, the first two cache lines of each table's chain head.
 * always_inline: GCC otherwise finds these side-effect free before inlining
 * them and deletes the calls. */
#define DICT_PREFETCH_FN static inline __attribute__((always_inline)) void
DICT_PREFETCH_FN dict_prefetch_bucket(const dict *d, uint64_t hash) {
    if (!d->table[0]) return;
    __builtin_prefetch(&d->table[0][hash & hashmask(d->bits[0])]);
    if (d->table[1]) __builtin_prefetch(&d->table[1][hash & hashmask(d->bits[1])]);
}
DICT_PREFETCH_FN dict_prefetch_node(const dict *d, uint64_t hash) {
    for (int t = 0; t < 2 && d->table[t]; t++) {
        const dnode *n = d->table[t][hash & hashmask(d->bits[t])];
        if (n) {
            __builtin_prefetch(n);
            __builtin_prefetch((const char *)n + 64); /* a key and a small value often reach the next line */
        }
    }
}

/* The third stage, once the chain heads have arrived: the second node of
 * each chain (at load factor 2 the key is often not the head) and, for a
 * head whose value is a pointer (a collection), the structure it points to. */
DICT_PREFETCH_FN dict_prefetch_next(const dict *d, uint64_t hash) {
    for (int t = 0; t < 2 && d->table[t]; t++) {
        const dnode *n = d->table[t][hash & hashmask(d->bits[t])];
        if (!n) continue;
        if (n->next) __builtin_prefetch(n->next);
        if (n->type != 0) { /* not OBJ_STRING (db.h): the value area holds a pointer */
            const void *p;
            __builtin_memcpy(&p, dn_val(n), sizeof p);
            __builtin_prefetch(p);
        }
    }
}

/* Remove the node with this key and return it (NULL if absent). */
dnode *dict_unlink(dict *d, const char *key, size_t klen);

/* Move up to n buckets; returns 1 while more rehashing remains. */
int dict_rehash(dict *d, int n);
/* Rehash for about `us` microseconds; returns buckets moved. */
long dict_rehash_us(dict *d, long us);
/* Shrink if mostly empty (called from cron). */
void dict_maybe_shrink(dict *d);

/* Reverse-binary cursor scan: calls fn for every node of the bucket(s) the
 * cursor designates and returns the next cursor (0 when complete). */
typedef void dict_scan_fn(void *ud, dnode *n);
unsigned long dict_scan(dict *d, unsigned long cursor, dict_scan_fn *fn, void *ud);

/* Calls fn for every node; fn must not modify the dict. */
void dict_foreach(dict *d, dict_scan_fn *fn, void *ud);

/* A random node, roughly uniform (NULL if empty). */
dnode *dict_random(dict *d);

/* Sampling (maxmemory eviction), in the manner of Redis's dictGetSomeKeys:
 * walks buckets from a random index (jumping elsewhere after a run of empty
 * buckets) and stores up to `count` nodes in out[], looking at no more
 * than `max_buckets` buckets. Returns how many were stored; may be fewer
 * than asked (or 0) in a sparse table. Cheap, not uniform: neighbours in a
 * bucket are taken together. (Volatile keys are sampled from db.h's index.) */
size_t dict_sample(dict *d, dnode **out, size_t count, size_t max_buckets);

/* Bytes of bucket arrays (for memory accounting). */
size_t dict_overhead(const dict *d);

#endif
