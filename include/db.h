/* db.h - the keyspace: numbered databases of typed values with millisecond
 * expiry, lazy expiry on access, and the active expiry cycle.
 *
 * Values are typed (OBJ_STRING now; lists, sets, sorted sets and hashes
 * store a pointer to their structure in the node's value area), so new types
 * slot in without changing the table.
 */
#ifndef FERRY_DB_H
#define FERRY_DB_H

#include <stdint.h>
#include <stddef.h>
#include "dict.h"
#include "util.h"

enum { OBJ_STRING = 0, OBJ_LIST = 1, OBJ_SET = 2, OBJ_ZSET = 3, OBJ_HASH = 4, OBJ_STREAM = 5, OBJ_TYPES };
/* string encodings as OBJECT ENCODING reports them */
enum { ENC_RAW = 0, ENC_INT = 1, ENC_EMBSTR = 2 };
/* encodings of the other types (index into obj_enc_name's table; the names
 * are Redis 7.0's: a small list is still "quicklist", a small set of
 * non-integers is "hashtable") */
enum { ENC_HT = 2, ENC_INTSET = 5, ENC_SKIPLIST = 6, ENC_QUICKLIST = 8, ENC_STREAM = 9, ENC_LISTPACK = 10 };

#define DB_EMBSTR_MAX 44            /* longest string Redis stores embstr */

/* The encoding Redis gives a string value it stores fresh (SET, a load,
 * RESTORE): int for the canonical decimal of a long long, else embstr up
 * to DB_EMBSTR_MAX bytes, else raw. */
static inline uint8_t db_string_enc(const char *p, size_t len) {
    long long v;
    if (len <= 20 && str_to_ll(p, len, &v)) return ENC_INT;
    return len <= DB_EMBSTR_MAX ? ENC_EMBSTR : ENC_RAW;
}

/* A database: the key table and the index of its volatile keys (those
 * with an expiry), a dense array of node pointers in which each volatile
 * node records its own position (dn_vidx), so adding, dropping and moving
 * an entry are O(1) and a uniform random volatile key is one array read.
 * Active expiry walks the array, and the volatile-* eviction policies
 * sample it, however few of the keys have a TTL. Positions are 32-bit: up
 * to 2^32 volatile keys per database (some 400 GB of keys). */
struct slot_index;

typedef struct db {
    dict keys;
    struct slot_index *slots;       /* per-slot key lists (cluster mode), or NULL: db_slots.c */
    int id;
    size_t expires;                 /* keys with an expiry: entries of vol */
    dnode **vol;                    /* volatile index */
    size_t vol_cap;
    size_t expire_cursor;           /* active expiry position in vol */
    long long avg_ttl;              /* estimate, ms */
} db;

void db_init_all(int n);
/* A uniformly random volatile key of d (NULL when it has none). */
dnode *db_random_volatile(const db *d);
/* Bytes of d's volatile index (MEMORY STATS). */
size_t db_volatile_overhead(const db *d);
/* Consistency of d's volatile index against its key table (tests): the
 * number of problems found, 0 when every entry is a volatile key of d at
 * its recorded position and every volatile key of d has an entry. */
size_t db_volatile_check(db *d);
db *db_get(int id);
/* DEBUG SET-ACTIVE-EXPIRE: 0 stops the active expiry cycle (lazy expiry goes on). */
void db_set_active_expire(int on);
int db_count(void);                   /* databases (db_init_all's n) */

/* Hash hint: the batched executor hashes a pipelined command's key before
 * the command runs and announces it here; lookups and stores of exactly this
 * key pointer and length then reuse the hash instead of computing it again.
 * The hint must be cleared (key NULL) once the command has run. */
typedef struct db_key_hint {
    const char *key;
    size_t klen;
    uint64_t hash;
} db_key_hint;
extern db_key_hint db_hint;
static inline void db_set_key_hint(const char *key, size_t klen, uint64_t hash) {
    db_hint.key = key;
    db_hint.klen = klen;
    db_hint.hash = hash;
}
static inline void db_clear_key_hint(void) { db_hint.key = NULL; }
/* dict_hash(key, klen), taken from the hint when it is for this key. */
static inline uint64_t db_key_hash(const char *key, size_t klen) {
    if (key == db_hint.key && klen == db_hint.klen) return db_hint.hash;
    return dict_hash(key, klen);
}

/* The key's node as stored, expired or not; no side effect. */
dnode *db_find(db *d, const char *key, size_t klen);
/* Called for each key the server deletes by itself (expired, evicted),
 * with its database and name, before the key is freed. */
