/* cluster_gossip.c - what the bus messages say and what they change: our
 * header (who we are, our slots, epochs, replication offset), PINGs with
 * gossip about a few other nodes, and the processing of every message
 * type a redis-server 7.0 node sends: PING/PONG/MEET (handshakes, roles,
 * slot ownership, gossip), FAIL, UPDATE, PUBLISH(SHARD), and the failover
 * messages (handed to cluster_failover.c).
 *
 * The rules are Redis Cluster's, described in its specification:
 * - A node is added from MEET (handshake, then named by its first reply)
 *   or from gossip of a node we already trust (with its real name).
 * - Slot ownership goes to the claim with the greatest config epoch; a
 *   node with a stale claim is sent an UPDATE.
 * - PFAIL (our view) becomes FAIL once a majority of the masters reported
 *   the node failing within twice the node timeout; FAIL is broadcast.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "cluster.h"
#include "cluster_bus.h"
#include "cluster_msg.h"
#include "config.h"
#include "db.h"
#include "frand.h"
#include "pubsub.h"
#include "repl.h"
#include "server.h"
#include "zmalloc.h"

#define GOSSIP_MIN_WANTED 3
#define PONG_FUTURE_SLACK_MS 500

/* ---- our header -------------------------------------------------------------------- */

static long long my_repl_offset(void) {
    repl_summary rs;
    repl_get_summary(&rs);
    return rs.announced_offset;
}

void cluster_msg_header(cmsg_hdr *h, uint16_t type) {
    cluster_node *me = cluster->myself;
    cluster_node *master = cluster_is_replica(me) && me->master ? me->master : me;
    memset(h, 0, sizeof *h);
    h->type = type;
    h->port = (uint16_t)me->port;
    h->pport = (uint16_t)me->pport;
    h->cport = (uint16_t)me->cport;
    h->current_epoch = cluster->current_epoch;
    h->config_epoch = master->config_epoch;
    h->offset = (uint64_t)my_repl_offset();
    h->sender = me->name;
    h->myslots = master->slots;
    h->slaveof = cluster_is_replica(me) && me->master ? me->master->name : NULL;
    h->myip = cluster->announced_ip; /* kept by cluster_set_own_ports: no lookup per message */
    h->myip_len = strlen(cluster->announced_ip);
    h->flags = (uint16_t)me->flags;
    h->state = (unsigned char)cluster->state;
    if (cluster_failover_paused()) h->mflags[0] |= CMSG_MF0_PAUSED;
}

/* ---- PING / PONG / MEET ------------------------------------------------------------ */

static void add_gossip(cmsg_writer *w, const cluster_node *n) {
    cmsg_gossip g = {
        .nodename = n->name,
        .ping_sent = (uint32_t)(n->ping_sent / 1000),
        .pong_received = (uint32_t)(n->pong_received / 1000),
        .ip = n->ip,
        .ip_len = strlen(n->ip),
        .port = (uint16_t)n->port,
        .cport = (uint16_t)n->cport,
        .flags = (uint16_t)n->flags,
        .pport = (uint16_t)n->pport,
    };
    cmsg_add_gossip(w, &g);
}

static int gossip_worthy(const cluster_node *n, const cluster_link *l) {
    if (n->flags & (CN_MYSELF | CN_HANDSHAKE | CN_NOADDR)) return 0;
    if (n == l->node) return 0;
    return n->link != NULL || n->numslots != 0;
}

/* A few random nodes (a tenth of them, at least 3), then every PFAIL node,
 * as Redis picks them, so failure reports spread fast. */
