/* cmd_cluster_view.c - the CLUSTER subcommands that show this node's view
 * of the cluster: INFO, NODES, MYID, SLOTS, SHARDS, REPLICAS, LINKS, with
 * redis-server 7.0's fields, order and reply types (NODES and INFO are
 * verbatim strings in RESP3, as Redis's).
 */
#include <stdio.h>
#include <string.h>
#include "cluster.h"
#include "cluster_bus.h"
#include "cluster_conf.h"
#include "cmd_cluster.h"
#include "config.h"
#include "repl.h"
#include "reply.h"
#include "sbuf.h"
#include "server.h"
#include "zmalloc.h"

static const char *const msg_names[CLUSTER_MSG_TYPES] = {
    "ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack", "update", "mfstart", "module", "publishshard",
};

static void add_stats(sbuf *b, const uint64_t *count, const char *dir) {
    uint64_t total = 0;
    for (int t = 0; t < CLUSTER_MSG_TYPES; t++) {
        if (!count[t]) continue;
        sb_addf(b, "cluster_stats_messages_%s_%s:%llu\r\n", msg_names[t], dir, (unsigned long long)count[t]);
        total += count[t];
    }
    sb_addf(b, "cluster_stats_messages_%s:%llu\r\n", dir, (unsigned long long)total);
}

void cl_info(client *c) {
    if (cluster_refuse_disabled(c)) return;
    int assigned = 0, pfail = 0, fail = 0;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        cluster_node *n = cluster->slot[s].owner;
        if (!n) continue;
        assigned++;
        if (n->flags & CN_FAIL) fail++;
        else if (n->flags & CN_PFAIL) pfail++;
    }
    cluster_node *me = cluster->myself;
    uint64_t my_epoch = cluster_is_replica(me) && me->master ? me->master->config_epoch : me->config_epoch;
    sbuf b = {0};
    sb_addf(&b, "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\ncluster_slots_pfail:%d\r\n"
                "cluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\ncluster_size:%d\r\ncluster_current_epoch:%llu\r\n"
                "cluster_my_epoch:%llu\r\n",
            cluster->state == CLUSTER_OK ? "ok" : "fail", assigned, assigned - fail - pfail, pfail, fail,
            cluster->nnodes, cluster->size, (unsigned long long)cluster->current_epoch, (unsigned long long)my_epoch);
    add_stats(&b, cluster->sent, "sent");
    add_stats(&b, cluster->received, "received");
    sb_addf(&b, "total_cluster_links_buffer_limit_exceeded:%llu\r\n",
            (unsigned long long)cluster->links_buffer_limit_exceeded);
    reply_verbatim(c, b.p, b.len, "txt");
    sb_free(&b);
}

void cl_nodes(client *c) {
    if (cluster_refuse_disabled(c)) return;
    sbuf b = {0};
    for (int i = 0; i < cluster->nnodes; i++) cluster_describe_node(&b, cluster->nodes[i], 1, c->tls != NULL);
    reply_verbatim(c, b.p ? b.p : "", b.len, "txt");
    sb_free(&b);
}

void cl_myid(client *c) {
    if (cluster_refuse_disabled(c)) return;
    reply_bulk(c, cluster->myself->name, CLUSTER_NAMELEN);
}

/* [endpoint, port, id, {other addresses}] */
static void node_entry(client *c, const cluster_node *n, int type) {
    reply_array(c, 4);
    if (type == ENDPOINT_UNKNOWN) reply_null(c);
    else reply_bulk_cstr(c, cluster_endpoint(n));
    reply_int(c, cluster_client_port(n, c->tls != NULL));
    reply_bulk(c, n->name, CLUSTER_NAMELEN);
    int extra = (type != ENDPOINT_IP) + (type != ENDPOINT_HOSTNAME && n->hostname[0]);
    reply_map(c, extra);
    if (type != ENDPOINT_IP) {
        reply_bulk_cstr(c, "ip");
        reply_bulk_cstr(c, n->ip);
    }
    if (type != ENDPOINT_HOSTNAME && n->hostname[0]) {
        reply_bulk_cstr(c, "hostname");
        reply_bulk_cstr(c, n->hostname);
    }
}

static long long node_offset(const cluster_node *n);

/* A replica CLUSTER SLOTS lists: not failed, and not in a full sync (its
 * offset 0), as Redis 7.0 shows them. */
static int replica_available(const cluster_node *r) { return !(r->flags & CN_FAIL) && node_offset(r) != 0; }

static void slot_range(client *c, const cluster_node *n, int start, int end, int type) {
    int ok = 0;
    for (int i = 0; i < n->nreplicas; i++) ok += replica_available(n->replicas[i]);
    reply_array(c, 3 + ok);
    reply_int(c, start);
    reply_int(c, end);
    node_entry(c, n, type);
    for (int i = 0; i < n->nreplicas; i++)
        if (replica_available(n->replicas[i])) node_entry(c, n->replicas[i], type);
}

