/* pubsub.h - publish/subscribe: the channel, shard-channel and pattern
 * registries, the per-client subscription state (client->pubsub) and the
 * hooks the rest of the server calls (dispatch restriction, PING, RESET,
 * client teardown, CLIENT LIST and INFO figures).
 *
 * Semantics and reply bytes follow Redis 7.0: a client with at least one
 * subscription carries CF_PUBSUB; in RESP2 such a client may only run
 * (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT and RESET. Messages are staged
 * in the subscribers' output rings and bounded by the pubsub class of
 * client-output-buffer-limit (outlimit.h).
 */
#ifndef FERRY_PUBSUB_H
#define FERRY_PUBSUB_H

#include <stddef.h>
#include "client.h"

struct command;

/* 1 if cmd may run on a subscribed RESP2 client (see above). */
int pubsub_allowed_in_context(const struct command *cmd);
/* The refusal for a command that is not: "Can't execute '<cmd>': only ...
 * allowed in this context" (without the "ERR " code) into buf. */
void pubsub_context_error(char *buf, size_t cap, const struct command *cmd);

/* Drop every subscription of c without notifying it (RESET, disconnect);
 * clears CF_PUBSUB and frees c->pubsub. */
void pubsub_client_reset(client *c);

/* Subscription counts of one client, for CLIENT LIST (sub= psub= ssub=). */
typedef struct pubsub_counts {
    size_t channels, patterns, shard;
} pubsub_counts;
pubsub_counts pubsub_client_counts(const client *c);
/* Calls fn for each channel, shard channel and pattern c is subscribed to
 * until fn returns non-zero; returns that value, or 0 (ACL: a user's
 * subscribers lose their connection when a channel is revoked). */
int pubsub_client_any(client *c, int (*fn)(span name, int is_pattern, void *ud), void *ud);

/* Server-wide figures for INFO stats: channels and shard channels with at
 * least one subscriber, distinct subscribed patterns. */
size_t pubsub_channel_count(void);
size_t pubsub_pattern_count(void);
size_t pubsub_shard_channel_count(void);

/* PUBLISH without a client (and the command's core): deliver msg to the
 * channel's subscribers and to the matching patterns' subscribers; returns
 * the number of receivers (a client matched twice counts twice). */
long long pubsub_publish(span channel, span msg);
/* SPUBLISH's core: to the shard channel's subscribers. */
long long pubsub_publish_shard(span channel, span msg);
/* Set in cluster mode: a client's PUBLISH / SPUBLISH goes to the other
 * nodes over the cluster bus (shard: to its shard's nodes). */
extern void (*pubsub_cluster_propagate)(span channel, span msg, int shard);
/* Cluster mode: the shard channels of a slot this shard no longer serves
 * lose their subscribers (each told with a sunsubscribe). */
void pubsub_shard_slot_removed(unsigned slot);

#endif
