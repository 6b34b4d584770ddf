/* cluster_redirect.h - which node serves a request in cluster mode, and the
 * error that redirects the client when it is not this one
 * (cluster_redirect.c). */
#ifndef FERRY_CLUSTER_REDIRECT_H
#define FERRY_CLUSTER_REDIRECT_H

#include <stddef.h>
#include "client.h"
#include "cluster.h"
#include "span.h"

struct command;

enum {
    ROUTE_OK = 0, ROUTE_CROSSSLOT, ROUTE_UNSTABLE, ROUTE_ASK, ROUTE_MOVED,
    ROUTE_DOWN_STATE, ROUTE_DOWN_RO_STATE, ROUTE_DOWN_UNBOUND
};

/* What routing a request found. */
typedef struct route {
    int err;                        /* ROUTE_* */
    int slot;                       /* of its keys, -1 if none */
    cluster_node *node;             /* the slot's owner */
    span first;                     /* its first key */
    int migrating, importing, multiple_keys, missing_keys, existing_keys, pubsubshard;
} route;

/* 1 if the command names keys or channels (or is EXEC): only then does
 * the dispatcher route it. */
int cluster_cmd_has_keys(const struct command *cmd);
/* The node that must serve the request: this node, another (r->err MOVED or
 * ASK), or NULL (r->err says why). cflags: the client's CLF_* (a script's
 * calls take its caller's). */
cluster_node *cluster_route(const client *c, const struct command *cmd, const span *argv, int argc, unsigned cflags,
                            route *r);
/* The error for r (without the leading '-'): "MOVED 3999 127.0.0.1:6381" ... */
void cluster_route_error(char *buf, size_t len, const route *r, const cluster_node *n, int tls);

/* Why a script's call of cmd (its fake client f) may not run here, or
 * NULL; caller_flags: the calling client's CLF_* (redis-server 7.0's texts).
 * Unless cross_slot, the keys of all its calls must share one slot: *slot
 * is the one seen so far (-1: none), set by the first call with keys. */
const char *cluster_script_refusal(client *f, const struct command *cmd, unsigned caller_flags, int cross_slot,
                                   int *slot);
/* Installs the dispatcher's hooks (cluster mode). */
void cluster_redirect_init(void);

#endif