void cluster_send_ping(cluster_link *l, uint16_t type) {
    if (l->node && type == CMSG_PING) l->node->ping_sent = srv.now_ms;
    int fresh = cluster->nnodes - 2, wanted = cluster->nnodes / 10, pfail = 0;
    if (wanted < GOSSIP_MIN_WANTED) wanted = GOSSIP_MIN_WANTED;
    if (wanted > fresh) wanted = fresh > 0 ? fresh : 0;
    for (int i = 0; i < cluster->nnodes; i++) pfail += (cluster->nodes[i]->flags & CN_PFAIL) != 0;
    cluster_node **picked = zmalloc(sizeof *picked * (size_t)(wanted + pfail + 1));
    int n = 0;
    for (int tries = wanted * 3; tries > 0 && n < wanted; tries--) {
        cluster_node *x = cluster->nodes[frand_below((uint64_t)cluster->nnodes)];
        if (!gossip_worthy(x, l) || (x->flags & CN_PFAIL)) continue;
        int dup = 0;
        for (int j = 0; j < n && !dup; j++) dup = picked[j] == x;
        if (!dup) picked[n++] = x;
    }
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *x = cluster->nodes[i];
        if ((x->flags & CN_PFAIL) && !(x->flags & (CN_HANDSHAKE | CN_NOADDR | CN_MYSELF))) picked[n++] = x;
    }
    const char *host = cluster->myself->hostname;
    size_t hlen = strlen(host), ext = hlen ? cmsg_size_ext_hostname(hlen) : 0;
    size_t cap = cmsg_size_ping((unsigned)n, ext);
    unsigned char *buf = zmalloc(cap);
    cmsg_writer w;
    cmsg_hdr h;
    cluster_msg_header(&h, type);
    cmsg_writer_init(&w, buf, cap);
    cmsg_begin_ping(&w, &h);
    for (int i = 0; i < n; i++) add_gossip(&w, picked[i]);
    if (hlen) cmsg_add_ext_hostname(&w, host, hlen);
    size_t len = cmsg_finish(&w);
    if (len) cluster_link_send(l, buf, len);
    zfree(buf);
    zfree(picked);
}

void cluster_broadcast(const unsigned char *msg, size_t len) {
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *n = cluster->nodes[i];
        if (!n->link || n->link->connecting || (n->flags & (CN_MYSELF | CN_HANDSHAKE))) continue;
        cluster_link_send(n->link, msg, len);
    }
}

void cluster_bus_broadcast_pong(void) {
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *n = cluster->nodes[i];
        if (!n->link || n->link->connecting || (n->flags & (CN_MYSELF | CN_HANDSHAKE))) continue;
        cluster_send_ping(n->link, CMSG_PONG);
    }
}

void cluster_send_fail(const char *name) {
    unsigned char buf[CMSG_FAIL_LEN];
    cmsg_hdr h;
    cluster_msg_header(&h, CMSG_FAIL);
    size_t len = cmsg_build_fail(buf, sizeof buf, &h, name);
    if (len) cluster_broadcast(buf, len);
}

void cluster_send_update(cluster_link *l, const cluster_node *n) {
    if (!l || l->connecting) return;
    unsigned char *buf = zmalloc(CMSG_UPDATE_LEN);
    cmsg_hdr h;
    cluster_msg_header(&h, CMSG_UPDATE);
    size_t len = cmsg_build_update(buf, CMSG_UPDATE_LEN, &h, n->config_epoch, n->name, n->slots);
    if (len) cluster_link_send(l, buf, len);
    zfree(buf);
}

void cluster_propagate_publish(const char *channel, size_t clen, const char *msg, size_t mlen, int shard) {
    if (!cluster) return;
    size_t cap = cmsg_size_publish(clen, mlen);
    unsigned char *buf = zmalloc(cap);
    cmsg_hdr h;
    cluster_msg_header(&h, shard ? CMSG_PUBLISHSHARD : CMSG_PUBLISH);
    size_t len = cmsg_build_publish(buf, cap, &h, shard, channel, clen, msg, mlen);
    if (len && !shard) {
        cluster_broadcast(buf, len);
    } else if (len) { /* to our shard only: our master's other replicas, or ours */
        cluster_node *me = cluster->myself, *m = cluster_is_replica(me) && me->master ? me->master : me;
        if (m != me && m->link && !m->link->connecting) cluster_link_send(m->link, buf, len);
        for (int i = 0; i < m->nreplicas; i++) {
            cluster_node *r = m->replicas[i];
            if (r != me && r->link && !r->link->connecting) cluster_link_send(r->link, buf, len);
        }
    }
    zfree(buf);
}

/* ---- failure reports --------------------------------------------------------------- */

