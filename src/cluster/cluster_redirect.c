/* cluster_redirect.c - which node serves a request, and the errors that
 * send a cluster client elsewhere: -MOVED, -ASK, -TRYAGAIN, -CROSSSLOT and
 * -CLUSTERDOWN, with redis-server 7.0's rules and texts.
 *
 * A request's keys must all hash to one slot. The slot's owner serves it;
 * while a slot migrates, the source serves the keys it still has and sends
 * the others on with -ASK; the target serves a client that said ASKING
 * (multi-key requests only when it has every key: else -TRYAGAIN). A
 * replica serves reads of its master's slots to a READONLY client. EXEC
 * is judged on everything it queued, a script on each call it makes.
 *
 * The dispatcher asks cluster_route() only in cluster mode and only for
 * requests that name keys (or channels of sharded pub/sub).
 */
#include <stdio.h>
#include <string.h>
#include "cluster.h"
#include "cluster_redirect.h"
#include "command.h"
#include "config.h"
#include "db.h"
#include "keyspec.h"
#include "multi.h"
#include "repl.h"
#include "reply.h"
#include "server.h"
#include "zmalloc.h"

#define ROUTE_KEYS_SMALL 16

static int is_shard_pubsub(const command *cmd) {
    return !strcmp(cmd->fullname, "spublish") || !strcmp(cmd->fullname, "ssubscribe") ||
           !strcmp(cmd->fullname, "sunsubscribe");
}

int cluster_cmd_has_keys(const command *cmd) {
    return (cmd->flags & CMD_MOVABLE_KEYS) || (cmd->keyinfo && cmd->keyinfo->nspecs > 0) || (cmd->props & PROP_EXEC);
}

/* The keys of a request; a sharded pub/sub command's channels count as
 * keys (its key specs call them NOT_KEY, which command_keys leaves out). */
static int request_keys(const command *cmd, const span *argv, int argc, keyref *out, int max) {
    if (!is_shard_pubsub(cmd)) return command_keys(cmd, argv, argc, out, max);
    int last = !strcmp(cmd->fullname, "spublish") ? 1 : argc - 1, n = 0;
    for (int i = 1; i <= last && i < argc; i++, n++)
        if (n < max) out[n] = (keyref){i, 0};
    return n;
}

/* What one request (cmd, argv) adds to the route r. 0, or -1 with r->err. */
static int route_one(route *r, const command *cmd, const span *argv, int argc) {
    keyref small[ROUTE_KEYS_SMALL], *keys = small;
    int n = request_keys(cmd, argv, argc, small, ROUTE_KEYS_SMALL);
    if (n > ROUTE_KEYS_SMALL) {
        keys = zmalloc(sizeof *keys * (size_t)n);
        n = request_keys(cmd, argv, argc, keys, n);
    }
    if (is_shard_pubsub(cmd)) r->pubsubshard = 1;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        span k = argv[keys[i].pos];
        int slot = (int)key_hash_slot(k.p, k.len);
        if (!r->first.p) {
            r->first = k;
            r->slot = slot;
            r->node = cluster->slot[slot].owner;
            if (!r->node) {
                r->err = ROUTE_DOWN_UNBOUND;
                rc = -1;
                break;
            }
            if (r->node == cluster->myself && cluster->slot[slot].migrating_to) r->migrating = 1;
            else if (cluster->slot[slot].importing_from) r->importing = 1;
        } else if (k.len != r->first.len || memcmp(k.p, r->first.p, k.len)) {
            if (slot != r->slot) {
                r->err = ROUTE_CROSSSLOT;
                rc = -1;
                break;
            }
            r->multiple_keys = 1;
        }
        /* keys of a moving slot: here or not (an expired one counts as gone but
         * stays until deleted, as Redis's LOOKUP_NOEXPIRE); a shard channel
         * is served by the source until the slot has moved */
        if ((r->migrating || r->importing) && !r->pubsubshard) {
            dnode *found = db_find(db_get(0), k.p, k.len);
            if (found && !db_is_expired(found)) r->existing_keys++;
            else r->missing_keys++;
        }
    }
    if (keys != small) zfree(keys);
    return rc;
}

/* A write: the command's flag, or a script whose shebang does not say
 * no-writes (Redis takes a script's flags as its command's). */
static int cmd_writes(const command *cmd, const span *argv, int argc) {
    if (cmd->flags & CMD_WRITE) return 1;
    return (cmd->props & PROP_NUMKEYS_AT_2) && !(cmd->flags & CMD_READONLY) && repl_script_declares_write &&
           repl_script_declares_write(argv, argc);
}

static int is_write_request(const client *c, const command *cmd) {
    if (cmd_writes(cmd, c->argv, c->argc)) return 1;
    if (cmd->props & PROP_EXEC)
        for (int i = 0; i < c->mcount; i++)
            if (cmd_writes(c->mstate[i].cmd, c->mstate[i].argv, c->mstate[i].argc)) return 1;
    return 0;
}

