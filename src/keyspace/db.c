/* db.c - the keyspace: databases, typed values in one-allocation nodes,
 * the index of volatile keys, lazy and active expiry (see db.h).
 *
 * Active expiry walks each database's volatile index with a cursor, within
 * a time budget per cron tick, so keys that are never touched again still
 * free their memory, at a cost that depends on the number of keys with a
 * TTL and not on the size of the keyspace.
 *
 * In cluster mode database 0 also keeps a list of keys per hash slot
 * (db_slots.c); every place below where a key node enters, leaves or moves
 * tells it, behind one slots_on(d) test. */
#include "db.h"
#include "crc16.h"
#include "db_slots.h"
#include "evict.h"
#include "frand.h"
#include "lazyfree.h"
#include "multi.h"
#include "server.h"
#include "zmalloc.h"
#include <string.h>

static db *dbs;
static int ndbs;

typedef struct type_hooks {
    value_free_fn *free_fn;
    value_dup_fn *dup_fn;
    value_mem_fn *mem_fn;
} type_hooks;
static type_hooks hooks[OBJ_TYPES];

void db_register_type(int type, value_free_fn *f, value_dup_fn *dup, value_mem_fn *mem) {
    hooks[type].free_fn = f;
    hooks[type].dup_fn = dup;
    hooks[type].mem_fn = mem;
}

void db_init_all(int n) {
    ndbs = n;
    dbs = zcalloc(sizeof(db) * (size_t)n);
    for (int i = 0; i < n; i++) {
        dict_init(&dbs[i].keys);
        dbs[i].id = i;
    }
}

int db_count(void) { return ndbs; }

db *db_get(int id) { return (id >= 0 && id < ndbs) ? &dbs[id] : NULL; }

/* ---- the volatile index -----------------------------------------------------
 *
 * d->vol[0 .. d->expires) holds every node of d with DN_EXPIRE, and each
 * such node keeps its position in its expiry slot (dn_vidx). Every change
 * of a keyspace node's address or expiry flag goes through this file, which
 * keeps the two in step: vol_add and vol_del when a volatile key comes or
 * goes (the last entry fills the hole), vol_moved when a volatile node is
 * reallocated (dnode.c's reshape copies the position along). The array grows
 * by half and halves below a quarter full, so growing never allocates much
 * more than the keys need (maxmemory) and a mass expiry gives memory back. */
#define VOL_MIN_CAP 16

static void vol_resize(db *d, size_t cap) {
    d->vol = zrealloc(d->vol, cap * sizeof *d->vol);
    d->vol_cap = cap;
}

static void replica_track(db *d, const dnode *n);

static void vol_add(db *d, dnode *n) {
    if (srv.repl_replica) replica_track(d, n);
    if (d->expires == d->vol_cap) vol_resize(d, d->vol_cap < VOL_MIN_CAP ? VOL_MIN_CAP : d->vol_cap + d->vol_cap / 2);
    dn_set_vidx(n, (uint32_t)d->expires);
    d->vol[d->expires++] = n;
}

static void vol_del(db *d, dnode *n) {
    uint32_t i = dn_vidx(n);
    dnode *last = d->vol[--d->expires];
    d->vol[i] = last;
    dn_set_vidx(last, i);
    if (d->vol_cap > VOL_MIN_CAP && d->expires < d->vol_cap / 4) vol_resize(d, d->vol_cap / 2);
}

/* n is the reallocated copy of a volatile node (same position). */
static void vol_moved(db *d, dnode *n) { d->vol[dn_vidx(n)] = n; }

dnode *db_random_volatile(const db *d) {
    return d->expires ? d->vol[frand_below(d->expires)] : NULL;
}

size_t db_volatile_overhead(const db *d) { return d->vol_cap * sizeof *d->vol; }

static void count_volatile(void *ud, dnode *n) {
    if (n->flags & DN_EXPIRE) ++*(size_t *)ud;
}

size_t db_volatile_check(db *d) {
    size_t bad = 0, in_table = 0;
    if (d->expires > d->vol_cap) return 1;
    for (size_t i = 0; i < d->expires; i++) {
        dnode *n = d->vol[i];
        if (!(n->flags & DN_EXPIRE) || dn_vidx(n) != i || dict_find(&d->keys, dn_key(n), dn_klen(n)) != n) bad++;
    }
    dict_foreach(&d->keys, count_volatile, &in_table);
    return bad + (in_table != d->expires);
}

