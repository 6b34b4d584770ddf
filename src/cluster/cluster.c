/* cluster.c - the cluster state of a node in cluster mode: the table of
 * known nodes, who serves each slot, master/replica links between nodes,
 * epochs, the cluster's OK/FAIL state, and keeping all of it in nodes.conf.
 *
 * The bus (cluster_bus.c) and the commands (cmd_cluster.c) change the
 * state only through these functions, and say what must follow a change
 * with cluster_todo(): several changes in one loop iteration are saved to
 * nodes.conf once, before the loop sleeps, as Redis does.
 *
 * The node table is an array searched linearly by name: clusters have
 * tens to a few hundred nodes, and names are compared 40 bytes at once
 * with memcmp only after a first-byte test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cluster.h"
#include "cluster_bus.h"
#include "cluster_conf.h"
#include "cluster_redirect.h"
#include "db.h"
#include "frand.h"
#include "pubsub.h"
#include "repl.h"
#include "config.h"
#include "server.h"
#include "zmalloc.h"

cluster_state *cluster;

#define FORGET_TTL_S 60              /* a forgotten node stays out of gossip this long */
#define WRITABLE_DELAY_MS 2000       /* a master that starts in FAIL waits this before judging */
#define REJOIN_DELAY_MIN_MS 500
#define REJOIN_DELAY_MAX_MS 5000

void cluster_todo(unsigned what) { cluster->todo |= what; }

long long cluster_node_timeout(void) { return config_get_ll(&srv.cfg, "cluster-node-timeout"); }

/* ---- nodes ---------------------------------------------------------------- */

cluster_node *cluster_node_new(const char *name, unsigned flags) {
    cluster_node *n = zcalloc(sizeof *n);
    if (name) {
        memcpy(n->name, name, CLUSTER_NAMELEN);
    } else {
        char hex[CLUSTER_NAMELEN + 1];
        frand_hex(hex, CLUSTER_NAMELEN);
        memcpy(n->name, hex, CLUSTER_NAMELEN);
    }
    n->flags = flags;
    n->ctime = srv.now_ms;
    n->repl_offset_time = 0;
    return n;
}

cluster_node *cluster_lookup(const char *name, size_t len) {
    if (len != CLUSTER_NAMELEN) return NULL;
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *n = cluster->nodes[i];
        if (n->name[0] == name[0] && !memcmp(n->name, name, CLUSTER_NAMELEN)) return n;
    }
    return NULL;
}

void cluster_add_node(cluster_node *n) {
    if (cluster->nnodes == cluster->nodes_cap) {
        cluster->nodes_cap = cluster->nodes_cap ? cluster->nodes_cap * 2 : 16;
        cluster->nodes = zrealloc(cluster->nodes, sizeof *cluster->nodes * (size_t)cluster->nodes_cap);
    }
    cluster->nodes[cluster->nnodes++] = n;
}

static int remove_ptr(cluster_node **arr, int *n, const cluster_node *x) {
    for (int i = 0; i < *n; i++)
        if (arr[i] == x) {
            memmove(arr + i, arr + i + 1, sizeof *arr * (size_t)(*n - i - 1));
            (*n)--;
            return 1;
        }
    return 0;
}

/* Replicas are kept sorted by name, as Redis keeps them, so CLUSTER SLOTS
 * and SHARDS list them in the same order on every node. */
int cluster_node_add_replica(cluster_node *m, cluster_node *r) {
    for (int i = 0; i < m->nreplicas; i++)
        if (m->replicas[i] == r) return 0;
    m->replicas = zrealloc(m->replicas, sizeof *m->replicas * (size_t)(m->nreplicas + 1));
    int at = m->nreplicas;
    while (at > 0 && memcmp(m->replicas[at - 1]->name, r->name, CLUSTER_NAMELEN) > 0) {
        m->replicas[at] = m->replicas[at - 1];
        at--;
    }
    m->replicas[at] = r;
    m->nreplicas++;
    m->flags |= CN_MIGRATE_TO; /* a master that had replicas may get one back by migration */
    return 1;
}

int cluster_node_remove_replica(cluster_node *m, cluster_node *r) {
    int removed = remove_ptr(m->replicas, &m->nreplicas, r);
    if (m->nreplicas == 0) m->flags &= ~CN_MIGRATE_TO;
    return removed;
}