cluster_node *cluster_route(const client *c, const command *cmd, const span *argv, int argc, unsigned cflags,
                            route *r) {
    memset(r, 0, sizeof *r);
    r->slot = -1;
    if (cmd->props & PROP_EXEC) {
        if (!(c->flags & CF_MULTI)) return cluster->myself;
        for (int i = 0; i < c->mcount; i++)
            if (route_one(r, c->mstate[i].cmd, c->mstate[i].argv, c->mstate[i].argc) < 0) return NULL;
    } else if (route_one(r, cmd, argv, argc) < 0) {
        return NULL;
    }
    if (!r->node) return cluster->myself; /* no key at all */
    int write = is_write_request(c, cmd);
    if (cluster->state != CLUSTER_OK) {
        if (r->pubsubshard) {
            if (!config_is_yes(&srv.cfg, "cluster-allow-pubsubshard-when-down")) r->err = ROUTE_DOWN_STATE;
        } else if (!config_is_yes(&srv.cfg, "cluster-allow-reads-when-down")) {
            r->err = ROUTE_DOWN_STATE;
        } else if (write) {
            r->err = ROUTE_DOWN_RO_STATE;
        }
        if (r->err) return NULL;
    }
    if ((r->migrating || r->importing) && !strcmp(cmd->fullname, "migrate")) return cluster->myself;
    if (r->migrating && r->missing_keys) {
        if (r->existing_keys) { /* some keys here, some moved already: nobody can serve it now */
            r->err = ROUTE_UNSTABLE;
            return NULL;
        }
        r->err = ROUTE_ASK;
        return cluster->slot[r->slot].migrating_to;
    }
    if (r->importing && ((cflags & CLF_ASKING) || (cmd->flags & CMD_ASKING))) {
        if (r->multiple_keys && r->missing_keys) {
            r->err = ROUTE_UNSTABLE;
            return NULL;
        }
        return cluster->myself;
    }
    cluster_node *me = cluster->myself;
    if (((cflags & CLF_READONLY) || r->pubsubshard) && !write && cluster_is_replica(me) && me->master == r->node)
        return me;
    if (r->node != me) r->err = ROUTE_MOVED;
    return r->node;
}

void cluster_route_error(char *buf, size_t len, const route *r, const cluster_node *n, int tls) {
    switch (r->err) {
    case ROUTE_CROSSSLOT: snprintf(buf, len, "CROSSSLOT Keys in request don't hash to the same slot"); break;
    case ROUTE_UNSTABLE: snprintf(buf, len, "TRYAGAIN Multiple keys request during rehashing of slot"); break;
    case ROUTE_DOWN_STATE: snprintf(buf, len, "CLUSTERDOWN The cluster is down"); break;
    case ROUTE_DOWN_RO_STATE:
        snprintf(buf, len, "CLUSTERDOWN The cluster is down and only accepts read commands");
        break;
    case ROUTE_DOWN_UNBOUND: snprintf(buf, len, "CLUSTERDOWN Hash slot not served"); break;
    case ROUTE_MOVED:
    case ROUTE_ASK:
        snprintf(buf, len, "%s %d %s:%d", r->err == ROUTE_ASK ? "ASK" : "MOVED", r->slot, cluster_endpoint(n),
                 cluster_client_port(n, tls));
        break;
    default: snprintf(buf, len, "ERR cluster redirection"); break;
    }
}

/* ---- the dispatcher's hooks ------------------------------------------------ */

static int redirect(client *c, command *cmd) {
    if (!cluster_cmd_has_keys(cmd)) return 0;
    route r;
    cluster_node *n = cluster_route(c, cmd, c->argv, c->argc, c->cluster_flags, &r);
    if (n == cluster->myself) return 0;
    char msg[CLUSTER_HOSTLEN + 64];
    cluster_route_error(msg, sizeof msg, &r, n, c->tls != NULL);
    cmd->rejected_calls++;
    if (cmd->props & PROP_EXEC) multi_reset_client(c);
    else if (c->flags & CF_MULTI) c->flags |= CF_DIRTY_EXEC;
    reply_error(c, msg);
    return 1;
}

/* The fast path's test: a one-key command of a slot this node serves
 * alone, in a healthy cluster, from a client that did not say ASKING. */
static int local(const client *c, const command *cmd) {
    if (c->cluster_flags & CLF_ASKING) return 0;
    /* ASKING itself takes the full path, whose end arms the flag for exactly one command */
    if (!cluster_cmd_has_keys(cmd)) return strcmp(cmd->fullname, "asking") != 0;
    if (cluster->state != CLUSTER_OK || !cmd->slot_key_pos || cmd->slot_key_pos >= c->argc) return 0;
    span k = c->argv[cmd->slot_key_pos];
    unsigned slot = key_hash_slot(k.p, k.len);
    return cluster->served[slot];
}

void cluster_redirect_init(void) {
    command_cluster_redirect = redirect;
    command_cluster_local = local;
}

const char *cluster_script_refusal(client *f, const command *cmd, unsigned caller_flags, int cross_slot, int *slot) {
    route r;
    if (cluster_route(f, cmd, f->argv, f->argc, caller_flags & (CLF_ASKING | CLF_READONLY), &r) == cluster->myself) {
        if (r.slot == -1 || cross_slot) return NULL;
        if (*slot == -1) *slot = r.slot;
        else if (*slot != r.slot) return "ERR Script attempted to access keys that do not hash to the same slot";
        return NULL;
    }
    if (r.err == ROUTE_DOWN_RO_STATE)
        return "ERR Script attempted to execute a write command while the cluster is down and readonly";
    if (r.err == ROUTE_DOWN_STATE) return "ERR Script attempted to execute a command while the cluster is down";
    return "ERR Script attempted to access a non local key in a cluster node";
}