void db_free_value(int type, void *ptr) {
    if (type != OBJ_STRING && hooks[type].free_fn) hooks[type].free_fn(ptr);
}

void db_free_node(dnode *n) {
    if (n->type != OBJ_STRING) db_free_value(n->type, dn_ptr(n));
    dn_free(n);
}

size_t db_node_memory(const dnode *n) {
    size_t m = dn_usable(n);
    if (n->type != OBJ_STRING && hooks[n->type].mem_fn) m += hooks[n->type].mem_fn(dn_ptr(n));
    return m;
}

int db_is_expired(const dnode *n) {
    if (!(n->flags & DN_EXPIRE)) return 0;
    return dn_expire(n) < srv.now_ms;
}

static db_key_gone_fn *key_gone_hook;
static db_event_fn *event_hook;
int db_events;

void db_set_event_hook(db_event_fn *fn) { event_hook = fn; }

void db_set_events(int mask) { db_events = mask; }

void db_event_slow(const db *d, int ev, const char *key, size_t klen) {
    if (event_hook) event_hook(ev, d->id, key, klen);
}

void db_set_key_gone_hook(db_key_gone_fn *fn) { key_gone_hook = fn; }

void db_key_gone(db *d, const char *key, size_t klen) {
    if (key_gone_hook) key_gone_hook(d->id, key, klen);
}

dnode *db_find(db *d, const char *key, size_t klen) {
    if (dict_size(&d->keys) == 0) return NULL;
    return dict_find_hashed(&d->keys, key, klen, db_key_hash(key, klen));
}

static void delete_expired(db *d, dnode *n) {
    char kbuf[256];
    size_t klen = dn_klen(n);
    db_key_gone(d, dn_key(n), klen);
    /* keep a copy of the key for the watch notification after freeing */
    const char *key = dn_key(n);
    dnode *u = dict_unlink(&d->keys, key, klen);
    vol_del(d, u);
    if (slots_on(d)) slots_del(d, u);
    srv.stats.expiredkeys++;
    db_event(d, DB_EV_EXPIRED, dn_key(u), klen);
    if (srv.watched_keys || srv.blocked_clients || srv.tracking_live) {
        if (klen <= sizeof kbuf) {
            memcpy(kbuf, dn_key(u), klen);
            lazyfree_free_node(u, LAZY_EXPIRE);
            signal_deleted_key(d, kbuf, klen);
            return;
        }
        signal_deleted_key(d, dn_key(u), klen);
    }
    lazyfree_free_node(u, LAZY_EXPIRE);
}

db_key_hint db_hint;

/* hold: an expired key reads as missing but stays (reads during CLIENT
 * PAUSE: the dataset must not change; writes still expire it first) */
static dnode *lookup(db *d, const char *key, size_t klen, int hold) {
    if (dict_size(&d->keys) == 0) return NULL;
    dnode *n = dict_find_hashed(&d->keys, key, klen, db_key_hash(key, klen));
    if (n && (n->flags & DN_EXPIRE) && dn_expire(n) < srv.now_ms) {
        if (srv.repl_replica) { /* the primary's DEL removes it: its stream still sees it, others do not */
            if (srv.repl_master && srv.current_client == srv.repl_master) return n;
            if (hold || !srv.repl_write_cmd) return NULL;
            /* a write on a writable replica: the key is gone for it (as Redis's forced delete) */
        }
        if (!hold) delete_expired(d, n);
        return NULL;
    }
    return n;
}

dnode *db_lookup(db *d, const char *key, size_t klen) { return lookup(d, key, klen, 0); }

dnode *db_lookup_read(db *d, const char *key, size_t klen) {
    dnode *n = lookup(d, key, klen, srv.client_pause);
    if (n) {
        srv.stats.keyspace_hits++;
        if (!srv.no_touch) evict_touch(n);
    } else {
        srv.stats.keyspace_misses++;
        db_event(d, DB_EV_KEYMISS, key, klen);
    }
    return n;
}

dnode *db_lookup_read_notouch(db *d, const char *key, size_t klen, int notify) {
    dnode *n = lookup(d, key, klen, srv.client_pause);
    if (n) {
        srv.stats.keyspace_hits++;
    } else {
        srv.stats.keyspace_misses++;
        if (notify) db_event(d, DB_EV_KEYMISS, key, klen);
    }
    return n;
}