int cluster_count_non_failing_replicas(const cluster_node *m) {
    int ok = 0;
    for (int i = 0; i < m->nreplicas; i++)
        if (!(m->replicas[i]->flags & CN_FAIL)) ok++;
    return ok;
}

void cluster_set_master(cluster_node *n, cluster_node *master) {
    if (n->master) cluster_node_remove_replica(n->master, n);
    n->flags = (n->flags & ~(CN_MASTER | CN_MIGRATE_TO)) | CN_SLAVE;
    n->master = master;
    if (master) cluster_node_add_replica(master, n);
}

/* Failure reports made by `from` about other nodes are void once it goes. */
static void drop_reports_by(const cluster_node *from) {
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *n = cluster->nodes[i];
        for (int j = 0; j < n->nreports; j++)
            if (n->reports[j].from == from) {
                n->reports[j] = n->reports[--n->nreports];
                j--;
            }
    }
}

void cluster_del_node(cluster_node *n) {
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (cluster->slot[s].importing_from == n) cluster->slot[s].importing_from = NULL;
        if (cluster->slot[s].migrating_to == n) cluster->slot[s].migrating_to = NULL;
        if (cluster->slot[s].owner == n) cluster_del_slot(s);
        cluster_slot_refresh(s);
    }
    drop_reports_by(n);
    if (n->master) cluster_node_remove_replica(n->master, n);
    for (int i = 0; i < n->nreplicas; i++) n->replicas[i]->master = NULL;
    cluster_bus_node_gone(n);
    remove_ptr(cluster->nodes, &cluster->nnodes, n);
    zfree(n->replicas);
    zfree(n->reports);
    zfree(n);
}

void cluster_rename_node(cluster_node *n, const char *newname) {
    server_log(LOG_DEBUG_, "Renaming node " CLUSTER_NAME_FMT " into " CLUSTER_NAME_FMT, n->name, newname);
    memcpy(n->name, newname, CLUSTER_NAMELEN);
}

int cluster_forgotten_has(const char *name) {
    int64_t now_s = srv.now_ms / 1000;
    for (int i = 0; i < cluster->nforgotten; i++) {
        if (cluster->forgotten[i].until_s < now_s) {
            cluster->forgotten[i--] = cluster->forgotten[--cluster->nforgotten];
            continue;
        }
        if (!memcmp(cluster->forgotten[i].name, name, CLUSTER_NAMELEN)) return 1;
    }
    return 0;
}

void cluster_forget_for_a_while(const char *name) {
    int64_t until = srv.now_ms / 1000 + FORGET_TTL_S;
    for (int i = 0; i < cluster->nforgotten; i++)
        if (!memcmp(cluster->forgotten[i].name, name, CLUSTER_NAMELEN)) {
            cluster->forgotten[i].until_s = until;
            return;
        }
    cluster->forgotten = zrealloc(cluster->forgotten, sizeof *cluster->forgotten * (size_t)(cluster->nforgotten + 1));
    memcpy(cluster->forgotten[cluster->nforgotten].name, name, CLUSTER_NAMELEN);
    cluster->forgotten[cluster->nforgotten++].until_s = until;
}

/* ---- slots ---------------------------------------------------------------- */

int cluster_add_slot(cluster_node *n, int slot) {
    if (cluster->slot[slot].owner) return -1;
    n->slots[slot >> 3] |= (unsigned char)(1u << (slot & 7));
    n->numslots++;
    cluster->slot[slot].owner = n;
    cluster_slot_refresh(slot);
    return 0;
}

void cluster_slot_refresh(int slot) {
    const struct cluster_slot *st = &cluster->slot[slot];
    cluster->served[slot] = st->owner == cluster->myself && !st->migrating_to && !st->importing_from;
}

void cluster_slot_refresh_all(void) {
    for (int s = 0; s < CLUSTER_SLOTS; s++) cluster_slot_refresh(s);
}

static cluster_node *shard_master(cluster_node *n) { return cluster_is_replica(n) && n->master ? n->master : n; }

