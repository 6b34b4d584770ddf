/* db_slots.h - the per-slot key index of a database (db_slots.c): what
 * db.c calls when a key enters, leaves or moves in memory. The public API
 * (db_enable_slot_index, db_slot_count, ...) is in db.h.
 *
 * Every call here is for an indexed database only: db.c tests
 * slots_on(d) first, one predictable branch per insert or delete and none
 * on lookups, so a standalone server pays nothing else. */
#ifndef FERRY_DB_SLOTS_H
#define FERRY_DB_SLOTS_H

#include "db.h"

static inline int slots_on(const db *d) { return __builtin_expect(d->slots != NULL, 0); }

/* n (with DN_SLOTLINK, its key set) joins its slot's list. */
void slots_add(db *d, dnode *n);
/* n leaves its slot's list (n still readable: its key and links). */
void slots_del(db *d, dnode *n);
/* n is the reallocated copy of an indexed node (dnode.c carried the link
 * bytes along): its neighbours, or its slot's head, point at it again. */
void slots_moved(db *d, dnode *n);
/* n (with DN_SLOTLINK, same key) takes old's place in its slot's list. */
void slots_take_over(db *d, const dnode *old, dnode *n);
/* The first key of the slot's list, NULL when it has none. */
dnode *slots_first(const db *d, unsigned slot);
/* Every list emptied (FLUSHDB; the nodes are freed by the caller). */
void slots_clear(db *d);
/* The shape flag (DN_SLOTLINK or 0) for nodes built outside a database
 * (db_node_new, a loaded key): DN_SLOTLINK once any database is indexed,
 * so a cluster node's RDB load never reshapes a key when inserting it. */
unsigned slots_default_shape(void);

#endif