dnode *db_lookup_write(db *d, const char *key, size_t klen) {
    dnode *n = db_lookup(d, key, klen);
    if (!n) return NULL;
    dn_prepare_change(n); /* the caller may write the value in place */
    if (!srv.no_touch) evict_touch(n);
    return n;
}

/* The link shape (DN_SLOTLINK or 0) of d's nodes. */
static unsigned links_of(const db *d) { return d->slots ? DN_SLOTLINK : 0; }

/* A string node with key and expiry set, its value bytes left to fill:
 * in a new allocation, or in blk (db_set_string_block); links: DN_SLOTLINK
 * for a node of an indexed db (links_of). */
static dnode *node_new(const char *key, size_t klen, size_t vlen, int64_t expire_ms, void *blk, unsigned links) {
    int has_exp = expire_ms >= 0;
    unsigned shape = (has_exp ? DN_EXPIRE : 0) | links;
    dnode *n = blk;
    if (n) dn_init_shaped(n, (uint32_t)klen, (uint32_t)vlen, shape);
    else n = dn_new_shaped((uint32_t)klen, (uint32_t)vlen, shape);
    n->type = OBJ_STRING;
    n->enc = ENC_RAW;
    evict_stamp_new(n);
    if (has_exp) dn_set_expire_field(n, expire_ms);
    memcpy(dn_key(n), key, klen);
    return n;
}

size_t db_string_block_head(size_t klen, size_t vlen, int with_expire) {
    return dn_size((uint32_t)klen, (uint32_t)vlen, with_expire) - vlen;
}

/* blk, a caller's block holding a value for a node with links, with room
 * for the links after the value (moved by zrealloc if it has none). */
static void *block_with_links(void *blk, size_t klen, size_t vlen, int has_exp) {
    size_t need = dn_size((uint32_t)klen, (uint32_t)vlen, has_exp) + DN_LINK_SLOT;
    return zmalloc_size(blk) >= need ? blk : zrealloc(blk, need);
}

/* n, detached, entering d: with link bytes exactly when d is indexed
 * (reshaped if built for the other kind), and in its slot's list. One
 * test in standalone mode. Call before vol_add (a reshape moves n). */
static dnode *slots_enter(db *d, dnode *n) {
    if (__builtin_expect(d->slots != NULL || (n->flags & DN_SLOTLINK), 0)) {
        n = dn_with_links(n, d->slots != NULL);
        if (d->slots) slots_add(d, n);
    }
    return n;
}

/* db_set_string, the value's bytes given (val) or already in blk. */
static dnode *set_string(db *d, const char *key, size_t klen, const char *val, size_t vlen, int64_t expire_ms,
                         void *blk) {
    uint64_t h = db_key_hash(key, klen);
    dnode **link = dict_find_link_hashed(&d->keys, key, klen, h);
    int has_exp = expire_ms >= 0;
    unsigned links = links_of(d);
    if (blk && links) blk = block_with_links(blk, klen, vlen, has_exp);
    if (link) {
        dnode *old = *link;
        int expired = (old->flags & DN_EXPIRE) && dn_expire(old) < srv.now_ms;
        if (expired) {         /* as Redis's lookup before setKey: gone, then added anew */
            srv.stats.expiredkeys++;
            db_event(d, DB_EV_EXPIRED, key, klen);
            db_event(d, DB_EV_NEW, key, klen);
        }
        if (!blk && old->type == OBJ_STRING && dn_vlen(old) == vlen && has_exp == !!(old->flags & DN_EXPIRE)) {
            /* same shape: overwrite in place, no allocation */
            dn_prepare_change(old);
            memcpy(dn_val(old), val, vlen);
            if (has_exp) dn_set_expire_field(old, expire_ms);
            old->flags &= DN_EXPIRE | DN_WIDE | DN_SLOTLINK;
            old->enc = ENC_RAW;
            evict_stamp_replace(old, old, expired);
            return old;
        }
        dnode *n = node_new(key, klen, vlen, expire_ms, blk, links);
        if (!blk) memcpy(dn_val(n), val, vlen);
        evict_stamp_replace(n, old, expired);
        n->next = old->next;
        *link = n;
        if (slots_on(d)) slots_take_over(d, old, n);
        if (!(old->flags & DN_EXPIRE)) {
            if (has_exp) vol_add(d, n);
        } else if (has_exp) {
            dn_set_vidx(n, dn_vidx(old)); /* takes over old's entry */
            vol_moved(d, n);
        } else {
            vol_del(d, old);
        }
        lazyfree_free_node(old, LAZY_SERVER_DEL);
        return n;
    }
    dnode *n = node_new(key, klen, vlen, expire_ms, blk, links);
    if (!blk) memcpy(dn_val(n), val, vlen);
    if (has_exp) vol_add(d, n);
    if (slots_on(d)) slots_add(d, n);
    dict_add_h(&d->keys, n, h);
    db_event(d, DB_EV_NEW, key, klen);
    return n;
}

