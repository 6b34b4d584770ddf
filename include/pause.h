/* pause.h - CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE (Redis 7.0
 * semantics).
 *
 * While a pause is in effect (srv.client_pause: PAUSE_WRITE or PAUSE_ALL,
 * until srv.client_pause_end_ms), the dispatcher holds the commands it must
 * not run: every command under ALL, under WRITE those that may write or
 * replicate (the write and may-replicate flags; EXEC of a transaction holding
 * such a command; EVAL / EVALSHA / FCALL unless the script declares
 * no-writes). A held client is marked CF_BLOCKED | CF_PAUSED, exactly as a
 * client blocked on keys stops executing its input: the held request is left
 * unconsumed at the head of its query buffer with whatever was pipelined
 * after it, and it is parsed and dispatched again when the pause ends (on
 * UNPAUSE or when the timeout expires), clients in the order they were held.
 * Held clients count in INFO blocked_clients and show flag b, as in Redis.
 * During a pause keys are neither expired (actively or lazily: an expired key
 * reads as missing but stays) nor evicted (db.c, evict.c test srv.client_pause).
 */
#ifndef FERRY_PAUSE_H
#define FERRY_PAUSE_H

#include "client.h"

enum { PAUSE_NONE = 0, PAUSE_WRITE = 1, PAUSE_ALL = 2 };

struct command;

/* Must this command of c be held now? (Called by the dispatcher only while
 * srv.client_pause is set; ends a pause whose time is up and returns 0.) */
int pause_must_hold(client *c, struct command *cmd);
/* Hold c's current request (its bytes stay in the query buffer). */
void pause_hold(client *c);
/* A held client goes away (client_free through unblock_client). */
void pause_forget(client *c);
/* Pause until end_ms with `type`, merged with any pause in effect (the
 * more restrictive type, the later end). */
void pause_start(int64_t end_ms, int type);
/* End the pause: held clients resume, in order, before the next sleep. */
void pause_end(void);
/* Clients held now. */
size_t pause_held_count(void);

/* Redis 7.0's may-replicate commands that are not writes (PUBLISH,
 * SPUBLISH, PFCOUNT): held by PAUSE WRITE, refused in read-only scripts. */
int pause_may_replicate(const struct command *cmd);

/* Whether a script command (EVAL, EVALSHA, FCALL: PROP_NUMKEYS_AT_2) with
 * these arguments may write: 0 only when its script declares no-writes.
 * Set by the script layer (registry.c); without it scripts may write. */
typedef int pause_script_writes_fn(const span *argv, int argc);
void pause_set_script_hook(pause_script_writes_fn *fn);

/* CLIENT PAUSE / CLIENT UNPAUSE handlers (cmd_conn.c's table). */
void pause_cmd_pause(client *c);
void pause_cmd_unpause(client *c);

#endif
