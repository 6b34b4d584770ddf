/* lazyfree.h - freeing big values off the event loop (UNLINK, FLUSHDB /
 * FLUSHALL ASYNC and the lazyfree-lazy-* settings).
 *
 * A value whose freeing costs more than LAZYFREE_THRESHOLD allocations (by
 * Redis's estimate: a collection's elements or nodes; strings and compact
 * encodings count 1) is detached from the keyspace at once and freed by a
 * helper thread fed by a queue; a flushed database's whole key table goes
 * the same way. The thread frees with the types' own destructors; dnode.c
 * and zmalloc.c make the allocator side safe for it. INFO memory shows
 * lazyfree_pending_objects (queued, not freed yet) and lazyfreed_objects
 * (freed by the thread since start or CONFIG RESETSTAT).
 */
#ifndef FERRY_LAZYFREE_H
#define FERRY_LAZYFREE_H

#include <stddef.h>
#include "dict.h"

#define LAZYFREE_THRESHOLD 64

/* Why a value is being freed: which setting decides whether it goes to the
 * thread (LAZY_ALWAYS: UNLINK; LAZY_NEVER: DEL and friends, synchronously). */
enum { LAZY_NEVER = 0, LAZY_ALWAYS, LAZY_USER_DEL, LAZY_SERVER_DEL, LAZY_EXPIRE, LAZY_EVICTION };

/* Redis's free-effort estimate for n's value. */
size_t lazyfree_effort(const dnode *n);
/* Free a node detached from its database: its value on the thread when it
 * is big enough and `why` allows it, else here. */
void lazyfree_free_node(dnode *n, int why);
/* Free a detached key table (and its nodes' values) on the thread; nkeys of
 * them are counted as pending objects. */
void lazyfree_free_dict(dict *d);
/* FLUSHALL / FLUSHDB without ASYNC or SYNC: lazyfree-lazy-user-flush. */
int lazyfree_user_flush_default(void);
/* Event loop: take back the node memory the thread handed over. */
void lazyfree_cron(void);
size_t lazyfree_pending(void);
unsigned long long lazyfree_freed(void);
void lazyfree_reset_stats(void);

#endif