dnode *db_set_string(db *d, const char *key, size_t klen, const char *val, size_t vlen, int64_t expire_ms) {
    return set_string(d, key, klen, val, vlen, expire_ms, NULL);
}

dnode *db_set_string_block(db *d, const char *key, size_t klen, void *blk, size_t vlen, int64_t expire_ms) {
    return set_string(d, key, klen, NULL, vlen, expire_ms, blk);
}

void db_reserve(db *d, size_t nkeys) { dict_reserve(&d->keys, nkeys); }

dnode *db_node_new(const char *key, size_t klen, size_t vlen, int64_t expire_ms) {
    return node_new(key, klen, vlen, expire_ms, NULL, slots_default_shape());
}

void db_load_begin(db_load *l, db *d) {
    l->d = d;
    dict_batch_init(&l->b, &d->keys);
}

static void drop_duplicate(db *d, dnode *dup) {
    if (dup->flags & DN_EXPIRE) vol_del(d, dup);
    if (slots_on(d)) slots_del(d, dup);
    db_free_node(dup);
}

int db_load_add(db_load *l, dnode *n, size_t tag, size_t *dup_tag) {
    n = slots_enter(l->d, n);
    if (n->flags & DN_EXPIRE) vol_add(l->d, n);
    dnode *dup = dict_batch_add(&l->b, n, dict_hash(dn_key(n), dn_klen(n)), tag, dup_tag);
    if (!dup) return 0;
    drop_duplicate(l->d, dup);
    return -1;
}

int db_load_end(db_load *l, size_t *dup_tag) {
    int rc = 0;
    size_t tag;
    dnode *dup;
    while ((dup = dict_batch_flush(&l->b, &tag))) {
        if (rc == 0) *dup_tag = tag;
        rc = -1;
        drop_duplicate(l->d, dup);
    }
    return rc;
}

dnode *db_add_ptr(db *d, const char *key, size_t klen, int type, int enc, void *ptr, int64_t expire_ms) {
    dnode *n = node_new(key, klen, sizeof ptr, expire_ms, NULL, links_of(d));
    n->type = (uint8_t)type;
    n->enc = (uint8_t)enc;
    memcpy(dn_val(n), &ptr, sizeof ptr);
    return db_add_node(d, n);
}

dnode *db_add_node(db *d, dnode *n) {
    n = slots_enter(d, n);
    if (n->flags & DN_EXPIRE) vol_add(d, n);
    dict_add(&d->keys, n);
    db_event(d, DB_EV_NEW, dn_key(n), dn_klen(n));
    return n;
}

dnode *db_set_ptr(db *d, const char *key, size_t klen, int type, int enc, void *ptr) {
    dnode *old = db_lookup(d, key, klen);
    if (!old) return db_add_ptr(d, key, klen, type, enc, ptr, -1);
    dnode *n = node_new(key, klen, sizeof ptr, -1, NULL, links_of(d));
    n->type = (uint8_t)type;
    n->enc = (uint8_t)enc;
    memcpy(dn_val(n), &ptr, sizeof ptr);
    dnode *u = db_unlink_node(d, key, klen);
    lazyfree_free_node(u, LAZY_SERVER_DEL);
    if (slots_on(d)) slots_add(d, n);
    dict_add(&d->keys, n);
    return n;
}

/* The chain link that points at n (found by its key). */
static dnode **link_of(db *d, dnode *n) { return dict_find_link(&d->keys, dn_key(n), dn_klen(n)); }

dnode *db_resize_value(db *d, dnode *n, size_t newvlen) {
    if (newvlen == dn_vlen(n)) return n;
    dnode **link = link_of(d, n);
    dnode *m = dn_resize_value(n, (uint32_t)newvlen);
    *link = m;
    if (m != n) {
        if (m->flags & DN_EXPIRE) vol_moved(d, m);
        if (slots_on(d)) slots_moved(d, m);
    }
    return m;
}