typedef void db_key_gone_fn(int dbid, const char *key, size_t klen);
void db_set_key_gone_hook(db_key_gone_fn *fn);
/* Run the hook for key (evict.c, for the keys it deletes). */
void db_key_gone(db *d, const char *key, size_t klen);
/* Events the keyspace raises by itself, for keyspace notifications
 * (notify.c sets the hook through the registry): a key added to a database
 * (Redis's dbAdd: "new"), a read lookup that found nothing ("keymiss"), a
 * key deleted because it expired ("expired") or was evicted ("evicted").
 * The hook is called only for the events in db_events (set by
 * db_set_events; 0 by default), so an event nobody wants costs one test. */
enum { DB_EV_NEW = 1, DB_EV_KEYMISS = 2, DB_EV_EXPIRED = 4, DB_EV_EVICTED = 8 };
typedef void db_event_fn(int ev, int dbid, const char *key, size_t klen);
void db_set_event_hook(db_event_fn *fn);
void db_set_events(int mask);
extern int db_events;
void db_event_slow(const db *d, int ev, const char *key, size_t klen);
static inline void db_event(const db *d, int ev, const char *key, size_t klen) {
    if (db_events & ev) db_event_slow(d, ev, key, klen);
}

/* Lookup with lazy expiry. Does not count hits/misses. */
dnode *db_lookup(db *d, const char *key, size_t klen);
/* Lookup for reading: counts keyspace hits/misses, updates LRU, raises
 * "keymiss" on a miss (Redis's lookupKeyRead). */
dnode *db_lookup_read(db *d, const char *key, size_t klen);
/* The same without updating LRU (Redis's LOOKUP_NOTOUCH: EXISTS, TYPE,
 * TTL ...); notify 0 also keeps "keymiss" quiet (LOOKUP_NONOTIFY: OBJECT). */
dnode *db_lookup_read_notouch(db *d, const char *key, size_t klen, int notify);
/* Lookup for writing (lazy expiry, no stats). */
dnode *db_lookup_write(db *d, const char *key, size_t klen);

/* Create or overwrite key with a string value. expire_ms: absolute unix ms
 * or -1 for none. Returns the new node (old one freed). */
dnode *db_set_string(db *d, const char *key, size_t klen, const char *val, size_t vlen, int64_t expire_ms);
/* The same with the value already in place: blk is an allocation (zmalloc)
 * of at least db_string_block_head(klen, vlen, expire_ms >= 0) + vlen bytes,
 * the value at that offset; it becomes the key's node (a big argument read
 * into a block of its own, io/aside.h). */
size_t db_string_block_head(size_t klen, size_t vlen, int with_expire);
dnode *db_set_string_block(db *d, const char *key, size_t klen, void *blk, size_t vlen, int64_t expire_ms);
/* Room for nkeys keys in an empty db (RESIZEDB), so loading them never
 * rehashes. */
void db_reserve(db *d, size_t nkeys);

/* Loading many keys into one db (RDB): db_node_new builds a string node
 * with room for vlen value bytes (left for the caller to fill, or to turn
 * into a typed pointer), db_load_add queues it for insertion through a
 * dict_batch (dict.h: the table's cache misses overlap), db_load_end
 * inserts what is queued. A key that exists already is a duplicate: its
 * node is freed and the call returns -1 with the tag the node was queued
 * with (the caller's input offset). */
typedef struct db_load {
    db *d;
    dict_batch b;
} db_load;
dnode *db_node_new(const char *key, size_t klen, size_t vlen, int64_t expire_ms);
void db_load_begin(db_load *l, db *d);
int db_load_add(db_load *l, dnode *n, size_t tag, size_t *dup_tag);
/* 0, or -1 (first duplicate's tag) after freeing every duplicate. */
int db_load_end(db_load *l, size_t *dup_tag);
/* Insert a node built by db_node_new (its key must not exist); raises "new".
 * Returns the node as stored (reshaped when built for the other kind of db,
 * db_slots.c). */
dnode *db_add_node(db *d, dnode *n);
/* Add a new key (must not exist) with a typed pointer value; raises "new". */
dnode *db_add_ptr(db *d, const char *key, size_t klen, int type, int enc, void *ptr, int64_t expire_ms);
/* Set key to a typed pointer value, replacing any value and TTL it has
 * (Redis's setKey: the key is looked up for writing first, so an expired
 * one goes as "expired"; "new" only when no key was there). */