/* Calls fn for each run of slots of master n; returns how many runs. */
static int each_range(const cluster_node *n, void (*fn)(void *, int, int), void *arg) {
    int runs = 0, start = -1;
    for (int s = 0; s <= CLUSTER_SLOTS; s++) {
        int has = s < CLUSTER_SLOTS && cluster_node_has_slot(n, s);
        if (has && start < 0) start = s;
        if (!has && start >= 0) {
            if (fn) fn(arg, start, s - 1);
            runs++;
            start = -1;
        }
    }
    return runs;
}

/* Runs of consecutive slots with one owner, in slot order (as Redis 7.0
 * replies, so every node of a cluster gives the same bytes). */
void cl_slots(client *c) {
    if (cluster_refuse_disabled(c)) return;
    int runs = 0, type = cluster_endpoint_type();
    for (int s = 0; s < CLUSTER_SLOTS; s++)
        if (cluster->slot[s].owner && (s == 0 || cluster->slot[s - 1].owner != cluster->slot[s].owner)) runs++;
    reply_array(c, runs);
    for (int s = 0; s < CLUSTER_SLOTS;) {
        cluster_node *n = cluster->slot[s].owner;
        int e = s;
        while (e + 1 < CLUSTER_SLOTS && cluster->slot[e + 1].owner == n) e++;
        if (n) slot_range(c, n, s, e, type);
        s = e + 1;
    }
}

static long long node_offset(const cluster_node *n) {
    if (!(n->flags & CN_MYSELF)) return n->repl_offset;
    repl_summary rs;
    repl_get_summary(&rs);
    return rs.announced_offset;
}

static void shard_node(client *c, const cluster_node *n) {
    int tls = config_is_yes(&srv.cfg, "tls-cluster");
    int plain = tls ? n->pport : n->port;
    long long off = node_offset(n);
    int fields = 6 + (plain != 0) + tls + (n->hostname[0] != 0);
    reply_map(c, fields);
    reply_bulk_cstr(c, "id");
    reply_bulk(c, n->name, CLUSTER_NAMELEN);
    if (plain) {
        reply_bulk_cstr(c, "port");
        reply_int(c, plain);
    }
    if (tls) {
        reply_bulk_cstr(c, "tls-port");
        reply_int(c, n->port);
    }
    reply_bulk_cstr(c, "ip");
    reply_bulk_cstr(c, n->ip);
    reply_bulk_cstr(c, "endpoint");
    reply_bulk_cstr(c, cluster_endpoint(n));
    if (n->hostname[0]) {
        reply_bulk_cstr(c, "hostname");
        reply_bulk_cstr(c, n->hostname);
    }
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, cluster_is_master(n) ? "master" : "replica");
    reply_bulk_cstr(c, "replication-offset");
    reply_int(c, off);
    reply_bulk_cstr(c, "health");
    reply_bulk_cstr(c, (n->flags & CN_FAIL) ? "fail" : cluster_is_replica(n) && off == 0 ? "loading" : "online");
}

static void emit_pair(void *arg, int a, int b) {
    reply_int(arg, a);
    reply_int(arg, b);
}

void cl_shards(client *c) {
    if (cluster_refuse_disabled(c)) return;
    int masters = 0;
    for (int i = 0; i < cluster->nnodes; i++) masters += cluster_is_master(cluster->nodes[i]);
    reply_array(c, masters);
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *m = cluster->nodes[i];
        if (!cluster_is_master(m)) continue;
        reply_map(c, 2);
        reply_bulk_cstr(c, "slots");
        reply_array(c, 2 * each_range(m, NULL, NULL));
        each_range(m, emit_pair, c);
        reply_bulk_cstr(c, "nodes");
        reply_array(c, 1 + m->nreplicas);
        shard_node(c, m);
        for (int j = 0; j < m->nreplicas; j++) shard_node(c, m->replicas[j]);
    }
}

void cl_replicas(client *c) {
    if (cluster_refuse_disabled(c)) return;
    cluster_node *n = cluster_lookup(c->argv[2].p, c->argv[2].len);
    if (!n) {
        reply_errorf(c, "ERR Unknown node %.*s", (int)c->argv[2].len, c->argv[2].p);
        return;
    }
    if (cluster_is_replica(n)) {
        reply_error(c, "ERR The specified node is not a master");
        return;
    }
    reply_array(c, n->nreplicas);
    for (int i = 0; i < n->nreplicas; i++) {
        sbuf b = {0};
        cluster_describe_node(&b, n->replicas[i], 0, c->tls != NULL);
        reply_bulk(c, b.p, b.len ? b.len - 1 : 0); /* without its newline */
        sb_free(&b);
    }
}

void cl_links(client *c) {
    if (cluster_refuse_disabled(c)) return;
    cluster_bus_reply_links(c);
}

void cluster_info_section(sbuf *b) { sb_addf(b, "cluster_enabled:%d\r\n", cluster != NULL); }

size_t cluster_connections(void) { return cluster ? (size_t)(cluster->nnodes - 1) * 2 : 0; }

static size_t link_memory(const cluster_link *l) { return l ? sizeof *l + l->rcap + l->scap : 0; }

size_t cluster_links_memory(void) {
    size_t total = 0;
    for (int i = 0; cluster && i < cluster->nnodes; i++)
        total += link_memory(cluster->nodes[i]->link) + link_memory(cluster->nodes[i]->inbound_link);
    return total;
}