dnode *db_set_expire(db *d, dnode *n, int64_t when_ms) {
    if (n->flags & DN_EXPIRE) {
        if (srv.repl_replica) replica_track(d, n);
        dn_set_expire_field(n, when_ms);
        return n;
    }
    dnode **link = link_of(d, n);
    dnode *m = dn_with_expire_slot(n, 1);
    *link = m;
    if (slots_on(d)) slots_moved(d, m);
    dn_set_expire_field(m, when_ms);
    vol_add(d, m);
    return m;
}

dnode *db_persist(db *d, dnode *n) {
    if (!(n->flags & DN_EXPIRE)) return n;
    dnode **link = link_of(d, n);
    vol_del(d, n);
    dnode *m = dn_with_expire_slot(n, 0);
    *link = m;
    if (slots_on(d)) slots_moved(d, m);
    return m;
}

int db_delete_lazy(db *d, const char *key, size_t klen, int why) {
    dnode *n = dict_unlink(&d->keys, key, klen);
    if (!n) return 0;
    if (n->flags & DN_EXPIRE) vol_del(d, n);
    if (slots_on(d)) slots_del(d, n);
    int expired = (n->flags & DN_EXPIRE) && dn_expire(n) < srv.now_ms;
    if (expired) srv.stats.expiredkeys++;
    lazyfree_free_node(n, why);
    return !expired;
}

int db_delete(db *d, const char *key, size_t klen) { return db_delete_lazy(d, key, klen, LAZY_SERVER_DEL); }

int db_delete_stored(db *d, const char *key, size_t klen) {
    dnode *n = db_unlink_node(d, key, klen);
    if (!n) return 0;
    lazyfree_free_node(n, LAZY_SERVER_DEL);
    return 1;
}

dnode *db_unlink_node(db *d, const char *key, size_t klen) {
    dnode *n = dict_unlink(&d->keys, key, klen);
    if (!n) return NULL;
    if (n->flags & DN_EXPIRE) vol_del(d, n);
    if (slots_on(d)) slots_del(d, n);
    return n;
}

dnode *db_insert_node(db *d, dnode *n, const char *key, size_t klen) {
    if (dn_klen(n) != klen || memcmp(dn_key(n), key, klen) != 0) n = dn_rekey(n, key, (uint32_t)klen);
    n->next = NULL;
    n = slots_enter(d, n);
    if (n->flags & DN_EXPIRE) vol_add(d, n);
    dict_add(&d->keys, n);
    db_event(d, DB_EV_NEW, dn_key(n), dn_klen(n));
    return n;
}

dnode *db_copy_node(const dnode *n, const char *key, size_t klen) {
    int exp = n->flags & DN_EXPIRE;
    dnode *m = dn_new_shaped((uint32_t)klen, dn_vlen(n), (exp ? DN_EXPIRE : 0) | (n->flags & DN_SLOTLINK));
    m->type = n->type;
    m->enc = n->enc;
    m->lru = n->lru;
    m->flags |= n->flags & ~DN_SHAPE_FLAGS;
    if (exp) dn_set_expire_field(m, dn_expire(n));
    memcpy(dn_key(m), key, klen);
    if (n->type != OBJ_STRING && hooks[n->type].dup_fn) {
        void *p = hooks[n->type].dup_fn(dn_ptr(n));
        memcpy(dn_val(m), &p, sizeof p);
    } else {
        memcpy(dn_val(m), dn_val(n), dn_vlen(n));
    }
    return m;
}

static void forget_volatile(db *d) {
    zfree(d->vol);
    d->vol = NULL;
    d->vol_cap = 0;
    d->expires = 0;
    d->expire_cursor = 0;
    d->avg_ttl = 0;
}

void db_flush(db *d) {
    dict_clear(&d->keys, db_free_node);
    forget_volatile(d);
    if (slots_on(d)) slots_clear(d);
}

void db_flush_async(db *d) {
    dict *old = zmalloc(sizeof *old);
    *old = d->keys;
    dict_init(&d->keys);
    forget_volatile(d);
    if (slots_on(d)) slots_clear(d);
    lazyfree_free_dict(old);
}

void db_swap(db *a, db *b) {
    db tmp = *a;
    *a = *b;
    *b = tmp;
    int id = a->id;
    a->id = b->id;
    b->id = id;
}

