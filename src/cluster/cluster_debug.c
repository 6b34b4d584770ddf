/* cluster_debug.c - the DEBUG subcommands of cluster mode that Redis's
 * cluster tests use: DROP-CLUSTER-PACKET-FILTER <type> (incoming bus
 * messages of that type are dropped; -1 none, -2 all) and CLUSTERLINK KILL
 * to|from|all <node-id> (closes our links with a node). */
#include <stdlib.h>
#include "cluster.h"
#include "cluster_bus.h"
#include "cmd_debug.h"
#include "reply.h"
#include "util.h"

static void drop_filter(client *c) {
    long long t;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &t)) {
        reply_err_notint(c);
        return;
    }
    cluster->drop_filter = (int)t;
    reply_ok(c);
}

static void link_kill(client *c) {
    cluster_node *n = cluster_lookup(c->argv[4].p, c->argv[4].len);
    if (!n) {
        reply_errorf(c, "ERR Unknown node %.*s", (int)c->argv[4].len, c->argv[4].p);
        return;
    }
    span dir = c->argv[3];
    int from = span_eq_nocase(dir, "from"), to = span_eq_nocase(dir, "to"), all = span_eq_nocase(dir, "all");
    if (!from && !to && !all) {
        reply_errorf(c, "ERR Unknown direction %.*s", (int)dir.len, dir.p);
        return;
    }
    if ((from || all) && n->inbound_link) cluster_link_free(n->inbound_link);
    if ((to || all) && n->link) cluster_link_free(n->link);
    reply_ok(c);
}

static int cluster_debug(client *c) {
    span sub = c->argv[1];
    if (c->argc == 3 && span_eq_nocase(sub, "drop-cluster-packet-filter")) drop_filter(c);
    else if (c->argc == 5 && span_eq_nocase(sub, "clusterlink") && span_eq_nocase(c->argv[2], "kill")) link_kill(c);
    else return 0;
    return 1;
}

void cluster_debug_init(void) { debug_cluster = cluster_debug; }
