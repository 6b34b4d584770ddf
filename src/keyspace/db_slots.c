/* db_slots.c - the per-slot key index of a database in cluster mode: for
 * each of the CLUSTER_SLOTS hash slots, the number of its keys and a list
 * of them (CLUSTER COUNTKEYSINSLOT / GETKEYSINSLOT, migrating a slot,
 * deleting the keys of a slot the node lost). API in db.h, db.c's hooks in
 * db_slots.h.
 *
 * Design. Two ways were weighed:
 *   (a) an intrusive doubly linked list per slot threaded through the key
 *       nodes themselves (Redis 7.0's way, through dict entry metadata);
 *   (b) one key table per slot (Redis 7.2's kvstore).
 * (b) would change every lookup (first pick the slot's table: a CRC16 of
 * the key before the SipHash) and every user of d->keys (SCAN cursors,
 * RANDOMKEY, eviction sampling, the RDB writer, DEBUG DIGEST, the batched
 * executor's prefetching), standalone mode included. (a) touches only the
 * places where a key node enters, leaves or moves, which db.c already
 * funnels through the volatile index's hooks, so it is what is built here.
 *
 * Layout. A node of an indexed database carries DN_SLOTLINK and 16 bytes
 * after its value: the previous and the next node of its slot's list
 * (dict.h). They are at the end, not with the expiry before the key, so
 * that finding a key (dn_key) costs the same whether or not a node has
 * them: lookups do not change at all in either mode. dnode.c counts the
 * bytes in every node size (slab class, dn_usable, so MEMORY USAGE and
 * used_memory include them) and carries them along whenever it reallocates
 * a node; db.c then calls slots_moved, which points the neighbours (or the
 * slot's head) at the new address, in O(1), as vol_moved does for the
 * volatile index.
 *
 * Cost. 16 bytes per key (two 8-byte pointers; the slab's 8-byte classes
 * add no rounding), plus 256 KB per indexed database (a head pointer and a
 * count per slot). A standalone database has slots == NULL: no bytes per
 * key, and one predictable branch per insert or delete. A node's slot is
 * not stored: it is recomputed from the key (CRC16, a few ns for short
 * keys) when the node leaves its list or becomes the head of it.
 *
 * Keys built outside a database (db_node_new for a loaded key, db_copy_node)
 * get the link bytes when some database is indexed; one inserted into a
 * database of the other kind is reshaped on the way in (db.c's node_fit),
 * so a node has DN_SLOTLINK exactly when its database is indexed. */
#include "db_slots.h"

#include "crc16.h"
#include "zmalloc.h"
#include <string.h>

struct slot_index {
    dnode *head[CLUSTER_SLOTS];
    size_t count[CLUSTER_SLOTS];
};

static int any_indexed; /* some database has an index: shape new detached nodes for it */

/* ---- the link bytes ----------------------------------------------------------- */

static dnode *link_get(const dnode *n, int which) {
    dnode *p;
    memcpy(&p, dn_links(n) + which * sizeof p, sizeof p);
    return p;
}

static void link_set(dnode *n, int which, dnode *p) { memcpy(dn_links(n) + which * sizeof p, &p, sizeof p); }

enum { PREV = 0, NEXT = 1 };

static unsigned node_slot(const dnode *n) { return key_hash_slot(dn_key(n), dn_klen(n)); }

/* ---- db.c's hooks -------------------------------------------------------------- */

void slots_add(db *d, dnode *n) {
    unsigned s = node_slot(n);
    dnode *first = d->slots->head[s];
    link_set(n, PREV, NULL);
    link_set(n, NEXT, first);
    if (first) link_set(first, PREV, n);
    d->slots->head[s] = n;
    d->slots->count[s]++;
}

void slots_del(db *d, dnode *n) {
    unsigned s = node_slot(n);
    dnode *prev = link_get(n, PREV), *next = link_get(n, NEXT);
    if (prev) link_set(prev, NEXT, next);
    else d->slots->head[s] = next;
    if (next) link_set(next, PREV, prev);
    d->slots->count[s]--;
}

void slots_moved(db *d, dnode *n) {
    dnode *prev = link_get(n, PREV), *next = link_get(n, NEXT);
    if (prev) link_set(prev, NEXT, n);
    else d->slots->head[node_slot(n)] = n;
    if (next) link_set(next, PREV, n);
}

void slots_take_over(db *d, const dnode *old, dnode *n) {
    memcpy(dn_links(n), dn_links(old), DN_LINK_SLOT);
    slots_moved(d, n);
}

void slots_clear(db *d) { memset(d->slots, 0, sizeof *d->slots); }

unsigned slots_default_shape(void) { return any_indexed ? DN_SLOTLINK : 0; }

/* ---- the public API (db.h) ------------------------------------------------------ */

void db_enable_slot_index(db *d) {
    if (d->slots) return;
    d->slots = zcalloc(sizeof *d->slots);
    any_indexed = 1;
}

int db_slot_indexed(const db *d) { return d->slots != NULL; }

size_t db_slot_count(const db *d, unsigned slot) {
    return d->slots && slot < CLUSTER_SLOTS ? d->slots->count[slot] : 0;
}

size_t db_slot_keys(db *d, unsigned slot, size_t max, db_slot_key_fn *fn, void *arg) {
    if (!d->slots || slot >= CLUSTER_SLOTS) return 0;
    size_t done = 0;
    for (dnode *n = d->slots->head[slot]; n && done < max; n = link_get(n, NEXT), done++)
        fn(arg, dn_key(n), dn_klen(n));
    return done;
}

size_t db_slot_overhead(const db *d) { return d->slots ? sizeof *d->slots : 0; }

dnode *slots_first(const db *d, unsigned slot) { return d->slots->head[slot]; }

/* ---- consistency (tests) -------------------------------------------------------- */

typedef struct check_state {
    const db *d;
    size_t bad, nodes;
} check_state;

/* Every node of the table: links iff indexed. */
static void check_node_shape(void *ud, dnode *n) {
    check_state *c = ud;
    c->nodes++;
    if (!!(n->flags & DN_SLOTLINK) != (c->d->slots != NULL)) c->bad++;
}

/* One slot's list: each node is a key of d in this slot, the back links
 * agree, and the length is the count (walked no further than the count
 * allows, so a cycle cannot hang the check). */
static size_t check_slot(db *d, unsigned s, size_t *listed) {
    size_t bad = 0, len = 0, limit = d->slots->count[s] + 1;
    dnode *prev = NULL;
    for (dnode *n = d->slots->head[s]; n; prev = n, n = link_get(n, NEXT)) {
        if (++len > limit) return bad + 1;
        if (!(n->flags & DN_SLOTLINK)) return bad + 1; /* its links cannot be read */
        if (node_slot(n) != s || link_get(n, PREV) != prev || dict_find(&d->keys, dn_key(n), dn_klen(n)) != n) bad++;
    }
    *listed += len;
    return bad + (len != d->slots->count[s]);
}

size_t db_slot_check(db *d) {
    check_state c = {d, 0, 0};
    dict_foreach(&d->keys, check_node_shape, &c);
    if (!d->slots) return c.bad;
    size_t listed = 0;
    for (unsigned s = 0; s < CLUSTER_SLOTS; s++) c.bad += check_slot(d, s, &listed);
    return c.bad + (listed != c.nodes);
}
