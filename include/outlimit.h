/* outlimit.h - client-output-buffer-limit enforcement: the class a client's
 * staged output is bounded by (normal or pubsub; ferry has no replicas) and
 * the hard / soft-for-N-seconds check that schedules a client to be closed.
 *
 * Call client_check_output_limits() after staging output for a client that is
 * not the one being served (a published message) or whenever a reply may have
 * grown the ring; it is cheap when the client is under its limits.
 */
#ifndef FERRY_OUTLIMIT_H
#define FERRY_OUTLIMIT_H

#include "client.h"

/* COB_NORMAL or COB_PUBSUB (config.h), as Redis's getClientType: a client
 * with any subscription is a pubsub client, whatever its protocol. */
int client_output_class(const client *c);

/* 1 if c's staged output is over its class's hard limit, or has been over
 * the soft limit for more than soft_seconds (the soft timer starts, or
 * resets, here). Pure except for that timer. */
int client_output_over_limits(client *c);

/* If c is over its limits: log "Client <info> scheduled to be closed ASAP
 * for overcoming of output buffer limits." and close it asynchronously
 * (nothing more is sent to it). Returns 1 if it was scheduled. Fake clients
 * and clients already closing are never closed here. */
int client_check_output_limits(client *c);

#endif