/* Stand-ins for the n live databases (a replica's swapdb load fills them
 * while the live ones are served, then db_swap trades them in), indexed
 * by slot where the live one is. */
db *db_new_set(int n) {
    db *set = zcalloc(sizeof(db) * (size_t)n);
    for (int i = 0; i < n; i++) {
        dict_init(&set[i].keys);
        set[i].id = i;
        if (db_slot_indexed(db_get(i))) db_enable_slot_index(&set[i]);
    }
    return set;
}

void db_free_set(db *set, int n) {
    for (int i = 0; i < n; i++) {
        db_flush_async(&set[i]);
        zfree(set[i].slots);
    }
    zfree(set);
}

size_t db_slot_delete_all(db *d, unsigned slot) {
    size_t gone = 0;
    if (!slots_on(d) || slot >= CLUSTER_SLOTS) return 0;
    for (dnode *n; (n = slots_first(d, slot)) != NULL; gone++) {
        size_t klen = dn_klen(n);
        char *key = zstrndup(dn_key(n), klen); /* outlives the node for the signals */
        db_key_gone(d, key, klen);
        dnode *u = db_unlink_node(d, key, klen);
        lazyfree_free_node(u, LAZY_SERVER_DEL);
        signal_deleted_key(d, key, klen);
        zfree(key);
    }
    return gone;
}

/* ---- active expiry ------------------------------------------------------- */

static int active_expire_enabled = 1;

void db_set_active_expire(int on) { active_expire_enabled = on; }

/* Active expiry walks the volatile index with a cursor, in rounds of
 * EXPIRE_ROUND_KEYS keys. Like Redis's adaptive cycle it keeps going while
 * many of the keys it meets turn out expired (more than EXPIRE_STALE_PCT
 * percent), and otherwise stops after a minimum effort: enough keys that
 * every volatile key is looked at at least once every EXPIRE_PASS_CYCLES
 * cycles (30 s at hz 10). Keys without a TTL cost nothing. */
#define EXPIRE_ROUND_KEYS  100
#define EXPIRE_STALE_PCT   10
#define EXPIRE_PASS_CYCLES 300

/* One db's share of a cycle; returns 0 once the time budget is spent. The
 * keys looked at and the expired ones among them are added to *met and
 * *stale. */
static int expire_db(db *d, int64_t start, long budget_us, long *met, long *stale) {
    size_t min_keys = d->expires / EXPIRE_PASS_CYCLES, visited = 0;
    double ttl_sum = 0; /* double: TTLs up to 2^63 ms must not overflow */
    long ttl_samples = 0;
    int in_time = 1;
    if (min_keys < EXPIRE_ROUND_KEYS) min_keys = EXPIRE_ROUND_KEYS;
    for (;;) {
        long sampled = 0, expired = 0;
        for (int k = 0; k < EXPIRE_ROUND_KEYS && d->expires > 0; k++) {
            if (d->expire_cursor >= d->expires) d->expire_cursor = 0; /* a pass ends, the next begins */
            dnode *n = d->vol[d->expire_cursor];
            int64_t t = dn_expire(n);
            sampled++;
            if (t < srv.now_ms) {
                expired++;
                delete_expired(d, n); /* the last entry moves into this place: look at it next */
            } else {
                ttl_sum += (double)(t - srv.now_ms);
                ttl_samples++;
                d->expire_cursor++;
            }
        }
        visited += (size_t)sampled;
        *met += sampled;
        *stale += expired;
        if (ev_mono_us() - start > budget_us) { in_time = 0; break; }
        if (d->expires == 0) break;
        if ((visited >= min_keys || visited >= d->expires) && expired * 100 <= sampled * EXPIRE_STALE_PCT) break;
    }
    if (ttl_samples) {
        double avg = ttl_sum / (double)ttl_samples;
        double smooth = d->avg_ttl ? ((double)d->avg_ttl * 49 + avg) / 50 : avg;
        d->avg_ttl = smooth >= 9.2e18 ? (long long)9.2e18 : (long long)smooth;
    }
    return in_time;
}

/* ---- a writable replica's own volatile keys ---------------------------------------
 * A replica does not expire its primary's keys (the primary's DEL does), but
 * keys its own clients gave a TTL (replica-read-only no) have no primary to
 * expire them: they are remembered here and expired by the cron, as Redis's
 * slaveKeysWithExpire. A key may be listed twice; the cron drops entries
 * whose key is gone or has no TTL any more. */