static void clean_reports(cluster_node *n) {
    int64_t max_age = cluster_node_timeout() * CLUSTER_FAIL_REPORT_VALIDITY_MULT;
    for (int i = 0; i < n->nreports; i++)
        if (srv.now_ms - n->reports[i].time > max_age) n->reports[i--] = n->reports[--n->nreports];
}

int cluster_bus_failure_reports(cluster_node *n) {
    clean_reports(n);
    return n->nreports;
}

static int add_report(cluster_node *n, cluster_node *from) {
    for (int i = 0; i < n->nreports; i++)
        if (n->reports[i].from == from) {
            n->reports[i].time = srv.now_ms;
            return 0;
        }
    n->reports = zrealloc(n->reports, sizeof *n->reports * (size_t)(n->nreports + 1));
    n->reports[n->nreports++] = (cluster_report){from, srv.now_ms};
    return 1;
}

static int del_report(cluster_node *n, cluster_node *from) {
    clean_reports(n);
    for (int i = 0; i < n->nreports; i++)
        if (n->reports[i].from == from) {
            n->reports[i] = n->reports[--n->nreports];
            return 1;
        }
    return 0;
}

void cluster_mark_failing_if_needed(cluster_node *n) {
    int quorum = cluster->size / 2 + 1;
    if (!(n->flags & CN_PFAIL) || (n->flags & CN_FAIL)) return;
    int failures = cluster_bus_failure_reports(n) + cluster_is_master(cluster->myself);
    if (failures < quorum) return;
    server_log(LOG_NOTICE_, "Marking node " CLUSTER_NAME_FMT " as failing (quorum reached).", n->name);
    n->flags = (n->flags & ~CN_PFAIL) | CN_FAIL;
    n->fail_time = srv.now_ms;
    cluster_send_fail(n->name);
    cluster_todo(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
}

/* A FAIL node that answers again: replicas and masters without slots at
 * once; a master with slots only if nobody took them over in a while. */
static void clear_failure_if_needed(cluster_node *n) {
    if (cluster_is_replica(n) || n->numslots == 0) {
        server_log(LOG_NOTICE_, "Clear FAIL state for node " CLUSTER_NAME_FMT ": %s is reachable again.", n->name,
                   cluster_is_replica(n) ? "replica" : "master without slots");
        n->flags &= ~CN_FAIL;
        cluster_todo(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
    }
    if (cluster_is_master(n) && n->numslots &&
        srv.now_ms - n->fail_time > cluster_node_timeout() * CLUSTER_FAIL_UNDO_TIME_MULT) {
        server_log(LOG_NOTICE_, "Clear FAIL state for node " CLUSTER_NAME_FMT
                   ": is reachable again and nobody is serving its slots after some time.", n->name);
        n->flags &= ~CN_FAIL;
        cluster_todo(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
    }
}

/* ---- roles ----------------------------------------------------------------------------- */

void cluster_set_node_as_master(cluster_node *n) {
    if (cluster_is_master(n)) return;
    if (n->master) {
        cluster_node_remove_replica(n->master, n);
        if (n != cluster->myself) n->flags |= CN_MIGRATE_TO;
    }
    n->flags = (n->flags & ~CN_SLAVE) | CN_MASTER;
    n->master = NULL;
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
}

void cluster_become_replica_of(cluster_node *n) {
    cluster_node *me = cluster->myself;
    if (cluster_is_master(me)) {
        me->flags = (me->flags & ~(CN_MASTER | CN_MIGRATE_TO)) | CN_SLAVE;
        cluster_close_all_slots();
    }
    cluster_set_master(me, n);
    repl_follow(n->ip, n->port);
    cluster_failover_reset_manual();
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
}

static void sender_role(cluster_node *sender, const cmsg *m) {
    if (cmsg_name_is_null(m->h.slaveof)) {
        cluster_set_node_as_master(sender);
        return;
    }
    if (cluster_is_master(sender)) {
        cluster_del_node_slots(sender);
        sender->flags = (sender->flags & ~(CN_MASTER | CN_MIGRATE_TO)) | CN_SLAVE;
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
    }
    cluster_node *master = cluster_lookup(m->h.slaveof, CLUSTER_NAMELEN);
    if (sender->master != master) {
        cluster_set_master(sender, master);
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
    }
}

/* ---- slot ownership ---------------------------------------------------------------- */

void cluster_update_slots_config(cluster_node *sender, uint64_t epoch, const unsigned char *slots) {
    cluster_node *me = cluster->myself, *cur = cluster_is_master(me) ? me : me->master, *newmaster = NULL;
    if (sender == me) {
        server_log(LOG_NOTICE_, "Discarding UPDATE message about myself.");
        return;
    }
    int ndirty = 0, migrated = 0, sender_slots = 0;
    unsigned char *dirty_slots = NULL;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!cmsg_slot_test(slots, (unsigned)s)) continue;
        sender_slots++;
        cluster_node *owner = cluster->slot[s].owner;
        if (owner == sender || cluster->slot[s].importing_from) continue;
        if (owner && owner->config_epoch >= epoch) continue;
        if (owner == me && cluster_keys_in_slot(s)) {
            if (!dirty_slots) dirty_slots = zcalloc(CLUSTER_SLOTS);
            dirty_slots[s] = 1;
            ndirty++;
        }
        if (owner && owner == cur) {
            newmaster = sender;
            migrated++;
        }
        cluster_del_slot(s);
        cluster_add_slot(sender, s);
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_FSYNC_CONFIG);
    }
    int allow = config_is_yes(&srv.cfg, "cluster-allow-replica-migration");
    if (newmaster && cur && cur->numslots == 0 && (allow || sender_slots == migrated)) {
        server_log(LOG_WARNING_, "Configuration change detected. Reconfiguring myself as a replica of "
                   CLUSTER_NAME_FMT, sender->name);
        cluster_become_replica_of(sender);
    } else if (ndirty) {
        /* keys of slots we lost without being told to migrate them: they go */
        for (int s = 0; s < CLUSTER_SLOTS; s++)
            if (dirty_slots[s]) db_slot_delete_all(db_get(0), (unsigned)s);
    }
    zfree(dirty_slots);
}

