/* multi.h - transactions (MULTI/EXEC/DISCARD) and optimistic locking
 * (WATCH/UNWATCH), in multi.c: what the dispatcher, the client lifecycle
 * and the keyspace call. */
#ifndef FERRY_MULTI_H
#define FERRY_MULTI_H

#include <stddef.h>
#include "client.h"

struct command;
struct db;

/* Queue cmd with c->argv (copied) in c's open transaction, replying +QUEUED. */
void multi_queue_command(client *c, struct command *cmd);
/* EXEC refused before it ran: reply -EXECABORT with the reason and end the transaction. */
void multi_exec_abort(client *c, const char *reason);
/* Discard the open transaction and every WATCH of c (DISCARD, RESET, freeing c). */
void multi_reset_client(client *c);

/* Called by every write to a key (including expiry and FLUSH): marks the
 * clients watching it. d NULL = every db. */
void touch_watched_key(struct db *d, const char *key, size_t klen);
/* The same for a key the server deleted by itself (expired, evicted): no
 * client changed it (a BCAST NOLOOP client hears of it too). */
void signal_deleted_key(struct db *d, const char *key, size_t klen);
/* FLUSHDB / FLUSHALL (d NULL: every database), before the flush. */
void touch_all_watched_keys(struct db *d);
/* SWAPDB, before the swap: the watchers of emptied's keys will see
 * replaced_with's (Redis's touchAllWatchedKeysInDb). */
void touch_watched_keys_replaced(struct db *emptied, struct db *replaced_with);

#endif