int cluster_del_slot(int slot) {
    cluster_node *n = cluster->slot[slot].owner;
    if (!n) return -1;
    if (shard_master(n) == shard_master(cluster->myself)) pubsub_shard_slot_removed((unsigned)slot);
    n->slots[slot >> 3] &= (unsigned char)~(1u << (slot & 7));
    n->numslots--;
    cluster->slot[slot].owner = NULL;
    cluster_slot_refresh(slot);
    return 0;
}

int cluster_del_node_slots(cluster_node *n) {
    int deleted = 0;
    for (int s = 0; s < CLUSTER_SLOTS && n->numslots; s++)
        if (cluster_node_has_slot(n, s)) {
            cluster_del_slot(s);
            deleted++;
        }
    return deleted;
}

void cluster_close_all_slots(void) {
    for (int s = 0; s < CLUSTER_SLOTS; s++) cluster->slot[s].migrating_to = cluster->slot[s].importing_from = NULL;
    cluster_slot_refresh_all();
}

size_t cluster_keys_in_slot(int slot) { return db_slot_count(db_get(0), (unsigned)slot); }

/* ---- epochs --------------------------------------------------------------- */

uint64_t cluster_max_epoch(void) {
    uint64_t max = 0;
    for (int i = 0; i < cluster->nnodes; i++)
        if (cluster->nodes[i]->config_epoch > max) max = cluster->nodes[i]->config_epoch;
    return max > cluster->current_epoch ? max : cluster->current_epoch;
}

/* A node that takes slots without an election (SETSLOT NODE of an
 * importing slot, a TAKEOVER) makes its config epoch the greatest unless
 * it already is the unique greatest. */
int cluster_bump_epoch_without_consensus(void) {
    uint64_t max = cluster_max_epoch();
    cluster_node *me = cluster->myself;
    if (me->config_epoch == 0 || me->config_epoch != max) {
        cluster->current_epoch++;
        me->config_epoch = cluster->current_epoch;
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
        server_log(LOG_WARNING_, "New configEpoch set to %llu", (unsigned long long)me->config_epoch);
        return 1;
    }
    return 0;
}

/* Two masters with the same config epoch: the one with the smaller name
 * takes a new epoch, so every master's epoch ends unique. */
void cluster_handle_epoch_collision(cluster_node *sender) {
    cluster_node *me = cluster->myself;
    if (sender->config_epoch != me->config_epoch || !cluster_is_master(sender) || !cluster_is_master(me)) return;
    if (memcmp(sender->name, me->name, CLUSTER_NAMELEN) <= 0) return;
    cluster->current_epoch++;
    me->config_epoch = cluster->current_epoch;
    cluster_save_config(1);
    server_log(LOG_VERBOSE_, "WARNING: configEpoch collision with node " CLUSTER_NAME_FMT
               ". configEpoch set to %llu", sender->name, (unsigned long long)me->config_epoch);
}

/* ---- OK or FAIL ----------------------------------------------------------- */

static int64_t started_ms;

static int64_t rejoin_delay(void) {
    long long d = cluster_node_timeout();
    if (d > REJOIN_DELAY_MAX_MS) d = REJOIN_DELAY_MAX_MS;
    if (d < REJOIN_DELAY_MIN_MS) d = REJOIN_DELAY_MIN_MS;
    return d;
}

static int coverage_ok(void) {
    if (!config_is_yes(&srv.cfg, "cluster-require-full-coverage")) return 1;
    for (int s = 0; s < CLUSTER_SLOTS; s++)
        if (!cluster->slot[s].owner || (cluster->slot[s].owner->flags & CN_FAIL)) return 0;
    return 1;
}

void cluster_update_state(void) {
    cluster_node *me = cluster->myself;
    if (cluster_is_master(me) && cluster->state == CLUSTER_FAIL && srv.now_ms - started_ms < WRITABLE_DELAY_MS) return;
    int new_state = coverage_ok() ? CLUSTER_OK : CLUSTER_FAIL;
    int size = 0, reachable = 0;
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *n = cluster->nodes[i];
        if (!cluster_is_master(n) || !n->numslots) continue;
        size++;
        if (!(n->flags & (CN_FAIL | CN_PFAIL))) reachable++;
    }
    cluster->size = size;
    if (reachable < size / 2 + 1) {
        new_state = CLUSTER_FAIL;
        cluster->among_minority_time = srv.now_ms;
    }
    if (new_state == cluster->state) return;
    if (new_state == CLUSTER_OK && cluster_is_master(me) && srv.now_ms - cluster->among_minority_time < rejoin_delay())
        return;
    server_log(LOG_WARNING_, "Cluster state changed: %s", new_state == CLUSTER_OK ? "ok" : "fail");
    cluster->state = new_state;
}

