/* tracking.h - server assisted client-side caching (CLIENT TRACKING), in
 * tracking.c (the tables and the invalidation messages) and tracking_cmd.c
 * (the CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO subcommands).
 *
 * Semantics and message bytes follow Redis 7.0:
 *  - default mode: the keys of every read-only command a tracking client
 *    runs are remembered in one table, key -> client ids (the name only:
 *    databases are not told apart); the first change of such a key sends
 *    each of those clients one invalidation and forgets the key;
 *  - BCAST mode: a client subscribes prefixes; keys changed under a prefix
 *    are collected and sent once per prefix before the server sleeps;
 *  - messages go to the client itself as a RESP3 push, or to its REDIRECT
 *    client (a RESP3 push, or a message on __redis__:invalidate for a
 *    subscribed RESP2 client); an invalidation caused by a client's own
 *    command is sent after that command's reply;
 *  - FLUSHDB / FLUSHALL send every tracking client a null invalidation.
 *
 * Costs: with no tracking client and an empty table the server pays one
 * branch per command (srv.observers) and one per key change
 * (srv.tracking_live).
 */
#ifndef FERRY_TRACKING_H
#define FERRY_TRACKING_H

#include <stddef.h>
#include <stdint.h>
#include "client.h"

struct command;

/* ---- hooks of the dispatcher and the keyspace */

/* After command_call ran cmd for c (srv.observers non-zero): remembers the
 * keys of a read-only command for its tracking caller, and at the top level
 * (outermost call) sends the invalidations the command caused to its own
 * client, after its reply. */
void tracking_after_call(client *c, struct command *cmd, int toplevel);
/* Sends the invalidations held for the current client (a blocked client's
 * re-run: after its reply). */
void tracking_flush_pending(void);
/* A key changed (touch_watched_key): invalidate it for the clients that
 * track it, and collect it for the BCAST prefixes it falls under, noting
 * `modifier` (NULL: the server itself, expiry or eviction) for NOLOOP. */
void tracking_invalidate_key(client *modifier, const char *key, size_t klen);
/* FLUSHDB / FLUSHALL: a null invalidation to every tracking client, and
 * the table is emptied. */
void tracking_invalidate_all(void);
/* Before a command runs and from the cron: evict keys from the table, with
 * their invalidations, while it holds more than tracking-table-max-keys. */
void tracking_limit_table(void);
/* Before sleeping: the BCAST invalidations collected since the last call. */
void tracking_broadcast(void);
/* The per-command CLIENT CACHING flag ends after a command (not after a
 * CLIENT subcommand, not inside MULTI). */
void tracking_command_done(client *c, const struct command *cmd);

/* ---- client lifecycle */

/* CLIENT TRACKING OFF and RESET. */
void tracking_disable(client *c);
/* Everything the client holds, when it is freed. */
void tracking_client_free(client *c);
/* CLIENT LIST redir=: the redirect id while tracking is on, else -1. */
long long tracking_client_redirect(const client *c);

/* ---- INFO figures */
size_t tracking_table_keys(void);       /* tracking_total_keys */
size_t tracking_table_items(void);      /* tracking_total_items */
size_t tracking_prefix_count(void);     /* tracking_total_prefixes */

/* ---- state shared with tracking_cmd.c */

/* Option bits of CLIENT TRACKING ON (the client's CF_TRACKING_* flags). */
typedef struct tracking_opts {
    uint64_t redirect;          /* client id, 0 = none */
    client *target;             /* that client (it exists: CLIENT TRACKING checked) */
    uint32_t flags;             /* CF_TRACKING_BCAST | OPTIN | OPTOUT | NOLOOP */
    const span *prefixes;
    int nprefixes;
} tracking_opts;
void tracking_enable(client *c, const tracking_opts *o);
/* The client's BCAST prefixes in order (NULL, 0 when none). */
const span *tracking_client_prefixes(const client *c, size_t *n);
/* The client's redirect id (kept after tracking is turned off, as Redis). */
uint64_t tracking_redirect_id(const client *c);

/* ---- the CLIENT subcommands (tracking_cmd.c) */
void client_tracking_cmd(client *c);
void client_caching_cmd(client *c);
void client_getredir_cmd(client *c);
void client_trackinginfo_cmd(client *c);

#endif