dnode *db_set_ptr(db *d, const char *key, size_t klen, int type, int enc, void *ptr);
static inline void *dn_ptr(const dnode *n) { void *p; __builtin_memcpy(&p, dn_val(n), sizeof p); return p; }
/* Resize a string value in place (realloc), keeping key and expiry. Returns the new node. */
dnode *db_resize_value(db *d, dnode *n, size_t newvlen);
/* Set/remove expiry of an existing node. Returns the (possibly moved) node. */
dnode *db_set_expire(db *d, dnode *n, int64_t when_ms);
dnode *db_persist(db *d, dnode *n);
/* Delete; returns 1 if the key existed (an expired key counts as expired,
 * and 0 is returned). */
int db_delete(db *d, const char *key, size_t klen);
/* Delete the key as stored, expired or not, without counting an expiry
 * (Redis's dbDelete without a lookup first: the STORE commands' empty
 * result, RESTORE REPLACE); returns 1 if it was there. */
int db_delete_stored(db *d, const char *key, size_t klen);
/* Remove node from the db without freeing it (RENAME/MOVE). */
dnode *db_unlink_node(db *d, const char *key, size_t klen);
/* Insert a detached node under a (possibly different) key, which must not
 * exist; raises "new"; returns the node actually stored. */
dnode *db_insert_node(db *d, dnode *n, const char *key, size_t klen);
/* Deep copy of a node's value (COPY). */
dnode *db_copy_node(const dnode *n, const char *key, size_t klen);
void db_free_node(dnode *n);
/* Free a value of a pointer type (what db_free_node does for the value;
 * lazyfree.c's thread). */
void db_free_value(int type, void *ptr);
/* db_delete, the value freed as `why` allows (lazyfree.h: UNLINK, DEL under
 * lazyfree-lazy-user-del). */
int db_delete_lazy(db *d, const char *key, size_t klen, int why);
/* FLUSHDB/FLUSHALL ASYNC: d gets an empty key table at once; the old one is
 * freed by lazyfree.c's thread. */
void db_flush_async(db *d);
size_t db_node_memory(const dnode *n);
void db_flush(db *d);
void db_swap(db *a, db *b);
/* n empty databases outside the table, the live ones' stand-ins (a
 * replica's swapdb load), and their end (contents freed lazily). */
db *db_new_set(int n);
void db_free_set(db *set, int n);
/* One active-expiry cycle over all dbs, within budget_us. */
void db_active_expire(long budget_us);
/* A writable replica's own volatile keys (set by its clients, not by its
 * primary): expired from the cron, as Redis's slaveKeysWithExpire; INFO's
 * slave_expires_tracked_keys. */
void db_replica_expire_cycle(void);
size_t db_replica_tracked_keys(void);
/* Rehash/shrink step from cron. */
void db_cron_rehash(long budget_us);
int db_is_expired(const dnode *n);

/* The per-slot key index (cluster mode: db_slots.c). db_enable_slot_index
 * is called once, for db 0, before any key exists; after it every key of d
 * is in the list of its hash slot (crc16.h), so the keys of one slot are
 * counted in O(1) and listed or deleted without scanning the keyspace.
 * Without it (standalone) nothing is spent. SWAPDB swaps the index with the
 * keys it lists. */
void db_enable_slot_index(db *d);
int db_slot_indexed(const db *d);
/* Keys of the slot (expired ones not yet deleted included, as Redis's
 * CLUSTER COUNTKEYSINSLOT). 0 when d is not indexed. */
size_t db_slot_count(const db *d, unsigned slot);
/* Calls fn(arg, key, klen) for up to max keys of the slot (any order) and
 * returns how many; fn must not change d (CLUSTER GETKEYSINSLOT). */
typedef void db_slot_key_fn(void *arg, const char *key, size_t klen);
size_t db_slot_keys(db *d, unsigned slot, size_t max, db_slot_key_fn *fn, void *arg);
/* Deletes every key of the slot (a slot this node lost), as the server
 * deletes a key by itself: the key-gone hook (propagated as DEL), WATCH and
 * tracking are told, the value freed as lazyfree-lazy-server-del says; no
 * keyspace event. Returns how many keys were deleted. */
size_t db_slot_delete_all(db *d, unsigned slot);
/* Bytes of d's slot index arrays (MEMORY STATS overhead). */
size_t db_slot_overhead(const db *d);
/* Consistency of d's slot index against its key table (tests): the number
 * of problems found; 0 when every key is in the list of its slot exactly
 * once, with the right links and counts (or, not indexed, when no node
 * carries links). */
size_t db_slot_check(db *d);

/* Free hooks per type, set by the type modules. */
typedef void value_free_fn(void *ptr);
typedef void *value_dup_fn(const void *ptr);
typedef size_t value_mem_fn(const void *ptr);
void db_register_type(int type, value_free_fn *f, value_dup_fn *dup, value_mem_fn *mem);

const char *obj_type_name(int type);
const char *obj_enc_name(const dnode *n);

#endif