/* ---- endpoints -------------------------------------------------------------- */

int cluster_endpoint_type(void) { return cluster->endpoint_type; }

const char *cluster_endpoint(const cluster_node *n) {
    switch (cluster_endpoint_type()) {
    case ENDPOINT_HOSTNAME: return n->hostname[0] ? n->hostname : "?";
    case ENDPOINT_UNKNOWN: return "";
    default: return n->ip;
    }
}

/* This node's ports and address as it announces them (cluster-announce-*
 * when set, else its own listeners; the bus port is the client port (the
 * TLS one under tls-cluster) + 10000 unless cluster-port says otherwise). */
void cluster_set_own_ports(void) {
    cluster_node *me = cluster->myself;
    int tls = config_is_yes(&srv.cfg, "tls-cluster");
    int port = tls ? srv.cfg.tls_port : srv.cfg.port, pport = tls ? srv.cfg.port : 0;
    long long ap = config_get_ll(&srv.cfg, tls ? "cluster-announce-tls-port" : "cluster-announce-port");
    long long app = config_get_ll(&srv.cfg, tls ? "cluster-announce-port" : "cluster-announce-tls-port");
    long long cp = config_get_ll(&srv.cfg, "cluster-port"), acp = config_get_ll(&srv.cfg, "cluster-announce-bus-port");
    me->port = ap ? (int)ap : port;
    me->pport = tls ? (app ? (int)app : pport) : 0;
    me->cport = acp ? (int)acp : cp ? (int)cp : port + 10000;
    char *ip = config_get_by_name(&srv.cfg, "cluster-announce-ip");
    snprintf(cluster->announced_ip, sizeof cluster->announced_ip, "%s", ip ? ip : "");
    zfree(ip);
    if (cluster->announced_ip[0]) memcpy(me->ip, cluster->announced_ip, sizeof me->ip);
    char *t = config_get_by_name(&srv.cfg, "cluster-preferred-endpoint-type");
    cluster->endpoint_type = t && !strcmp(t, "hostname") ? ENDPOINT_HOSTNAME
                             : t && !strcmp(t, "unknown-endpoint") ? ENDPOINT_UNKNOWN : ENDPOINT_IP;
    zfree(t);
    char *h = config_get_by_name(&srv.cfg, "cluster-announce-hostname");
    snprintf(me->hostname, sizeof me->hostname, "%s", h ? h : "");
    zfree(h);
    unsigned old = me->flags;
    me->flags &= ~(unsigned)CN_NOFAILOVER;
    if (config_is_yes(&srv.cfg, "cluster-replica-no-failover")) me->flags |= CN_NOFAILOVER;
    if (me->flags != old) cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
}

/* cluster-port, else the client port + 10000: under tls-cluster the TLS
 * port's, as Redis derives it. */
int cluster_bus_port(void) {
    long long cp = config_get_ll(&srv.cfg, "cluster-port");
    int tls = config_is_yes(&srv.cfg, "tls-cluster");
    return cp ? (int)cp : (tls ? srv.cfg.tls_port : srv.cfg.port) + 10000;
}

int cluster_client_port(const cluster_node *n, int tls) {
    if (config_is_yes(&srv.cfg, "tls-cluster")) return tls ? n->port : n->pport;
    return n->port;
}

/* ---- loop hooks ------------------------------------------------------------- */

void cluster_before_sleep(void) {
    if (!cluster) return;
    unsigned todo = cluster->todo;
    cluster->todo = 0;
    if (todo & CLUSTER_TODO_HANDLE_FAILOVER) cluster_bus_handle_failover();
    if (todo & CLUSTER_TODO_UPDATE_STATE) cluster_update_state();
    if ((todo & CLUSTER_TODO_SAVE_CONFIG) && cluster_save_config((todo & CLUSTER_TODO_FSYNC_CONFIG) != 0) < 0) {
        server_log(LOG_WARNING_, "Fatal: can't update cluster config file.");
        exit(1); /* as Redis: a node must not run on a configuration it cannot keep */
    }
}