typedef struct tracked_key {
    int dbid;
    size_t klen;
    char *key;
} tracked_key;

static struct {
    tracked_key *v;
    size_t n, cap;
} rtrack;

static void replica_track(db *d, const dnode *n) {
    if (srv.repl_master && srv.current_client == srv.repl_master) return; /* the primary's own keys */
    if (srv.loading) return;
    for (size_t i = rtrack.n > 8 ? rtrack.n - 8 : 0; i < rtrack.n; i++) /* a key just tracked (SET EX again) */
        if (rtrack.v[i].dbid == d->id && rtrack.v[i].klen == dn_klen(n) && !memcmp(rtrack.v[i].key, dn_key(n), dn_klen(n)))
            return;
    if (rtrack.n == rtrack.cap) {
        rtrack.cap = rtrack.cap ? rtrack.cap * 2 : 16;
        rtrack.v = zrealloc(rtrack.v, rtrack.cap * sizeof *rtrack.v);
    }
    rtrack.v[rtrack.n++] = (tracked_key){d->id, dn_klen(n), zstrndup(dn_key(n), dn_klen(n))};
}

size_t db_replica_tracked_keys(void) { return rtrack.n; }

void db_replica_expire_cycle(void) {
    size_t keep = 0;
    for (size_t i = 0; i < rtrack.n; i++) {
        tracked_key *t = &rtrack.v[i];
        db *d = t->dbid < ndbs ? &dbs[t->dbid] : NULL;
        dnode *n = d ? db_find(d, t->key, t->klen) : NULL;
        if (n && (n->flags & DN_EXPIRE) && dn_expire(n) >= srv.now_ms && srv.repl_replica) {
            rtrack.v[keep++] = *t;
            continue;
        }
        if (n && (n->flags & DN_EXPIRE) && srv.repl_replica) delete_expired(d, n);
        zfree(t->key);
    }
    rtrack.n = keep;
}

void db_active_expire(long budget_us) {
    if (!active_expire_enabled || srv.client_pause || srv.repl_replica) return; /* CLIENT PAUSE: the dataset stays
                                                                                 * as it is; a replica's keys expire by
                                                                                 * its primary's DEL */
    int64_t start = ev_mono_us();
    srv.stats.active_expire_cycles++;
    static int next_db; /* rotate the starting db so a big db 0 cannot starve the others */
    int first = next_db;
    next_db = (next_db + 1) % ndbs;
    long met = 0, stale = 0;
    for (int k = 0; k < ndbs; k++) {
        db *d = &dbs[(first + k) % ndbs];
        if (d->expires == 0) {
            d->avg_ttl = 0;         /* as Redis: no volatile key, no estimate */
            continue;
        }
        if (!expire_db(d, start, budget_us, &met, &stale)) {
            srv.stats.expire_time_cap_count++;
            break;
        }
    }
    /* INFO stats, as Redis computes them: cycle time, and the expired share
     * of the keys met, smoothed over about 20 cycles */
    srv.stats.expire_cycle_us += (uint64_t)(ev_mono_us() - start);
    double perc = met ? (double)stale / (double)met : 0.0;
    srv.stats.expired_stale_perc = perc * 0.05 + srv.stats.expired_stale_perc * 0.95;
}

void db_cron_rehash(long budget_us) {
    for (int i = 0; i < ndbs; i++) {
        dict_maybe_shrink(&dbs[i].keys);
        if (dict_is_rehashing(&dbs[i].keys)) {
            dict_rehash_us(&dbs[i].keys, budget_us);
            return; /* one db per tick, like Redis */
        }
    }
}

const char *obj_type_name(int type) {
    static const char *names[] = {"string", "list", "set", "zset", "hash", "stream"};
    return type >= 0 && type < OBJ_TYPES ? names[type] : "none";
}

const char *obj_enc_name(const dnode *n) {
    if (n->type == OBJ_STRING) return n->enc == ENC_INT ? "int" : n->enc == ENC_EMBSTR ? "embstr" : "raw";
    static const char *enc[] = {"raw", "int", "hashtable", "quicklist", "ziplist", "intset", "skiplist", "embstr",
                                "quicklist", "stream", "listpack"};
    return n->enc < sizeof enc / sizeof enc[0] ? enc[n->enc] : "unknown";
}