/* A claim of slots older than what we know: tell the sender who has them. */
static void check_stale_claim(cluster_link *l, cluster_node *sender, const cmsg *m) {
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!cmsg_slot_test(m->h.myslots, (unsigned)s)) continue;
        cluster_node *owner = cluster->slot[s].owner;
        if (!owner || owner == sender) continue;
        if (owner->config_epoch > m->h.config_epoch) {
            server_log(LOG_VERBOSE_, "Node " CLUSTER_NAME_FMT " has old slots configuration, sending an UPDATE "
                       "message about " CLUSTER_NAME_FMT, sender->name, owner->name);
            cluster_send_update(sender->link ? sender->link : l, owner);
            return;
        }
    }
}

/* ---- processing ----------------------------------------------------------------------- */

/* The sender's address: what it announces, else the link's peer. */
static void sender_ip(const cluster_link *l, const cmsg *m, char *out, size_t outlen) {
    if (m->h.myip_len) {
        snprintf(out, outlen, "%.*s", (int)m->h.myip_len, m->h.myip);
        return;
    }
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    out[0] = '\0';
    if (getpeername(l->fd, (struct sockaddr *)&sa, &len) < 0) return;
    if (sa.ss_family == AF_INET) inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, out, (socklen_t)outlen);
    else if (sa.ss_family == AF_INET6) inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, out, (socklen_t)outlen);
}

static void local_ip(const cluster_link *l, char *out, size_t outlen) {
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    out[0] = '\0';
    if (getsockname(l->fd, (struct sockaddr *)&sa, &len) < 0) return;
    if (sa.ss_family == AF_INET) inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, out, (socklen_t)outlen);
    else if (sa.ss_family == AF_INET6) inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, out, (socklen_t)outlen);
}

