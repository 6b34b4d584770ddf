/* propagate.h - the one place where executed writes become the command
 * stream that the append-only file (and later replicas and MONITOR)
 * receive (propagate.c).
 *
 * What is propagated is the effect of a command, as Redis 7 does, not the
 * request: every call runs inside a frame (command_call opens one); when a
 * call changed the dataset (srv.dirty moved) its arguments are staged as
 * one operation unless the command wrote its effect itself with
 * prop_rewrite (SPOP's SREM, INCRBYFLOAT's SET ... KEEPTTL, a served
 * BLPOP's LPOP ...) or its properties ask for the effect form (relative
 * expiries become absolute PEXPIREAT / SET ... PXAT). Commands whose
 * effects are the calls they make (EXEC, EVAL, FCALL) stage nothing of
 * their own. Keys the server deletes by itself (lazy or active expiry,
 * eviction) become DEL.
 *
 * When the outermost frame closes, its operations are committed to the
 * sinks as one unit: wrapped in MULTI/EXEC when there are more than one
 * (a transaction, a script's writes), preceded by SELECT when the database
 * differs from the stream's. Nothing is staged while no sink is attached or
 * while the dataset is being loaded.
 */
#ifndef FERRY_PROPAGATE_H
#define FERRY_PROPAGATE_H

#include "client.h"

struct command;

typedef struct prop_frame {
    struct prop_frame *up;
    long long dirty;                /* srv.dirty when the call began */
    int rewritten;                  /* the call staged its own effect */
    int forced;                     /* propagated even if dirty did not grow (prop_force) */
} prop_frame;

/* A sink receives committed bytes (RESP commands). */
typedef void prop_sink_fn(const char *p, size_t len);

#define PROP_MAX_SINKS 4

void prop_enter(prop_frame *f);
/* Closes f: stages c's argv (or the effect its command's properties ask
 * for) if the call changed the dataset and wrote no effect itself; commits
 * when f is the outermost frame. */
void prop_leave(prop_frame *f, client *c, const struct command *cmd);

/* The running call is propagated as it is, whatever srv.dirty did (FLUSHALL:
 * the save it may run resets the counter; Redis's forceCommandPropagation). */
void prop_force(void);

/* The running call's effect, replacing its arguments (may be called more
 * than once: each call is one more operation). */
void prop_rewrite(client *c, int argc, const span *argv);
/* One operation of the server's own (a key expired or evicted) in db dbid:
 * staged inside a running call, else committed at once. */
void prop_add(int dbid, int argc, const span *argv);
/* The running call's arguments, staged for the replicas only and whether
 * or not the dataset changed (PUBLISH: subscribers of a replica hear what
 * its primary's hear, and the append-only file does not replay messages;
 * Redis's forceCommandPropagation with PROPAGATE_REPL). No SELECT comes
 * with it: the operation does not depend on a database. */
void prop_replicas_only(client *c);
/* db.c's hook for keys the server deletes (expiry, eviction). */
void prop_key_gone(int dbid, const char *key, size_t klen);

/* What a sink is: operations go to every sink unless staged for one kind
 * only (prop_replicas_only). */
#define PROP_TO_AOF 1
#define PROP_TO_REPL 2

/* Attach or detach a sink of kind `to`. Attaching makes the next operation
 * start with SELECT (the sink's stream starts without a selected database). */
int prop_attach(prop_sink_fn *fn, int to);
void prop_detach(prop_sink_fn *fn);
/* The sinks' stream starts anew (a new file): the next operation is
 * preceded by SELECT. */
void prop_stream_restart(void);
/* Operations are staged (a sink is attached and nothing is loading). */
int prop_active(void);

#endif