void cluster_cron(void) {
    if (!cluster) return;
    cluster_bus_cron();
    cluster_update_state();
}

static void propagate_publish(span channel, span msg, int shard) {
    cluster_propagate_publish(channel.p, channel.len, msg.p, msg.len, shard);
}

/* ---- start-up ----------------------------------------------------------------- */

int cluster_init(void) {
    if (!config_is_yes(&srv.cfg, "cluster-enabled")) return 0;
    cluster = zcalloc(sizeof *cluster);
    cluster->state = CLUSTER_FAIL;
    cluster->size = 1;
    cluster->lock_fd = -1;
    started_ms = srv.now_ms;
    cluster->config_path = config_get_by_name(&srv.cfg, "cluster-config-file");
    int loaded = cluster_conf_load(cluster->config_path);
    if (loaded < 0) return -1;
    if (!loaded) {
        cluster->myself = cluster_node_new(NULL, CN_MYSELF | CN_MASTER);
        cluster_add_node(cluster->myself);
        server_log(LOG_NOTICE_, "No cluster configuration found, I'm " CLUSTER_NAME_FMT, cluster->myself->name);
        if (cluster_save_config(1) < 0) return -1;
    }
    if (cluster_conf_lock(cluster->config_path) < 0) return -1;
    cluster_slot_refresh_all(); /* nodes.conf may assign slots before naming myself */
    db_enable_slot_index(db_get(0));
    if (cluster_bus_listen() < 0) return -1;
    cluster_set_own_ports();
    cluster->mf_master_offset = -1;
    srv.cluster_mode = 1;
    cluster_redirect_init();
    cluster_debug_init();
    config_cluster_changed = cluster_set_own_ports;
    cluster->drop_filter = -1;
    pubsub_cluster_propagate = propagate_publish;
    return 0;
}

/* After the start-up load: keys only in db 0, and every slot with keys
 * ours or being imported (an unassigned one is taken, another node's is
 * marked importing), as Redis checks. */
int cluster_verify_with_data(void) {
    if (!cluster || cluster_is_replica(cluster->myself)) return 0;
    for (int i = 1; i < db_count(); i++)
        if (dict_size(&db_get(i)->keys)) {
            server_log(LOG_WARNING_, "You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting.");
            return -1;
        }
    int fixed = 0;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!cluster_keys_in_slot(s) || cluster->slot[s].owner == cluster->myself || cluster->slot[s].importing_from) continue;
        fixed++;
        if (!cluster->slot[s].owner) {
            server_log(LOG_WARNING_, "I have keys for unassigned slot %d. Taking responsibility for it.", s);
            cluster_add_slot(cluster->myself, s);
        } else {
            server_log(LOG_WARNING_, "I have keys for slot %d, but the slot is assigned to another node. "
                       "Setting it to importing state.", s);
            cluster->slot[s].importing_from = cluster->slot[s].owner;
            cluster_slot_refresh(s);
        }
    }
    return fixed && cluster_save_config(1) < 0 ? -1 : 0;
}

/* CLUSTER RESET: back to a master that knows only itself, without slots;
 * HARD also zeroes the epochs and takes a new name. */
void cluster_reset(int hard) {
    cluster_node *me = cluster->myself;
    if (cluster_is_replica(me)) {
        cluster_set_node_as_master(me);
        repl_unfollow();
        for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
    }
    cluster_close_all_slots();
    cluster_failover_reset_manual();
    for (int s = 0; s < CLUSTER_SLOTS; s++) cluster_del_slot(s);
    for (int i = cluster->nnodes - 1; i >= 0; i--)
        if (cluster->nodes[i] != me) cluster_del_node(cluster->nodes[i]);
    if (hard) {
        cluster->current_epoch = cluster->last_vote_epoch = 0;
        me->config_epoch = 0;
        server_log(LOG_WARNING_, "configEpoch set to 0 via CLUSTER RESET HARD");
        char hex[CLUSTER_NAMELEN + 1];
        frand_hex(hex, CLUSTER_NAMELEN);
        memcpy(me->name, hex, CLUSTER_NAMELEN);
        server_log(LOG_NOTICE_, "Node hard reset, now I'm " CLUSTER_NAME_FMT, me->name);
    }
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_FSYNC_CONFIG);
}