/* A known node that now talks from another address: follow it. */
static int update_address(cluster_node *n, cluster_link *l, const cmsg *m) {
    if (l == n->link) return 0;
    char ip[CLUSTER_IPLEN];
    sender_ip(l, m, ip, sizeof ip);
    if (!strcmp(ip, n->ip) && n->port == m->h.port && n->cport == m->h.cport && n->pport == m->h.pport) return 0;
    snprintf(n->ip, sizeof n->ip, "%s", ip);
    n->port = m->h.port;
    n->pport = m->h.pport;
    n->cport = m->h.cport;
    if (n->link) cluster_link_free(n->link);
    n->flags &= ~CN_NOADDR;
    server_log(LOG_WARNING_, "Address updated for node " CLUSTER_NAME_FMT ", now %s:%d", n->name, n->ip, n->port);
    if (cluster_is_replica(cluster->myself) && cluster->myself->master == n) repl_follow(n->ip, n->port);
    return 1;
}

static void gossip_entry(cluster_node *sender, const cmsg_gossip *g) {
    cluster_node *n = cluster_lookup(g->nodename, CLUSTER_NAMELEN);
    unsigned flags = g->flags;
    if (n) {
        if (sender && cluster_is_master(sender) && n != cluster->myself) {
            if (flags & (CN_FAIL | CN_PFAIL)) {
                if (add_report(n, sender))
                    server_log(LOG_VERBOSE_, "Node " CLUSTER_NAME_FMT " reported node " CLUSTER_NAME_FMT
                               " as not reachable.", sender->name, n->name);
                cluster_mark_failing_if_needed(n);
            } else if (del_report(n, sender)) {
                server_log(LOG_VERBOSE_, "Node " CLUSTER_NAME_FMT " reported node " CLUSTER_NAME_FMT
                           " is back online.", sender->name, n->name);
            }
        }
        /* a recent pong seen by others keeps a node we do not ping alive */
        if (!(flags & (CN_FAIL | CN_PFAIL)) && n->ping_sent == 0 && n->nreports == 0) {
            int64_t pong = (int64_t)g->pong_received * 1000;
            if (pong <= srv.now_ms + PONG_FUTURE_SLACK_MS && pong > n->pong_received) n->pong_received = pong;
        }
        char ip[CLUSTER_IPLEN];
        snprintf(ip, sizeof ip, "%.*s", (int)g->ip_len, g->ip);
        if (n != sender && (n->flags & (CN_FAIL | CN_PFAIL)) && !(flags & CN_NOADDR) && !(flags & (CN_FAIL | CN_PFAIL)) &&
            (strcasecmp(n->ip, ip) || n->port != g->port || n->cport != g->cport)) {
            if (n->link) cluster_link_free(n->link);
            snprintf(n->ip, sizeof n->ip, "%s", ip);
            n->port = g->port;
            n->pport = g->pport;
            n->cport = g->cport;
            n->flags &= ~CN_NOADDR;
        }
        return;
    }
    /* a node we do not know, vouched for by one we know: added with its
     * real name (never a handshake to its address, which may be reused) */
    if (sender && !(flags & CN_NOADDR) && !cluster_forgotten_has(g->nodename)) {
        cluster_node *x = cluster_node_new(g->nodename, flags & ~(unsigned)CN_MYSELF);
        snprintf(x->ip, sizeof x->ip, "%.*s", (int)g->ip_len, g->ip);
        x->port = g->port;
        x->pport = g->pport;
        x->cport = g->cport;
        cluster_add_node(x);
    }
}

static void process_gossip(cluster_node *sender, const cmsg *m) {
    cmsg_gossip g;
    for (unsigned i = 0; cmsg_gossip_at(m, i, &g) == 0; i++) gossip_entry(sender, &g);
}

static void process_hostname(cluster_node *sender, const cmsg *m) {
    const char *h = m->u.ping.hostname.p ? m->u.ping.hostname.p : "";
    size_t len = m->u.ping.hostname.p ? m->u.ping.hostname.len : 0;
    if (strlen(sender->hostname) == len && !memcmp(sender->hostname, h, len)) return;
    snprintf(sender->hostname, sizeof sender->hostname, "%.*s", (int)len, h);
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
}

