/* blocking.h - clients blocked on keys: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
 * BLMPOP (lists) and BZPOPMIN, BZPOPMAX, BZMPOP (sorted sets).
 *
 * Model (Redis 7's): a blocking command that finds nothing to pop calls
 * block_for_keys() instead of replying. The client stops executing input
 * (CF_BLOCKED) and keeps a copy of its argv. A write that adds elements to
 * a list or sorted set calls signal_key_ready(); after the current top-level
 * command (or EXEC) finishes, blocking_handle_ready() re-runs the blocked
 * commands of the clients waiting on the ready keys, oldest first. A re-run
 * that still finds nothing calls block_for_keys() again and keeps its place
 * in the queues and its deadline. A re-run that replies unblocks the client,
 * which then goes on with the rest of its input.
 *
 * Timeouts are absolute unix milliseconds (0 = forever); the cron calls
 * blocking_handle_timeouts(). On timeout the client gets the command's null
 * reply (null array or null bulk; "_" in RESP3).
 */
#ifndef FERRY_BLOCKING_H
#define FERRY_BLOCKING_H

#include <stdint.h>
#include <stddef.h>
#include "client.h"

struct db;

/* what a timed-out command replies */
enum { BLOCK_NULL_ARRAY = 0, BLOCK_NULL_BULK = 1 };
/* why a client leaves the blocked state without being served */
enum { UNBLOCK_TIMEOUT = 0, UNBLOCK_ERROR = 1, UNBLOCK_DISCONNECT = 2 };

/* Parse a blocking timeout in (fractional) seconds into absolute unix ms, 0
 * meaning forever. Replies Redis 7.0's errors ("ERR timeout is not a float or
 * out of range", "ERR timeout is negative") and returns 0 on failure, 1 on
 * success. As in Redis 7.0 the milliseconds are rounded up (0.0001 s waits
 * 1 ms, -0.0001 s rounds to 0: forever), and a timeout too large to add to
 * the clock means forever (7.0 has no "out of range" error). */
int blocking_parse_timeout(client *c, span arg, int64_t *deadline_ms);
/* May this call block? Not inside MULTI/EXEC (the command then behaves as
 * if it timed out at once). */
int blocking_allowed(const client *c);
/* Block c, running its current command (c->cmd, c->argv), on keys[0..n) of
 * c->db until deadline_ms. */
void block_for_keys(client *c, const span *keys, int nkeys, int64_t deadline_ms, int null_kind);
/* Block c on no key until deadline_ms (0 = forever), for a command whose
 * owner decides when it is served (WAIT): done(c, why) replies on
 * UNBLOCK_TIMEOUT / UNBLOCK_ERROR and forgets c on UNBLOCK_DISCONNECT;
 * the owner calls blocking_served(c) after replying itself. */
typedef void block_done_fn(client *c, int why);
void block_custom(client *c, int64_t deadline_ms, block_done_fn *done);
void blocking_served(client *c);
/* Every client blocked on keys gets err and goes on (a primary turned
 * replica: its blocked clients would never be served consistently). */
void blocking_unblock_all(const char *err);
/* A list or sorted set at key gained elements (push, LMOVE/ZADD/STORE
 * destinations, RENAME/COPY/MOVE/SWAPDB targets). Cheap when nobody blocks. */
void signal_key_ready(struct db *d, const char *key, size_t klen);
/* SWAPDB, FLUSHDB, FLUSHALL (d NULL: every database): every key of d that
 * clients wait on is signalled, so that a re-run finds what the key now
 * holds (Redis's scanDatabaseForReadyKeys / scanDatabaseForDeletedKeys:
 * a blocked XREADGROUP learns its stream is gone; list and sorted-set
 * waiters whose key is missing just block again). */
void blocking_signal_db(struct db *d);
/* Serve the clients blocked on keys signalled since the last call. The
 * dispatcher calls this after every top-level command. */
void blocking_handle_ready(void);
extern int blocking_ready_pending;     /* a key was signalled: handle_ready has work */
/* While blocking_handle_ready re-runs c's command because `key` was
 * signalled, 1 and *key; else 0. Redis 7.0 serves a blocked client from the
 * key that became ready (not from the first non-empty key of its command),
 * and leaves it blocked when that key holds another type: a command waiting
 * on several keys uses this to look at the ready key only. */
int blocking_serving_key(const client *c, span *key);
/* Clients unblocked since the last call go on with their pending input
 * (pipelined commands after the blocking one). Called before sleeping. */
void blocking_before_sleep(void);
/* Unblock for a reason other than being served (timeout reply, CLIENT
 * UNBLOCK ... ERROR reply "UNBLOCKED client unblocked via CLIENT UNBLOCK",
 * or disconnect: no reply). */
void unblock_client(client *c, int why);
/* Let c go on with its pending input before the next sleep, after the
 * clients unblocked before it (pause.c: the end of CLIENT PAUSE). */
void blocking_resume(client *c);
void blocking_handle_timeouts(int64_t now_ms);
/* Blocked clients (INFO blocked_clients, CLIENT LIST flags=b). */
size_t blocking_count(void);
/* Blocked clients with a deadline (INFO clients_in_timeout_table). */
size_t blocking_timeout_count(void);

#endif