static void first_contact(cluster_link *l, const cmsg *m) {
    cluster_node *me = cluster->myself;
    if ((m->h.type == CMSG_MEET || !me->ip[0]) && !cluster->announced_ip[0]) {
        char ip[CLUSTER_IPLEN];
        local_ip(l, ip, sizeof ip);
        if (ip[0] && strcmp(ip, me->ip)) {
            snprintf(me->ip, sizeof me->ip, "%s", ip);
            server_log(LOG_WARNING_, "IP address for this node updated to %s", me->ip);
            cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
        }
    }
}

/* The handshake or the identity of an outbound link's node: 0 if the
 * link (or the node) is gone. */
static int check_link_node(cluster_link *l, cluster_node *sender, const cmsg *m) {
    cluster_node *n = l->node;
    if (n->flags & CN_HANDSHAKE) {
        if (sender) { /* we know it already: this was a second way to it */
            update_address(sender, l, m);
            cluster_del_node(n);
            return 0;
        }
        cluster_rename_node(n, m->h.sender);
        n->flags &= ~CN_HANDSHAKE;
        n->flags |= m->h.flags & (CN_MASTER | CN_SLAVE);
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
    } else if (memcmp(n->name, m->h.sender, CLUSTER_NAMELEN)) {
        server_log(LOG_DEBUG_, "PONG contains mismatching sender ID. About node " CLUSTER_NAME_FMT
                   " added %d ms ago, having flags %u", n->name, (int)(srv.now_ms - n->ctime), n->flags);
        n->flags |= CN_NOADDR;
        n->ip[0] = '\0';
        n->port = n->pport = n->cport = 0;
        cluster_link_free(l);
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
        return 0;
    }
    return 1;
}

static void pong_received(cluster_node *n) {
    n->pong_received = srv.now_ms;
    n->ping_sent = 0;
    if (n->flags & CN_PFAIL) {
        n->flags &= ~CN_PFAIL;
        cluster_todo(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
    } else if (n->flags & CN_FAIL) {
        clear_failure_if_needed(n);
    }
}

static void slots_and_roles(cluster_link *l, cluster_node *sender, const cmsg *m) {
    sender_role(sender, m);
    cluster_node *smaster = cluster_is_master(sender) ? sender : sender->master;
    int dirty = smaster && memcmp(smaster->slots, m->h.myslots, CMSG_SLOT_BYTES) != 0;
    if (cluster_is_master(sender) && dirty) cluster_update_slots_config(sender, m->h.config_epoch, m->h.myslots);
    if (dirty) check_stale_claim(l, sender, m);
    if (cluster_is_master(cluster->myself) && cluster_is_master(sender) &&
        m->h.config_epoch == cluster->myself->config_epoch)
        cluster_handle_epoch_collision(sender);
}

/* PING, PONG, MEET: 0 if the link is gone. */
static int process_ping(cluster_link *l, cluster_node *sender, const cmsg *m) {
    uint16_t type = m->h.type;
    if (type == CMSG_PING || type == CMSG_MEET) {
        first_contact(l, m);
        if (!sender && type == CMSG_MEET) {
            cluster_node *n = cluster_node_new(NULL, CN_HANDSHAKE);
            sender_ip(l, m, n->ip, sizeof n->ip);
            n->port = m->h.port;
            n->pport = m->h.pport;
            n->cport = m->h.cport;
            cluster_add_node(n);
            cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
            process_gossip(NULL, m);
        }
        cluster_send_ping(l, CMSG_PONG);
    }
    if (!l->inbound && l->node && !check_link_node(l, sender, m)) return 0;
    if (sender) sender->flags = (sender->flags & ~(unsigned)CN_NOFAILOVER) | (m->h.flags & CN_NOFAILOVER);
    if (sender && type == CMSG_PING && !(sender->flags & CN_HANDSHAKE) && update_address(sender, l, m))
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
    if (!l->inbound && l->node && type == CMSG_PONG) pong_received(l->node);
    if (!sender) return 1;
    slots_and_roles(l, sender, m);
    process_gossip(sender, m);
    process_hostname(sender, m);
    return 1;
}

static void process_fail(cluster_node *sender, const cmsg *m) {
    if (!sender) return;
    cluster_node *failing = cluster_lookup(m->u.fail.nodename, CLUSTER_NAMELEN);
    if (!failing || (failing->flags & (CN_FAIL | CN_MYSELF))) return;
    server_log(LOG_NOTICE_, "FAIL message received from " CLUSTER_NAME_FMT " about " CLUSTER_NAME_FMT, sender->name,
               failing->name);
    failing->flags = (failing->flags & ~(unsigned)CN_PFAIL) | CN_FAIL;
    failing->fail_time = srv.now_ms;
    cluster_todo(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
}

static void process_update(cluster_node *sender, const cmsg *m) {
    if (!sender) return;
    cluster_node *n = cluster_lookup(m->u.update.nodename, CLUSTER_NAMELEN);
    if (!n || n->config_epoch >= m->u.update.config_epoch) return;
    if (cluster_is_replica(n)) cluster_set_node_as_master(n);
    n->config_epoch = m->u.update.config_epoch;
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
    cluster_update_slots_config(n, n->config_epoch, m->u.update.slots);
}

/* What every message from a trusted sender tells: epochs, offset. */
static void sender_epochs(cluster_node *sender, const cmsg *m) {
    if (m->h.current_epoch > cluster->current_epoch) {
        cluster->current_epoch = m->h.current_epoch;
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
    }
    if (m->h.config_epoch > sender->config_epoch) {
        sender->config_epoch = m->h.config_epoch;
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
    }
    sender->repl_offset = (long long)m->h.offset;
    sender->repl_offset_time = srv.now_ms;
    cluster_failover_master_offset(sender, m);
}

/* The sender: the outbound link's node, else looked up by name; an inbound
 * link is tied to its node once the node is known. */
static cluster_node *find_sender(cluster_link *l, const cmsg *m) {
    if (l->node && !l->inbound && !(l->node->flags & CN_HANDSHAKE)) return l->node;
    cluster_node *s = cluster_lookup(m->h.sender, CLUSTER_NAMELEN);
    if (s && l->inbound && l->node != s) {
        if (s->inbound_link && s->inbound_link != l) cluster_link_free(s->inbound_link);
        s->inbound_link = l;
        l->node = s;
    }
    return s;
}

int cluster_process_message(cluster_link *l, const unsigned char *buf, size_t len) {
    cmsg m;
    if (cmsg_parse(buf, len, &m) < 0) {
        server_log(LOG_WARNING_, "Bad message on the cluster bus (%s): link dropped.", m.err ? m.err : "invalid");
        cluster_link_free(l);
        return 0;
    }
    if (m.h.type < CLUSTER_MSG_TYPES) cluster->received[m.h.type]++;
    if (cluster->drop_filter == -2 || cluster->drop_filter == m.h.type) {
        server_log(LOG_WARNING_, "Dropping packet that matches debug drop filter");
        return 1;
    }
    cluster_node *sender = find_sender(l, &m);
    if (sender && !(sender->flags & CN_HANDSHAKE)) sender_epochs(sender, &m);
    if (sender) sender->data_received = srv.now_ms;
    switch (m.h.type) {
    case CMSG_PING:
    case CMSG_PONG:
    case CMSG_MEET: return process_ping(l, sender, &m);
    case CMSG_FAIL: process_fail(sender, &m); break;
    case CMSG_PUBLISH:
    case CMSG_PUBLISHSHARD:
        if (!sender) break;
        if (m.h.type == CMSG_PUBLISH) pubsub_publish(m.u.publish.channel, m.u.publish.message);
        else pubsub_publish_shard(m.u.publish.channel, m.u.publish.message);
        break;
    case CMSG_FAILOVER_AUTH_REQUEST:
        if (sender) cluster_failover_auth_request(sender, &m);
        break;
    case CMSG_FAILOVER_AUTH_ACK:
        if (sender) cluster_failover_auth_ack(sender, &m);
        break;
    case CMSG_MFSTART:
        if (sender) cluster_failover_mfstart(sender, l);
        break;
    case CMSG_UPDATE: process_update(sender, &m); break;
    default: break; /* MODULE and unknown types: no modules here */
    }
    return 1;
}
